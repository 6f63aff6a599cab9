// Signing the repomd.xml a filtered mirror publishes (--sign-key), with the user's own keyring.
#include <mutex>
#include <string>

#include "signature/handles.hpp"
#include "signature/signature.hpp"

namespace rpmirror {

namespace {

tl::unexpected<Error> sign_error(ErrorCode code, const std::string& what, gpgme_error_t error,
                                 const std::string& key_id) {
    return make_error(code, what + ": " + gpgme_strerror(error), "signing key " + key_id);
}

}  // namespace

Result<std::string> sign_detached(std::string_view data, const std::string& key_id) {
    using namespace signature;
    static std::once_flag initialised;
    std::call_once(initialised, [] { (void)gpgme_check_version(nullptr); });
    gpgme_ctx_t raw_context = nullptr;
    if (const gpgme_error_t error = gpgme_new(&raw_context); error != 0) {
        return sign_error(ErrorCode::Unsupported, "cannot start gpgme", error, key_id);
    }
    const GpgContext context(raw_context);
    if (const gpgme_error_t error = gpgme_set_protocol(context.get(), GPGME_PROTOCOL_OpenPGP);
        error != 0) {
        return sign_error(ErrorCode::Unsupported, "cannot set up gpg", error, key_id);
    }
    gpgme_key_t raw_key = nullptr;
    if (const gpgme_error_t error = gpgme_get_key(context.get(), key_id.c_str(), &raw_key, 1);
        error != 0 || raw_key == nullptr) {
        const auto code = gpgme_err_code(error);
        if (code == GPG_ERR_EOF || raw_key == nullptr) {
            return make_error(ErrorCode::NotFound,
                              "no secret key '" + key_id +
                                  "' in the gpg keyring (GNUPGHOME or ~/.gnupg): repomd.xml "
                                  "cannot be signed",
                              "--sign-key " + key_id);
        }
        return sign_error(
            code == GPG_ERR_AMBIGUOUS_NAME ? ErrorCode::BadInput : ErrorCode::Unsupported,
            "cannot find the secret key", error, key_id);
    }
    const GpgKey key(raw_key);
    if (key->revoked != 0 || key->expired != 0 || key->disabled != 0 || key->can_sign == 0) {
        return make_error(ErrorCode::BadInput,
                          "the key '" + key_id + "' is revoked, expired, disabled or cannot sign",
                          "--sign-key " + key_id);
    }
    gpgme_set_armor(context.get(), 1);
    gpgme_signers_clear(context.get());
    if (const gpgme_error_t error = gpgme_signers_add(context.get(), key.get()); error != 0) {
        return sign_error(ErrorCode::BadInput, "cannot use the key", error, key_id);
    }
    gpgme_data_t raw_in = nullptr;
    if (const gpgme_error_t error = gpgme_data_new_from_mem(&raw_in, data.data(), data.size(), 0);
        error != 0) {
        return sign_error(ErrorCode::Io, "cannot hand repomd.xml to gpg", error, key_id);
    }
    const GpgData in(raw_in);
    gpgme_data_t raw_out = nullptr;
    if (const gpgme_error_t error = gpgme_data_new(&raw_out); error != 0) {
        return sign_error(ErrorCode::Io, "cannot make room for the signature", error, key_id);
    }
    const GpgData out(raw_out);
    if (const gpgme_error_t error =
            gpgme_op_sign(context.get(), in.get(), out.get(), GPGME_SIG_MODE_DETACH);
        error != 0) {
        return sign_error(ErrorCode::BadInput, "gpg could not sign repomd.xml", error, key_id);
    }
    std::string signature;
    (void)gpgme_data_seek(out.get(), 0, SEEK_SET);
    char buffer[4096];
    for (;;) {
        const ssize_t n = gpgme_data_read(out.get(), buffer, sizeof buffer);
        if (n < 0) {
            return make_errno_error("cannot read the signature from gpg", "signing key " + key_id,
                                    errno);
        }
        if (n == 0) {
            break;
        }
        signature.append(buffer, static_cast<std::size_t>(n));
    }
    if (signature.empty()) {
        return make_error(ErrorCode::BadInput, "gpg made an empty signature",
                          "signing key " + key_id);
    }
    return signature;
}

}  // namespace rpmirror
