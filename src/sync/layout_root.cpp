// An --upstream-layout root's releases and blobs, over its ObjectStore (sync/layout_root.hpp).
#include "sync/layout_root.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>

#include <fmt/core.h>

#include "diff/stored.hpp"
#include "fs/tree.hpp"
#include "fs/walk.hpp"
#include "metadata/metadata.hpp"
#include "s3/mirror_state.hpp"
#include "sync/catalogue.hpp"

namespace rpmirror {

namespace {

// The key of a repository's index, the name of a release's record of its last sync, and the
// key of the record at the layout root that a release is being removed (followed by the
// release's key).
constexpr std::string_view kIndexKey = "repodata/repomd.xml";
constexpr std::string_view kReleaseName = "release";
constexpr std::string_view kRemovingPrefix = ".rpmirror/removing/";

// The repositories below the root: each key ending in repodata/repomd.xml, outside rpmirror's
// reserved names (metadata and staging directories, snapshots being built, its own).
std::vector<std::string> repositories_in(const store::ObjectListing& listing) {
    std::vector<std::string> trees;
    for (const auto& [key, info] : listing) {
        if (key == kIndexKey) {
            trees.emplace_back();
        } else if (key.size() > kIndexKey.size() && key.ends_with(kIndexKey) &&
                   key[key.size() - kIndexKey.size() - 1] == '/') {
            std::string tree = key.substr(0, key.size() - kIndexKey.size() - 1);
            if (!fs::is_reserved_key(tree)) {
                trees.push_back(std::move(tree));
            }
        }
    }
    return trees;
}

// One --keep-releases removal (collect_layout's contract).
class ReleaseRemoval {
  public:
    ReleaseRemoval(store::ObjectStore& root, const store::ObjectListing& listing,
                   ReleaseClock& clock, const LayoutCollection& what, const LockRelease& lock,
                   LayoutRemovals& removed, std::vector<std::string>& warnings)
        : root_(root),
          listing_(listing),
          clock_(clock),
          what_(what),
          lock_(lock),
          removed_(removed),
          warnings_(warnings) {}

    // Removes `tree`; false (with a warning) iff it is not gone.
    bool remove(const std::string& tree) {
        const std::string shown = clock_.shown(tree);
        auto held = lock_(tree);  // not while another run syncs or repairs it
        if (!held) {
            return refuse(shown, held.error());
        }
        const std::string marker = std::string(kRemovingPrefix) + tree;
        if (auto marked = root_.put(marker, tree + "\n"); !marked) {
            return refuse(shown, marked.error());
        }
        // The mirror lists naming it (no client is sent to it any more), then its index (it
        // stops being a repository), then the rest of it but a bucket's lease, which goes with
        // the lock.
        std::vector<std::string> lists;
        if (!what_.mirror_url.empty()) {
            const std::string names_it = what_.mirror_url + tree + "/\n";
            for (const auto& [key, info] : listing_) {
                if (store::name_of(key) != "mirror.list" || key.starts_with(tree + "/")) {
                    continue;
                }
                if (auto text = root_.read(key); text && *text == names_it) {
                    lists.push_back(key);
                }
            }
        }
        auto files = root_.list(tree);
        if (!files) {
            return unfinished(shown, files.error());
        }
        std::vector<std::string> index;
        std::vector<std::string> rest;
        for (const auto& [key, info] : *files) {
            const std::string_view relative = std::string_view(key).substr(tree.size() + 1);
            if (relative == kIndexKey) {
                index.push_back(key);
            } else if (relative != s3::kLockKey) {
                rest.push_back(key);
            }
        }
        for (const std::vector<std::string>* batch : {&lists, &index, &rest}) {
            if (auto gone = root_.remove(*batch); !gone) {
                return unfinished(shown, gone.error());
            }
        }
        clock_.forget(tree);
        held->reset();
        // Its directories, emptied (innermost first: those a killed run emptied too), those of
        // the mirror lists, then the record of the removal.
        std::vector<std::string> dirs = directories_below(tree);
        dirs.push_back(tree);
        for (const std::string& key : lists) {
            dirs.push_back(store::parent_of(key));
        }
        std::sort(dirs.begin(), dirs.end(), [](const std::string& a, const std::string& b) {
            const auto depth = [](const std::string& key) {
                return std::count(key.begin(), key.end(), '/');
            };
            return depth(a) != depth(b) ? depth(a) > depth(b) : a < b;
        });
        for (const std::string& dir : dirs) {
            root_.remove_empty_dirs(dir);
        }
        if (auto done = root_.remove(std::span(&marker, 1)); done) {
            root_.remove_empty_dirs(store::parent_of(marker));
        }
        removed_.files.insert(removed_.files.end(), lists.begin(), lists.end());
        removed_.releases.push_back(tree);
        return true;
    }

