// The accelerator's run-time proof that the librepo loaded in a process keeps the checksum
// semantics the accelerator reproduces (librepo 1.14.5's, librepo/checksum.c): before the first
// call is served, the same calls go to librepo's functions and to the accelerator's, each on a
// file prepared the same way, and everything either leaves behind must be equal.
//
// What is compared, per call: the return value, *matches, *calculated, the GError (domain, code,
// message), the file offset afterwards, and the file's user.Librepo.* xattrs when the call has
// returned. The calls cover what librepo's own checksum suite and tests/integration/librepo_accel
// cover: each of the six types, a right, a wrong, an upper-case and a NULL expected digest,
// caching off, and a cache that is absent, has only its mtime, is right, is right but answers
// another digest, holds a value that is no digest, or is stale (another mtime, another type
// beside it); through lr_checksum_fd_compare and lr_checksum_fd_cmp.
//
// The check needs a directory where it may create (and at once unlink) a small file with user
// xattrs: librepo's cache lives in them, and a filesystem without them would prove nothing of it.
#pragma once

#include <glib.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rpmirror::librepo_accel {

// The two entry points of one implementation. An accelerator call returns nullopt iff it would
// have handed the call to librepo (which then counts as a difference).
struct ChecksumCalls {
    std::function<std::optional<gboolean>(int type, int fd, const char* expected, gboolean caching,
                                          gboolean* matches, gchar** calculated, GError** err)>
        compare;
    std::function<std::optional<gboolean>(int type, int fd, const char* expected, gboolean caching,
                                          gboolean* matches, GError** err)>
        cmp;
};

struct SelfCheckResult {
    enum class Verdict { Same, Different, Impossible } verdict = Verdict::Impossible;
    std::string detail;               // Different: the first differing call and both sides;
                                      // Impossible: why no directory would do
    std::filesystem::path directory;  // where the check ran (Same, Different)
    int calls = 0;                    // calls compared (each made to both)
};

// Runs every call against `librepo` and `accelerator` on a file created (and unlinked) in the
// first of `directories` that allows it and has user xattrs, its cache entries (before each call)
// named with `prefix` (librepo's XATTR_CHKSUM_PREFIX: "user.Librepo.checksum." up to 1.18,
// "user.librepo.checksum." from 1.19). Every user.librepo.* and user.Librepo.* attribute is
// compared. The files are the caller's own: the check creates nothing that outlives it.
SelfCheckResult self_check(const ChecksumCalls& librepo, const ChecksumCalls& accelerator,
                           const std::vector<std::filesystem::path>& directories,
                           const std::string& prefix);

}  // namespace rpmirror::librepo_accel
