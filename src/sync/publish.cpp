// RepoSync's end of a local sync: the no-op, the metadata published (upstream's or rewritten for
// the filtered mirror) and the sync state written.
#include "sync/repo_sync.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <fstream>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "rpmirror/checksum.hpp"
#include "rpmirror/filtered_metadata.hpp"

namespace rpmirror {

namespace {

// Flushes every filesystem holding one of `directories` once (one syncfs per filesystem,
// however many of the directories it holds).
Result<void> flush_filesystems(const std::vector<std::filesystem::path>& directories) {
    std::set<dev_t> flushed;
    for (const std::filesystem::path& directory : directories) {
        struct stat st {};
        if (::stat(directory.c_str(), &st) != 0) {
            continue;  // nothing was written there
        }
        if (flushed.insert(st.st_dev).second) {
            if (auto done = fs::flush_filesystem(directory); !done) {
                return done;
            }
        }
    }
    return {};
}

}  // namespace

bool RepoSync::is_noop(const FetchedRepomd& repomd) {
    const std::string& repomd_bytes = repomd.bytes;
    const auto state = read_sync_state(sync_state_path(state_directory(options_), repo_dir_));
    // A state written before selections were recorded: one full run records it for verify.
    if (!state || !state->selection || state->repomd_sha256 != repomd_sha256_ ||
        state->options_fingerprint != fingerprint()) {
        return false;
    }
    if (options_.download_metadata) {
        std::ifstream live(metadata_dir_ / "repodata" / "repomd.xml", std::ios::binary);
        const std::string live_bytes((std::istreambuf_iterator<char>(live)),
                                     std::istreambuf_iterator<char>());
        if (state->published_repomd_sha256.empty()) {
            if (live_bytes != repomd_bytes || !live_records_intact(repomd.parsed)) {
                return false;
            }
        } else {
            // The metadata the previous run rewrote for these filters from this upstream.
            if (hash_bytes(ChecksumType::Sha256, live_bytes) != state->published_repomd_sha256) {
                return false;
            }
            auto live_repomd = parse_repomd(live_bytes, "repomd.xml");
            if (!live_repomd || !live_records_intact(*live_repomd)) {
                return false;
            }
        }
    }
    if (options_.download_comps && comps_record(repomd.parsed) != nullptr &&
        !std::filesystem::is_regular_file(metadata_dir_ / "comps.xml")) {
        return false;  // -m: comps.xml was removed (or never written)
    }
    if (!state_files_unchanged(repo_dir_, *state)) {
        return false;
    }
    noop_state_ = std::move(*state);
    return true;
}

bool RepoSync::live_records_intact(const Repomd& repomd) const {
    for (const RepomdRecord& record : repomd.records) {
        if (!record.location_href.starts_with(kRepodataPrefix)) {
            return false;
        }
        struct stat st {};
        const auto path =
            metadata_dir_ / "repodata" / record.location_href.substr(kRepodataPrefix.size());
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
            (record.size && static_cast<std::uint64_t>(st.st_size) != *record.size)) {
            return false;
        }
    }
    return true;
}

Result<void> RepoSync::finish_noop() {
    // A run killed between publishing and removing the previous metadata (now under a
    // staging name) left it behind; nothing else would remove it.
    remove_stale_stages(metadata_dir_);
    report_.noop = true;
    report_.selected = noop_state_.files.size();
    report_.kept = noop_state_.files.size();
    if (options_.events != nullptr) {
        for (const SyncStateFile& file : noop_state_.files) {
            PackageEvent event;
            event.kind = PackageEvent::Kind::AlreadyPresent;
            event.file_name = file.relative_path.filename().string();
            event.bytes = file.size;
            event.total = report_.selected;
            event.done = ++packages_done_;
            options_.events->package(event);
        }
    }
    if (options_.delete_unlisted) {
        std::set<std::filesystem::path> keep;
        for (const SyncStateFile& file : noop_state_.files) {
            keep.insert(file.relative_path);
        }
        return delete_unlisted(keep);
    }
    return {};
}

