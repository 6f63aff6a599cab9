#include "signature/gpg_keys.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>

#include "fs/scratch_dir.hpp"
#include "signature/handles.hpp"

namespace rpmirror::signature {

namespace {

std::optional<std::int64_t> expiry_of(long seconds) {
    return seconds > 0 ? std::optional<std::int64_t>(seconds) : std::nullopt;
}

tl::unexpected<Error> gpg_error(ErrorCode code, const std::string& what, gpgme_error_t error,
                                const std::string& source) {
    return make_error(code, what + ": " + gpgme_strerror(error), source);
}

}  // namespace

Result<std::vector<SigningKey>> read_key_validity(std::string_view armored,
                                                  const std::string& source) {
    static std::once_flag initialised;
    std::call_once(initialised, [] { (void)gpgme_check_version(nullptr); });
    auto home = ScratchDir::create("rpmirror-gpg");  // a private, empty gpg home
    if (!home) {
        return tl::unexpected(std::move(home.error()));
    }
    gpgme_ctx_t raw_context = nullptr;
    if (const gpgme_error_t error = gpgme_new(&raw_context); error != 0) {
        return gpg_error(ErrorCode::Unsupported, "cannot start gpgme", error, source);
    }
    const GpgContext context(raw_context);
    if (const gpgme_error_t error = gpgme_ctx_set_engine_info(context.get(), GPGME_PROTOCOL_OpenPGP,
                                                              nullptr, home->path().c_str());
        error != 0) {
        return gpg_error(ErrorCode::Unsupported, "cannot set up gpg", error, source);
    }
    gpgme_data_t raw_data = nullptr;
    if (const gpgme_error_t error =
            gpgme_data_new_from_mem(&raw_data, armored.data(), armored.size(), 0);
        error != 0) {
        return gpg_error(ErrorCode::Io, "cannot hand the key to gpg", error, source);
    }
    const GpgData data(raw_data);
    // Lists the certificates in the data without importing them (gpg --show-keys).
    if (const gpgme_error_t error = gpgme_op_keylist_from_data_start(context.get(), data.get(), 0);
        error != 0) {
        return gpg_error(ErrorCode::BadInput, "gpg cannot read the key", error, source);
    }
    std::vector<SigningKey> keys;
    for (;;) {
        gpgme_key_t raw_key = nullptr;
        const gpgme_error_t error = gpgme_op_keylist_next(context.get(), &raw_key);
        if (gpgme_err_code(error) == GPG_ERR_EOF) {
            break;
        }
        if (error != 0) {
            return gpg_error(ErrorCode::BadInput, "gpg cannot read the key", error, source);
        }
        const GpgKey key(raw_key);
        const std::string user_id =
            key->uids != nullptr && key->uids->uid != nullptr ? key->uids->uid : "";
        const gpgme_subkey_t primary = key->subkeys;
        for (gpgme_subkey_t subkey = key->subkeys; subkey != nullptr; subkey = subkey->next) {
            if (subkey->keyid == nullptr) {
                continue;
            }
            SigningKey signing_key;
            signing_key.key_id = subkey->keyid;
            signing_key.user_id = user_id;
            signing_key.expires = expiry_of(subkey->expires);
            if (const auto primary_expiry = expiry_of(primary->expires);
                primary_expiry &&
                (!signing_key.expires || *primary_expiry < *signing_key.expires)) {
                signing_key.expires = primary_expiry;
            }
            signing_key.is_revoked = key->revoked != 0 || subkey->revoked != 0;
            signing_key.source = source;
            keys.push_back(std::move(signing_key));
        }
    }
    if (keys.empty()) {
        return make_error(ErrorCode::BadInput, "holds no OpenPGP public key", source);
    }
    return keys;
}

}  // namespace rpmirror::signature
