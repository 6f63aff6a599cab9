// Move-only owners of the librpm and gpgme handles the signature stage uses, each released by the
// library's own free function.
#pragma once

#include <gpgme.h>
#include <rpm/header.h>
#include <rpm/rpmio.h>
#include <rpm/rpmkeyring.h>
#include <rpm/rpmpgp.h>
#include <rpm/rpmtd.h>
#include <rpm/rpmts.h>

#include <cstdlib>
#include <memory>
#include <type_traits>

namespace rpmirror::signature {

// Calls `Release` on a handle; the library's return value (always NULL or a status) is ignored.
template <auto Release>
struct Releaser {
    template <typename Handle>
    void operator()(Handle* handle) const {
        if (handle != nullptr) {
            (void)Release(handle);
        }
    }
};

template <typename Handle, auto Release>
using Owned = std::unique_ptr<std::remove_pointer_t<Handle>, Releaser<Release>>;

using RpmTs = Owned<rpmts, rpmtsFree>;
using RpmKeyring = Owned<rpmKeyring, rpmKeyringFree>;
using RpmPubkey = Owned<rpmPubkey, rpmPubkeyFree>;
using PgpParams = Owned<pgpDigParams, pgpDigParamsFree>;
using RpmHeader = Owned<Header, headerFree>;
using RpmFd = Owned<FD_t, Fclose>;
using RpmTd = Owned<rpmtd, rpmtdFree>;

inline void finish_digest(DIGEST_CTX context) {
    (void)rpmDigestFinal(context, nullptr, nullptr, 0);
}
using RpmDigest = Owned<DIGEST_CTX, finish_digest>;

// Memory librpm returns with malloc (pgpParsePkts' packets, rpmGetSubkeys' array).
using RpmMemory = std::unique_ptr<std::uint8_t, Releaser<std::free>>;

using GpgContext = Owned<gpgme_ctx_t, gpgme_release>;
using GpgData = Owned<gpgme_data_t, gpgme_data_release>;
using GpgKey = Owned<gpgme_key_t, gpgme_key_unref>;

}  // namespace rpmirror::signature
