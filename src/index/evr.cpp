// EVR comparison through librpm's rpmvercmp, so rpmirror orders versions exactly as rpm and dnf do.
#include <rpm/rpmver.h>

#include <string>

#include "index/index.hpp"

namespace rpmirror {

int compare_versions(std::string_view left, std::string_view right) {
    if (left == right) {
        return 0;
    }
    // rpmvercmp wants NUL-terminated strings; versions are short, so these stay in SSO buffers.
    const std::string left_copy(left);
    const std::string right_copy(right);
    return rpmvercmp(left_copy.c_str(), right_copy.c_str());
}

int compare_evr(const Evr& left, const Evr& right) {
    if (left.epoch != right.epoch) {
        return left.epoch < right.epoch ? -1 : 1;
    }
    if (const int by_version = compare_versions(left.version, right.version); by_version != 0) {
        return by_version;
    }
    return compare_versions(left.release, right.release);
}

}  // namespace rpmirror