  private:
    // Every directory below `tree` (a bucket's are its keys' prefixes).
    std::vector<std::string> directories_below(const std::string& tree) {
        std::vector<std::string> found;
        std::vector<std::string> pending{tree};
        while (!pending.empty()) {
            const std::string dir = std::move(pending.back());
            pending.pop_back();
            auto names = root_.list_dirs(dir);
            if (!names) {
                continue;  // best effort: what is left is the next run's
            }
            for (const std::string& name : *names) {
                found.push_back(store::join_key(dir, name));
                pending.push_back(found.back());
            }
        }
        return found;
    }

    bool refuse(const std::string& shown, const Error& why) {
        warnings_.push_back(
            fmt::format("--keep-releases: {} not removed: {}", shown, why.to_string()));
        return false;
    }

    bool unfinished(const std::string& shown, const Error& why) {
        warnings_.push_back(fmt::format("--keep-releases: {}: {}; the next run removes the rest",
                                        shown, why.to_string()));
        return false;
    }

    store::ObjectStore& root_;
    const store::ObjectListing& listing_;
    ReleaseClock& clock_;
    const LayoutCollection& what_;
    const LockRelease& lock_;
    LayoutRemovals& removed_;
    std::vector<std::string>& warnings_;
};

// --keep-releases: the releases to remove (collect_layout's contract), those a killed run began
// removing first; the rest of `trees` is left there.
Result<std::vector<std::string>> releases_to_remove(const store::ObjectListing& listing,
                                                    const std::vector<std::string>& trees,
                                                    ReleaseClock& clock,
                                                    const LayoutCollection& what,
                                                    std::vector<std::string>& warnings) {
    std::vector<std::string> doomed;
    for (auto it = listing.lower_bound(std::string(kRemovingPrefix));
         it != listing.end() && it->first.starts_with(kRemovingPrefix); ++it) {
        doomed.push_back(it->first.substr(kRemovingPrefix.size()));
    }
    std::vector<std::pair<std::int64_t, std::string>> releases;
    for (const std::string& tree : trees) {
        if (!is_release_of(what.mine, tree) ||
            std::find(doomed.begin(), doomed.end(), tree) != doomed.end()) {
            continue;
        }
        auto synced = clock.last_synced(tree);
        if (!synced && synced.error().code == ErrorCode::Corrupt) {
            warnings.push_back(fmt::format("--keep-releases: {}: {}: left in place",
                                           clock.shown(tree), synced.error().message));
        } else if (!synced) {
            return tl::unexpected(std::move(synced.error()));
        } else if (!*synced) {
            warnings.push_back(fmt::format(
                "--keep-releases: {} was not synced by rpmirror{}: left in place (and not counted)",
                clock.shown(tree), clock.kept_by()));
        } else {
            releases.emplace_back(**synced, tree);
        }
    }
    std::sort(releases.begin(), releases.end(), std::greater<>());
    for (std::size_t position = what.keep_releases - 1; position < releases.size(); ++position) {
        doomed.push_back(releases[position].second);
    }
    return doomed;
}

}  // namespace

RecordName layout_catalogue_name() {
    return {".upstream-layout-catalogue", ".rpmirror/upstream-layout-catalogue.json"};
}

ReleaseClock::ReleaseClock(Made, store::MirrorStore* root, store::ObjectStore& objects)
    : root_(root), objects_(objects) {
    apart_ = root_ != nullptr && root_->record_of("", kReleaseName).apart;
}

std::unique_ptr<ReleaseClock> ReleaseClock::open(store::MirrorStore& root,
                                                 store::ObjectStore& objects) {
    return std::make_unique<ReleaseClock>(Made{}, &root, objects);
}

std::unique_ptr<ReleaseClock> ReleaseClock::in_objects(store::ObjectStore& objects) {
    return std::make_unique<ReleaseClock>(Made{}, nullptr, objects);
}

ReleaseClock::Where ReleaseClock::where(const std::string& tree) const {
    if (root_ == nullptr) {
        return {nullptr, &objects_, store::record_key(tree, kReleaseName)};
    }
    store::RecordPlace place = root_->record_of(tree, kReleaseName);
    store::ObjectStore* objects = place.objects.get();
    return {std::move(place.objects), objects, std::move(place.key)};
}

Result<void> ReleaseClock::mark(const std::string& tree) {
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    const Where record = where(tree);
    return record.objects->put(record.key, std::to_string(now.count()) + "\n");
}

Result<std::optional<std::int64_t>> ReleaseClock::last_synced(const std::string& tree) {
    const Where record = where(tree);
    auto text = record.objects->read(record.key);
    if (!text) {
        if (text.error().code == ErrorCode::NotFound) {
            return std::optional<std::int64_t>();
        }
        return tl::unexpected(std::move(text.error()));
    }
    std::int64_t when = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), when);
    if (error != std::errc() || end == text->data()) {
        return make_error(ErrorCode::Corrupt, "its record is not a time", shown(tree));
    }
    return std::optional<std::int64_t>(when);
}

