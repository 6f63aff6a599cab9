// The images of an installation tree, audited as `verify` audits a repository's files (see
// audit/report_parts.hpp: audit_tree_store), over the tree's store.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "audit/audit.hpp"
#include "audit/report_parts.hpp"
#include "metadata/treeinfo.hpp"
#include "s3/mirror_state.hpp"
#include "sync/stored_record.hpp"
#include "util/text.hpp"

namespace rpmirror {

namespace audit_parts {

RepoAuditReport audit_tree_store(std::string_view tree_id, store::MirrorStore& tree,
                                 const std::filesystem::path& report_dir, bool use_cache,
                                 unsigned threads) {
    const auto started = std::chrono::steady_clock::now();
    RepoAuditReport report;
    report.repo_id = std::string(tree_id);
    report.repo_dir = report_dir;
    report.reference_root = report_dir;
    auto text = tree.read(kTreeinfoName);
    auto parsed = text ? parse_treeinfo(*text, tree.describe(kTreeinfoName))
                       : Result<TreeInfo>(tl::unexpected(std::move(text.error())));
    if (!parsed) {
        report.error = std::move(parsed.error());
        finish(report, started);
        return report;
    }
    // What the tree's record (its syncs', sync/stored_record.hpp) vouches for with the checksum
    // .treeinfo gives, while the file is the one recorded, is intact without reading: a bucket's
    // images (a local record keeps no checksums: the store's cache, trusting it, decides).
    std::optional<StoredRecord> record;
    if (use_cache) {
        if (auto loaded = StoredRecord::load(
                tree, {std::string(kTreeImagesCatalogue), std::string(s3::kTreeStateKey)})) {
            record = std::move(*loaded);
        }  // an unreadable record only costs reads
    }
    const auto vouched = [&](const TreeInfo::File& file) -> std::optional<store::StoredFile> {
        if (!record) {
            return std::nullopt;
        }
        const auto entry = record->files().find(file.path);
        if (entry == record->files().end() || entry->second.digest.empty() ||
            entry->second.type != file.type ||
            text::to_lower(entry->second.digest) != text::to_lower(file.digest)) {
            return std::nullopt;
        }
        auto now = tree.stat(file.path);
        if (!now || !*now ||
            !entry->second.still(store::ObjectInfo{(*now)->size, (*now)->version})) {
            return std::nullopt;
        }
        return **now;
    };
    std::vector<store::ExpectedFile> files;
    for (const TreeInfo::File& file : parsed->files) {
        ++report.images;
        if (const std::optional<store::StoredFile> held = vouched(file)) {
            ++report.verified;
            ++report.from_cache;
            report.intact.push_back(
                {file.path, false, held->size, held->version, file.type, file.digest});
            continue;
        }
        files.push_back({file.path, file.type, file.digest, std::nullopt});
    }
    const std::vector<store::CheckedFile> checked = tree.check_files(files, {threads, use_cache});
    for (std::size_t i = 0; i < files.size(); ++i) {
        const store::CheckedFile& found = checked[i];
        report.bytes_hashed += found.bytes_read;
        if (found.finding == store::Finding::Intact) {
            ++report.verified;
            report.from_cache += found.from_cache ? 1 : 0;
            report.intact.push_back({files[i].key, false, found.actual_size, found.version,
                                     files[i].type, files[i].digest});
            continue;
        }
        AuditProblem problem = problem_of(files[i], found);
        problem.path = files[i].key;
        problem.root = report_dir;
        problem.destination = files[i].key;
        report.problems.push_back(std::move(problem));
    }
    // The images .treeinfo names without a checksum: nothing to verify them against, so only
    // there or not.
    for (const std::string& image : parsed->unchecksummed_images) {
        ++report.images;
        auto stored = tree.stat(image);
        if (stored && *stored) {
            report.intact.push_back(
                {image, false, (*stored)->size, (*stored)->version, ChecksumType::Sha256, {}});
            continue;
        }
        store::CheckedFile found;
        found.finding = stored ? store::Finding::Missing : store::Finding::Unreadable;
        found.detail = stored ? std::string() : stored.error().to_string();
        AuditProblem problem = problem_of({image, ChecksumType::Sha256, {}, std::nullopt}, found);
        problem.path = image;
        problem.root = report_dir;
        problem.destination = image;
        report.problems.push_back(std::move(problem));
    }
    finish(report, started);
    return report;
}

}  // namespace audit_parts

}  // namespace rpmirror
