// The ObjectStore in memory (store/object_store.hpp), for unit tests of the stages above it: a
// map from key to content. A hard link is a shared content (its use count is ObjectInfo::links),
// a tree is built under a temporary sibling prefix and moved into place, an alias is an entry of
// its own that names its tree.
#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/core.h>

#include "fs/durable.hpp"
#include "fs/tree.hpp"
#include "store/object_store.hpp"
#include "store/recorded_content.hpp"
#include "store/staging.hpp"

namespace rpmirror::store {

namespace memory_objects {
namespace {

struct Content {
    std::string bytes;
};

struct File {
    std::shared_ptr<Content> content;
    std::string version;
};

bool is_below(std::string_view key, std::string_view prefix) {
    return prefix.empty() ||
           (key.size() > prefix.size() && key.starts_with(prefix) && key[prefix.size()] == '/');
}

class MemoryStore;

class MemoryTree final : public TreeBuild {
  public:
    MemoryTree(MemoryStore& store, std::string key, std::string staging)
        : store_(store), key_(std::move(key)), staging_(std::move(staging)) {}
    ~MemoryTree() override;

    const std::string& staging() const override { return staging_; }
    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) override;
    Result<void> copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                           const CopyOptions& options) override;
    Result<void> put(std::string_view relative, std::string_view bytes) override;
    Result<void> commit(RepoLock* lock) override;

  private:
    MemoryStore& store_;
    std::string key_;
    std::string staging_;
    bool committed_ = false;
};

class MemoryStore final : public ObjectStore {
  public:
    std::string describe(std::string_view key) const override {
        return fmt::format("memory:{}", key);
    }

    Result<std::optional<ObjectInfo>> stat(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const auto found = files_.find(std::string(key));
        if (found == files_.end()) {
            return std::optional<ObjectInfo>();
        }
        return std::optional<ObjectInfo>(info_of(found->second));
    }

    Result<ObjectListing> list(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        ObjectListing listing;
        for (const auto& [key, file] : files_) {
            if (is_below(key, prefix)) {
                listing.emplace(key, info_of(file));
            }
        }
        return listing;
    }

    Result<std::vector<std::string>> list_dirs(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        std::set<std::string> names;
        for (const std::string& dir : dirs_) {
            if (is_below(dir, prefix)) {
                const std::string_view rest =
                    std::string_view(dir).substr(prefix.empty() ? 0 : prefix.size() + 1);
                if (rest.find('/') == std::string_view::npos) {
                    names.insert(std::string(rest));
                }
            }
        }
        return std::vector<std::string>(names.begin(), names.end());
    }

    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override {
        auto bytes = read(key);
        if (!bytes) {
            return tl::unexpected(std::move(bytes.error()));
        }
        const std::filesystem::path path = scratch / std::string(key);
        if (auto made = fs::make_directories(path.parent_path()); !made) {
            return tl::unexpected(std::move(made.error()));
        }
        if (auto written = fs::write_file(path, *bytes); !written) {
            return tl::unexpected(std::move(written.error()));
        }
        return path;
    }

    Result<std::string> read(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const auto found = files_.find(std::string(key));
        if (found == files_.end()) {
            if (dirs_.contains(std::string(key)) || aliases_.contains(std::string(key))) {
                return make_error(ErrorCode::Unsafe, "not a regular file", describe(key));
            }
            return make_error(ErrorCode::NotFound, "no such file", describe(key));
        }
        return found->second.content->bytes;
    }

    Result<void> put(std::string_view key, std::string_view bytes) override {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        if (dirs_.contains(std::string(key)) || aliases_.contains(std::string(key))) {
            return make_error(ErrorCode::Io, "is a directory", describe(key));
        }
        store_file(std::string(key), std::make_shared<Content>(Content{std::string(bytes)}));
        return {};
    }

