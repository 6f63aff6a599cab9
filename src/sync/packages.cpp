// RepoSync's packages: the plan, the verification of those present, --dedupe links, the
// downloads, and --delete.
#include "sync/repo_sync.hpp"

#include <future>

#include <fmt/core.h>

#include "rpmirror/checksum.hpp"
#include "rpmirror/dedupe.hpp"
#include "store/local_store.hpp"
#include "sync/events.hpp"

namespace rpmirror {

namespace {

// The last component of `href`, as dnf names a package in its progress lines.
std::string href_file_name(std::string_view href) {
    const std::size_t slash = href.rfind('/');
    return std::string(slash == std::string_view::npos ? href : href.substr(slash + 1));
}

DownloadRequest request_for(const PackageView& package, const PackageTarget& target,
                            const std::shared_ptr<MirrorList>& mirrors) {
    DownloadRequest request;
    request.mirrors = mirrors;
    request.href = package.location_base.empty()
                       ? std::string(package.location_href)
                       : join_url(package.location_base, package.location_href);
    request.destination = target.destination;
    request.root_index = target.root_index;
    request.checksum_type = package.checksum_type;
    request.expected_digest = package.checksum_hex();
    request.expected_size = package.package_size;
    return request;
}

PackageFailure failure_of(const PackageView& package, const FileResult& result) {
    PackageFailure failure{package.nevra(), {}, {}};
    failure.reason =
        result.error ? result.error->to_string() : std::string(file_status_name(result.status));
    for (const DownloadAttempt& attempt : result.attempts) {
        failure.attempts.push_back(attempt.url + ": " + attempt.outcome);
    }
    return failure;
}

}  // namespace

Result<void> RepoSync::sync_packages(const PackageIndex& index, const Selection& selection) {
    auto plan = plan_sync(index, selection, repo_dir_, path_policy(), repo_.id);
    if (!plan) {
        Error error = std::move(plan.error());
        if (error.code == ErrorCode::Unsafe && layout_root_.empty() && !options_.safe_write_path &&
            error.message.find("escapes the repository root") != std::string::npos) {
            error.message +=
                " (a repository whose packages live beside it, as Amazon Linux's releases share "
                "one blobstore, is mirrored with --upstream-layout)";
        }
        return tl::unexpected(std::move(error));
    }
    plan_ = std::move(*plan);
    if (plan_.duplicate_paths > 0) {
        report_.warnings.push_back(fmt::format(
            "{} <package> entries name a file already listed under another spelling of its "
            "path (e.g. './Packages/a.rpm'); each file is downloaded once",
            plan_.duplicate_paths));
    }
    // Existing files are verified on worker threads while the missing ones download.
    std::vector<VerifyRequest> checks;
    for (const std::size_t target : plan_.to_verify) {
        const PackageView package = index[plan_.targets[target].position];
        checks.push_back({repo_dir_ / plan_.targets[target].relative_path, package.checksum_type,
                          package.checksum_hex(),
                          package.package_size == kUnknownSize
                              ? std::nullopt
                              : std::optional<std::uint64_t>(package.package_size)});
    }
    VerifyOptions verify_options;
    verify_options.threads = options_.verify_threads;
    verify_options.hash.use_cache = options_.use_checksum_cache;
    verify_options.hash.stop = stop_;
    auto verification = std::async(std::launch::async, [&checks, verify_options] {
        return verify_files(checks, verify_options);
    });
    const std::vector<std::size_t> to_fetch = link_duplicates(index);
    auto first = download_targets(index, to_fetch);
    const std::vector<VerifyResult> verified = verification.get();
    if (!first) {
        return first;
    }
    std::vector<std::size_t> replace;
    for (std::size_t check = 0; check < verified.size(); ++check) {
        if (verified[check].status == VerifyStatus::Ok) {
            ++report_.kept;
            if (options_.events != nullptr) {
                const PackageView package = index[plan_.targets[plan_.to_verify[check]].position];
                PackageEvent event;
                event.kind = PackageEvent::Kind::AlreadyPresent;
                event.file_name = href_file_name(package.location_href);
                event.bytes = package.package_size;
                event.total = report_.selected;
                event.done = ++packages_done_;
                options_.events->package(event);
            }
        } else if (plan_.targets[plan_.to_verify[check]].root_index != 0 &&
                   (verified[check].status == VerifyStatus::DigestMismatch ||
                    verified[check].status == VerifyStatus::SizeMismatch)) {
            // Outside the repository's directory (the layout root, the safe write path) a file
            // is shared with other repositories or releases that may list it as it is: never
            // replaced; this package fails instead.
            const std::size_t target = plan_.to_verify[check];
            const PackageView package = index[plan_.targets[target].position];
            failed_targets_.insert(target);
            report_.failures.push_back(
                {package.nevra(),
                 fmt::format("{} is shared beyond this repository's directory and holds {}, not "
                             "the {} {} this repository lists: not replaced",
                             (plan_.roots[plan_.targets[target].root_index] /
                              plan_.targets[target].destination)
                                 .lexically_normal()
                                 .string(),
                             verified[check].status == VerifyStatus::SizeMismatch
                                 ? fmt::format("{} bytes", verified[check].actual_size)
                                 : fmt::format("{} {}", checksum_type_name(package.checksum_type),
                                               verified[check].actual_digest),
                             checksum_type_name(package.checksum_type), package.checksum_hex()),
                 {}});
        } else {
            replace.push_back(plan_.to_verify[check]);
        }
    }
    report_.replaced = replace.size();
    placed_targets_ = plan_.to_download;
    placed_targets_.insert(placed_targets_.end(), replace.begin(), replace.end());
    auto second = download_targets(index, replace);
    if (!second) {
        return second;
    }
    if (checks_packages() && !stop_.stop_requested()) {
        check_package_signatures(index);
    }
    return {};
}

std::vector<std::size_t> RepoSync::link_duplicates(const PackageIndex& index) {
    if (options_.dedupe == DedupeMode::Off || plan_.to_download.empty() || stop_.stop_requested()) {
        return plan_.to_download;
    }
    std::vector<DedupeTarget> wanted;
    wanted.reserve(plan_.to_download.size());
    for (const std::size_t target : plan_.to_download) {
        const PackageView package = index[plan_.targets[target].position];
        wanted.push_back({package.checksum_type, package.checksum_hex(), package.package_size,
                          plan_.roots[plan_.targets[target].root_index],
                          plan_.targets[target].destination});
    }
    DedupeOptions dedupe;
    dedupe.mode = options_.dedupe;
    // The mirrors beside this one (siblings holding repodata/repomd.xml), then --dedupe-dir.
    std::filesystem::path own = std::filesystem::absolute(repo_dir_).lexically_normal();
    if (!own.has_filename()) {
        own = own.parent_path();  // "/srv/mirror/" (from "-p . --norepopath")
    }
    dedupe.sibling_parents.push_back(own.parent_path());
    dedupe.state_dir = state_directory(options_);
    dedupe.trees = options_.dedupe_dirs;
    dedupe.excluded = {repo_dir_, metadata_dir_};
    dedupe.use_cache = options_.use_checksum_cache;
    dedupe.stop = stop_;
    const DedupeOutcome outcome = dedupe_targets(wanted, dedupe);
    report_.linked += outcome.linked_count;
    report_.linked_bytes += outcome.linked_bytes;
    report_.link_fallbacks += outcome.fallbacks;
    if (!outcome.notes.empty()) {
        report_.warnings.push_back(outcome.notes.size() == 1
                                       ? outcome.notes.front()
                                       : fmt::format("{} (and {} more like it)",
                                                     outcome.notes.front(),
                                                     outcome.notes.size() - 1));
    }
    std::vector<std::size_t> rest;
    for (std::size_t item = 0; item < wanted.size(); ++item) {
        const std::size_t target = plan_.to_download[item];
        if (!outcome.linked[item]) {
            rest.push_back(target);
            continue;
        }
        if (options_.events != nullptr) {
            PackageEvent event;
            event.kind = PackageEvent::Kind::Linked;
            event.file_name = href_file_name(index[plan_.targets[target].position].location_href);
            event.bytes = wanted[item].size;
            event.total = report_.selected;
            event.done = ++packages_done_;
            options_.events->package(event);
        }
    }
    return rest;
}

Result<void> RepoSync::download_targets(const PackageIndex& index,
                                        const std::vector<std::size_t>& targets) {
    if (targets.empty() || stop_.stop_requested()) {
        return {};
    }
    std::vector<DownloadRequest> requests;
    requests.reserve(targets.size());
    for (const std::size_t target : targets) {
        requests.push_back(
            request_for(index[plan_.targets[target].position], plan_.targets[target], mirrors_));
    }
    std::optional<PackageEventRelay> relay;
    if (options_.events != nullptr) {
        std::vector<std::string> names;
        names.reserve(targets.size());
        for (const std::size_t target : targets) {
            names.push_back(href_file_name(index[plan_.targets[target].position].location_href));
        }
        relay.emplace(progress_, *options_.events, std::move(names), report_.selected,
                      packages_done_);
    }
    auto downloaded = downloader_.run(plan_.roots, requests, relay ? &*relay : progress_, stop_);
    if (!downloaded) {
        return tl::unexpected(std::move(downloaded.error()));
    }
    report_.downloaded += downloaded->downloaded + downloaded->already_present;
    report_.bytes_downloaded += downloaded->bytes_received;
    report_.resumed += downloaded->resumed;
    report_.retries += downloaded->retries;
    for (std::size_t request = 0; request < requests.size(); ++request) {
        const FileResult& result = downloaded->files[request];
        if (result.status == FileStatus::Failed) {
            failed_targets_.insert(targets[request]);
            report_.failures.push_back(
                failure_of(index[plan_.targets[targets[request]].position], result));
        }
    }
    return {};
}

Result<void> RepoSync::delete_unlisted(const std::set<std::string>& keep) {
    auto deleted = store::delete_unlisted(*store_, keep);
    if (!deleted) {
        return tl::unexpected(std::move(deleted.error()));
    }
    report_.deleted.assign(deleted->begin(), deleted->end());
    return {};
}

}  // namespace rpmirror