void ReleaseClock::forget(const std::string& tree) {
    if (apart_) {
        const Where record = where(tree);
        (void)record.objects->remove(std::span(&record.key, 1));
    }
}

std::string ReleaseClock::shown(const std::string& tree) const {
    // A directory by its path; a prefix, whose record went with it, ending in '/'.
    return objects_.describe(tree) + (apart_ ? "" : "/");
}

std::string_view ReleaseClock::kept_by() const {
    return apart_ ? " with this state directory" : "";
}

Result<LayoutRemovals> collect_layout(store::ObjectStore& root, StoredRecord& blobs,
                                      ReleaseClock& clock, const LayoutCollection& what,
                                      const ListedBy& listed_by, const LockRelease& lock,
                                      std::vector<std::string>& warnings) {
    LayoutRemovals removed;
    if (what.keep_releases == 0 && blobs.files().empty()) {
        return removed;  // nothing rpmirror's to remove: the root is not read
    }
    // The root as it is now (other releases may have been published since this sync began).
    auto listing = root.list("");
    if (!listing) {
        return tl::unexpected(std::move(listing.error()));
    }
    std::vector<std::string> trees = repositories_in(*listing);
    if (what.keep_releases > 0) {
        auto doomed = releases_to_remove(*listing, trees, clock, what, warnings);
        if (!doomed) {
            return tl::unexpected(std::move(doomed.error()));
        }
        ReleaseRemoval removal(root, *listing, clock, what, lock, removed, warnings);
        for (const std::string& tree : *doomed) {
            if (removal.remove(tree)) {
                std::erase(trees, tree);
            }
        }
    }
    if (blobs.files().empty()) {
        return removed;
    }
    // Every package every repository beneath the root lists.
    std::set<std::string> referenced;
    for (const std::string& tree : trees) {
        auto keys = listed_by(tree);
        if (!keys) {
            warnings.push_back("no blob deleted: the repositories beneath " + root.describe("") +
                               " cannot all be read: " + keys.error().to_string());
            return removed;
        }
        referenced.insert(keys->begin(), keys->end());
    }
    auto gone = collect_unlisted(root, blobs, referenced, warnings);
    if (!gone) {
        return tl::unexpected(std::move(gone.error()));
    }
    for (std::string& key : *gone) {
        root.remove_empty_dirs(store::parent_of(key));
        removed.files.push_back(std::move(key));
    }
    return removed;
}

LayoutRoot::LayoutRoot(store::MirrorRoot root) : root_(std::move(root)) {
    store_ = root_.repository("");
    clock_ = ReleaseClock::open(*store_, root_.objects());
}

Result<LayoutRoot> LayoutRoot::open(const std::filesystem::path& root,
                                    const std::filesystem::path& state_dir,
                                    const std::optional<s3::S3Overrides>& s3) {
    auto opened = store::MirrorRoot::open(root.native(), {state_dir, s3});
    if (!opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    return LayoutRoot(std::move(*opened));
}

LockRelease LayoutRoot::release_locks() {
    return
        [this](const std::string& tree) { return root_.repository(tree)->lock(std::nullopt, {}); };
}

ListedBy LayoutRoot::listed_by() {
    return [this](const std::string& tree) -> Result<std::vector<std::string>> {
        if (!scratch_) {
            auto scratch = ScratchDir::create("rpmirror-layout");
            if (!scratch) {
                return tl::unexpected(std::move(scratch.error()));
            }
            scratch_.emplace(std::move(*scratch));
        }
        store::ObjectStore& objects = root_.objects();
        auto contents = read_repository_below(objects, tree, objects.describe(tree),
                                              scratch_->path() / "repositories");
        if (!contents) {
            return tl::unexpected(std::move(contents.error()));
        }
        // Hrefs as keys below the root: one climbing above it is refused.
        PathPolicy policy;
        policy.safe_write_path = "/";
        policy.repo_root = std::filesystem::path("/") / tree;
        std::vector<std::string> keys;
        keys.reserve(contents->packages.size());
        for (std::size_t position = 0; position < contents->packages.size(); ++position) {
            const PackageView package = contents->packages[position];
            auto relative = safe_relative_path(package.location_href, package.nevra(), policy);
            if (!relative) {
                return tl::unexpected(std::move(relative.error()));
            }
            keys.push_back(
                (std::filesystem::path(tree) / *relative).lexically_normal().generic_string());
        }
        return keys;
    };
}

}  // namespace rpmirror
