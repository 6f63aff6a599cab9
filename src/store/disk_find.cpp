// DiskStore::find_content (store/disk_objects.hpp): the trees walked, the files whose size a
// wanted content has hashed (or their checksum cache believed where a record vouches for them).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "fs/beneath.hpp"
#include "fs/walk.hpp"
#include "store/disk_files.hpp"
#include "store/disk_objects.hpp"
#include "util/text.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store::disk_objects {

namespace {

using FileId = std::pair<dev_t, ino_t>;

HashOptions hash_options(const FindOptions& options, bool trusted) {
    HashOptions hash;
    hash.use_cache = trusted && options.use_cache;
    if (hash.use_cache) {
        hash.trust = options.trust;
    }
    hash.stop = options.stop;
    return hash;
}

// One find_content: memory bounded by the wanted contents (and the inodes of size-matching
// files), not by the size of the trees.
class Finder {
  public:
    Finder(DiskStore& store, std::span<const WantedContent> wanted, const FindOptions& options)
        : store_(store),
          wanted_(wanted),
          options_(options),
          hasher_(hash_options(options, true)),
          untrusted_hasher_(hash_options(options, false)) {
        result_.found.assign(wanted.size(), std::nullopt);
    }

    FoundContent run() {
        for (std::size_t index = 0; index < wanted_.size(); ++index) {
            if (wanted_[index].size != kUnknownSize) {
                by_size_[wanted_[index].size].push_back(index);
                ++remaining_;
            }
        }
        if (remaining_ == 0 || !open_near()) {
            return std::move(result_);
        }
        for (const std::string& excluded : options_.excluded) {
            struct stat st {};
            if (check_key(excluded, true) && ::stat(store_.describe(excluded).c_str(), &st) == 0) {
                visited_.insert({st.st_dev, st.st_ino});  // "visited" already: never walked
            }
        }
        for (const std::string& tree : options_.trees) {
            if (remaining_ == 0 || options_.stop.stop_requested()) {
                break;
            }
            search(tree);
        }
        return std::move(result_);
    }

