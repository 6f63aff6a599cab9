// The MirrorStore of a mirror in an S3 bucket (s3://BUCKET/PREFIX/REPO/), over src/s3/.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "rpmirror/s3.hpp"
#include "s3/client.hpp"
#include "store/mirror_store.hpp"

namespace rpmirror::store {

// The mirror at `repo` (its prefix ends in '/'), through `client` (which must outlive it).
// Answers from one listing of the prefix: `listing`, when the caller already made one this run
// (no request then), otherwise one it makes on first use (one LIST per 1000 objects). A file's
// version is its ETag. Not thread-safe.
class S3Store final : public MirrorStore {
  public:
    S3Store(s3::S3Client& client, s3::S3Location repo,
            const std::map<std::string, s3::ListedObject>* listing = nullptr);

    std::string describe(std::string_view key) const override;
    Result<Listing> list_packages() override;
    Result<std::optional<StoredFile>> stat(std::string_view key) override;
    // One DeleteObjects request per 1000 keys; a key the listing does not show is not sent.
    Result<std::vector<std::string>> remove_packages(std::span<const std::string> keys) override;

  private:
    Result<const std::map<std::string, s3::ListedObject>*> listing();

    s3::S3Client& client_;
    s3::S3Location repo_;
    const std::map<std::string, s3::ListedObject>* given_;
    std::optional<std::map<std::string, s3::ListedObject>> own_;
};

}  // namespace rpmirror::store
