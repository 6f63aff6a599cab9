// FaultInjectingStore (store/fault_objects.hpp): rules checked before each forwarded operation.
#include "store/fault_objects.hpp"

#include "fs/tree.hpp"

namespace rpmirror::store {

namespace fault_objects {
namespace {

class FaultInjectingTree final : public TreeBuild {
  public:
    FaultInjectingTree(FaultInjectingStore& store, std::unique_ptr<TreeBuild> inner,
                       std::string key)
        : store_(store), inner_(std::move(inner)), key_(std::move(key)) {}

    const std::string& staging() const override { return inner_->staging(); }

    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) override {
        for (const CopyRequest& request : copies) {
            if (auto error = store_.fault(StoreOp::Copy, join_key(key_, request.to))) {
                return tl::unexpected(std::move(*error));
            }
        }
        return inner_->copy(copies, options);
    }

    Result<void> copy_from(ObjectStore& source, std::span<const CopyRequest> copies,
                           const CopyOptions& options) override {
        for (const CopyRequest& request : copies) {
            if (auto error = store_.fault(StoreOp::Copy, join_key(key_, request.to))) {
                return tl::unexpected(std::move(*error));
            }
        }
        return inner_->copy_from(source, copies, options);
    }

    Result<void> put(std::string_view relative, std::string_view bytes) override {
        if (auto error = store_.fault(StoreOp::Put, join_key(key_, relative))) {
            return tl::unexpected(std::move(*error));
        }
        return inner_->put(relative, bytes);
    }

    Result<void> commit(RepoLock* lock) override {
        if (auto error = store_.fault(StoreOp::Commit, key_)) {
            return tl::unexpected(std::move(*error));
        }
        return inner_->commit(lock);
    }

  private:
    FaultInjectingStore& store_;
    std::unique_ptr<TreeBuild> inner_;
    std::string key_;
};

class FaultInjectingStaging final : public Staging {
  public:
    FaultInjectingStaging(FaultInjectingStore& store, std::unique_ptr<Staging> inner)
        : store_(store), inner_(std::move(inner)) {}

    const std::filesystem::path& directory() const override { return inner_->directory(); }
    bool in_place() const override { return inner_->in_place(); }
    std::uint64_t capacity() const override { return inner_->capacity(); }
    bool in_memory() const override { return inner_->in_memory(); }
    const std::optional<std::string>& warning() const override { return inner_->warning(); }
    std::uint64_t requests() const override { return inner_->requests(); }

    void commit(std::size_t ticket, StagedFile file) override {
        if (auto error = store_.fault(StoreOp::Put, file.key)) {
            if (!inner_->in_place()) {
                (void)fs::remove_file(inner_->directory() / file.key);
            }
            Committed failed;
            failed.ticket = ticket;
            failed.error = std::move(*error);
            failed_.push_back(std::move(failed));
            return;
        }
        inner_->commit(ticket, std::move(file));
    }

    std::vector<Committed> wait() override {
        std::vector<Committed> done = inner_->wait();
        for (Committed& failed : failed_) {
            done.push_back(std::move(failed));
        }
        failed_.clear();
        return done;
    }

  private:
    FaultInjectingStore& store_;
    std::unique_ptr<Staging> inner_;
    std::vector<Committed> failed_;
};

}  // namespace
}  // namespace fault_objects

Result<std::unique_ptr<Staging>> FaultInjectingStore::stage(const StageOptions& options) {
    if (auto error = fault(StoreOp::Stage, "")) {
        return tl::unexpected(std::move(*error));
    }
    auto inner = inner_.stage(options);
    if (!inner) {
        return inner;
    }
    return std::unique_ptr<Staging>(
        std::make_unique<fault_objects::FaultInjectingStaging>(*this, std::move(*inner)));
}

void FaultInjectingStore::fail_nth(StoreOp op, std::size_t nth, Error error) {
    rules_.push_back(
        {op, count(op) + std::max<std::size_t>(nth, 1), std::nullopt, std::move(error)});
}

void FaultInjectingStore::fail_matching(StoreOp op, const std::string& pattern, Error error) {
    rules_.push_back({op, 0, std::regex(pattern), std::move(error)});
}

std::optional<Error> FaultInjectingStore::fault(StoreOp op, std::string_view key) {
    const std::size_t seen = ++counts_[static_cast<std::size_t>(op)];
    for (const Rule& rule : rules_) {
        if (rule.op != op) {
            continue;
        }
        if (rule.nth != 0
                ? rule.nth == seen
                : rule.pattern && std::regex_search(key.begin(), key.end(), *rule.pattern)) {
            return rule.error;
        }
    }
    return std::nullopt;
}

