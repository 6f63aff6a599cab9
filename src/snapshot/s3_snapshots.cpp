// The live mirror in a bucket (snapshot/backend.hpp's LiveMirror): its state object's ETags
// against a listing before a snapshot (the no-op's check, s3/mirror_state.hpp: what the sync
// verified, nothing re-read). Each file is returned pinned to the object the state vouches for, so
// an object replaced meanwhile fails its copy; an installation tree (`sync --treeinfo`) is checked
// whole: every repository it names against its own state, its images against the tree's state and
// .treeinfo's checksums. Reads only.
#include <fmt/core.h>

#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/metadata/metadata.hpp"
#include "s3/client.hpp"
#include "s3/mirror_state.hpp"
#include "snapshot/backend.hpp"
#include "store/s3_store.hpp"

namespace rpmirror::snapshot {

namespace {

constexpr std::string_view kRepomdKey = "repodata/repomd.xml";

// `base` with the relative directory `part` ("" = itself) appended.
s3::S3Location below(const s3::S3Location& base, std::string_view part) {
    return part.empty() ? base : s3::S3Location{base.bucket, base.key(part) + "/"};
}

std::string list_problems(const std::vector<std::string>& problems) {
    std::string text = fmt::format("{} problem(s)", problems.size());
    for (std::size_t index = 0; index < problems.size() && index < 3; ++index) {
        text += (index == 0 ? ": " : "; ") + problems[index];
    }
    return text;
}

class S3Live final : public LiveMirror {
  public:
    explicit S3Live(store::S3Store& mirror)
        : mirror_(mirror), client_(mirror.client()), repo_(mirror.location()) {}

    std::string acl() const override { return acl_; }

    Result<void> verify_copy(const std::string& /*staging*/) override {
        return {};  // each copy was pinned to the object the state vouches for
    }

    Result<std::vector<LiveFile>> check(const SnapshotCreateOptions& /*options*/) override {
        std::vector<LiveFile> files;
        const auto add = [&](std::string_view part, const auto& objects) {
            for (const auto& [key, object] : objects) {
                store::Pin pin;
                pin.size = object.size;
                pin.version = object.etag;
                pin.type = object.checksum_type;
                pin.digest = object.digest;
                files.push_back({store::join_key(part, key), true, std::move(pin)});
            }
        };
        auto live_tree = read_live_tree(mirror_);
        if (!live_tree) {
            return tl::unexpected(std::move(live_tree.error()));
        }
        if (!*live_tree) {
            auto objects = verified_objects(repo_);
            if (!objects) {
                return tl::unexpected(std::move(objects.error()));
            }
            add("", *objects);
            return files;
        }
        const std::string& text = (*live_tree)->text;
        const TreeInfo& tree = (*live_tree)->tree;
        for (const std::string& part : tree.repositories) {
            auto objects = verified_objects(below(repo_, part));
            if (!objects) {
                return tl::unexpected(std::move(objects.error()));
            }
            add(part, *objects);
        }
        auto images = verified_images(text, tree);
        if (!images) {
            return tl::unexpected(std::move(images.error()));
        }
        add("", *images);
        return files;
    }

  private:
    // The images and .treeinfo of the installation tree, each held as .treeinfo lists it (the
    // tree's state records it with that checksum, and the object is still the one stored).
    Result<std::map<std::string, s3::StoredObject>> verified_images(const std::string& text,
                                                                    const TreeInfo& tree) {
        const std::string shown = repo_.to_string();
        auto state = s3::load_state(client_, repo_, s3::kTreeStateKey);
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        if (!*state) {
            return make_error(ErrorCode::BadInput,
                              "no completed `rpmirror sync --treeinfo` recorded for this tree (no "
                              "state object " +
                                  std::string(s3::kTreeStateKey) + "); sync it first",
                              shown);
        }
        auto listing = s3::list_mirror(client_, repo_);
        if (!listing) {
            return tl::unexpected(std::move(listing.error()));
        }
        std::map<std::string, s3::StoredObject> files;
        std::vector<std::string> problems;
        const auto held = [&](const std::string& key, ChecksumType type,
                              const std::string& digest) {
            const auto recorded = (*state)->objects.find(key);
            const auto listed = listing->find(key);
            if (recorded == (*state)->objects.end() || listed == listing->end()) {
                problems.push_back(key + ": missing");
            } else if ((!digest.empty() && (recorded->second.checksum_type != type ||
                                            recorded->second.digest != digest)) ||
                       !s3::still_matches(recorded->second, listed->second)) {
                problems.push_back(key +
                                   ": not the one .treeinfo lists, or changed since the "
                                   "last sync");
            } else {
                files.emplace(key, recorded->second);
            }
        };
        for (const TreeInfo::File& file : tree.files) {
            held(file.path, file.type, file.digest);
        }
        for (const std::string& image : tree.unchecksummed_images) {
            held(image, ChecksumType::Sha256, {});  // as stored: nothing else vouches for it
        }
        held(std::string(kTreeinfoName), ChecksumType::Sha256,
             hash_bytes(ChecksumType::Sha256, text));
        if (!problems.empty()) {
            return make_error(
                ErrorCode::BadInput,
                "not a complete, verified installation tree: " + list_problems(problems), shown);
        }
        return files;
    }

