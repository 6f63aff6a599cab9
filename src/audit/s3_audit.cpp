// Auditing a mirror in object storage (see rpmirror/audit/s3_audit.hpp): the audit itself is
// audit.cpp's, over store::S3Store.
#include "rpmirror/audit/s3_audit.hpp"

#include <set>

#include "audit/report_parts.hpp"
#include "plan/selection_json.hpp"
#include "s3/mirror_state.hpp"
#include "store/s3_store.hpp"

namespace rpmirror {

RepoAuditReport audit_s3_repository(std::string_view repo_id, const s3::S3Config& config,
                                    const s3::S3Location& repo, const S3AuditOptions& options) {
    s3::S3Client client(config);
    store::S3Store mirror(client, repo);
    return audit_parts::audit_store(repo_id, audit_parts::s3_audit(mirror, repo, options));
}

namespace audit_parts {

StoreAudit s3_audit(store::S3Store& mirror, const s3::S3Location& repo,
                    const S3AuditOptions& options) {
    mirror.set_ranged_reads(options.ranged_threshold, options.range_size);
    StoreAudit audit{mirror};
    audit.report_dir = repo.to_string();
    audit.report_reference = repo.to_string();
    audit.selection = options.selection;
    audit.use_cache = options.use_state;
    audit.report_extra = options.report_extra;
    audit.threads = options.threads;
    return audit;
}

}  // namespace audit_parts

Result<std::vector<std::string>> discover_s3_repositories(const s3::S3Config& config,
                                                          const s3::S3Location& mirror,
                                                          std::vector<std::string>* trees) {
    s3::S3Client client(config);
    auto listed = client.list_all_objects(mirror.bucket, mirror.prefix);
    if (!listed) {
        return tl::unexpected(std::move(listed.error()));
    }
    std::set<std::string> ids;
    std::set<std::string> tree_ids;
    std::vector<std::string> nested;  // "<id>/<path>" holding repodata/repomd.xml
    constexpr std::string_view kIndex = "/repodata/repomd.xml";
    for (const s3::ListedObject& object : *listed) {
        const std::string_view relative = std::string_view(object.key).substr(mirror.prefix.size());
        const auto slash = relative.find('/');
        if (slash == std::string_view::npos) {
            continue;
        }
        const std::string id(relative.substr(0, slash));
        const std::string_view rest = relative.substr(slash + 1);
        if (!is_valid_repo_id(id)) {
            continue;
        }
        if (rest == "repodata/repomd.xml" || rest == ".rpmirror/state.json") {
            ids.insert(id);
        } else if (rest == ".treeinfo") {
            tree_ids.insert(id);
        } else if (rest.ends_with(kIndex) && rest.size() > kIndex.size()) {
            nested.emplace_back(relative.substr(0, relative.size() - kIndex.size()));
        }
    }
    for (const std::string& repository : nested) {
        if (tree_ids.contains(repository.substr(0, repository.find('/')))) {
            ids.insert(repository);
        }
    }
    if (trees != nullptr) {
        trees->assign(tree_ids.begin(), tree_ids.end());
    }
    return std::vector<std::string>(ids.begin(), ids.end());
}

Result<std::optional<RecordedSelection>> recorded_s3_selection(const s3::S3Config& config,
                                                               const s3::S3Location& repo) {
    s3::S3Client client(config);
    auto state = s3::load_state(client, repo);
    if (!state) {
        return tl::unexpected(std::move(state.error()));
    }
    if (!*state || (*state)->selection.empty()) {
        return std::optional<RecordedSelection>();
    }
    return selection_from_text((*state)->selection);
}

}  // namespace rpmirror
