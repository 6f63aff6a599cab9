// The link stage (see rpmirror/dedupe/dedupe.hpp).
#include "rpmirror/dedupe/dedupe.hpp"
#include "rpmirror/plan/plan.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/walk.hpp"
#include "rpmirror/download/download.hpp"
#include "store/local_store.hpp"
#include "store/object_store.hpp"
#include "util/text.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

using FileId = std::pair<dev_t, ino_t>;

bool same_content_stat(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
           a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

class Deduper {
  public:
    Deduper(std::span<const DedupeTarget> targets, const DedupeOptions& options)
        : targets_(targets),
          options_(options),
          hasher_(hash_options(options, options.use_cache)),
          untrusted_hasher_(hash_options(options, false)) {
        outcome_.linked.assign(targets.size(), false);
    }

    DedupeOutcome run() {
        if (options_.mode == DedupeMode::Off) {
            return std::move(outcome_);
        }
        for (std::size_t index = 0; index < targets_.size(); ++index) {
            if (targets_[index].size != kUnknownSize) {
                by_size_[targets_[index].size].push_back(index);
                ++remaining_;
            }
        }
        if (remaining_ == 0 || !open_roots()) {
            return std::move(outcome_);
        }
        for (const std::filesystem::path& excluded : options_.excluded) {
            struct stat st {};
            if (::stat(excluded.c_str(), &st) == 0) {
                visited_.insert({st.st_dev, st.st_ino});  // "visited" already: never walked
            }
        }
        std::vector<std::filesystem::path> trees;
        for (const std::filesystem::path& parent : options_.sibling_parents) {
            const std::vector<std::filesystem::path> mirrors = published_mirrors(parent);
            trees.insert(trees.end(), mirrors.begin(), mirrors.end());
        }
        trees.insert(trees.end(), options_.trees.begin(), options_.trees.end());
        for (const std::filesystem::path& tree : trees) {
            if (remaining_ == 0 || options_.stop.stop_requested()) {
                break;
            }
            search(tree);
        }
        return std::move(outcome_);
    }

  private:
    // The subdirectories of `parent` that are mirrors (see DedupeOptions::sibling_parents),
    // sorted; empty iff there are none or `parent` cannot be read.
    std::vector<std::filesystem::path> published_mirrors(
        const std::filesystem::path& parent) const {
        std::vector<std::filesystem::path> mirrors;
        std::error_code error;
        for (std::filesystem::directory_iterator entry(parent, error), end; !error && entry != end;
             entry.increment(error)) {
            std::error_code ignored;
            if (entry->symlink_status(ignored).type() != std::filesystem::file_type::directory) {
                continue;
            }
            const std::filesystem::path repomd = entry->path() / "repodata" / "repomd.xml";
            const bool synced = !options_.state_dir.empty() &&
                                std::filesystem::exists(
                                    sync_state_path(options_.state_dir, entry->path()), ignored);
            if (synced || std::filesystem::symlink_status(repomd, ignored).type() ==
                              std::filesystem::file_type::regular) {
                mirrors.push_back(entry->path());
            }
        }
        std::sort(mirrors.begin(), mirrors.end());
        return mirrors;
    }

    static HashOptions hash_options(const DedupeOptions& options, bool use_cache) {
        HashOptions hash;
        hash.use_cache = use_cache;
        if (use_cache && !options.state_dir.empty()) {
            hash.trust = cache_trust_of_state_dir(options.state_dir);
        }
        hash.stop = options.stop;
        return hash;
    }

    // Records the filesystem of each target's destination root (of the nearest directory above
    // it that exists: the store creates the rest when it links). Returns false iff none can be
    // looked at (nothing can be linked).
    bool open_roots() {
        for (const DedupeTarget& target : targets_) {
            if (roots_.contains(target.root)) {
                continue;
            }
            std::error_code error;
            std::filesystem::path existing = std::filesystem::weakly_canonical(
                std::filesystem::absolute(target.root, error), error);
            const std::filesystem::path root = existing;
            struct stat st {};
            while (!error && ::stat(existing.c_str(), &st) != 0 && errno == ENOENT &&
                   existing.has_relative_path()) {
                existing = existing.parent_path();
            }
            if (error || !S_ISDIR(st.st_mode) || ::stat(existing.c_str(), &st) != 0) {
                const int why = error ? error.value() : errno != 0 ? errno : ENOTDIR;
                outcome_.notes.push_back(fmt::format("not deduplicating: {}: {}",
                                                     target.root.string(), std::strerror(why)));
                continue;
            }
            devices_.insert(st.st_dev);
            roots_.emplace(target.root, Root{root, st.st_dev});
        }
        return !roots_.empty();
    }

    void search(const std::filesystem::path& given) {
        std::error_code error;
        std::filesystem::path tree = std::filesystem::canonical(given, error);
        if (error) {
            tree = given;  // absent (skipped below) or unreadable (its error noted below)
        }
        UniqueFd root = fs::open_directory(tree);
        if (!root) {
            if (errno != ENOENT) {
                outcome_.notes.push_back(fmt::format("not searched for duplicates: {}: {}",
                                                     given.string(), std::strerror(errno)));
            }
            return;
        }
        struct stat st {};
        if (::fstat(root.get(), &st) != 0 || !devices_.contains(st.st_dev) ||
            !visited_.insert({st.st_dev, st.st_ino}).second) {
            return;  // another filesystem, excluded, or already walked
        }
        const fs::DescendFilter descend = [this](const std::filesystem::path& relative,
                                                 const struct stat& dir) {
            const std::string name = relative.filename().string();
            if (fs::is_metadata_dir_name(name) || !devices_.contains(dir.st_dev) ||
                options_.stop.stop_requested()) {
                return false;
            }
            return visited_.insert({dir.st_dev, dir.st_ino}).second;
        };
        const fs::RpmVisitor visit = [&](int dir_fd, const std::string& name,
                                         const std::filesystem::path& relative,
                                         const struct stat& file) -> Result<bool> {
            consider(dir_fd, name, given / relative, tree / relative, file);
            return remaining_ > 0 && !options_.stop.stop_requested();
        };
        // Every tree beneath: the sibling repositories and snapshots are what is searched (and
        // only read).
        if (auto walked =
                fs::walk_rpm_files(std::move(root), tree, descend, visit, fs::NestedTrees::Enter);
            !walked) {
            outcome_.notes.push_back("not searched further for duplicates: " +
                                     walked.error().to_string());
        }
    }

    // Looks at one `*.rpm` file: hashed (or read from the cache) only iff a wanted target on its
    // filesystem has its size; linked to every such target whose digest it has.
    // `shown` names it as the tree was given, `path` by its real directories.
    void consider(int dir_fd, const std::string& name, const std::filesystem::path& shown,
                  const std::filesystem::path& path, const struct stat& lstat_result) {
        const auto sized = by_size_.find(static_cast<std::uint64_t>(lstat_result.st_size));
        if (sized == by_size_.end() || !devices_.contains(lstat_result.st_dev) ||
            !examined_.insert({lstat_result.st_dev, lstat_result.st_ino}).second) {
            return;
        }
        std::set<ChecksumType> types;
        for (const std::size_t index : sized->second) {
            if (!outcome_.linked[index] && on_device(targets_[index], lstat_result.st_dev)) {
                types.insert(targets_[index].type);
            }
        }
        if (types.empty()) {
            return;
        }
        UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat before {};
        if (!fd || ::fstat(fd.get(), &before) != 0 || !S_ISREG(before.st_mode) ||
            !same_content_stat(before, lstat_result)) {
            return;  // vanished, replaced or unreadable: not a candidate
        }
        // A hard link makes the candidate's inode the mirror's: one that another user owns, or
        // that group or others may write, could be changed under the mirror (and its snapshots)
        // at any time. A reflink copies: only the bytes matter, and they are hashed.
        const bool ours =
            before.st_uid == ::geteuid() && (before.st_mode & (S_IWGRP | S_IWOTH)) == 0;
        if (!ours && options_.mode == DedupeMode::Hardlink) {
            outcome_.notes.push_back(fmt::format(
                "not linking {}: {} (a hard link would share an inode someone else can change)",
                shown.string(),
                before.st_uid != ::geteuid() ? fmt::format("owned by uid {}", before.st_uid)
                                             : std::string("writable by group or others")));
            return;
        }
        // Its cache entry is believed only iff a sync state records the file as it is now
        // (hasher_'s CacheTrust, the one rule); a file of someone else's is hashed without
        // touching its cache at all.
        FileHasher& hasher = ours ? hasher_ : untrusted_hasher_;
        for (const ChecksumType type : types) {
            auto digest = hasher.hash_fd(fd.get(), type, shown.string());
            if (!digest) {
                continue;
            }
            if (!digest->from_cache) {
                ++outcome_.hashed;
            }
            for (const std::size_t index : sized->second) {
                const DedupeTarget& target = targets_[index];
                if (outcome_.linked[index] || target.type != type ||
                    text::to_lower(target.digest) != digest->hex ||
                    !on_device(target, before.st_dev)) {
                    continue;
                }
                // Hashing may have written the candidate's cache entry (its ctime, and so its
                // version, changed; so does a hard link): pinned to the file as it is now iff
                // its content is the one hashed.
                struct stat now {};
                if (::fstat(fd.get(), &now) == 0 && same_content_stat(now, before)) {
                    before = now;
                }
                if (link(shown, path, before, target)) {
                    outcome_.linked[index] = true;
                    ++outcome_.linked_count;
                    outcome_.linked_bytes += target.size;
                    --remaining_;
                } else {
                    ++outcome_.fallbacks;
                }
            }
        }
    }

    // True iff `target`'s destination root is open and on the filesystem `device`.
    bool on_device(const DedupeTarget& target, dev_t device) const {
        const auto root = roots_.find(target.root);
        return root != roots_.end() && root->second.device == device;
    }

    // Links the verified candidate `shown` (at `path`; its fstat `verified`, as hashed) to `target`
    // through the store of the directory both lie beneath: a hard link (CopyMode::Link) or a
    // reflink (CopyMode::Clone) under a temporary name renamed to the final name, pinned to the
    // file hashed. Returns false (with a note) iff it could not; nothing is then left behind.
    bool link(const std::filesystem::path& shown, const std::filesystem::path& path,
              const struct stat& verified, const DedupeTarget& target) {
        const Root& root = roots_.find(target.root)->second;  // on_device() found it
        const std::filesystem::path shown_target = target.root / target.destination;
        const std::filesystem::path to = (root.path / target.destination).lexically_normal();
        const std::filesystem::path from = path.lexically_normal();
        // The deepest directory above both: the store the link is made in.
        std::filesystem::path common;
        for (auto a = from.begin(), b = to.begin(); a != from.end() && b != to.end() && *a == *b;
             ++a, ++b) {
            common /= *a;
        }
        const std::string from_key = from.lexically_relative(common).generic_string();
        const std::string to_key = to.lexically_relative(common).generic_string();
        if (!store::check_key(from_key) || !store::check_key(to_key)) {
            note(shown, shown_target, "no common directory");
            return false;
        }
        std::unique_ptr<store::ObjectStore>& objects = stores_[common];
        if (!objects) {
            objects = store::disk_object_store(common);
        }
        const bool reflink = options_.mode == DedupeMode::Reflink;
        store::Pin pin;
        pin.size = static_cast<std::uint64_t>(verified.st_size);
        pin.version = store::LocalStore::version_of(fs::timespec_ns(verified.st_mtim),
                                                    static_cast<std::uint64_t>(verified.st_ino),
                                                    fs::timespec_ns(verified.st_ctim));
        const std::vector<store::CopyRequest> copies{
            {from_key, to_key, reflink ? store::CopyMode::Clone : store::CopyMode::Link, pin}};
        if (auto linked = objects->copy(copies, {}); !linked) {
            const Error& error = linked.error();
            if (error.code == ErrorCode::Corrupt) {
                note(shown, shown_target, "the candidate changed while it was linked");
            } else if (error.sys_errno != 0) {
                note(shown, shown_target,
                     fmt::format("{}: {}", reflink ? "reflink" : "link",
                                 std::strerror(error.sys_errno)));
            } else {
                note(shown, shown_target, error.to_string());
            }
            return false;
        }
        // A .part an interrupted download left: nothing left to resume.
        const std::string part =
            store::join_key(store::parent_of(to_key), part_file_name(store::name_of(to_key)));
        (void)objects->remove(std::span<const std::string>(&part, 1));
        return true;
    }

    void note(const std::filesystem::path& from, const std::filesystem::path& to,
              const std::string& why) {
        outcome_.notes.push_back(fmt::format("not linked {} to {} ({}); downloading it",
                                             from.string(), to.string(), why));
    }

    struct Root {
        std::filesystem::path path;  // canonical (its directories need not exist yet)
        dev_t device = 0;
    };

    std::span<const DedupeTarget> targets_;
    const DedupeOptions& options_;
    FileHasher hasher_;
    FileHasher untrusted_hasher_;  // never reads (nor writes) a candidate's cache entry
    DedupeOutcome outcome_;
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_size_;
    std::size_t remaining_ = 0;
    std::map<std::filesystem::path, Root> roots_;
    std::map<std::filesystem::path, std::unique_ptr<store::ObjectStore>> stores_;  // by directory
    std::set<dev_t> devices_;
    std::set<FileId> visited_;   // directories walked (or excluded)
    std::set<FileId> examined_;  // size-matching files looked at (hard links of one are one)
};

}  // namespace

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

DedupeOutcome dedupe_targets(std::span<const DedupeTarget> targets, const DedupeOptions& options) {
    return Deduper(targets, options).run();
}

}  // namespace rpmirror
