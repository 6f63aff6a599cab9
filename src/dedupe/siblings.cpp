// --dedupe from the siblings' records (see dedupe/siblings.hpp).
#include "dedupe/siblings.hpp"

#include <map>
#include <optional>
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
    outcome.linked.assign(wanted.size(), false);
    if (wanted.empty() || repo.empty()) {
        return outcome;
    }
    auto sources = sibling_packages(objects, repo);
    if (!sources) {
        outcome.notes.push_back("--dedupe: " + sources.error().to_string());
        return outcome;
    }
    // The packages a sibling holds, with their copies.
    struct Match {
        std::size_t index;
        const Source* source;
        std::string to;
    };
    std::vector<Match> matches;
    std::vector<store::CopyRequest> batch;
    for (std::size_t index = 0; index < wanted.size(); ++index) {
        const Wanted& package = wanted[index];
        const auto found =
            sources->find({package.checksum_type, text::to_lower(package.digest), package.size});
        if (found != sources->end()) {
            matches.push_back({index, &found->second, store::join_key(repo, package.key)});
            batch.push_back(
                {found->second.key, matches.back().to, store::CopyMode::Link, found->second.pin});
        }
    }
    if (matches.empty()) {
        return outcome;
    }
    // One batch (the store copies several at a time) and one listing of what it made; only when
    // the batch fails is each copy repeated alone, to tell the copies that failed from the rest.
    std::optional<store::ObjectListing> listed;
    if (objects.copy(batch, options)) {
        if (auto listing = objects.list(repo)) {
            listed = std::move(*listing);
        }
    }
    for (const Match& match : matches) {
        Result<std::optional<store::ObjectInfo>> object = std::nullopt;
        if (listed) {
            if (const auto held = listed->find(match.to); held != listed->end()) {
                object = held->second;
            }
        } else {
            const store::CopyRequest alone[] = {
                {match.source->key, match.to, store::CopyMode::Link, match.source->pin}};
            auto copied = objects.copy(alone, options);
            object = copied ? objects.stat(match.to) : tl::unexpected(std::move(copied.error()));
        }
        if (!object && object.error().code == ErrorCode::Corrupt) {
            ++outcome.fallbacks;
            continue;
        }
        if (object && !*object) {
            object = tl::unexpected(Error{ErrorCode::NotFound, "gone after its copy", match.to});
        }
        if (!object) {
            if (outcome.notes.empty()) {
                outcome.notes.push_back("--dedupe: " + object.error().to_string());
            }
            continue;
        }
        outcome.linked[match.index] = true;
        ++outcome.linked_count;
        outcome.linked_bytes += wanted[match.index].size;
        outcome.copied.push_back(
            {match.index, std::move(**object), objects.describe(match.source->key)});
    }
    return outcome;
}

}  // namespace rpmirror::dedupe
