// The one error taxonomy of rpmirror.
//
// Functions that can fail for reasons a user must see return `Result<T>` (tl::expected<T, Error>).
// Exceptions are reserved for programming errors. Every Error names the object it is about
// (a path, a URL, a package) in `subject`, so a message can always say what went wrong where.
#pragma once

#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace rpmirror {

enum class ErrorCode {
    NotFound,     // the file, URL or record does not exist
    Io,           // a system call failed; `sys_errno` says why
    Corrupt,      // content does not match its checksum or size, or changed while being read
    BadInput,     // malformed metadata, configuration or command-line input
    Network,      // a transfer failed
    Unsafe,       // path traversal, symlink escape, hostile content
    Unsupported,  // a valid request rpmirror cannot serve (e.g. an unknown checksum type)
    Interrupted,  // stopped by a signal
    Busy,         // another rpmirror holds the repository directory's lock
};

struct Error {
    ErrorCode code;
    std::string message;  // what was wrong, without the subject ("not a regular file")
    std::string subject;  // the path, URL or package the error is about; may be empty
    int sys_errno = 0;    // errno of the failed system call, or 0

    // Returns "<subject>: <message>[: <strerror(sys_errno)>]".
    std::string to_string() const;
};

template <typename T>
using Result = tl::expected<T, Error>;

// Convenience constructors; all return tl::unexpected so they can be returned directly.
tl::unexpected<Error> make_error(ErrorCode code, std::string message, std::string subject = {},
                                 int sys_errno = 0);
// Returns an Io error (or NotFound iff `sys_errno` is ENOENT) for a failed system call.
tl::unexpected<Error> make_errno_error(std::string message, std::string subject, int sys_errno);

}  // namespace rpmirror
