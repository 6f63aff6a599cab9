// What a sync's options become (see sync/sync_settings.hpp).
#include "sync/sync_settings.hpp"

#include <chrono>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "sync/sync_options.hpp"

namespace rpmirror {

DownloadOptions options_for_repo(DownloadOptions options, const RepoConfig& repo,
                                 const SyncOptions& sync_options) {
    options.max_parallel =
        sync_options.parallel.value_or(repo.max_parallel_downloads.value_or(options.max_parallel));
    options.max_per_host = repo.max_downloads_per_mirror.value_or(options.max_per_host);
    options.retries = repo.retries == 0 ? 1000 : repo.retries;
    options.minrate = repo.minrate_bytes_per_second;
    options.low_speed_time = std::chrono::seconds(repo.timeout_seconds);
    options.connect_timeout = std::chrono::seconds(repo.timeout_seconds);
    options.sslverify = repo.sslverify;
    options.sslcacert = repo.sslcacert.value_or("");
    options.sslclientcert = repo.sslclientcert.value_or("");
    options.sslclientkey = repo.sslclientkey.value_or("");
    if (repo.proxy) {
        options.proxy = repo.proxy->empty() ? "" : *repo.proxy;
    }
    options.proxy_username = repo.proxy_username.value_or("");
    options.proxy_password = repo.proxy_password.value_or("");
    options.proxy_auth_method = repo.proxy_auth_method;
    options.proxy_sslverify = repo.proxy_sslverify;
    options.proxy_sslcacert = repo.proxy_sslcacert.value_or("");
    options.proxy_sslclientcert = repo.proxy_sslclientcert.value_or("");
    options.proxy_sslclientkey = repo.proxy_sslclientkey.value_or("");
    options.sslverifystatus = repo.sslverifystatus;
    options.username = repo.username.value_or("");
    options.password = repo.password.value_or("");
    if (repo.user_agent) {
        options.user_agent = *repo.user_agent;
    }
    options.ip_resolve = repo.ip_resolve;
    options.preserve_remote_time = sync_options.remote_time;
    options.connections_per_file = sync_options.connections_per_file;
    options.segment_min_size = sync_options.segment_min_size;
    if (repo.throttle_bytes_per_second) {
        options.throttle = *repo.throttle_bytes_per_second;
    } else if (repo.throttle_percent && repo.bandwidth_bytes_per_second) {
        options.throttle = static_cast<std::uint64_t>(
            static_cast<double>(*repo.bandwidth_bytes_per_second) * *repo.throttle_percent / 100);
    }
    return options;
}

std::string options_fingerprint(const SyncOptions& options, const SelectionOptions& selection,
                                const RepoConfig& repo, std::string_view trusted_keys) {
    std::string text = fmt::format(
        "v1 meta={} norepopath={} source={} newest={} keep={} buildtime={}",
        options.download_metadata, options.norepopath, selection.source_only, selection.newest_only,
        selection.newest_only ? selection.keep_versions : 0, selection.min_build_time.value_or(-1));
    const auto append_list = [&text](std::string_view key, const std::vector<std::string>& list) {
        text += fmt::format(" {}=", key);
        for (const std::string& item : list) {
            text += item + ",";
        }
    };
    append_list("arch", selection.arches);
    append_list("include", selection.include_globs);
    append_list("exclude", selection.exclude_globs);
    if (selection.advisories.active() || selection.as_of) {
        append_list("advisories", selection.advisories.types);
        append_list("advisory-ids", selection.advisories.ids);
        append_list("severities", selection.advisories.severities);
        text += fmt::format(" as-of={}", selection.as_of.value_or(-1));
    }
    if (selection.only_nevras) {
        // A closure can hold thousands of packages: its digest stands for it.
        std::string joined;
        for (const std::string& nevra : *selection.only_nevras) {
            joined += nevra + "\n";
        }
        text += " closure=" + hash_bytes(ChecksumType::Sha256, joined);
    }
    text += " safe=" + options.safe_write_path.value_or("").string();
    if (options.treeinfo) {
        text += options.skip_bad_images ? " treeinfo=skip-bad-images" : " treeinfo";
    }
    if (options.flatten_hrefs) {
        text += " flatten-hrefs";
    }
    if (options.upstream_layout) {
        text += " layout=upstream mirror-url=" + options.mirror_url;
    }
    if (!options.s3_acl.empty()) {
        // An s3:// mirror's objects get it: a change is applied to the objects already there.
        text += " acl=" + options.s3_acl;
    }
    if (options.download_metadata) {
        // How metadata is published for a filtered mirror (rewritten, signed, or upstream's).
        text += options.upstream_metadata ? " upstream-meta" : " filtered-meta=1";
        if (!options.sign_key.empty()) {
            text += " sign=" + options.sign_key;
        }
        if (options.dnf_cache) {
            text += " dnf-cache";  // a mirror's run must fetch every record and the signature
        }
    }
    if (options.download_policy != DownloadPolicy::Immediate) {
        // A mirror made on demand lacks packages: the first immediate run must fetch them.
        text += fmt::format(" policy={}", download_policy_name(options.download_policy));
        // A prefetch added or widened must fetch its packages though the metadata is the same.
        if (options.prefetch.everything || options.prefetch.newest) {
            text += options.prefetch.everything ? " prefetch=all" : " prefetch=newest";
        }
        append_list("prefetch", options.prefetch.globs);
    }
    if (options.check_package_signatures && repo.gpgcheck) {
        // Packages kept by a run without the check (or with other keys) must be checked by the
        // first run with it.
        append_list("gpgcheck-keys", repo.gpgkeys);
        text += fmt::format(" gpgcheck-trusts={}", trusted_keys);
    }
    return text;
}

store::SyncStoreOptions sync_store_options(const SyncOptions& options, std::string_view repo_id) {
    store::SyncStoreOptions where;
    where.destination = options.download_path.native();
    if (options.metadata_path) {
        where.metadata_destination = options.metadata_path->native();
    }
    where.repository = repo_directory(options, repo_id);
    where.metadata_dir = metadata_directory(options, repo_id);
    where.state_dir = state_directory(options);
    where.s3 = options.s3;
    where.remote_time = options.remote_time;
    where.safe_write_path = options.safe_write_path.has_value();
    where.dedupe_dirs = options.dedupe_dirs;
    where.use_checksum_cache = options.use_checksum_cache;
    where.durable = !options.dnf_cache;
    where.spool_dir = options.s3_spool_dir;
    where.spool_size = options.s3_spool_size;
    where.parallel = options.s3_parallel;
    where.part_size = options.s3_part_size;
    where.acl = options.s3_acl;
    return where;
}

}  // namespace rpmirror
