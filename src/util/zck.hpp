// RAII owners of libzck's handles, and its error messages, for every user of libzck (the delta
// download in src/download, the reader in src/index).
#pragma once

// zck.h declares C functions without extern "C".
extern "C" {
#include <zck.h>
}

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace rpmirror {

struct ZckCtxDeleter {
    void operator()(zckCtx* ctx) const { zck_free(&ctx); }
};
struct ZckDlDeleter {
    void operator()(zckDL* dl) const { zck_dl_free(&dl); }
};
struct ZckRangeDeleter {
    void operator()(zckRange* range) const { zck_range_free(&range); }
};
struct ZckTextDeleter {
    void operator()(char* text) const { std::free(text); }  // NOLINT(cppcoreguidelines-no-malloc)
};
using ZckCtx = std::unique_ptr<zckCtx, ZckCtxDeleter>;
using ZckDl = std::unique_ptr<zckDL, ZckDlDeleter>;
using ZckRange = std::unique_ptr<zckRange, ZckRangeDeleter>;
using ZckText = std::unique_ptr<char, ZckTextDeleter>;

// Returns `what`, followed by ": " and libzck's last error on `ctx` (without its trailing
// newline) iff there is one, and clears that error. `ctx` may be null.
std::string zck_error_of(zckCtx* ctx, std::string_view what);

// Stops libzck from logging to stderr (its errors are read from the context instead). Call
// before using libzck; idempotent and thread-safe.
void silence_zck_log();

}  // namespace rpmirror
