// Auditing a mirror in object storage (see audit/s3_audit.hpp): the audit itself is
// audit.cpp's, over store::S3Store.
#include "audit/s3_audit.hpp"

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

}  // namespace rpmirror
