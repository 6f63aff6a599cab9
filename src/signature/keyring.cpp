// Keys and signature checks with librpm (see signature/signature.hpp).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <rpm/rpmbase64.h>
#include <rpm/rpmcli.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmfileutil.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmmacro.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

#include <fmt/core.h>

#include "fs/fault.hpp"
#include "signature/gpg_keys.hpp"
#include "signature/handles.hpp"
#include "signature/signature.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

using namespace signature;

namespace {

constexpr std::string_view kKeyBegin = "-----BEGIN PGP PUBLIC KEY BLOCK-----";
constexpr std::string_view kKeyEnd = "-----END PGP PUBLIC KEY BLOCK-----";
constexpr std::string_view kSignatureBegin = "-----BEGIN PGP SIGNATURE-----";
constexpr std::string_view kSignatureEnd = "-----END PGP SIGNATURE-----";

// librpm reads its configuration (and sets up its crypto backend) once per process; its own
// messages are silenced: every outcome reaches the user through an Error instead.
void initialise_rpm() {
    static std::once_flag initialised;
    std::call_once(initialised, [] {
        (void)rpmReadConfigFiles(nullptr, nullptr);
        rpmlogSetMask(RPMLOG_UPTO(RPMLOG_EMERG));
    });
}

// Returns the OpenPGP packets of the armored block `block`, or nullopt iff librpm cannot decode
// it (bad base64 or CRC). pgpParsePkts decodes only public key blocks, so a signature block is
// handed to it under that name: the armor (base64 body and CRC-24) is the same for every type.
struct Packets {
    RpmMemory bytes;
    std::size_t size = 0;
};
std::optional<Packets> decode_armor(std::string block) {
    if (block.starts_with(kSignatureBegin)) {
        block.replace(0, kSignatureBegin.size(), kKeyBegin);
        if (const auto end = block.rfind(kSignatureEnd); end != std::string::npos) {
            block.replace(end, kSignatureEnd.size(), kKeyEnd);
        }
    }
    std::uint8_t* packets = nullptr;
    std::size_t size = 0;
    const pgpArmor armor = pgpParsePkts(block.c_str(), &packets, &size);
    Packets decoded{RpmMemory(packets), size};
    if (armor != PGPARMOR_PUBKEY || decoded.bytes == nullptr || size == 0) {
        return std::nullopt;
    }
    return decoded;
}

// Returns the blocks between `begin` and `end` markers in `text`, markers included.
std::vector<std::string> armored_blocks(std::string_view text, std::string_view begin,
                                        std::string_view end) {
    std::vector<std::string> blocks;
    std::size_t from = 0;
    while ((from = text.find(begin, from)) != std::string_view::npos) {
        const std::size_t stop = text.find(end, from);
        if (stop == std::string_view::npos) {
            blocks.emplace_back(text.substr(from));  // librpm reports the missing end
            break;
        }
        blocks.emplace_back(text.substr(from, stop + end.size() - from));
        from = stop + end.size();
    }
    return blocks;
}

std::string key_id_hex(const std::uint8_t* id) {
    std::string hex;
    for (int index = 0; index < 8; ++index) {
        hex += fmt::format("{:02X}", id[index]);
    }
    return hex;
}

std::string format_day(std::int64_t seconds) {
    const auto time = static_cast<std::time_t>(seconds);
    std::tm parts{};
    ::gmtime_r(&time, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d", &parts);
    return text;
}

}  // namespace

// What a key's revocation and expiry say of a good signature it made.
enum class KeyStanding { Valid, Revoked, ExpiredBeforeSigning, ExpiredAfterSigning };

struct Keyring::Impl {
    RpmKeyring keyring{rpmKeyringNew()};
    std::vector<SigningKey> keys;
    std::string trusted_keys;  // "the repository's gpgkey", "the keys imported in ..."

    const SigningKey* find(const std::string& key_id) const {
        for (const SigningKey& key : keys) {
            if (key.key_id == key_id) {
                return &key;
            }
        }
        return nullptr;
    }

