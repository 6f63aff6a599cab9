// Faults injected into any ObjectStore, after leveldb's FaultInjectionTestEnv: a wrapper that
// forwards every operation to the store it wraps unless a rule says to fail it, so the stages
// above are tested for what a failing disk or bucket does to them without either.
#pragma once

#include <cstddef>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "store/object_store.hpp"

namespace rpmirror::store {

// The kinds of operation a rule counts or matches.
enum class StoreOp {
    Stat,    // stat
    List,    // list, list_dirs, trees, tree, alias_target
    Read,    // read, local_copy
    Put,     // put, put_file, TreeBuild::put, Staging::commit (on its key)
    Copy,    // copy, TreeBuild::copy (once per copied key)
    Remove,  // remove, remove_tree
    Build,   // build_tree
    Commit,  // TreeBuild::commit
    Alias,   // point_alias
    Stage,   // stage
    Find,    // find_content (on FindOptions::near)
};

class FaultInjectingStore final : public ObjectStore {
  public:
    // Forwards to `inner`, which must outlive this wrapper.
    explicit FaultInjectingStore(ObjectStore& inner) : inner_(inner) {}

    // The `nth` (1-based) operation of kind `op` from now on fails with `error` (nothing is
    // forwarded for it). Rules accumulate.
    void fail_nth(StoreOp op, std::size_t nth, Error error);

    // Every operation of kind `op` whose key (a copy's destination; any of remove's keys)
    // matches `pattern` (std::regex_search) fails with `error`.
    void fail_matching(StoreOp op, const std::string& pattern, Error error);

    // Operations of kind `op` seen so far (failed ones included).
    std::size_t count(StoreOp op) const { return counts_[static_cast<std::size_t>(op)]; }

    // Forgets every rule.
    void clear() { rules_.clear(); }

    std::string describe(std::string_view key) const override { return inner_.describe(key); }
    Result<std::optional<ObjectInfo>> stat(std::string_view key) override;
    Result<ObjectListing> list(std::string_view prefix) override;
    Result<std::vector<std::string>> list_dirs(std::string_view prefix) override;
    Result<std::string> read(std::string_view key) override;
    Result<std::filesystem::path> local_copy(std::string_view key,
                                             const std::filesystem::path& scratch) override;
    Result<void> put(std::string_view key, std::string_view bytes) override;
    Result<void> put_file(std::string_view key, const std::filesystem::path& path) override;
    // A faulty commit is not forwarded: its file is removed (but in place) and wait() answers
    // it with the rule's error.
    Result<std::unique_ptr<Staging>> stage(const StageOptions& options) override;
    Result<void> copy(std::span<const CopyRequest> copies, const CopyOptions& options) override;
    Result<void> remove(std::span<const std::string> keys) override;
    Result<FoundContent> find_content(std::span<const WantedContent> wanted,
                                      const FindOptions& options) override;
    Result<std::unique_ptr<TreeBuild>> build_tree(std::string_view key,
                                                  std::string_view what) override;
    Result<std::optional<std::int64_t>> tree(std::string_view key) override;
    Result<std::vector<std::string>> trees(std::string_view prefix) override;
    Result<void> remove_tree(std::string_view key) override;
    void remove_empty_dirs(std::string_view key) override { inner_.remove_empty_dirs(key); }
    Result<void> point_alias(std::string_view alias, std::string_view tree,
                             RepoLock* lock) override;
    Result<std::optional<std::string>> alias_target(std::string_view alias) override;

    // The fault, if any, for one operation of kind `op` on `key` (counted).
    std::optional<Error> fault(StoreOp op, std::string_view key);

  private:
    struct Rule {
        StoreOp op;
        std::size_t nth = 0;  // 0: every matching one
        std::optional<std::regex> pattern;
        Error error;
    };

    ObjectStore& inner_;
    std::vector<Rule> rules_;
    std::size_t counts_[11] = {};
};

}  // namespace rpmirror::store
