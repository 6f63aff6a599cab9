// Keys and signature checks with librpm (see rpmirror/signature.hpp).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <rpm/rpmcli.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmlog.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>

#include <fmt/core.h>

#include "rpmirror/signature.hpp"
#include "signature/gpg_keys.hpp"
#include "signature/handles.hpp"
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

struct Keyring::Impl {
    RpmKeyring keyring{rpmKeyringNew()};
    std::vector<SigningKey> keys;

    const SigningKey* find(const std::string& key_id) const {
        for (const SigningKey& key : keys) {
            if (key.key_id == key_id) {
                return &key;
            }
        }
        return nullptr;
    }

    // Returns an error iff the key `key_id` (which made a good signature) expired or is revoked.
    Result<void> check_validity(const std::string& key_id, const std::string& subject) const {
        const SigningKey* key = find(key_id);
        if (key == nullptr) {
            return {};  // librpm knows a subkey gpg did not list separately: nothing more known
        }
        if (key->is_revoked) {
            return make_error(ErrorCode::Unsafe,
                              fmt::format("key 0x{} ({}) is revoked", key_id, key->user_id),
                              subject);
        }
        if (key->expires && *key->expires <= std::time(nullptr)) {
            return make_error(ErrorCode::Unsafe,
                              fmt::format("key 0x{} ({}) expired on {}", key_id, key->user_id,
                                          format_day(*key->expires)),
                              subject);
        }
        return {};
    }

    static tl::unexpected<Error> not_among(const std::string& key_id, const std::string& subject) {
        return make_error(
            ErrorCode::Unsafe,
            fmt::format("signed with key 0x{} which is not among the repository's gpgkey", key_id),
            subject);
    }

    static tl::unexpected<Error> bad_signature(const std::string& key_id,
                                               const std::string& subject) {
        return make_error(ErrorCode::Corrupt,
                          fmt::format("bad signature (made by key 0x{})", key_id), subject);
    }
};

Keyring::Keyring() : impl_(std::make_unique<Impl>()) {
    initialise_rpm();
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
            return impl_->check_validity(signer, subject);
        case RPMRC_NOKEY:
            return Impl::not_among(signer, subject);
        default:
            return Impl::bad_signature(signer, subject);
    }
}

namespace {

// Returns the key id of the first OpenPGP signature in the package header `header`, or nullopt
// iff it carries none (RSA/DSA header signatures, and the legacy header+payload ones).
std::optional<std::string> package_signer(Header header) {
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
            return key_id_hex(pgpDigParamsSignID(signature.get()));
        }
    }
    return std::nullopt;
}

// Returns a librpm file handle on a duplicate of `fd`, positioned at the start.
RpmFd rpm_handle_for(const UniqueFd& fd) {
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
        return nullptr;
    }
    return RpmFd(fdDup(fd.get()));
}

}  // namespace

Result<void> Keyring::verify_package(const std::filesystem::path& path) const {
    const std::string subject = path.string();
    // Never through a symlink: the package is read from a descriptor we opened ourselves.
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
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
    if (read == RPMRC_NOTFOUND) {
        return make_error(ErrorCode::BadInput, "not an RPM package", subject);
    }
    if (header == nullptr) {
        return make_error(ErrorCode::Corrupt, "bad signature or digest (unreadable header)",
                          subject);
    }
    const std::optional<std::string> signer = package_signer(header.get());
    if (!signer) {
        return make_error(ErrorCode::Unsafe, "not signed", subject);
    }
    if (read == RPMRC_NOKEY) {
        return Impl::not_among(*signer, subject);
    }
    // Header and payload, every signature and digest, as `rpmkeys --checksig` checks them.
    const RpmFd handle = rpm_handle_for(fd);
    rpmQVKArguments_s arguments{};
    if (handle == nullptr ||
        rpmVerifySignatures(&arguments, transaction.get(), handle.get(), subject.c_str()) != 0) {
        return Impl::bad_signature(*signer, subject);
    }
    return impl_->check_validity(*signer, subject);
}

Result<Keyring> load_repo_keys(const RepoConfig& repo, const DownloadOptions& options,
                               std::stop_token stop) {
    if (repo.gpgkeys.empty()) {
        return make_error(ErrorCode::BadInput,
                          "signature checking is on but the repository has no gpgkey", repo.id);
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

}  // namespace rpmirror