    // The objects of the complete, unchanged mirror at `repo`: the state of its last sync names
    // the live repomd.xml, and every object the state holds is listed with the size and ETag it
    // recorded.
    Result<std::map<std::string, s3::StoredObject>> verified_objects(const s3::S3Location& repo) {
        auto state = s3::load_state(client_, repo);
        if (!state) {
            return tl::unexpected(std::move(state.error()));
        }
        if (!*state || (*state)->repomd_sha256.empty() || (*state)->selection.empty()) {
            return make_error(ErrorCode::BadInput,
                              "no completed `rpmirror sync` recorded for this mirror (no "
                              "state object .rpmirror/state.json); sync it first",
                              repo.to_string());
        }
        if ((*state)->fingerprint.find(" policy=") != std::string::npos) {
            // An on-demand mirror: packages `rpmirror serve` fetched later are not in the state
            // the snapshot copies from.
            return make_error(ErrorCode::BadInput,
                              "not a complete, verified mirror: it is synced with a download "
                              "policy that fetches packages on demand; run `rpmirror sync "
                              "--download-policy immediate` (job key download-policy = "
                              "immediate) first",
                              repo.to_string());
        }
        const auto repomd = (*state)->objects.find(std::string(kRepomdKey));
        if (repomd == (*state)->objects.end()) {
            return make_error(ErrorCode::BadInput,
                              "no repodata/repomd.xml: a snapshot needs a mirror synced with "
                              "--download-metadata",
                              repo.to_string());
        }
        auto listing = s3::list_mirror(client_, repo);
        if (!listing) {
            return tl::unexpected(std::move(listing.error()));
        }
        std::vector<std::string> problems;
        for (const auto& [key, object] : (*state)->objects) {
            const auto listed = listing->find(key);
            if (listed == listing->end()) {
                problems.push_back(key + ": missing");
            } else if (!s3::still_matches(object, listed->second)) {
                problems.push_back(key + ": changed since the last sync");
            }
        }
        if (!problems.empty()) {
            return make_error(ErrorCode::BadInput,
                              "not a complete, verified mirror: " + list_problems(problems),
                              repo.to_string());
        }
        // The index is the one the state vouches for, and lists nothing the state lacks.
        auto body = client_.get_object(repo.bucket, repo.key(kRepomdKey), std::nullopt,
                                       repomd->second.etag);
        if (!body) {
            return tl::unexpected(std::move(body.error()));
        }
        if (hash_bytes(repomd->second.checksum_type, *body) != repomd->second.digest) {
            return make_error(ErrorCode::BadInput,
                              "repodata/repomd.xml is not the one the last completed sync "
                              "published; sync again first",
                              repo.to_string());
        }
        for (const std::string& key : record_hrefs(*body)) {
            if (!(*state)->objects.contains(key)) {
                return make_error(ErrorCode::BadInput,
                                  "not a complete, verified mirror: " + key +
                                      " (listed by repodata/repomd.xml) is not in its state",
                                  repo.to_string());
            }
        }
        acl_ = (*state)->acl;
        return std::move((*state)->objects);
    }

    store::S3Store& mirror_;
    s3::S3Client& client_;
    s3::S3Location repo_;
    std::string acl_;  // the mirror's --s3-acl, from its state
};

}  // namespace

std::unique_ptr<LiveMirror> s3_live_mirror(const SnapshotRoot& /*root*/, store::S3Store& mirror) {
    return std::make_unique<S3Live>(mirror);
}

}  // namespace rpmirror::snapshot
