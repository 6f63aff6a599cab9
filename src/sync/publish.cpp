// RepoSync's end, written once for every store (store/mirror_store.hpp): the no-op, the metadata
// published (upstream's or rewritten for the filtered mirror) and the sync recorded.
#include "sync/repo_sync.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "publish/filtered_metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "store/source_record.hpp"

namespace rpmirror {

namespace {

// RecordedPublishing::advisories_left_out_sha256 of `left_out` ("" for none).
std::string left_out_sha256(std::vector<std::string> left_out) {
    if (left_out.empty()) {
        return {};
    }
    std::sort(left_out.begin(), left_out.end());
    std::string lines;
    for (const std::string& line : left_out) {
        lines += line + "\n";
    }
    return hash_bytes(ChecksumType::Sha256, lines);
}

}  // namespace

bool RepoSync::is_noop(const FetchedRepomd& repomd) {
    auto recorded = store_->recorded();
    // A state written before selections were recorded: one full run records it for verify.
    if (!recorded || !recorded->selection || !recorded->versions ||
        recorded->repomd_sha256 != repomd_sha256_ || recorded->fingerprint != fingerprint()) {
        return false;
    }
    const store::Listing& versions = *recorded->versions;
    // What this sync publishes was published and recorded (a state of an older version, which
    // recorded no metadata, costs one full run), and nobody changed it or a package since.
    if (options_.download_metadata && !versions.contains(std::string(store::kIndexKey))) {
        return false;
    }
    if (options_.download_comps && comps_record(repomd.parsed) != nullptr &&
        !versions.contains(std::string(store::kCompsKey))) {
        return false;  // -m: comps.xml was never written
    }
    if (!store::files_unchanged(*store_, versions)) {
        return false;
    }
    noop_packages_.clear();
    for (const std::string& key : recorded->packages) {
        const auto found = versions.find(key);
        noop_packages_.emplace_back(key, found == versions.end() ? 0 : found->second.size);
    }
    return true;
}

Result<void> RepoSync::finish_noop() {
    store_->tidy();
    report_.noop = true;
    report_.selected = noop_packages_.size();
    report_.kept = noop_packages_.size();
    for (const auto& [key, size] : noop_packages_) {
        report_.package_keys.push_back(key);
    }
    if (options_.events != nullptr) {
        for (const auto& [key, size] : noop_packages_) {
            PackageEvent event;
            event.kind = PackageEvent::Kind::AlreadyPresent;
            event.file_name = std::filesystem::path(key).filename().string();
            event.bytes = size;
            event.total = report_.selected;
            event.done = ++packages_done_;
            options_.events->package(event);
        }
    }
    if (options_.delete_unlisted) {
        std::set<std::string> keep;
        for (const auto& [key, size] : noop_packages_) {
            keep.insert(key);
        }
        return delete_unlisted(keep);
    }
    return {};
}

bool RepoSync::rewrites_metadata() const {
    return options_.download_metadata && !options_.upstream_metadata &&
           (report_.selected < report_.upstream_packages || plan_.flattened > 0 ||
            selection_options_.advisories.active() || selection_options_.as_of ||
            !left_out_.empty());
}

bool RepoSync::leave_out_failed(const PackageIndex& index) {
    std::set<std::string> failed;
    for (const PackageFailure& failure : report_.failures) {
        failed.insert(failure.package);
    }
    std::vector<PackageTarget> held;
    std::vector<std::string> left_out;
    for (std::size_t target = 0; target < plan_.targets.size(); ++target) {
        const PackageTarget& planned = plan_.targets[target];
        if (failed_targets_.contains(target) || failed.contains(index[planned.position].nevra())) {
            left_out.push_back(planned.relative_path.lexically_normal().generic_string());
        } else {
            held.push_back(planned);
        }
    }
    if (held.empty()) {
        report_.warnings.push_back(
            "--publish-partial: none of the selected packages is in place: nothing to publish");
        return false;
    }
    plan_.targets = std::move(held);
    left_out_ = std::move(left_out);
    return true;
}

Result<std::pair<std::string, std::optional<std::string>>> RepoSync::rewrite_metadata(
    const FetchedRepomd& repomd, const MetadataStage& stage, const PackageIndex& index) {
    std::vector<KeptPackage> kept;
    kept.reserve(plan_.targets.size());
    for (const PackageTarget& target : plan_.targets) {
        const PackageView package = index[target.position];
        kept.push_back({package.checksum_hex(), std::string(package.location_href),
                        package.strict_nevra(),
                        target.flattened ? target.relative_path.generic_string() : std::string()});
    }
    // The names upstream has and the mirror keeps no package of: comps groups needing them go.
    std::unordered_set<std::string> filtered_out;
    for (std::size_t position = 0; position < index.size(); ++position) {
        filtered_out.insert(std::string(index[position].name));
    }
    for (const PackageTarget& target : plan_.targets) {
        filtered_out.erase(std::string(index[target.position].name));
    }
    auto rewritten =
        write_filtered_metadata(stage.dir(), repomd.parsed, kept, filtered_out,
                                selection_options_.advisories, selection_options_.as_of);
    if (!rewritten) {
        Error error = std::move(rewritten.error());
        error.message = "cannot write metadata for the filtered mirror: " + error.message;
        return tl::unexpected(std::move(error));
    }
    for (const std::string& left_out : rewritten->comps_left_out) {
        report_.warnings.push_back("comps: " + left_out + " (filtered mirror)");
    }
    // A security-only mirror leaves out thousands: one line, the list in --json. Said when it
    // is news: not by a no-op (which publishes nothing), nor by a publication that leaves out
    // what the last one did.
    if (!rewritten->advisories_left_out.empty()) {
        const std::size_t count = rewritten->advisories_left_out.size();
        auto recorded = store_->recorded();
        const bool told = recorded && recorded->publishing &&
                          recorded->publishing->advisories_left_out_sha256 ==
                              left_out_sha256(rewritten->advisories_left_out);
        if (!told) {
            report_.warnings.push_back(fmt::format(
                "updateinfo: {} {} left out (the first: {}); --json lists them", count,
                count == 1 ? "advisory" : "advisories", rewritten->advisories_left_out.front()));
        }
        report_.advisories_left_out = std::move(rewritten->advisories_left_out);
    }
    std::optional<std::string> signature;
    if (!options_.sign_key.empty()) {
        auto signed_repomd = sign_detached(rewritten->repomd_xml, options_.sign_key);
        if (!signed_repomd) {
            return tl::unexpected(std::move(signed_repomd.error()));
        }
        signature = std::move(*signed_repomd);
    } else if (repomd.signature) {
        report_.warnings.push_back(
            "repomd.xml.asc not published: the metadata was rewritten for this mirror (filtered, "
            "flattened or partial) and upstream's signature does not cover it (--sign-key KEYID "
            "signs it)");
    }
    return std::pair{std::move(rewritten->repomd_xml), std::move(signature)};
}

Result<void> RepoSync::publish(const FetchedRepomd& repomd, MetadataStage& stage,
                               const PackageIndex& index) {
    store::SyncRecord record;
    record.repomd_sha256 = repomd_sha256_;
    // A partial publication is never the next run's no-op: that run fetches what failed.
    record.fingerprint = left_out_.empty() ? fingerprint() : fingerprint() + " partial";
    record.selection = RecordedSelection{selection_options_, is_modular_};
    if (selection_options_.advisories.active() || selection_options_.as_of) {
        // What advisories and dates selected is recorded as its result, as a closure is:
        // verify then checks exactly those packages without reading updateinfo again.
        std::vector<std::string> nevras;
        for (const PackageTarget& target : plan_.targets) {
            const PackageView package = index[target.position];
            nevras.push_back(closure_nevra(package.name, std::to_string(package.epoch),
                                           package.version, package.release, package.arch));
        }
        record.selection.options.only_nevras = std::move(nevras);
    }
    record.publishing = recorded_publishing();
    if (checks_packages()) {
        record.signatures_checked = trusted_key_ids_;
    }
    for (const PackageTarget& target : plan_.targets) {
        record.packages.push_back(target.relative_path.generic_string());
    }
    if (report_.comps_saved) {
        record.metadata.emplace_back(store::kCompsKey);
    }
    std::optional<store::MetadataRelease> release;
    if (rewrites_metadata()) {
        auto rewritten = rewrite_metadata(repomd, stage, index);
        if (!rewritten) {
            return tl::unexpected(std::move(rewritten.error()));
        }
        record.publishing.advisories_left_out_sha256 = left_out_sha256(report_.advisories_left_out);
        release.emplace();
        release->repomd_xml = std::move(rewritten->first);
        release->signature = std::move(rewritten->second);
        record.published_repomd_sha256 = hash_bytes(ChecksumType::Sha256, release->repomd_xml);
    } else if (options_.download_metadata) {
        release.emplace();
        release->repomd_xml = repomd.bytes;
        release->signature = repomd.signature;
        if (options_.remote_time && repomd.last_modified >= 0) {
            release->repomd_time = repomd.last_modified;
        }
    }
    // The packages the new metadata (and the record) vouch for are ready first.
    if (auto ready = store_->ready_packages(); !ready) {
        return ready;
    }
    if (release) {
        release->stage = &stage;
        if (auto published = store_->publish_metadata(*release); !published) {
            return published;
        }
        report_.metadata_published = true;
        if (!left_out_.empty()) {
            report_.partial = true;
            report_.left_out = left_out_;
            report_.warnings.push_back(fmt::format(
                "metadata published without the {} package(s) that failed (--publish-partial): "
                "{}; it lists the {} in place, and the next run fetches the others again",
                left_out_.size(), fmt::join(left_out_, ", "), plan_.targets.size()));
        }
        if (options_.upstream_metadata && report_.selected < report_.upstream_packages) {
            report_.warnings.push_back(
                fmt::format("the published metadata is upstream's: it lists {} package(s) that the "
                            "filters left out of this mirror",
                            report_.upstream_packages - report_.selected));
        }
        record.metadata.emplace_back(store::kIndexKey);
        if (release->signature) {
            record.metadata.emplace_back(store::kSignatureKey);
        }
        for (std::string& href : record_hrefs(release->repomd_xml)) {
            record.metadata.push_back(std::move(href));
        }
    }
    // --mirror-url's list points clients at the new index, and the state records it with the
    // metadata (a bucket's next run then finds it stored and does not store it again).
    auto listed = publish_mirror_list();
    if (!listed) {
        return tl::unexpected(std::move(listed.error()));
    }
    if (*listed) {
        record.metadata.push_back(std::move(**listed));
    }
    mirror_list_published_ = true;
    if (auto recorded = store_->record_sync(record, report_.warnings); !recorded) {
        return recorded;
    }
    if (options_.delete_unlisted) {
        // The files of the packages a partial publication left out (damaged copies) stay for
        // the next run, which fetches them again; --delete removes only what the selection
        // dropped.
        std::set<std::string> keep(record.packages.begin(), record.packages.end());
        keep.insert(left_out_.begin(), left_out_.end());
        if (auto deleted = delete_unlisted(keep); !deleted) {
            return deleted;
        }
    }
    // Last, the sync done: the mirror remembers its source (without the record only a
    // source-less repair fails).
    if (auto kept = store::write_source_record(*store_, repo_, record.selection); !kept) {
        report_.warnings.push_back("source not recorded: " + kept.error().to_string());
    }
    return {};
}

}  // namespace rpmirror
