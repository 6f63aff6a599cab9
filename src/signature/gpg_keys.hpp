// What librpm 4.18 does not tell: when a key expires and whether it is revoked. gpg reads the
// certificates (through gpgme, in a throw-away home directory; nothing is imported anywhere).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"
#include "signature/signature.hpp"

namespace rpmirror::signature {

// Returns every primary key and subkey of the certificates in `armored`, with the certificate's
// first user id, the key's expiry (the earlier of its own and its primary key's) and revocation,
// `source` recorded in each. Error{BadInput} naming `source` iff gpg cannot read the text;
// Error{Unsupported} iff gpg cannot be run. Thread-safe.
Result<std::vector<SigningKey>> read_key_validity(std::string_view armored,
                                                  const std::string& source);

}  // namespace rpmirror::signature
