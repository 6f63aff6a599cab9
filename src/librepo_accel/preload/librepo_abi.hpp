// The few librepo 1.14.5 declarations the accelerator needs, declared here because librepo's
// headers (librepo-dev) cannot be installed beside libcurl4-openssl-dev on Debian 12. Each is
// written as librepo 1.14.5 defines it (tag 1.14.5, commit f4b915be5e04e88263097f65addfcac5919fef41
// of github.com/rpm-software-management/librepo); the file it comes from is named on each.
#pragma once

#include <glib.h>

namespace rpmirror::librepo_abi {

// librepo/checksum.h: `typedef enum { LR_CHECKSUM_UNKNOWN, LR_CHECKSUM_MD5, LR_CHECKSUM_SHA1,
// LR_CHECKSUM_SHA224, LR_CHECKSUM_SHA256, LR_CHECKSUM_SHA384, LR_CHECKSUM_SHA512 }
// LrChecksumType;` (a C enum: passed as int).
enum ChecksumType : int {
    kChecksumUnknown = 0,
    kChecksumMd5 = 1,
    kChecksumSha1 = 2,
    kChecksumSha224 = 3,
    kChecksumSha256 = 4,
    kChecksumSha384 = 5,
    kChecksumSha512 = 6,
};

// librepo/rcodes.h, enum LrRc: the codes lr_checksum_fd_compare sets (positions in the enum).
inline constexpr int kLreBadFuncArg = 1;  // LRE_BADFUNCARG
inline constexpr int kLreIo = 14;         // LRE_IO
inline constexpr int kLreFile = 39;       // LRE_FILE

// librepo/rcodes.h: `#define LR_CHECKSUM_ERROR lr_checksum_error_quark()`; librepo/rcodes.c
// defines it as g_quark_from_static_string("lr_checksum_error").
inline constexpr const char* kChecksumErrorDomain = "lr_checksum_error";
using ErrorQuarkFunction = GQuark (*)();

// librepo/xattr_internal.h: XATTR_CHKSUM_PREFIX. librepo 1.19.0 changed it to lower case
// (commit f8b0b59, "Issue #326"), its checksum code otherwise unchanged: entries of one are
// invisible to the other.
inline constexpr const char* kXattrPrefix = "user.Librepo.checksum.";
inline constexpr const char* kXattrPrefix119 = "user.librepo.checksum.";

// librepo/checksum.h.
using CompareFunction = gboolean (*)(int type, int fd, const char* expected, gboolean caching,
                                     gboolean* matches, gchar** calculated, GError** err);
using CmpFunction = gboolean (*)(int type, int fd, const char* expected, gboolean caching,
                                 gboolean* matches, GError** err);

}  // namespace rpmirror::librepo_abi