    Result<void> put_file(std::string_view key, const std::filesystem::path& path) override {
        std::FILE* file = std::fopen(path.c_str(), "rb");
        if (file == nullptr) {
            return make_errno_error("cannot open", path.string(), errno);
        }
        std::string bytes;
        char buffer[4096];
        for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, file)) > 0;) {
            bytes.append(buffer, got);
        }
        const bool failed = std::ferror(file) != 0;
        std::fclose(file);
        if (failed) {
            return make_error(ErrorCode::Io, "cannot read", path.string());
        }
        return put(key, bytes);
    }

    // A spool committed in wait(), on its caller's thread (the store is not thread-safe).
    Result<std::unique_ptr<Staging>> stage(const StageOptions& options) override {
        return spool_staging(
            options, false,
            [this](std::atomic<std::uint64_t>&) -> CommitFile {
                return [this](const StagedFile& staged,
                              const std::filesystem::path& file) -> Result<ObjectInfo> {
                    if (auto put = put_file(staged.key, file); !put) {
                        return tl::unexpected(std::move(put.error()));
                    }
                    auto info = stat(staged.key);
                    if (!info || !*info) {
                        return make_error(ErrorCode::Io, "vanished", describe(staged.key));
                    }
                    return std::move(**info);
                };
            },
            [this](std::string_view key) { return describe(key); });
    }

    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions&) override {
        for (const CopyRequest& request : copies) {
            if (auto copied = copy_one(request.from, request.to, request); !copied) {
                return copied;
            }
        }
        return {};
    }

    // By the trees' state objects, as in a bucket (store/recorded_content.hpp).
    Result<FoundContent> find_content(std::span<const WantedContent> wanted,
                                      const FindOptions& options) override {
        return find_recorded_content(*this, wanted, options);
    }

    Result<void> remove(std::span<const std::string> keys) override {
        for (const std::string& key : keys) {
            if (auto valid = check_key(key); !valid) {
                return valid;
            }
            files_.erase(key);
        }
        return {};
    }

    void remove_empty_dirs(std::string_view key) override {
        if (!check_key(key)) {
            return;
        }
        for (std::string dir(key); !dir.empty(); dir = parent_of(dir)) {
            const bool empty =
                dirs_.contains(dir) &&
                std::none_of(files_.begin(), files_.end(),
                             [&](const auto& entry) { return is_below(entry.first, dir); }) &&
                std::none_of(dirs_.begin(), dirs_.end(),
                             [&](const std::string& other) { return is_below(other, dir); });
            if (!empty) {
                return;
            }
            dirs_.erase(dir);
        }
    }

    Result<std::unique_ptr<TreeBuild>> build_tree(std::string_view key,
                                                  std::string_view /*what*/) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        if (trees_.contains(std::string(key))) {
            return make_error(ErrorCode::BadInput, "exists already", describe(key));
        }
        const std::string parent = parent_of(key);
        // What interrupted builds left beside it.
        for (auto it = staged_.begin(); it != staged_.end();) {
            if (parent_of(*it) == parent && !building_.contains(*it)) {
                erase_below(*it);
                it = staged_.erase(it);
            } else {
                ++it;
            }
        }
        const std::string staging =
            join_key(parent, fmt::format(".{}.creating-{}", name_of(key), ++counter_));
        staged_.insert(staging);
        building_.insert(staging);
        add_dirs(staging);
        return std::unique_ptr<TreeBuild>(
            std::make_unique<MemoryTree>(*this, std::string(key), staging));
    }

    Result<std::optional<std::int64_t>> tree(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const auto found = trees_.find(std::string(key));
        return found == trees_.end() ? std::optional<std::int64_t>()
                                     : std::optional<std::int64_t>(found->second);
    }

    Result<std::vector<std::string>> trees(std::string_view prefix) override {
        if (auto valid = check_key(prefix, true); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        std::vector<std::string> names;
        for (const auto& [key, time] : trees_) {
            if (parent_of(key) == prefix) {
                names.push_back(name_of(key));
            }
        }
        return names;
    }

    Result<void> remove_tree(std::string_view key) override {
        if (auto valid = check_key(key); !valid) {
            return valid;
        }
        trees_.erase(std::string(key));
        erase_below(std::string(key));
        return {};
    }

    Result<void> point_alias(std::string_view alias, std::string_view tree,
                             RepoLock* lock) override {
        if (auto valid = check_key(alias); !valid) {
            return valid;
        }
        if (files_.contains(std::string(alias)) || dirs_.contains(std::string(alias))) {
            return make_error(ErrorCode::Unsafe, "is not a published name; not replaced",
                              describe(alias));
        }
        if (lock != nullptr) {
            if (auto held = lock->confirm(); !held) {
                return held;
            }
        }
        add_dirs(parent_of(alias));
        aliases_[std::string(alias)] = std::string(tree);
        return {};
    }

    Result<std::optional<std::string>> alias_target(std::string_view alias) override {
        if (auto valid = check_key(alias); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        const auto found = aliases_.find(std::string(alias));
        return found == aliases_.end() ? std::optional<std::string>()
                                       : std::optional<std::string>(found->second);
    }

    // --- for MemoryTree ---

    Result<void> copy_one(std::string_view from, std::string_view to, const CopyRequest& request) {
        return copy_one(*this, from, to, request);
    }

    // As copy_one, `from` a key of `source` (this store or another in memory).
    Result<void> copy_one(const MemoryStore& source, std::string_view from, std::string_view to,
                          const CopyRequest& request) {
        if (auto valid = check_key(from); !valid) {
            return valid;
        }
        if (auto valid = check_key(to); !valid) {
            return valid;
        }
        const auto found = source.files_.find(std::string(from));
        if (found == source.files_.end()) {
            return make_error(ErrorCode::NotFound, "no such file", source.describe(from));
        }
        const ObjectInfo info = info_of(found->second);
        if (request.pin &&
            (request.pin->size != info.size || request.pin->version != info.version)) {
            return make_error(ErrorCode::Corrupt, "changed since it was recorded (copy refused)",
                              source.describe(from));
        }
        std::shared_ptr<Content> content = found->second.content;
        if (request.mode == CopyMode::Copy || request.mode == CopyMode::Clone) {
            content = std::make_shared<Content>(*content);
        }
        store_file(std::string(to), std::move(content));
        return {};
    }

    Result<void> commit(const std::string& staging, const std::string& key, RepoLock* lock) {
        if (trees_.contains(key) || files_.contains(key) || dirs_.contains(key) ||
            aliases_.contains(key)) {
            return make_error(ErrorCode::BadInput, "exists already", describe(key));
        }
        if (lock != nullptr) {
            if (auto held = lock->confirm(); !held) {
                return held;
            }
        }
        std::map<std::string, File> moved;
        for (auto it = files_.begin(); it != files_.end();) {
            if (is_below(it->first, staging)) {
                moved.emplace(key + it->first.substr(staging.size()), std::move(it->second));
                it = files_.erase(it);
            } else {
                ++it;
            }
        }
        std::erase_if(dirs_, [&](const std::string& dir) {
            return dir == staging || is_below(dir, staging);
        });
        for (auto& [moved_key, file] : moved) {
            add_dirs(parent_of(moved_key));
            files_.emplace(moved_key, std::move(file));
        }
        add_dirs(key);
        staged_.erase(staging);
        building_.erase(staging);
        const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
        last_time_ = std::max(now, last_time_ + 1);
        trees_[key] = last_time_;
        return {};
    }

    void abandon(const std::string& staging) {
        building_.erase(staging);
        staged_.erase(staging);
        erase_below(staging);
    }

  private:
    static ObjectInfo info_of(const File& file) {
        return ObjectInfo{file.content->bytes.size(), file.version,
                          static_cast<std::uint64_t>(file.content.use_count())};
    }

    void add_dirs(std::string dir) {
        while (!dir.empty()) {
            dirs_.insert(dir);
            dir = parent_of(dir);
        }
    }

    void store_file(std::string key, std::shared_ptr<Content> content) {
        add_dirs(parent_of(key));
        files_[std::move(key)] = File{std::move(content), std::to_string(++counter_)};
    }

    void erase_below(const std::string& key) {
        std::erase_if(files_, [&](const auto& entry) { return is_below(entry.first, key); });
        std::erase_if(dirs_,
                      [&](const std::string& dir) { return dir == key || is_below(dir, key); });
    }

    std::map<std::string, File> files_;
    std::set<std::string> dirs_;
    std::map<std::string, std::int64_t> trees_;
    std::map<std::string, std::string> aliases_;
    std::set<std::string> staged_;    // staging prefixes not yet committed or abandoned
    std::set<std::string> building_;  // those a live MemoryTree owns
    std::uint64_t counter_ = 0;
    std::int64_t last_time_ = 0;
};

MemoryTree::~MemoryTree() {
    if (!committed_) {
        store_.abandon(staging_);
    }
}

Result<void> MemoryTree::copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                                   const CopyOptions&) {
    const auto* from = dynamic_cast<const MemoryStore*>(&source);
    if (from == nullptr) {
        return make_error(ErrorCode::Unsupported,
                          "cannot copy into a store in memory from another kind of store",
                          source.describe(""));
    }
    for (const CopyRequest& request : copies) {
        if (auto copied =
                store_.copy_one(*from, request.from, join_key(staging_, request.to), request);
            !copied) {
            return copied;
        }
    }
    return {};
}

Result<void> MemoryTree::copy(std::span<const CopyRequest> copies, const CopyOptions&) {
    for (const CopyRequest& request : copies) {
        if (auto copied = store_.copy_one(request.from, join_key(staging_, request.to), request);
            !copied) {
            return copied;
        }
    }
    return {};
}

Result<void> MemoryTree::put(std::string_view relative, std::string_view bytes) {
    return store_.put(join_key(staging_, relative), bytes);
}

Result<void> MemoryTree::commit(RepoLock* lock) {
    auto committed = store_.commit(staging_, key_, lock);
    committed_ = committed.has_value();
    return committed;
}

}  // namespace
}  // namespace memory_objects

std::unique_ptr<ObjectStore> memory_object_store() {
    return std::make_unique<memory_objects::MemoryStore>();
}

}  // namespace rpmirror::store
