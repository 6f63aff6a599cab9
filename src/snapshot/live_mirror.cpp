// The live mirror a snapshot copies (snapshot/backend.hpp's LiveMirror), written once over the
// store for a directory and a bucket alike: what its last sync recorded names the live index, the
// audit (with the store's cache: a local checksum cache its sync state vouches for, a bucket's
// recorded ETags) finds every record and selected package intact, an installation tree's images
// are audited against .treeinfo, and each file is returned pinned to the version the check saw,
// so that a file replaced or rewritten since is refused by its copy (store::Pin). Reads only, but
// for the records that follow the snapshot's links after it appeared.
#include <fmt/core.h>

#include "audit/audit.hpp"
#include "audit/report_parts.hpp"
#include "checksum/hasher.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "snapshot/backend.hpp"

namespace rpmirror::snapshot {

namespace {

// The first problems of `report`, for an error message.
std::string describe_problems(const RepoAuditReport& report) {
    if (report.error) {
        return report.error->to_string();
    }
    std::string text = fmt::format("{} problem(s)", report.problems.size());
    for (std::size_t index = 0; index < report.problems.size() && index < 3; ++index) {
        text +=
            fmt::format("{} {}: {}", index == 0 ? ":" : ";", report.problems[index].path.string(),
                        report.problems[index].describe());
    }
    return text;
}

}  // namespace

LiveMirror::LiveMirror(const SnapshotRoot& root, store::MirrorRoot& live,
                       std::filesystem::path state_dir)
    : root_(root), live_(live), state_dir_(std::move(state_dir)) {}

LiveMirror::~LiveMirror() = default;

Result<store::Pin> LiveMirror::pin_document(Part& part, std::string_view key,
                                            std::string* content) {
    // The version first: a file changed after it was read is then refused by its copy.
    auto stored = part.store->stat(key);
    if (!stored) {
        return tl::unexpected(std::move(stored.error()));
    }
    if (!*stored) {
        return make_error(ErrorCode::NotFound, "not there", part.store->describe(key));
    }
    auto text = part.store->read(key);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    store::Pin pin{(*stored)->size, (*stored)->version, ChecksumType::Sha256,
                   hash_bytes(ChecksumType::Sha256, *text)};
    if (content != nullptr) {
        *content = std::move(*text);
    }
    return pin;
}

Result<void> LiveMirror::check_repository(Part& part, const SnapshotCreateOptions& options,
                                          std::vector<LiveFile>& files) {
    store::MirrorStore& mirror = *part.store;
    const std::string shown = live_.repository_path(part.key).string();
    auto recorded = mirror.recorded();
    if (!recorded) {
        return tl::unexpected(std::move(recorded.error()));
    }
    if (!recorded->exists || !recorded->selection || recorded->repomd_sha256.empty()) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("no completed `rpmirror sync` recorded for this mirror (in "
                                      "{}); sync it first",
                                      mirror.record_place()),
                          shown);
    }
    auto index = pin_document(part, store::kIndexKey, nullptr);
    if (!index && index.error().code == ErrorCode::NotFound) {
        return make_error(ErrorCode::BadInput,
                          "no repodata/repomd.xml: a snapshot needs a mirror synced with "
                          "--download-metadata",
                          shown);
    }
    if (!index) {
        return tl::unexpected(std::move(index.error()));
    }
    // A filtered mirror publishes its own repomd.xml (rewritten metadata); others upstream's.
    const std::string& published = recorded->published_repomd_sha256.empty()
                                       ? recorded->repomd_sha256
                                       : recorded->published_repomd_sha256;
    if (published != index->digest) {
        return make_error(ErrorCode::BadInput,
                          "repodata/repomd.xml is not the one the last completed sync published "
                          "(the last sync did not complete, or the metadata was changed); sync "
                          "again first",
                          shown);
    }
    acl_ = recorded->acl;
    audit_parts::StoreAudit audit{mirror};
    audit.report_dir = live_.repository_path(part.key);
    audit.report_reference = audit.report_dir;
    audit.plan_root = live_.plan_root(part.key).value_or(std::filesystem::path());
    audit.selection = recorded->selection->options;
    audit.use_cache = options.use_checksum_cache;
    audit.threads = options.threads;
    const RepoAuditReport report = audit_parts::audit_store(root_.repo_id, audit);
    if (!report.ok()) {
        // The sync's fingerprint (sync/sync_settings.cpp) names a download policy other than
        // immediate: the mirror lacks what `rpmirror serve` has not fetched yet.
        const bool on_demand = recorded->on_demand();
        return make_error(ErrorCode::BadInput,
                          "not a complete, verified mirror: " + describe_problems(report) +
                              (on_demand ? "; it is synced with a download policy that fetches "
                                           "packages on demand: take the snapshot with the sync "
                                           "(`rpmirror sync --snapshot`, job key snapshot =: an "
                                           "on-demand sync then fetches every listed package "
                                           "first), run `rpmirror sync --download-policy "
                                           "immediate` (job key download-policy = immediate) "
                                           "first, or fetch every package through `rpmirror "
                                           "serve`; a streamed mirror keeps none"
                                         : ""),
                          shown);
    }
    if (report.intact.size() != report.verified) {
        return make_error(ErrorCode::Unsupported,
                          "packages outside the repository directory (--safe-write-path) cannot "
                          "be snapshotted",
                          shown);
    }
    // Its records and packages, then its index, the index's signature and comps.xml (-m), which
    // are not records of repomd.xml.
    for (const RepoAuditReport::IntactFile& file : report.intact) {
        add(part, file.path.generic_string(), file.is_metadata,
            {file.size, file.version, file.type, file.digest}, options, files);
    }
    add(part, std::string(store::kIndexKey), true, std::move(*index), options, files);
    for (const std::string_view extra : {store::kSignatureKey, store::kCompsKey}) {
        auto pin = pin_document(part, extra, nullptr);
        if (!pin && pin.error().code == ErrorCode::NotFound) {
            continue;
        }
        if (!pin) {
            return tl::unexpected(std::move(pin.error()));
        }
        add(part, std::string(extra), true, std::move(*pin), options, files);
    }
    return {};
}

