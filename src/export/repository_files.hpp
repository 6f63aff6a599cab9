// The files of one repository as a bundle carries them, read through the store: what export
// lists, hashes and copies, and what import compares its base with.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"
#include "store/object_store.hpp"

namespace rpmirror::bundle {

// True iff `key` (relative to a repository) is one of its published files: none of its segments
// starts with '.' (rpmirror's own .rpmirror/, a download's .NAME.part, a metadata stage).
bool is_published_key(std::string_view key);

struct ListedFile {
    std::string key;  // relative to the repository
    std::uint64_t size = 0;
};

// The published files of the repository at `prefix` of `store` ("" = the store's root), by key.
// Error{BadInput} naming the repository iff it holds no repodata/repomd.xml; the store's errors.
Result<std::vector<ListedFile>> list_repository(store::ObjectStore& store, std::string_view prefix);

// A local file holding a key's content (ObjectStore::local_copy): on disk the file itself, else a
// copy in a scratch directory, removed when this is destroyed.
class LocalFile {
  public:
    LocalFile(std::filesystem::path path, bool fetched)
        : path_(std::move(path)), fetched_(fetched) {}
    LocalFile(LocalFile&& other) noexcept
        : path_(std::move(other.path_)), fetched_(std::exchange(other.fetched_, false)) {}
    LocalFile& operator=(LocalFile&&) = delete;
    LocalFile(const LocalFile&) = delete;
    LocalFile& operator=(const LocalFile&) = delete;
    ~LocalFile();

    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
    bool fetched_ = false;
};

// `key` of `store` as a local file, fetched beneath `scratch` where the store has no local files.
Result<LocalFile> local_file(store::ObjectStore& store, std::string_view key,
                             const std::filesystem::path& scratch);

// The SHA-256 of the local file `path` (hashed, no cache believed).
Result<std::string> sha256_of(const std::filesystem::path& path);

}  // namespace rpmirror::bundle
