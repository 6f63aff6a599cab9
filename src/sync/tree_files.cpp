// An installation tree's own files in a directory (sync/tree_files.hpp): verified in place,
// fetched by the downloader straight into the tree, recorded in a catalogue beside the sync
// state, and .treeinfo replaced atomically once the filesystem holding them is flushed.
#include "sync/tree_files.hpp"

#include "fs/durable.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "sync/catalogue.hpp"

namespace rpmirror {

namespace {

// The catalogue (sync/catalogue.hpp) of the images a tree's syncs wrote.
constexpr std::string_view kImagesCatalogue = kTreeImagesCatalogue;

class LocalTreeFiles final : public TreeFiles {
  public:
    LocalTreeFiles(std::filesystem::path root, const SyncOptions& options, std::stop_token stop)
        : root_(std::move(root)),
          options_(options),
          stop_(std::move(stop)),
          images_(Catalogue::load(state_directory(options), root_, kImagesCatalogue)) {}

    std::vector<bool> held(std::span<const TreeInfo::File> files) override {
        std::vector<VerifyRequest> checks;
        for (const TreeInfo::File& file : files) {
            checks.push_back({root_ / file.path, file.type, file.digest, std::nullopt});
        }
        VerifyOptions verify_options;
        verify_options.hash.use_cache = options_.use_checksum_cache;
        auto trust = std::make_shared<CacheTrust>();
        images_.vouch(*trust);
        verify_options.hash.trust = std::move(trust);
        verify_options.hash.stop = stop_;
        std::vector<bool> result;
        for (const VerifyResult& verified : verify_files(checks, verify_options)) {
            result.push_back(verified.status == VerifyStatus::Ok);
        }
        return result;
    }

    std::vector<bool> held_as_stored(std::span<const std::string> paths) override {
        std::vector<bool> result;
        for (const std::string& path : paths) {
            result.push_back(images_.holds(path));
        }
        return result;
    }

    bool publishes(std::string_view text) override {
        auto current = fs::read_file(root_ / kTreeinfoName);
        return current && *current == text;
    }

    Result<DownloadReport> fetch(Downloader& downloader,
                                 const std::vector<DownloadRequest>& requests,
                                 ProgressSink* progress, const std::stop_token& stop) override {
        auto downloaded = downloader.run(root_, requests, progress, stop);
        if (!downloaded) {
            return downloaded;
        }
        std::vector<std::filesystem::path> written;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const FileStatus status = downloaded->files[i].status;
            if (status == FileStatus::Downloaded || status == FileStatus::AlreadyPresent) {
                written.push_back(requests[i].destination);
            }
        }
        images_.record(written);
        return downloaded;
    }

    Result<bool> publish(std::string_view text) override {
        const std::filesystem::path published = root_ / kTreeinfoName;
        if (publishes(text)) {
            return false;
        }
        // What it names reaches the disk before it does.
        if (auto flushed = fs::flush_filesystem(root_); !flushed) {
            return tl::unexpected(std::move(flushed.error()));
        }
        if (auto written = fs::replace_file(published, text); !written) {
            return tl::unexpected(std::move(written.error()));
        }
        return true;
    }

    Result<std::vector<std::string>> collect(const std::set<std::string>& listed,
                                             std::vector<std::string>& warnings) override {
        return images_.collect(listed, warnings);
    }

    void save(std::vector<std::string>& warnings) override {
        if (auto saved = images_.save(); !saved) {
            warnings.push_back(saved.error().to_string());
        }
    }

  private:
    std::filesystem::path root_;
    const SyncOptions& options_;
    std::stop_token stop_;
    Catalogue images_;  // the images rpmirror wrote
};

}  // namespace

std::unique_ptr<TreeFiles> open_local_tree_files(const std::filesystem::path& root,
                                                 const SyncOptions& options,
                                                 const std::stop_token& stop) {
    return std::make_unique<LocalTreeFiles>(root, options, stop);
}

}  // namespace rpmirror