void LiveMirror::add(Part& part, const std::string& key, bool is_metadata, store::Pin pin,
                     const SnapshotCreateOptions& options, std::vector<LiveFile>& files) {
    if (!is_metadata && !options.copy) {
        part.linked.emplace(key, store::StoredFile{pin.size, pin.version});
    }
    files.push_back({store::join_key(part.key, key), is_metadata, std::move(pin)});
}

Result<std::vector<LiveFile>> LiveMirror::check(const SnapshotCreateOptions& options) {
    std::unique_ptr<store::MirrorStore> root = live_.repository("", state_dir_);
    // An installation tree (.treeinfo at the root) is snapshotted whole: every repository it
    // names, its images, and .treeinfo, as `sync --treeinfo` publishes them.
    auto tree_pin = root->stat(kTreeinfoName);  // before it is read: see pin_document
    if (!tree_pin) {
        return tl::unexpected(std::move(tree_pin.error()));
    }
    auto tree = read_live_tree(*root);
    if (!tree) {
        return tl::unexpected(std::move(tree.error()));
    }
    std::vector<std::string> keys{""};
    if (*tree) {
        keys = (*tree)->tree.repositories;
    }
    parts_.clear();
    std::vector<LiveFile> files;
    for (const std::string& key : keys) {
        parts_.push_back({key, live_.repository(key, state_dir_), {}});
        if (auto checked = check_repository(parts_.back(), options, files); !checked) {
            return tl::unexpected(std::move(checked.error()));
        }
    }
    if (!*tree) {
        return files;
    }
    parts_.push_back({"", std::move(root), {}});
    Part& top = parts_.back();
    const RepoAuditReport images =
        audit_parts::audit_tree_store(root_.repo_id, *top.store, live_.repository_path(""),
                                      options.use_checksum_cache, options.threads);
    if (!images.ok()) {
        return make_error(
            ErrorCode::BadInput,
            "not a complete, verified installation tree: " + describe_problems(images),
            live_.repository_path("").string());
    }
    for (const RepoAuditReport::IntactFile& image : images.intact) {
        add(top, image.path.generic_string(), false,
            {image.size, image.version, image.type, image.digest}, options, files);
    }
    if (!*tree_pin) {  // read_live_tree found it, so it appeared meanwhile: not what was stat'ed
        return make_error(ErrorCode::Corrupt, ".treeinfo changed while the snapshot was taken",
                          live_.repository_path("").string());
    }
    add(top, std::string(kTreeinfoName), true,
        {(*tree_pin)->size, (*tree_pin)->version, ChecksumType::Sha256,
         hash_bytes(ChecksumType::Sha256, (*tree)->text)},
        options, files);
    return files;
}

void LiveMirror::committed() {
    // The live mirror's records follow the links just made (they moved each file's ctime only):
    // the next sync stays a no-op, its cache still vouched for. Best effort: a record not moved
    // costs the next sync its no-op, never a wrong answer.
    for (Part& part : parts_) {
        if (!part.linked.empty()) {
            part.store->follow_links(part.linked);
        }
    }
}

}  // namespace rpmirror::snapshot