#define RPMIRROR_FAULT_CHECK(op, key)             \
    if (auto error = fault(op, key)) {            \
        return tl::unexpected(std::move(*error)); \
    }

Result<std::optional<ObjectInfo>> FaultInjectingStore::stat(std::string_view key) {
    RPMIRROR_FAULT_CHECK(StoreOp::Stat, key)
    return inner_.stat(key);
}

Result<ObjectListing> FaultInjectingStore::list(std::string_view prefix) {
    RPMIRROR_FAULT_CHECK(StoreOp::List, prefix)
    return inner_.list(prefix);
}

Result<std::vector<std::string>> FaultInjectingStore::list_dirs(std::string_view prefix) {
    RPMIRROR_FAULT_CHECK(StoreOp::List, prefix)
    return inner_.list_dirs(prefix);
}

Result<std::string> FaultInjectingStore::read(std::string_view key) {
    RPMIRROR_FAULT_CHECK(StoreOp::Read, key)
    return inner_.read(key);
}

Result<std::filesystem::path> FaultInjectingStore::local_copy(
    std::string_view key, const std::filesystem::path& scratch) {
    RPMIRROR_FAULT_CHECK(StoreOp::Read, key)
    return inner_.local_copy(key, scratch);
}

Result<void> FaultInjectingStore::put(std::string_view key, std::string_view bytes) {
    RPMIRROR_FAULT_CHECK(StoreOp::Put, key)
    return inner_.put(key, bytes);
}

Result<void> FaultInjectingStore::put_file(std::string_view key,
                                           const std::filesystem::path& path) {
    RPMIRROR_FAULT_CHECK(StoreOp::Put, key)
    return inner_.put_file(key, path);
}

Result<void> FaultInjectingStore::copy(std::span<const CopyRequest> copies,
                                       const CopyOptions& options) {
    // Copies up to the first faulty one are made, as a store's own failure would leave them.
    for (std::size_t index = 0; index < copies.size(); ++index) {
        if (auto error = fault(StoreOp::Copy, copies[index].to)) {
            if (auto made = inner_.copy(copies.first(index), options); !made) {
                return made;
            }
            return tl::unexpected(std::move(*error));
        }
    }
    return inner_.copy(copies, options);
}

Result<void> FaultInjectingStore::remove(std::span<const std::string> keys) {
    for (std::size_t index = 0; index < keys.size(); ++index) {
        if (auto error = fault(StoreOp::Remove, keys[index])) {
            if (auto removed = inner_.remove(keys.first(index)); !removed) {
                return removed;
            }
            return tl::unexpected(std::move(*error));
        }
    }
    return inner_.remove(keys);
}

Result<FoundContent> FaultInjectingStore::find_content(std::span<const WantedContent> wanted,
                                                       const FindOptions& options) {
    RPMIRROR_FAULT_CHECK(StoreOp::Find, options.near)
    return inner_.find_content(wanted, options);
}

Result<std::unique_ptr<TreeBuild>> FaultInjectingStore::build_tree(std::string_view key,
                                                                   std::string_view what) {
    RPMIRROR_FAULT_CHECK(StoreOp::Build, key)
    auto inner = inner_.build_tree(key, what);
    if (!inner) {
        return inner;
    }
    return std::unique_ptr<TreeBuild>(std::make_unique<fault_objects::FaultInjectingTree>(
        *this, std::move(*inner), std::string(key)));
}

Result<std::optional<std::int64_t>> FaultInjectingStore::tree(std::string_view key) {
    RPMIRROR_FAULT_CHECK(StoreOp::List, key)
    return inner_.tree(key);
}

Result<std::vector<std::string>> FaultInjectingStore::trees(std::string_view prefix) {
    RPMIRROR_FAULT_CHECK(StoreOp::List, prefix)
    return inner_.trees(prefix);
}

Result<void> FaultInjectingStore::remove_tree(std::string_view key) {
    RPMIRROR_FAULT_CHECK(StoreOp::Remove, key)
    return inner_.remove_tree(key);
}

Result<void> FaultInjectingStore::point_alias(std::string_view alias, std::string_view tree,
                                              RepoLock* lock) {
    RPMIRROR_FAULT_CHECK(StoreOp::Alias, alias)
    return inner_.point_alias(alias, tree, lock);
}

Result<std::optional<std::string>> FaultInjectingStore::alias_target(std::string_view alias) {
    RPMIRROR_FAULT_CHECK(StoreOp::List, alias)
    return inner_.alias_target(alias);
}

#undef RPMIRROR_FAULT_CHECK

}  // namespace rpmirror::store