    // Returns the standing of the key `key_id` (which made a good signature at `signed_at`,
    // seconds since the epoch) now. A key gpg did not list separately (librpm knows a subkey
    // gpg skipped) is Valid: nothing more is known of it.
    KeyStanding standing_of(const std::string& key_id, std::int64_t signed_at) const {
        const SigningKey* key = find(key_id);
        if (key == nullptr) {
            return KeyStanding::Valid;
        }
        if (key->is_revoked) {
            return KeyStanding::Revoked;
        }
        if (key->expires && *key->expires <= std::time(nullptr)) {
            return signed_at >= *key->expires ? KeyStanding::ExpiredBeforeSigning
                                              : KeyStanding::ExpiredAfterSigning;
        }
        return KeyStanding::Valid;
    }

    std::string describe(const std::string& key_id) const {
        const SigningKey* key = find(key_id);
        return key == nullptr ? "key 0x" + key_id
                              : fmt::format("key 0x{} ({})", key_id, key->user_id);
    }

    std::string expiry_of(const std::string& key_id) const {
        const SigningKey* key = find(key_id);
        return key != nullptr && key->expires ? format_day(*key->expires) : "?";
    }

    // Returns an error iff the key `key_id` (which made a good signature) expired or is revoked
    // (detached signatures: any of these fails the repository).
    Result<void> check_validity(const std::string& key_id, std::int64_t signed_at,
                                const std::string& subject) const {
        switch (standing_of(key_id, signed_at)) {
            case KeyStanding::Valid:
                return {};
            case KeyStanding::Revoked:
                return make_error(ErrorCode::Unsafe, describe(key_id) + " is revoked", subject);
            case KeyStanding::ExpiredBeforeSigning:
            case KeyStanding::ExpiredAfterSigning:
                break;
        }
        return make_error(ErrorCode::Unsafe,
                          fmt::format("{} expired on {}", describe(key_id), expiry_of(key_id)),
                          subject);
    }

    tl::unexpected<Error> not_among(const std::string& key_id, const std::string& subject) const {
        return make_error(
            ErrorCode::Unsafe,
            fmt::format("signed with key 0x{} which is not among {}", key_id, trusted_keys),
            subject);
    }

