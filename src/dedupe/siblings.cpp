// --dedupe from the siblings' records (see dedupe/siblings.hpp).
#include "dedupe/siblings.hpp"

#include <map>
#include <tuple>

#include "s3/mirror_state.hpp"
#include "store/mirror_store.hpp"
#include "util/text.hpp"

namespace rpmirror::dedupe {

namespace {

// A package of a sibling, by (checksum type, digest, size).
using Identity = std::tuple<ChecksumType, std::string, std::uint64_t>;

struct Source {
    std::string key;  // in the store
    store::Pin pin;
};

// The packages the siblings of `repo` record, by identity (the first sibling's, in name order),
// or the note of the first error.
Result<std::map<Identity, Source>> sibling_packages(store::ObjectStore& objects,
                                                    std::string_view repo) {
    const std::string parent = store::parent_of(repo);
    auto siblings = objects.list_dirs(parent);
    if (!siblings) {
        return tl::unexpected(std::move(siblings.error()));
    }
    std::map<Identity, Source> sources;
    for (const std::string& name : *siblings) {
        const std::string sibling = store::join_key(parent, name);
        if (sibling == repo) {
            continue;
        }
        const std::string state_key = store::join_key(sibling, s3::kStateKey);
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
        for (const auto& [key, object] : state->objects) {
            if (!store::is_package_key(key)) {
                continue;
            }
            const std::string digest = text::to_lower(object.digest);
            sources.try_emplace(
                {object.checksum_type, digest, object.size},
                Source{store::join_key(sibling, key),
                       store::Pin{object.size, object.etag, object.checksum_type, digest}});
        }
    }
    return sources;
}

}  // namespace

SiblingOutcome copy_from_siblings(store::ObjectStore& objects, std::string_view repo,
                                  std::span<const Wanted> wanted,
                                  const store::CopyOptions& options) {
    SiblingOutcome outcome;
    if (wanted.empty() || repo.empty()) {
        return outcome;
    }
    auto sources = sibling_packages(objects, repo);
    if (!sources) {
        outcome.note = "--dedupe: " + sources.error().to_string();
        return outcome;
    }
    for (std::size_t index = 0; index < wanted.size(); ++index) {
        const Wanted& package = wanted[index];
        const auto found =
            sources->find({package.checksum_type, text::to_lower(package.digest), package.size});
        if (found == sources->end()) {
            continue;
        }
        const Source& source = found->second;
        const std::string to = store::join_key(repo, package.key);
        const std::vector<store::CopyRequest> copy{
            {source.key, to, store::CopyMode::Link, source.pin}};
        auto copied = objects.copy(copy, options);
        Result<std::optional<store::ObjectInfo>> object =
            copied ? objects.stat(to) : tl::unexpected(std::move(copied.error()));
        if (!object && object.error().code == ErrorCode::Corrupt) {
            ++outcome.fallbacks;
            continue;
        }
        if (object && !*object) {
            object = tl::unexpected(Error{ErrorCode::NotFound, "gone after its copy", to});
        }
        if (!object) {
            if (outcome.note.empty()) {
                outcome.note = "--dedupe: " + object.error().to_string();
            }
            continue;
        }
        outcome.copied_bytes += package.size;
        outcome.copied.push_back({index, std::move(**object), objects.describe(source.key)});
    }
    return outcome;
}

}  // namespace rpmirror::dedupe
