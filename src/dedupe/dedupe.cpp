// --dedupe's modes, and the stage that copies duplicates inside the store (dedupe/copies.hpp).
#include <map>
#include <optional>
#include <utility>

#include <fmt/core.h>

#include "dedupe/copies.hpp"
#include "dedupe/dedupe.hpp"
#include "download/download.hpp"
#include "rpmirror/dedupe/dedupe.hpp"

namespace rpmirror {

std::string_view dedupe_mode_name(DedupeMode mode) {
    switch (mode) {
        case DedupeMode::Off:
            return "off";
        case DedupeMode::Hardlink:
            return "hardlink";
        case DedupeMode::Reflink:
            return "reflink";
    }
    return "off";
}

Result<DedupeMode> parse_dedupe_mode(std::string_view text) {
    for (const DedupeMode mode : {DedupeMode::Off, DedupeMode::Hardlink, DedupeMode::Reflink}) {
        if (text == dedupe_mode_name(mode)) {
            return mode;
        }
    }
    return make_error(
        ErrorCode::BadInput,
        fmt::format("unknown dedupe mode '{}' (expected hardlink, reflink or off)", text),
        "dedupe");
}

namespace dedupe {

namespace {

// The key `relative` names from the directory `base` ("a/b" and "../c/d.rpm": "a/c/d.rpm");
// nullopt iff it climbs out of the store.
std::optional<std::string> resolve_key(const std::string& base, const std::string& relative) {
    std::vector<std::string> segments;
    const std::string joined = store::join_key(base, relative);
    for (std::size_t start = 0; start <= joined.size();) {
        std::size_t slash = joined.find('/', start);
        if (slash == std::string::npos) {
            slash = joined.size();
        }
        const std::string segment = joined.substr(start, slash - start);
        start = slash + 1;
        if (segment == "..") {
            if (segments.empty()) {
                return std::nullopt;
            }
            segments.pop_back();
        } else if (!segment.empty() && segment != ".") {
            segments.push_back(segment);
        }
    }
    std::string key;
    for (const std::string& segment : segments) {
        key = store::join_key(key, segment);
    }
    return key;
}

// The directories searched: the mirrors beside the repository, in name order, then the trees.
Result<std::vector<std::string>> trees_of(store::ObjectStore& objects, const Search& search) {
    const std::string parent = store::parent_of(search.where.repository);
    auto beside = objects.list_dirs(parent);
    if (!beside) {
        return tl::unexpected(std::move(beside.error()));
    }
    std::vector<std::string> trees;
    for (const std::string& name : *beside) {
        const std::string sibling = store::join_key(parent, name);
        if (sibling != search.where.repository &&
            (!search.where.mirror || search.where.mirror(sibling))) {
            trees.push_back(sibling);
        }
    }
    trees.insert(trees.end(), search.where.trees.begin(), search.where.trees.end());
    return trees;
}

// A copy to make: the wanted package `index`, from what was found to `to`.
struct Match {
    std::size_t index;
    store::CopyRequest request;
};

}  // namespace

Search search_of(store::Siblings siblings, DedupeMode mode, bool use_cache, std::stop_token stop) {
    return Search{mode, std::move(siblings), use_cache, std::move(stop)};
}

Outcome copy_duplicates(store::ObjectStore& objects, std::span<const Wanted> wanted,
                        const Search& search) {
    Outcome outcome;
    outcome.linked.assign(wanted.size(), false);
    if (search.mode == DedupeMode::Off || wanted.empty() || search.where.repository.empty()) {
        return outcome;
    }
    // What the store is asked for: the packages whose key lies in it.
    std::vector<store::WantedContent> contents;
    std::vector<std::size_t> asked;  // the wanted package of each content
    std::vector<std::string> targets;
    for (std::size_t index = 0; index < wanted.size(); ++index) {
        std::optional<std::string> to = resolve_key(search.where.repository, wanted[index].key);
        if (to && !to->empty()) {
            contents.push_back(
                {wanted[index].checksum_type, wanted[index].digest, wanted[index].size});
            asked.push_back(index);
            targets.push_back(std::move(*to));
        }
    }
    auto trees = trees_of(objects, search);
    if (!trees) {
        outcome.notes.push_back("--dedupe: " + trees.error().to_string());
        return outcome;
    }
    store::FindOptions find;
    find.trees = std::move(*trees);
    find.excluded = search.where.excluded;
    find.excluded.push_back(search.where.repository);
    find.near = search.where.repository;
    find.shared = search.mode == DedupeMode::Hardlink;
    find.use_cache = search.use_cache;
    find.trust = search.where.trust;
    find.stop = search.stop;
    auto found = objects.find_content(contents, find);
    if (!found) {
        outcome.notes.push_back("--dedupe: " + found.error().to_string());
        return outcome;
    }
    outcome.hashed = found->hashed;
    for (std::string& note : found->notes) {
        outcome.notes.push_back("--dedupe: " + std::move(note));
    }
    const store::CopyMode mode =
        search.mode == DedupeMode::Reflink ? store::CopyMode::Clone : store::CopyMode::Link;
    // One copy per package; a file found for several packages is copied once from where it was
    // found (a copy may change its version: a hard link moves its ctime), then from that copy.
    std::vector<Match> matches;
    std::vector<std::pair<std::size_t, Match>> repeats;  // (the match copied first, the repeat)
    std::map<std::string, std::size_t> first_of;         // a found key's match
    std::vector<store::CopyRequest> batch;
    for (std::size_t item = 0; item < contents.size(); ++item) {
        if (const std::optional<store::FoundFile>& file = found->found[item]) {
            Match match{asked[item], {file->key, targets[item], mode, file->pin}};
            if (const auto first = first_of.find(file->key); first != first_of.end()) {
                repeats.emplace_back(first->second, std::move(match));
                continue;
            }
            first_of.emplace(file->key, matches.size());
            batch.push_back(match.request);
            matches.push_back(std::move(match));
        }
    }
    if (matches.empty() || search.stop.stop_requested()) {
        return outcome;
    }
    std::vector<std::string> partials;
    // Settles one copy: `object` is what the store made (described, or nullopt) or why not.
    const auto settle = [&](const Match& match, Result<std::optional<store::ObjectInfo>> object) {
        const store::CopyRequest& request = match.request;
        if (object && search.where.describe_copies && !*object) {
            object = tl::unexpected(
                Error{ErrorCode::NotFound, "gone after its copy", objects.describe(request.to)});
        }
        if (!object) {
            const Error& error = object.error();
            if (error.code == ErrorCode::Corrupt || error.code == ErrorCode::Unsupported) {
                ++outcome.fallbacks;
            }
            outcome.notes.push_back(fmt::format(
                "--dedupe: {} not copied from {} ({}); downloading it",
                objects.describe(request.to), objects.describe(request.from), error.to_string()));
            return;
        }
        outcome.linked[match.index] = true;
        ++outcome.linked_count;
        outcome.linked_bytes += wanted[match.index].size;
        outcome.copied.push_back(
            {match.index, object->value_or(store::ObjectInfo{}), objects.describe(request.from)});
        if (search.where.partials) {
            partials.push_back(store::join_key(store::parent_of(request.to),
                                               part_file_name(store::name_of(request.to))));
        }
    };
    // Copies `request` alone; returns what it made (described iff asked) or why not.
    const auto copy_alone =
        [&](const store::CopyRequest& request) -> Result<std::optional<store::ObjectInfo>> {
        const store::CopyRequest alone[] = {request};
        if (auto copied = objects.copy(alone, search.where.copy); !copied) {
            return tl::unexpected(std::move(copied.error()));
        }
        if (search.where.describe_copies) {
            return objects.stat(request.to);
        }
        return std::optional<store::ObjectInfo>();
    };
    // One batch (the store copies several at a time) and at most one listing of what it made;
    // only when the batch fails is each copy repeated alone, to tell the copies that failed from
    // the rest.
    if (objects.copy(batch, search.where.copy)) {
        std::optional<store::ObjectListing> listed;
        if (search.where.describe_copies) {
            if (auto listing = objects.list(search.where.repository)) {
                listed = std::move(*listing);
            }
        }
        for (const Match& match : matches) {
            if (!search.where.describe_copies) {
                settle(match, std::optional<store::ObjectInfo>());
            } else if (!listed) {
                settle(match, objects.stat(match.request.to));
            } else {
                const auto held = listed->find(match.request.to);
                settle(match, held == listed->end()
                                  ? std::nullopt
                                  : std::optional<store::ObjectInfo>(held->second));
            }
        }
    } else {
        for (const Match& match : matches) {
            settle(match, copy_alone(match.request));
        }
    }
    for (auto& [first, repeat] : repeats) {
        const store::CopyRequest& made = matches[first].request;
        if (!outcome.linked[matches[first].index] || search.stop.stop_requested()) {
            continue;  // left to the download with the first
        }
        // Pinned to the copy as it is now.
        auto now = objects.stat(made.to);
        if (!now || !*now) {
            settle(
                repeat,
                now ? Result<std::optional<store::ObjectInfo>>(tl::unexpected(Error{
                          ErrorCode::NotFound, "gone after its copy", objects.describe(made.to)}))
                    : tl::unexpected(std::move(now.error())));
            continue;
        }
        repeat.request.from = made.to;
        repeat.request.pin->size = (*now)->size;
        repeat.request.pin->version = (*now)->version;
        settle(repeat, copy_alone(repeat.request));
    }
    if (!partials.empty()) {
        (void)objects.remove(partials);  // a download's leftover: nothing left to resume
    }
    return outcome;
}

}  // namespace dedupe

}  // namespace rpmirror