bool RepoSync::rewrites_metadata() const {
    return options_.download_metadata && !options_.upstream_metadata &&
           (report_.selected < report_.upstream_packages || plan_.flattened > 0);
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
    auto rewritten = write_filtered_metadata(stage.dir(), repomd.parsed, kept);
    if (!rewritten) {
        Error error = std::move(rewritten.error());
        error.message = "cannot write metadata for the filtered mirror: " + error.message;
        return tl::unexpected(std::move(error));
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
            "repomd.xml.asc not published: the metadata was rewritten for this mirror (filtered "
            "or flattened) and upstream's signature does not cover it (--sign-key KEYID signs "
            "it)");
    }
    return std::pair{std::move(rewritten->repomd_xml), std::move(signature)};
}

Result<void> RepoSync::publish(const FetchedRepomd& repomd, MetadataStage& stage,
                               const PackageIndex& index) {
    std::string published_sha256;
    if (rewrites_metadata()) {
        auto rewritten = rewrite_metadata(repomd, stage, index);
        if (!rewritten) {
            return tl::unexpected(std::move(rewritten.error()));
        }
        auto& [repomd_xml, signature] = *rewritten;
        published_sha256 = hash_bytes(ChecksumType::Sha256, repomd_xml);
        if (auto written = fs::write_file(stage.dir() / "repomd.xml", repomd_xml); !written) {
            return written;
        }
        if (signature) {
            if (auto written = fs::write_file(stage.dir() / "repomd.xml.asc", *signature);
                !written) {
                return written;
            }
        }
    } else if (options_.download_metadata) {
        if (auto written = fs::write_file(stage.dir() / "repomd.xml", repomd.bytes); !written) {
            return written;
        }
        if (options_.remote_time && repomd.last_modified >= 0) {
            // --remote-time: repomd.xml too gets the server's time, as dnf's records do.
            const std::array<timespec, 2> times{timespec{repomd.last_modified, 0},
                                                timespec{repomd.last_modified, 0}};
            const auto path = stage.dir() / "repomd.xml";
            if (::utimensat(AT_FDCWD, path.c_str(), times.data(), 0) != 0) {
                return make_errno_error("cannot set the time of", path.string(), errno);
            }
        }
        if (repomd.signature) {
            if (auto written = fs::write_file(stage.dir() / "repomd.xml.asc", *repomd.signature);
                !written) {
                return written;
            }
        }
    }
    // The packages the new metadata (and the state file) vouch for must be on disk first.
    // stage.publish() flushes the metadata's filesystem; with --metadata-path or
    // --safe-write-path packages may be on other ones.
    if (auto flushed = flush_filesystems(package_roots()); !flushed) {
        return flushed;
    }
    if (options_.download_metadata) {
        auto published = stage.publish();
        if (!published) {
            return published;
        }
        report_.metadata_published = true;
        if (options_.upstream_metadata && report_.selected < report_.upstream_packages) {
            report_.warnings.push_back(
                fmt::format("the published metadata is upstream's: it lists {} package(s) that the "
                            "filters left out of this mirror",
                            report_.upstream_packages - report_.selected));
        }
    }
    SyncState state{repomd_sha256_, fingerprint(), {}};
    state.selection = RecordedSelection{selection_options_, is_modular_};
    state.published_repomd_sha256 = std::move(published_sha256);
    state.publishing = recorded_publishing();
    std::set<std::filesystem::path> keep;
    for (const PackageTarget& target : plan_.targets) {
        keep.insert(target.relative_path);
        if (auto file = stat_for_state(repo_dir_, target.relative_path)) {
            state.files.push_back(std::move(*file));
        }
    }
    if (auto written =
            write_sync_state(sync_state_path(state_directory(options_), repo_dir_), state);
        !written) {
        report_.warnings.push_back(written.error().to_string());
    }
    // Older versions kept the state inside the mirror, where dnf reposync leaves nothing.
    (void)fs::remove_beneath(repo_dir_, std::string(kLegacyStateFileName), false);
    return options_.delete_unlisted ? delete_unlisted(keep) : Result<void>{};
}

std::vector<std::filesystem::path> RepoSync::package_roots() const {
    std::vector<std::filesystem::path> roots{repo_dir_};
    roots.insert(roots.end(), plan_.roots.begin(), plan_.roots.end());
    return roots;
}

}  // namespace rpmirror
