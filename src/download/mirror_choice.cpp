#include "download/mirror_choice.hpp"

#include <algorithm>

namespace rpmirror::download {

void mark_failure(std::vector<MirrorMark>& marks, const std::string& base_url, FailureKind kind) {
    auto found = std::find_if(marks.begin(), marks.end(),
                              [&](const MirrorMark& mark) { return mark.base_url == base_url; });
    if (found == marks.end()) {
        marks.push_back(MirrorMark{base_url, false, 0});
        found = marks.end() - 1;
    }
    if (kind == FailureKind::Permanent) {
        found->ruled_out = true;
    } else if (kind == FailureKind::Transient) {
        ++found->transient_failures;
    }
}

std::optional<MirrorChoice> choose_next_mirror(const std::vector<std::string>& order,
                                               const std::vector<MirrorMark>& marks,
                                               const std::string& failed_base, FailureKind kind) {
    if (kind == FailureKind::RestartSame) {
        return MirrorChoice{failed_base, false};
    }
    if (failed_base.empty()) {
        if (kind == FailureKind::Transient) {
            return MirrorChoice{failed_base, true};
        }
        return std::nullopt;
    }
    const MirrorMark* least_failed = nullptr;
    for (const std::string& base : order) {
        const auto known = std::find_if(marks.begin(), marks.end(), [&](const MirrorMark& mark) {
            return mark.base_url == base;
        });
        if (known == marks.end()) {
            return MirrorChoice{base, false};
        }
        if (!known->ruled_out && (least_failed == nullptr ||
                                  known->transient_failures < least_failed->transient_failures)) {
            least_failed = &*known;
        }
    }
    if (least_failed == nullptr) {
        return std::nullopt;
    }
    return MirrorChoice{least_failed->base_url, true};
}

}  // namespace rpmirror::download
