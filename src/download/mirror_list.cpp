#include <algorithm>

#include "rpmirror/download/download.hpp"

namespace rpmirror {

MirrorList::MirrorList(std::vector<std::string> base_urls, unsigned demote_after)
    : demote_after_(std::max(1U, demote_after)) {
    for (auto& base_url : base_urls) {
        mirrors_.push_back(Mirror{std::move(base_url), 0});
    }
}

std::vector<std::string> MirrorList::order() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> urls;
    urls.reserve(mirrors_.size());
    for (const auto& mirror : mirrors_) {
        urls.push_back(mirror.base_url);
    }
    return urls;
}

std::size_t MirrorList::size() const {
    std::lock_guard lock(mutex_);
    return mirrors_.size();
}

void MirrorList::record_success(std::string_view base_url) {
    std::lock_guard lock(mutex_);
    for (auto& mirror : mirrors_) {
        if (mirror.base_url == base_url) {
            mirror.consecutive_failures = 0;
        }
    }
}

void MirrorList::record_failure(std::string_view base_url) {
    std::lock_guard lock(mutex_);
    const auto found = std::find_if(mirrors_.begin(), mirrors_.end(), [&](const Mirror& mirror) {
        return mirror.base_url == base_url;
    });
    if (found == mirrors_.end()) {
        return;
    }
    if (++found->consecutive_failures >= demote_after_) {
        found->consecutive_failures = 0;
        std::rotate(found, found + 1, mirrors_.end());  // to the back, the others keep their order
    }
}

std::string part_file_name(std::string_view name) {
    // Built with append(): GCC 12 at -O3 warns (-Wrestrict, a false positive) on "." + name.
    std::string part;
    part.reserve(name.size() + 6);
    part.push_back('.');
    part.append(name);
    part.append(".part");
    return part;
}

}  // namespace rpmirror
