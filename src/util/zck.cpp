#include "util/zck.hpp"

namespace rpmirror {

std::string zck_error_of(zckCtx* ctx, std::string_view what) {
    const char* text = ctx == nullptr ? nullptr : zck_get_error(ctx);
    std::string message(what);
    if (text != nullptr && *text != '\0') {
        std::string detail(text);
        while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) {
            detail.pop_back();
        }
        message += ": " + detail;
    }
    if (ctx != nullptr) {
        const bool cleared = zck_clear_error(ctx);
        (void)cleared;
    }
    return message;
}

void silence_zck_log() {
    static const bool quiet = [] {
        zck_set_log_level(ZCK_LOG_NONE);
        return true;
    }();
    (void)quiet;
}

}  // namespace rpmirror