  private:
    // Records the filesystem of options.near (of the nearest directory above it that exists).
    // Returns false (with a note) iff it cannot be looked at: nothing is found.
    bool open_near() {
        std::filesystem::path existing = store_.describe(options_.near);
        struct stat st {};
        while (::stat(existing.c_str(), &st) != 0 && errno == ENOENT &&
               existing.has_relative_path()) {
            existing = existing.parent_path();
        }
        if (::stat(existing.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            const int why = errno != 0 ? errno : ENOTDIR;
            result_.notes.push_back(fmt::format(
                "not deduplicating: {}: {}", store_.describe(options_.near), std::strerror(why)));
            return false;
        }
        device_ = st.st_dev;
        return true;
    }

    void search(const std::string& tree) {
        if (!check_key(tree, true)) {
            return;
        }
        auto opened = store_.open_dir(tree);
        if (!opened || !*opened) {
            if (!opened) {
                result_.notes.push_back("not searched for duplicates: " +
                                        opened.error().to_string());
            }
            return;  // absent, or no directory reached without leaving the root
        }
        UniqueFd root = std::move(*opened);
        struct stat st {};
        if (::fstat(root.get(), &st) != 0 || st.st_dev != device_ ||
            !visited_.insert({st.st_dev, st.st_ino}).second) {
            return;  // another filesystem, excluded, or already walked
        }
        const fs::DescendFilter descend = [this](const std::filesystem::path& relative,
                                                 const struct stat& dir) {
            if (fs::is_metadata_dir_name(relative.filename().string()) || dir.st_dev != device_ ||
                options_.stop.stop_requested()) {
                return false;
            }
            return visited_.insert({dir.st_dev, dir.st_ino}).second;
        };
        const fs::RpmVisitor visit = [&](int dir_fd, const std::string& name,
                                         const std::filesystem::path& relative,
                                         const struct stat& file) -> Result<bool> {
            consider(dir_fd, name, join_key(tree, relative.generic_string()), file);
            return remaining_ > 0 && !options_.stop.stop_requested();
        };
        // Every tree beneath (the repositories and snapshots in it are what is searched).
        if (auto walked = fs::walk_rpm_files(std::move(root), store_.describe(tree), descend, visit,
                                             fs::NestedTrees::Enter);
            !walked) {
            result_.notes.push_back("not searched further for duplicates: " +
                                    walked.error().to_string());
        }
    }

    // Looks at the `*.rpm` file `key` (the entry `name` of `dir_fd`): hashed (or read from the
    // cache) only iff a wanted content not yet found has its size; found for every such content
    // whose digest it has.
    void consider(int dir_fd, const std::string& name, const std::string& key,
                  const struct stat& lstat_result) {
        const auto sized = by_size_.find(static_cast<std::uint64_t>(lstat_result.st_size));
        if (sized == by_size_.end() || lstat_result.st_dev != device_ ||
            !examined_.insert({lstat_result.st_dev, lstat_result.st_ino}).second) {
            return;
        }
        std::set<ChecksumType> types;
        for (const std::size_t index : sized->second) {
            if (!result_.found[index]) {
                types.insert(wanted_[index].type);
            }
        }
        if (types.empty()) {
            return;
        }
        const std::string shown = store_.describe(key);
        UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat before {};
        if (!fd || ::fstat(fd.get(), &before) != 0 || !S_ISREG(before.st_mode) ||
            !fs::same_content(before, lstat_result)) {
            return;  // vanished, replaced or unreadable: not a candidate
        }
        // A hard link makes the file's inode the copy's: one that another user owns, or that
        // group or others may write, could be changed under the copy at any time. A reflink
        // copies: only the bytes matter, and they are hashed.
        const bool ours =
            before.st_uid == ::geteuid() && (before.st_mode & (S_IWGRP | S_IWOTH)) == 0;
        if (!ours && options_.shared) {
            result_.notes.push_back(fmt::format(
                "not linking {}: {} (a hard link would share an inode someone else can change)",
                shown,
                before.st_uid != ::geteuid() ? fmt::format("owned by uid {}", before.st_uid)
                                             : std::string("writable by group or others")));
            return;
        }
        // Its cache entry is believed only iff a record vouches for the file as it is now (the
        // trust, the one rule); a file of someone else's is hashed without touching its cache.
        FileHasher& hasher = ours ? hasher_ : untrusted_hasher_;
        for (const ChecksumType type : types) {
            auto digest = hasher.hash_fd(fd.get(), type, shown);
            if (!digest) {
                continue;
            }
            if (!digest->from_cache) {
                ++result_.hashed;
            }
            // Hashing may have written the file's cache entry (its ctime, and so its version,
            // changed): pinned to the file as it is now iff its content is the one hashed.
            struct stat now {};
            if (::fstat(fd.get(), &now) == 0 && fs::same_content(now, before)) {
                before = now;
            }
            for (const std::size_t index : sized->second) {
                const WantedContent& content = wanted_[index];
                if (result_.found[index] || content.type != type ||
                    text::to_lower(content.digest) != digest->hex) {
                    continue;
                }
                result_.found[index] =
                    FoundFile{key, Pin{static_cast<std::uint64_t>(before.st_size),
                                       disk::info_of(before).version, type, digest->hex}};
                --remaining_;
            }
        }
    }

    DiskStore& store_;
    std::span<const WantedContent> wanted_;
    const FindOptions& options_;
    FileHasher hasher_;
    FileHasher untrusted_hasher_;  // never reads (nor writes) a file's cache entry
    FoundContent result_;
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_size_;
    std::size_t remaining_ = 0;
    dev_t device_ = 0;
    std::set<FileId> visited_;   // directories walked (or excluded)
    std::set<FileId> examined_;  // size-matching files looked at (hard links of one are one)
};

}  // namespace

Result<FoundContent> DiskStore::find_content(std::span<const WantedContent> wanted,
                                             const FindOptions& options) {
    if (auto valid = check_key(options.near, true); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    return Finder(*this, wanted, options).run();
}

}  // namespace rpmirror::store::disk_objects
