// The signature stage: a repository's OpenPGP keys (its `gpgkey` URLs), the detached signature
// of repomd.xml (repo_gpgcheck) and the signatures of RPM packages (gpgcheck), checked with
// librpm. librpm 4.18 ignores key expiry (a signature by an expired key verifies as good, for
// detached signatures and packages alike), so each key's expiry and revocation are read with
// gpgme when the keys are loaded, and a signature by an expired or revoked key is refused here.
//
// Thread-safety: librpm's configuration is read once per process (std::call_once) and its log
// output is silenced then. A Keyring is immutable once loaded; verify_detached and
// verify_package may be called on one Keyring from many threads at once: each call uses its own
// rpmts, digest contexts and file handle, and librpm's keyring locks itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/config.hpp"
#include "rpmirror/download.hpp"
#include "rpmirror/error.hpp"

namespace rpmirror {

// One signing (sub)key of a certificate, as gpg sees it.
struct SigningKey {
    std::string key_id;                   // 16 uppercase hex digits
    std::string user_id;                  // the certificate's first user id
    std::optional<std::int64_t> expires;  // seconds since the epoch; nullopt = never
    bool is_revoked = false;
    std::string source;  // the gpgkey URL it came from
};

// A set of OpenPGP public keys, and the signature checks against them.
class Keyring {
  public:
    Keyring();
    ~Keyring();
    Keyring(Keyring&&) noexcept;
    Keyring& operator=(Keyring&&) noexcept;

    // Adds every public key (certificate, with its subkeys) in `armored`: one or more ASCII-armored
    // "PUBLIC KEY BLOCK"s, each holding one or more certificates. `source` names where the text
    // came from in errors. Returns Error{BadInput} naming `source` iff it holds no public key or a
    // block librpm or gpg cannot read. Not thread-safe (load keys before verifying).
    Result<void> add_armored(std::string_view armored, const std::string& source);

    // The keys (primary keys and subkeys) added so far.
    const std::vector<SigningKey>& keys() const;
    bool empty() const;

    // Checks the ASCII-armored detached signature `armored_signature` over `data` (its first
    // signature packet).
    // Returns nothing iff it is a good signature by a key of this keyring that has neither expired
    // nor been revoked. Otherwise an error whose subject is `subject`:
    //   Corrupt  "bad signature (made by key 0x…)" — the data or the signature was modified;
    //   Unsafe   "signed with key 0x… which is not among the repository's gpgkey";
    //   Unsafe   "key 0x… expired on YYYY-MM-DD" / "key 0x… is revoked";
    //   BadInput "not a readable OpenPGP signature".
    // Thread-safe.
    Result<void> verify_detached(std::string_view data, std::string_view armored_signature,
                                 const std::string& subject) const;

    // Checks the signature of the RPM package file at `path` (header and payload, as
    // `rpmkeys --checksig` does, digests included). Returns nothing iff it is signed by a key of
    // this keyring that has neither expired nor been revoked and every signature and digest is
    // good. Otherwise an error naming `path`:
    //   Unsafe   "not signed";
    //   Unsafe   "signed with key 0x… which is not among the repository's gpgkey";
    //   Corrupt  "bad signature (made by key 0x…)" — header or payload modified after signing;
    //   Unsafe   "key 0x… expired on YYYY-MM-DD" / "key 0x… is revoked";
    //   BadInput "not an RPM package"; Io / NotFound when it cannot be opened.
    // Thread-safe (one rpmts per call).
    Result<void> verify_package(const std::filesystem::path& path) const;

    struct Impl;

  private:
    std::unique_ptr<Impl> impl_;
};

// Loads the keys of `repo`'s gpgkey URLs (file:// read locally; http(s):// fetched with
// `options`, i.e. the repository's TLS, proxy and credential settings). Returns the keyring, or
// Error{BadInput} naming the repository iff it has no gpgkey, or the error of the URL that could
// not be fetched or read (Error{Interrupted} once `stop` is requested). Thread-safe.
Result<Keyring> load_repo_keys(const RepoConfig& repo, const DownloadOptions& options,
                               std::stop_token stop = {});

}  // namespace rpmirror
