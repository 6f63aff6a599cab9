// The signature stage: OpenPGP keys (a repository's `gpgkey` URLs, or the keys imported in the
// rpm database of an installroot, as dnf trusts them), the detached signature of repomd.xml
// (repo_gpgcheck) and the signatures of RPM packages (gpgcheck), checked with librpm. librpm 4.18
// ignores key expiry (a signature by an expired key verifies as good, for detached signatures and
// packages alike), so each key's expiry and revocation are read with gpgme when the keys are
// loaded, and a signature by an expired or revoked key is refused here.
//
// A package check tells a verdict on the file (a Rejection: unsigned, unknown key, bad
// signature, revoked key, key expired before it signed, not a package) from a failure that says
// nothing about it (an Error: the file could not be opened or read, EMFILE, or a key that expired
// only after it signed): --gpgcheck removes a file on a verdict only.
//
// Thread-safety: librpm's configuration is read once per process (std::call_once) and its log
// output is silenced then. A Keyring is immutable once loaded; verify_detached and
// check_package may be called on one Keyring from many threads at once: each call uses its own
// rpmts, digest contexts and file handle, and librpm's keyring locks itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "download/download.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// One signing (sub)key of a certificate, as gpg sees it.
struct SigningKey {
    std::string key_id;                   // 16 uppercase hex digits
    std::string user_id;                  // the certificate's first user id
    std::optional<std::int64_t> expires;  // seconds since the epoch; nullopt = never
    bool is_revoked = false;
    std::string source;  // the gpgkey URL it came from
};

// A verdict against a package file: what it holds must not be trusted.
enum class PackageRejection {
    NotSigned,     // no OpenPGP signature
    UnknownKey,    // signed by a key that is not in the keyring
    BadSignature,  // header or payload modified after signing, or a digest does not match
    KeyRevoked,    // signed by a revoked key
    KeyExpired,    // signed by a key that had already expired when it signed
    NotAPackage,   // readable, but not an RPM package
};

struct Rejection {
    PackageRejection kind;
    Error error;  // names the package file, the key and the cause
};

// Returns what dnf 4 says of a package file named `file_name` (e.g. "foo-1.0-1.noarch.rpm")
// rejected for `kind`: "Package foo-1.0-1.noarch.rpm is not signed", "Public key for … is not
// installed" (unknown key), "Problem opening package …" (bad signature, not a package), "Public
// key for … is not trusted" (revoked or expired key: what rpm >= 4.19 reports as NOTTRUSTED).
std::string dnf_rejection_message(PackageRejection kind, std::string_view file_name);

// A set of OpenPGP public keys, and the signature checks against them.
class Keyring {
  public:
    // An empty keyring; `trusted_keys` names where its keys come from in "not among …" messages.
    explicit Keyring(std::string trusted_keys = "the repository's gpgkey");
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
    // `rpmkeys --checksig` does, digests included), never through a symlink.
    // Returns nullopt iff it is signed by a key of this keyring that is not revoked and had not
    // expired when it signed, and every signature and digest is good. Returns a Rejection (a
    // verdict on the file) whose error names `path`:
    //   NotSigned    Unsafe   "not signed";
    //   UnknownKey   Unsafe   "signed with key 0x… which is not among <trusted_keys>";
    //   BadSignature Corrupt  "bad signature (made by key 0x…)";
    //   KeyRevoked   Unsafe   "key 0x… (<user id>) is revoked";
    //   KeyExpired   Unsafe   "key 0x… (<user id>) expired on YYYY-MM-DD, before it signed
    //                         (YYYY-MM-DD)";
    //   NotAPackage  BadInput "not an RPM package".
    // Returns an Error, no verdict, iff the file cannot be opened or read to its end (Io or
    // NotFound with errno: EMFILE, EIO, EISDIR, ELOOP for a symlink...), or iff the signature is
    // good but its key expired after it signed (Unsafe "key 0x… expired on YYYY-MM-DD, after it
    // signed (YYYY-MM-DD)": the package was good when signed; only a person can decide).
    // Thread-safe (one rpmts per call).
    Result<std::optional<Rejection>> check_package(const std::filesystem::path& path) const;

    // check_package as one outcome: nothing iff the package is good, else the rejection's error
    // or the error.
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

// Loads the public keys imported in the rpm database beneath `installroot` (the gpg-pubkey
// headers `rpmkeys --root <installroot> --import` writes, at librpm's %_dbpath), the keys dnf's
// --gpgcheck trusts. A root without an rpm database, or that does not exist (dnf would create
// it), yields an empty keyring (every signed package then has an unknown key, as with dnf).
// Returns Error{NotFound} iff `installroot` exists and is not a directory, Error{Io} iff the
// database is there but cannot be read, Error{BadInput} naming the gpg-pubkey header iff a stored
// key cannot be read. Not thread-safe with other librpm database users in the process (none in
// rpmirror).
Result<Keyring> load_installed_keys(const std::filesystem::path& installroot);

// Calls `visit` with each package installed in the rpm database beneath `installroot` (at librpm's
// %_dbpath, else /var/lib/rpm or /usr/lib/sysimage/rpm: a Fedora or EL image read on another
// system), as librpm's Header (a `Header` passed as void*, valid during the call only) and its
// NEVRA "name-[epoch:]version-release.arch", in the database's order; none if there is no
// database. Errors as load_installed_keys. Not thread-safe with other librpm database users in
// the process.
Result<void> visit_installed_packages(
    const std::filesystem::path& installroot,
    const std::function<void(void* header, const std::string& nevra)>& visit);

// Returns the armored detached OpenPGP signature of `data` (repomd.xml.asc) by the secret key
// `key_id` (a key id, fingerprint or user id, as gpg --local-user takes it) of the user's gpg
// keyring ($GNUPGHOME, else ~/.gnupg), made through gpgme and gpg's agent.
// Returns Error{NotFound} naming the key iff the keyring has no such secret key, Error{BadInput}
// iff the name is ambiguous, the key is revoked, expired, disabled or cannot sign, or gpg refuses
// to sign (a passphrase that cannot be asked for); Error{Unsupported} iff gpg cannot be run.
// Thread-safe (one gpgme context per call).
Result<std::string> sign_detached(std::string_view data, const std::string& key_id);

}  // namespace rpmirror
