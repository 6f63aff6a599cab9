// ObjectStore::find_content by the trees' state objects (see store/recorded_content.hpp).
#include "store/recorded_content.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "checksum/hasher.hpp"
#include "s3/mirror_state.hpp"
#include "store/mirror_store.hpp"
#include "util/text.hpp"

namespace rpmirror::store {

namespace {

// A content by (checksum type, lowercase digest, size).
using Identity = std::tuple<ChecksumType, std::string, std::uint64_t>;

bool at_or_below(std::string_view key, std::string_view dir) {
    return dir.empty() || key == dir ||
           (key.size() > dir.size() && key.starts_with(dir) && key[dir.size()] == '/');
}

}  // namespace

Result<FoundContent> find_recorded_content(ObjectStore& objects,
                                           std::span<const WantedContent> wanted,
                                           const FindOptions& options) {
    FoundContent result;
    result.found.assign(wanted.size(), std::nullopt);
    std::map<Identity, std::vector<std::size_t>> by_identity;
    for (std::size_t index = 0; index < wanted.size(); ++index) {
        if (wanted[index].size != kUnknownSize) {
            by_identity[{wanted[index].type, text::to_lower(wanted[index].digest),
                         wanted[index].size}]
                .push_back(index);
        }
    }
    std::set<std::string> searched;
    for (const std::string& tree : options.trees) {
        if (by_identity.empty() || options.stop.stop_requested()) {
            break;
        }
        const bool excluded =
            std::any_of(options.excluded.begin(), options.excluded.end(),
                        [&](const std::string& dir) { return at_or_below(tree, dir); });
        if (excluded || !searched.insert(tree).second) {
            continue;
        }
        const std::string state_key = join_key(tree, s3::kStateKey);
        auto json = objects.read(state_key);
        if (!json && json.error().code == ErrorCode::NotFound) {
            continue;  // not a repository rpmirror synced
        }
        if (!json) {
            return tl::unexpected(std::move(json.error()));
        }
        auto state = s3::parse_state(*json, objects.describe(state_key));
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        for (const auto& [relative, object] : state->objects) {
            const std::string key = join_key(tree, relative);
            if (!is_package_key(relative) ||
                std::any_of(options.excluded.begin(), options.excluded.end(),
                            [&](const std::string& dir) { return at_or_below(key, dir); })) {
                continue;
            }
            const std::string digest = text::to_lower(object.digest);
            const auto matching = by_identity.find({object.checksum_type, digest, object.size});
            if (matching == by_identity.end()) {
                continue;
            }
            for (const std::size_t index : matching->second) {
                result.found[index] =
                    FoundFile{key, Pin{object.size, object.etag, object.checksum_type, digest}};
            }
            by_identity.erase(matching);
        }
    }
    return result;
}

}  // namespace rpmirror::store