    static tl::unexpected<Error> bad_signature(const std::string& key_id,
                                               const std::string& subject) {
        return make_error(ErrorCode::Corrupt,
                          fmt::format("bad signature (made by key 0x{})", key_id), subject);
    }
};

Keyring::Keyring(std::string trusted_keys) : impl_(std::make_unique<Impl>()) {
    initialise_rpm();
    impl_->trusted_keys = std::move(trusted_keys);
}
Keyring::~Keyring() = default;
Keyring::Keyring(Keyring&&) noexcept = default;
Keyring& Keyring::operator=(Keyring&&) noexcept = default;

const std::vector<SigningKey>& Keyring::keys() const {
    return impl_->keys;
}

bool Keyring::empty() const {
    return impl_->keys.empty();
}

Result<void> Keyring::add_armored(std::string_view armored, const std::string& source) {
    const std::vector<std::string> blocks = armored_blocks(armored, kKeyBegin, kKeyEnd);
    if (blocks.empty()) {
        return make_error(ErrorCode::BadInput, "holds no PGP PUBLIC KEY BLOCK", source);
    }
    auto validity = read_key_validity(armored, source);
    if (!validity) {
        return tl::unexpected(std::move(validity.error()));
    }
    for (const std::string& block : blocks) {
        const std::optional<Packets> packets = decode_armor(block);
        if (!packets) {
            return make_error(ErrorCode::BadInput, "an unreadable PGP PUBLIC KEY BLOCK", source);
        }
        // A block may hold several certificates, one after the other.
        for (std::size_t offset = 0; offset < packets->size;) {
            std::size_t certificate_size = 0;
            const std::uint8_t* certificate = packets->bytes.get() + offset;
            if (pgpPubKeyCertLen(certificate, packets->size - offset, &certificate_size) != 0 ||
                certificate_size == 0) {
                return make_error(ErrorCode::BadInput, "an unreadable public key", source);
            }
            const RpmPubkey key(rpmPubkeyNew(certificate, certificate_size));
            if (key == nullptr) {
                return make_error(ErrorCode::BadInput, "a public key librpm cannot use", source);
            }
            (void)rpmKeyringAddKey(impl_->keyring.get(), key.get());  // 1: already there
            int subkey_count = 0;
            rpmPubkey* subkeys = rpmGetSubkeys(key.get(), &subkey_count);
            for (int index = 0; index < subkey_count; ++index) {
                const RpmPubkey subkey(subkeys[index]);
                (void)rpmKeyringAddKey(impl_->keyring.get(), subkey.get());
            }
            std::free(subkeys);
            offset += certificate_size;
        }
    }
    for (SigningKey& key : *validity) {
        impl_->keys.push_back(std::move(key));
    }
    return {};
}

Result<void> Keyring::verify_detached(std::string_view data, std::string_view armored_signature,
                                      const std::string& subject) const {
    const std::vector<std::string> blocks =
        armored_blocks(armored_signature, kSignatureBegin, kSignatureEnd);
    std::optional<Packets> packets;
    if (!blocks.empty()) {
        packets = decode_armor(blocks.front());
    }
    pgpDigParams raw_signature = nullptr;
    if (!packets ||
        pgpPrtParams(packets->bytes.get(), packets->size, PGPTAG_SIGNATURE, &raw_signature) != 0) {
        pgpDigParamsFree(raw_signature);
        return make_error(ErrorCode::BadInput, "not a readable OpenPGP signature", subject);
    }
    const PgpParams signature(raw_signature);
    const std::string signer = key_id_hex(pgpDigParamsSignID(signature.get()));
    const RpmDigest digest(
        rpmDigestInit(pgpDigParamsAlgo(signature.get(), PGPVAL_HASHALGO), RPMDIGEST_NONE));
    if (digest == nullptr) {
        return make_error(ErrorCode::Unsupported, "signature uses an unsupported hash algorithm",
                          subject);
    }
    rpmDigestUpdate(digest.get(), data.data(), data.size());
    switch (rpmKeyringVerifySig(impl_->keyring.get(), signature.get(), digest.get())) {
        case RPMRC_OK:
            return impl_->check_validity(
                signer, static_cast<std::int64_t>(pgpDigParamsCreationTime(signature.get())),
                subject);
        case RPMRC_NOKEY:
            return impl_->not_among(signer, subject);
        default:
            return Impl::bad_signature(signer, subject);
    }
}

namespace {

struct PackageSigner {
    std::string key_id;
    std::int64_t signed_at = 0;  // the signature's creation time, seconds since the epoch
};

// Returns the signer of the first OpenPGP signature in the package header `header`, or nullopt
// iff it carries none (RSA/DSA header signatures, and the legacy header+payload ones).
std::optional<PackageSigner> package_signer(Header header) {
    for (const rpmTagVal tag : {RPMTAG_RSAHEADER, RPMTAG_DSAHEADER, RPMTAG_SIGPGP, RPMTAG_SIGGPG}) {
        const RpmTd data(rpmtdNew());
        if (headerGet(header, tag, data.get(), HEADERGET_MINMEM) == 0) {
            continue;
        }
        pgpDigParams raw_signature = nullptr;
        const int parsed = pgpPrtParams(static_cast<const std::uint8_t*>(data->data), data->count,
                                        PGPTAG_SIGNATURE, &raw_signature);
        const PgpParams signature(raw_signature);
        rpmtdFreeData(data.get());
        if (parsed == 0 && signature != nullptr) {
            return PackageSigner{
                key_id_hex(pgpDigParamsSignID(signature.get())),
                static_cast<std::int64_t>(pgpDigParamsCreationTime(signature.get()))};
        }
    }
    return std::nullopt;
}

// Reads the file open as `fd` from its start to its end. Returns an Io error naming `subject`
// iff a read fails: librpm reports a read error as a damaged package, so a failed check is
// taken for a verdict only once the whole file was shown to be readable.
Result<void> read_to_end(const UniqueFd& fd, const std::string& subject) {
    constexpr std::size_t kChunk = 1 << 16;
    std::vector<char> buffer(kChunk);
    for (off_t offset = 0;;) {
        const ssize_t got = ::pread(fd.get(), buffer.data(), buffer.size(), offset);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return make_errno_error("cannot read", subject, errno);
        }
        if (got == 0) {
            return {};
        }
        offset += got;
    }
}

// Returns a librpm file handle on a duplicate of `fd`, positioned at the start.
RpmFd rpm_handle_for(const UniqueFd& fd) {
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
        return nullptr;
    }
    return RpmFd(fdDup(fd.get()));
}

