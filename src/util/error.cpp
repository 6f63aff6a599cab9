#include "rpmirror/util/error.hpp"
#include "util/error.hpp"

#include <cerrno>
#include <cstring>

namespace rpmirror {

std::string_view error_code_name(ErrorCode code) {
    switch (code) {
        case ErrorCode::NotFound:
            return "not-found";
        case ErrorCode::Io:
            return "io";
        case ErrorCode::Corrupt:
            return "corrupt";
        case ErrorCode::BadInput:
            return "bad-input";
        case ErrorCode::Network:
            return "network";
        case ErrorCode::Unsafe:
            return "unsafe";
        case ErrorCode::Unsupported:
            return "unsupported";
        case ErrorCode::Interrupted:
            return "interrupted";
        case ErrorCode::Busy:
            return "busy";
    }
    return "unknown";
}

std::string Error::to_string() const {
    std::string text;
    if (!subject.empty()) {
        text = subject + ": ";
    }
    text += message;
    if (sys_errno != 0) {
        text += ": ";
        text += std::strerror(sys_errno);
    }
    return text;
}

tl::unexpected<Error> make_error(ErrorCode code, std::string message, std::string subject,
                                 int sys_errno) {
    return tl::unexpected<Error>(Error{code, std::move(message), std::move(subject), sys_errno});
}

tl::unexpected<Error> make_errno_error(std::string message, std::string subject, int sys_errno) {
    const ErrorCode code = sys_errno == ENOENT ? ErrorCode::NotFound : ErrorCode::Io;
    return make_error(code, std::move(message), std::move(subject), sys_errno);
}

}  // namespace rpmirror
