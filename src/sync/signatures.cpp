// RepoSync's signature checks: repomd.xml.asc (repo_gpgcheck) and the packages' (--gpgcheck),
// in the mirror and in the spool of an s3:// destination.
#include "sync/repo_sync.hpp"

#include <functional>

#include "fs/beneath.hpp"
#include "util/parallel.hpp"

namespace rpmirror {

namespace {

// Removes the regular file `destination` beneath `root` (never through a symlink, never a
// symlink's target, never outside `root`). Returns an error iff it is there and cannot be removed.
Result<void> remove_package_file(const std::filesystem::path& root,
                                 const std::filesystem::path& destination) {
    auto removed = fs::remove_beneath(root, destination, false);
    if (!removed) {
        return tl::unexpected(std::move(removed.error()));
    }
    if (*removed == fs::Removal::Kept) {
        return make_error(ErrorCode::Unsafe, "not removed: not a regular file",
                          (root / destination).string());
    }
    return {};
}

// --gpgcheck: what to report for `outcome`, the check of package `nevra` in `file_name`;
// nothing iff it is good. On a verdict, `remove` takes the file out of the mirror (its error
// is reported instead of dnf's words); a package that could not be checked is kept.
std::optional<PackageFailure> signature_failure(const std::string& nevra,
                                                const std::string& file_name,
                                                const Result<std::optional<Rejection>>& outcome,
                                                const std::function<Result<void>()>& remove) {
    if (!outcome) {
        return PackageFailure{
            nevra, "signature not checked, file kept: " + outcome.error().to_string(), {}, {}};
    }
    if (!*outcome) {
        return std::nullopt;
    }
    const Rejection& rejection = **outcome;
    const std::string dnf_words = dnf_rejection_message(rejection.kind, file_name);
    const std::string detail = " (" + rejection.error.to_string() + ")";
    PackageFailure failure{nevra, {}, {}, "Removing " + file_name + ": " + dnf_words};
    if (auto removed = remove(); removed) {
        failure.reason = failure.dnf_message + detail;
    } else {
        failure.reason = dnf_words + detail + "; " + removed.error().to_string();
        failure.dnf_message.clear();
    }
    return failure;
}

}  // namespace

Result<void> RepoSync::load_keys() {
    if (repo_.repo_gpgcheck ||
        (checks_packages() && options_.package_keys == PackageKeySource::Repository)) {
        auto keys = load_repo_keys(repo_, downloader_.options(), stop_);
        if (!keys) {
            return tl::unexpected(std::move(keys.error()));
        }
        keys_ = std::move(*keys);
    }
    if (checks_packages()) {
        if (auto loaded = load_package_keys(); !loaded) {
            return loaded;
        }
    }
    return {};
}

Result<void> RepoSync::load_package_keys() {
    if (options_.package_keys == PackageKeySource::Repository) {
        package_keys_ = &*keys_;
    } else {
        auto installed = load_installed_keys(options_.installroot);
        if (!installed) {
            Error error = std::move(installed.error());
            error.message = "--gpgcheck: " + error.message;
            return tl::unexpected(std::move(error));
        }
        installed_keys_ = std::move(*installed);
        package_keys_ = &*installed_keys_;
    }
    for (const SigningKey& key : package_keys_->keys()) {
        trusted_key_ids_ += key.key_id + ",";
    }
    return {};
}

Result<void> RepoSync::check_repomd_signature(FetchedRepomd& repomd) {
    if (!repo_.repo_gpgcheck) {
        return {};
    }
    const std::string url = join_url(repomd.base_url, "repodata/repomd.xml.asc");
    auto signature = fetch_signature(repomd.base_url);
    if (!signature) {
        return tl::unexpected(std::move(signature.error()));
    }
    if (!*signature) {
        return make_error(ErrorCode::Unsafe,
                          "repo_gpgcheck: repomd.xml is not signed (no repomd.xml.asc on the "
                          "mirror that served it)",
                          url);
    }
    if (auto verified = keys_->verify_detached(repomd.bytes, **signature, url); !verified) {
        Error error = std::move(verified.error());
        error.message = "repo_gpgcheck: repomd.xml: " + error.message;
        return tl::unexpected(std::move(error));
    }
    repomd.signature = std::move(*signature);
    return {};
}

Result<void> RepoSync::prepare_published_signature(FetchedRepomd& repomd) {
    if (options_.download_metadata && !options_.urls_only && !options_.sign_key.empty()) {
        // --sign-key: a key that cannot sign fails the run before anything is downloaded.
        if (auto probe = sign_detached("rpmirror", options_.sign_key); !probe) {
            return tl::unexpected(std::move(probe.error()));
        }
    }
    if (options_.download_metadata && !options_.urls_only && !options_.dnf_cache &&
        !repo_.repo_gpgcheck) {
        // Fetched now, with repomd.xml, so both are of the same revision (not after the
        // packages, when upstream may have moved on).
        auto signature = fetch_signature(repomd.base_url);
        if (!signature) {
            return tl::unexpected(std::move(signature.error()));
        }
        repomd.signature = std::move(*signature);
    }
    return {};
}

Result<std::optional<std::string>> RepoSync::fetch_signature(const std::string& base_url) {
    auto signature = downloader_.fetch_document(join_url(base_url, "repodata/repomd.xml.asc"),
                                                kMaxDocumentBytes, stop_);
    if (signature) {
        return std::optional<std::string>(std::move(*signature));
    }
    if (signature.error().code == ErrorCode::NotFound) {
        return std::optional<std::string>();
    }
    Error error = std::move(signature.error());
    error.message = "cannot fetch the signature of repomd.xml: " + error.message;
    return tl::unexpected(std::move(error));
}

void RepoSync::check_package_signatures(const PackageIndex& index) {
    std::vector<std::size_t> present;
    for (std::size_t target = 0; target < plan_.targets.size(); ++target) {
        if (!failed_targets_.contains(target)) {
            present.push_back(target);
        }
    }
    std::vector<Result<std::optional<Rejection>>> outcomes(present.size(),
                                                           std::optional<Rejection>());
    for_each_index_in_parallel(present.size(), options_.verify_threads, [&] {
        return [&](std::size_t item) {
            if (stop_.stop_requested()) {
                return;  // unchecked packages are kept; the run exits as interrupted
            }
            const PackageTarget& target = plan_.targets[present[item]];
            outcomes[item] =
                package_keys_->check_package(plan_.roots[target.root_index] / target.destination);
        };
    });
    report_.signatures_checked += present.size();
    for (std::size_t item = 0; item < present.size(); ++item) {
        const PackageTarget& target = plan_.targets[present[item]];
        if (auto failure = signature_failure(
                index[target.position].nevra(), target.destination.filename().string(),
                outcomes[item], [&] {
                    return remove_package_file(plan_.roots[target.root_index], target.destination);
                })) {
            report_.failures.push_back(std::move(*failure));
        }
    }
}

bool RepoSync::judge_staged(const PackageIndex& index, std::size_t target,
                            const std::filesystem::path& file) {
    const PackageTarget& planned = plan_.targets[target];
    const auto outcome = package_keys_->check_package(file);
    ++spool_checked_;
    // The staged file goes anyway; a stored object is removed by record_placed.
    auto failure =
        signature_failure(index[planned.position].nevra(), planned.destination.filename().string(),
                          outcome, [] { return Result<void>{}; });
    if (!failure) {
        return true;
    }
    const std::lock_guard lock(spool_failures_mutex_);
    spool_failures_[target] = std::move(*failure);
    // One that could not be checked is kept, as a local --gpgcheck keeps the file.
    return !outcome;
}

}  // namespace rpmirror