// Returns true iff every digest of the package open as `fd` (header and payload) is good,
// whatever its signatures say. As rpmkeys --checksig reports a bad digest as BAD beside a
// NOKEY or NOTFOUND signature, and dnf takes BAD first, so is a bad digest taken here.
bool digests_are_good(const UniqueFd& fd, const std::string& subject) {
    const RpmTs transaction(rpmtsCreate());
    (void)rpmtsSetVSFlags(transaction.get(), RPMVSF_MASK_NOSIGNATURES);
    (void)rpmtsSetVfyFlags(transaction.get(), RPMVSF_MASK_NOSIGNATURES);
    (void)rpmtsSetVfyLevel(transaction.get(), RPMSIG_DIGEST_TYPE);
    const RpmFd handle = rpm_handle_for(fd);
    rpmQVKArguments_s arguments{};
    return handle != nullptr &&
           rpmVerifySignatures(&arguments, transaction.get(), handle.get(), subject.c_str()) == 0;
}

}  // namespace

Result<std::optional<Rejection>> Keyring::check_package(const std::filesystem::path& path) const {
    const std::string subject = path.string();
    using Verdict = Result<std::optional<Rejection>>;
    const auto reject = [](PackageRejection kind, tl::unexpected<Error> error) -> Verdict {
        return std::optional<Rejection>(Rejection{kind, std::move(error.value())});
    };
    // Never through a symlink: the package is read from a descriptor we opened ourselves.
    const UniqueFd fd(fault::open_for_reading(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        return make_errno_error("cannot open", subject, errno);
    }
    const RpmTs transaction(rpmtsCreate());
    (void)rpmtsSetKeyring(transaction.get(), impl_->keyring.get());
    // Everything checked and a signature required, whatever the local rpm macros say.
    (void)rpmtsSetVSFlags(transaction.get(), RPMVSF_DEFAULT);
    (void)rpmtsSetVfyFlags(transaction.get(), RPMVSF_DEFAULT);
    (void)rpmtsSetVfyLevel(transaction.get(), RPMSIG_SIGNATURE_TYPE | RPMSIG_DIGEST_TYPE);

    Header raw_header = nullptr;
    rpmRC read = RPMRC_FAIL;
    if (const RpmFd handle = rpm_handle_for(fd); handle != nullptr) {
        read = rpmReadPackageFile(transaction.get(), handle.get(), subject.c_str(), &raw_header);
    }
    const RpmHeader header(raw_header);
    if (read == RPMRC_NOTFOUND || header == nullptr) {
        if (auto readable = read_to_end(fd, subject); !readable) {
            return tl::unexpected(std::move(readable.error()));
        }
        if (read == RPMRC_NOTFOUND) {
            return reject(PackageRejection::NotAPackage,
                          make_error(ErrorCode::BadInput, "not an RPM package", subject));
        }
        return reject(
            PackageRejection::BadSignature,
            make_error(ErrorCode::Corrupt, "bad signature or digest (unreadable header)", subject));
    }
    const std::optional<PackageSigner> signer = package_signer(header.get());
    if (!signer || read == RPMRC_NOKEY) {
        // Unsigned or by an unknown key, and maybe changed too: a bad digest says more (dnf:
        // "Problem opening package").
        if (!digests_are_good(fd, subject)) {
            if (auto readable = read_to_end(fd, subject); !readable) {
                return tl::unexpected(std::move(readable.error()));
            }
            return reject(PackageRejection::BadSignature,
                          make_error(ErrorCode::Corrupt,
                                     signer ? fmt::format("bad digest (signed by key 0x{}, "
                                                          "which is not among {})",
                                                          signer->key_id, impl_->trusted_keys)
                                            : std::string("bad digest (not signed)"),
                                     subject));
        }
        if (!signer) {
            return reject(PackageRejection::NotSigned,
                          make_error(ErrorCode::Unsafe, "not signed", subject));
        }
        return reject(PackageRejection::UnknownKey, impl_->not_among(signer->key_id, subject));
    }
    // Header and payload, every signature and digest, as `rpmkeys --checksig` checks them.
    const RpmFd handle = rpm_handle_for(fd);
    rpmQVKArguments_s arguments{};
    if (handle == nullptr ||
        rpmVerifySignatures(&arguments, transaction.get(), handle.get(), subject.c_str()) != 0) {
        if (auto readable = read_to_end(fd, subject); !readable) {
            return tl::unexpected(std::move(readable.error()));
        }
        return reject(PackageRejection::BadSignature, Impl::bad_signature(signer->key_id, subject));
    }
    const std::string& key_id = signer->key_id;
    switch (impl_->standing_of(key_id, signer->signed_at)) {
        case KeyStanding::Valid:
            return std::optional<Rejection>();
        case KeyStanding::Revoked:
            return reject(
                PackageRejection::KeyRevoked,
                make_error(ErrorCode::Unsafe, impl_->describe(key_id) + " is revoked", subject));
        case KeyStanding::ExpiredBeforeSigning:
            return reject(PackageRejection::KeyExpired,
                          make_error(ErrorCode::Unsafe,
                                     fmt::format("{} expired on {}, before it signed ({})",
                                                 impl_->describe(key_id), impl_->expiry_of(key_id),
                                                 format_day(signer->signed_at)),
                                     subject));
        case KeyStanding::ExpiredAfterSigning:
            break;
    }
    return make_error(ErrorCode::Unsafe,
                      fmt::format("{} expired on {}, after it signed ({}): the signature was good "
                                  "when made; not a verdict",
                                  impl_->describe(key_id), impl_->expiry_of(key_id),
                                  format_day(signer->signed_at)),
                      subject);
}

Result<void> Keyring::verify_package(const std::filesystem::path& path) const {
    auto checked = check_package(path);
    if (!checked) {
        return tl::unexpected(std::move(checked.error()));
    }
    if (*checked) {
        return tl::unexpected(std::move((*checked)->error));
    }
    return {};
}

std::string dnf_rejection_message(PackageRejection kind, std::string_view file_name) {
    switch (kind) {
        case PackageRejection::NotSigned:
            return fmt::format("Package {} is not signed", file_name);
        case PackageRejection::UnknownKey:
            return fmt::format("Public key for {} is not installed", file_name);
        case PackageRejection::KeyRevoked:
        case PackageRejection::KeyExpired:
            return fmt::format("Public key for {} is not trusted", file_name);
        case PackageRejection::BadSignature:
        case PackageRejection::NotAPackage:
            break;
    }
    return fmt::format("Problem opening package {}", file_name);
}

Result<Keyring> load_repo_keys(const RepoConfig& repo, const DownloadOptions& options,
                               std::stop_token stop) {
    if (repo.gpgkeys.empty()) {
        return make_error(ErrorCode::BadInput,
                          "signature checking against the repository's keys (repo_gpgcheck, "
                          "--gpgcheck-keys=repo) is on but the repository has no gpgkey",
                          repo.id);
    }
    Keyring keyring;
    for (const std::string& url : repo.gpgkeys) {
        auto text = fetch_document(url, options, kMaxDocumentBytes, stop);
        if (!text) {
            Error error = std::move(text.error());
            error.message = "cannot fetch gpgkey: " + error.message;
            return tl::unexpected(std::move(error));
        }
        if (auto added = keyring.add_armored(*text, url); !added) {
            return tl::unexpected(std::move(added.error()));
        }
    }
    return keyring;
}

namespace {

using RpmDbIterator = Owned<rpmdbMatchIterator, rpmdbFreeIterator>;
using RpmString = std::unique_ptr<char, Releaser<std::free>>;

}  // namespace

namespace {

// The rpm database beneath `root`: at librpm's %_dbpath, else (with `other_paths`) where rpm
// distributions keep it (/var/lib/rpm, /usr/lib/sysimage/rpm). An open transaction set, nullptr
// iff there is no database; Error as load_installed_keys documents.
Result<RpmTs> open_rpm_database(const std::string& root, bool other_paths) {
    initialise_rpm();
    std::error_code error;
    if (!std::filesystem::exists(root, error) && !error) {
        return RpmTs();
    }
    if (!std::filesystem::is_directory(root, error)) {
        return make_error(ErrorCode::NotFound, "installroot is not a directory", root);
    }
    const RpmString configured(rpmGetPath("%{_dbpath}", nullptr));
    std::vector<std::string> paths{configured.get()};
    if (other_paths) {
        paths.insert(paths.end(), {"/var/lib/rpm", "/usr/lib/sysimage/rpm"});
    }
    for (const std::string& path : paths) {
        const std::filesystem::path database =
            std::filesystem::path(root) / std::filesystem::path(path).relative_path();
        if (!std::filesystem::exists(database, error)) {
            continue;
        }
        RpmTs transaction(rpmtsCreate());
        if (rpmtsSetRootDir(transaction.get(), root.c_str()) != 0) {
            return make_error(ErrorCode::BadInput, "librpm refuses it as a root directory", root);
        }
        if (path != configured.get()) {
            rpmPushMacro(nullptr, "_dbpath", nullptr, path.c_str(), RMIL_CMDLINE);
        }
        const int opened = rpmtsOpenDB(transaction.get(), O_RDONLY);
        if (path != configured.get()) {
            rpmPopMacro(nullptr, "_dbpath");
        }
        if (opened != 0) {
            return make_error(ErrorCode::Io, "cannot open the rpm database (librpm)",
                              database.string());
        }
        return transaction;
    }
    return RpmTs();
}

}  // namespace

Result<void> visit_installed_packages(
    const std::filesystem::path& installroot,
    const std::function<void(void* header, const std::string& nevra)>& visit) {
    auto transaction = open_rpm_database(installroot.string(), true);
    if (!transaction) {
        return tl::unexpected(std::move(transaction.error()));
    }
    if (*transaction == nullptr) {
        return {};
    }
    const RpmDbIterator headers(rpmtsInitIterator(transaction->get(), RPMDBI_PACKAGES, nullptr, 0));
    for (Header header = headers == nullptr ? nullptr : rpmdbNextIterator(headers.get());
         header != nullptr; header = rpmdbNextIterator(headers.get())) {
        if (headerIsSource(header) != 0) {
            continue;
        }
        // gpg-pubkey headers have no arch: no package.
        const RpmString nevra(headerGetAsString(header, RPMTAG_NEVRA));
        if (nevra && headerIsEntry(header, RPMTAG_ARCH) != 0) {
            visit(header, nevra.get());
        }
    }
    return {};
}

Result<Keyring> load_installed_keys(const std::filesystem::path& installroot) {
    const std::string root = installroot.empty() ? std::string("/") : installroot.string();
    Keyring keyring("the keys imported in the rpm database of " + root);
    auto transaction = open_rpm_database(root, false);
    if (!transaction) {
        return tl::unexpected(std::move(transaction.error()));
    }
    if (*transaction == nullptr) {
        return keyring;  // no rpm database: no key is trusted (dnf: "… is not installed")
    }
    const RpmDbIterator headers(
        rpmtsInitIterator(transaction->get(), RPMDBI_NAME, "gpg-pubkey", 0));
    for (Header header = headers == nullptr ? nullptr : rpmdbNextIterator(headers.get());
         header != nullptr; header = rpmdbNextIterator(headers.get())) {
        const RpmString name(headerGetAsString(header, RPMTAG_NVR));
        const std::string source =
            fmt::format("{} in the rpm database of {}", name ? name.get() : "gpg-pubkey", root);
        const RpmTd keys(rpmtdNew());
        if (headerGet(header, RPMTAG_PUBKEYS, keys.get(), HEADERGET_MINMEM) == 0) {
            continue;
        }
        for (const char* encoded = rpmtdNextString(keys.get()); encoded != nullptr;
             encoded = rpmtdNextString(keys.get())) {
            void* raw_bytes = nullptr;
            std::size_t size = 0;
            const int decoded = rpmBase64Decode(encoded, &raw_bytes, &size);
            const RpmMemory bytes(static_cast<std::uint8_t*>(raw_bytes));
            if (decoded != 0 || bytes == nullptr || size == 0) {
                rpmtdFreeData(keys.get());
                return make_error(ErrorCode::BadInput, "a stored public key is not base64", source);
            }
            const RpmString armored(pgpArmorWrap(PGPARMOR_PUBKEY, bytes.get(), size));
            if (armored == nullptr) {
                rpmtdFreeData(keys.get());
                return make_error(ErrorCode::BadInput, "a stored public key librpm cannot armor",
                                  source);
            }
            if (auto added = keyring.add_armored(armored.get(), source); !added) {
                rpmtdFreeData(keys.get());
                return tl::unexpected(std::move(added.error()));
            }
        }
        rpmtdFreeData(keys.get());
    }
    return keyring;
}

}  // namespace rpmirror
