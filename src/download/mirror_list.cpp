#include <algorithm>
#include <memory>
#include <mutex>

#include "download/download.hpp"

namespace rpmirror {

struct MirrorList::State {
    struct Mirror {
        std::string base_url;
        unsigned consecutive_failures = 0;
    };
    mutable std::mutex mutex;
    std::vector<Mirror> mirrors;
    unsigned demote_after = 1;
};

MirrorList::MirrorList(std::vector<std::string> base_urls, unsigned demote_after)
    : state_(std::make_unique<State>()) {
    state_->demote_after = std::max(1U, demote_after);
    for (auto& base_url : base_urls) {
        state_->mirrors.push_back(State::Mirror{std::move(base_url), 0});
    }
}

MirrorList::~MirrorList() = default;

std::vector<std::string> MirrorList::order() const {
    std::lock_guard lock(state_->mutex);
    std::vector<std::string> urls;
    urls.reserve(state_->mirrors.size());
    for (const auto& mirror : state_->mirrors) {
        urls.push_back(mirror.base_url);
    }
    return urls;
}

std::size_t MirrorList::size() const {
    std::lock_guard lock(state_->mutex);
    return state_->mirrors.size();
}

void MirrorList::record_success(std::string_view base_url) {
    std::lock_guard lock(state_->mutex);
    for (auto& mirror : state_->mirrors) {
        if (mirror.base_url == base_url) {
            mirror.consecutive_failures = 0;
        }
    }
}

void MirrorList::record_failure(std::string_view base_url) {
    std::lock_guard lock(state_->mutex);
    const auto found =
        std::find_if(state_->mirrors.begin(), state_->mirrors.end(),
                     [&](const State::Mirror& mirror) { return mirror.base_url == base_url; });
    if (found == state_->mirrors.end()) {
        return;
    }
    if (++found->consecutive_failures >= state_->demote_after) {
        found->consecutive_failures = 0;
        std::rotate(found, found + 1,
                    state_->mirrors.end());  // to the back, the others keep their order
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
