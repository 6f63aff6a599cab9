// RepoSync's metadata: the records fetched (or reused, see zchunk_reuse.cpp) and parsed, comps.xml
// (-m) and the URLs listed (-u).
#include "sync/repo_sync.hpp"

#include <functional>
#include <set>
#include <thread>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "fs/durable.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror {

namespace {

// -m: comps larger than this, decompressed, are refused (Fedora's is about 20 MB).
constexpr std::uint64_t kMaxCompsBytes = 512ULL * 1024 * 1024;

// Returns `href` joined to `base` as dnf prints URLs (os.path.join(base, href.lstrip('/'))): raw,
// neither percent-encoded nor normalised.
std::string join_url_as_dnf(std::string_view base, std::string_view href) {
    while (!href.empty() && href.front() == '/') {
        href.remove_prefix(1);
    }
    std::string url(base);
    if (!url.empty() && url.back() != '/') {
        url += '/';
    }
    url += href;
    return url;
}

// Returns false iff dnf never reads records of `type` for an install: libdnf asks librepo for
// primary, filelists, prestodelta, group_gz, updateinfo and modules (and their zchunk twins),
// other.xml only for changelogs, the sqlite databases never. Unknown types count as read.
bool dnf_reads(std::string_view type) {
    return !type.ends_with("_db") && type != "other" && type != "other_zck";
}

// Watches one fetch of records as each download ends: tells SyncEvents::record_fetched (iff
// `events`), and calls `ready` once every record of `inputs` (indices into `records`) is verified.
class RecordsArriving final : public ProgressSink {
  public:
    RecordsArriving(SyncEvents* events, std::string repo_id, std::filesystem::path dir,
                    const std::vector<const RepomdRecord*>& records,
                    const std::vector<DownloadRequest>& requests, std::set<std::size_t> inputs,
                    std::function<void()> ready)
        : events_(events),
          dir_(std::move(dir)),
          records_(records),
          requests_(requests),
          inputs_(std::move(inputs)),
          ready_(std::move(ready)) {
        event_.repo_id = std::move(repo_id);
        for (const RepomdRecord* record : records_) {
            event_.pending.push_back(record->type);
        }
    }

    void file_finished(std::size_t index, const FileResult& result) override {
        std::erase(event_.pending, records_[index]->type);
        if (result.status != FileStatus::Downloaded &&
            result.status != FileStatus::AlreadyPresent) {
            return;
        }
        // The parse first: it goes on beside the handler.
        if (inputs_.erase(index) == 1 && inputs_.empty() && ready_) {
            ready_();
        }
        if (events_ != nullptr) {
            event_.type = records_[index]->type;
            event_.file = dir_ / requests_[index].destination;
            events_->record_fetched(event_);
        }
    }

  private:
    SyncEvents* events_;
    std::filesystem::path dir_;
    const std::vector<const RepomdRecord*>& records_;
    const std::vector<DownloadRequest>& requests_;
    std::set<std::size_t> inputs_;
    std::function<void()> ready_;
    RecordEvent event_;
};

}  // namespace

const RepomdRecord* comps_record(const Repomd& repomd) {
    for (const std::string_view type : {"group", "group_gz", "group_xz"}) {
        if (const RepomdRecord* record = repomd.find(type)) {
            return record;
        }
    }
    return nullptr;
}

Result<MetadataStage> RepoSync::create_stage() const {
    if (options_.urls_only) {
        return MetadataStage::create(std::filesystem::temp_directory_path());
    }
    return MetadataStage::create(metadata_on_disk() ? metadata_dir_ : staging_->directory());
}

Result<RepoPackages> RepoSync::fetch_packages(const FetchedRepomd& repomd, MetadataStage& stage) {
    const bool local = metadata_on_disk();
    std::vector<std::filesystem::path> record_sources = repo_.record_sources;
    if (local) {
        std::vector<std::filesystem::path> stale = find_stale_stages(metadata_dir_);
        std::erase(stale, stage.dir());
        record_sources.insert(record_sources.end(), stale.begin(), stale.end());
        record_sources.push_back(metadata_dir_ / "repodata");
    }
    auto packages = fetch_metadata(repomd, stage, record_sources);
    if (local) {
        remove_stale_stages(metadata_dir_, stage.dir());
    }
    if (!packages) {
        return packages;
    }
    // A package upstream lists but the mirror cannot have (absurd size, bad checksum...)
    // fails the repository, as a failed download does; other issues are warnings.
    for (const IndexIssue& issue : packages->skipped) {
        report_.failures.push_back({issue.skipped_package, issue.message, {}});
    }
    report_.warnings.insert(report_.warnings.end(), packages->warnings.begin(),
                            packages->warnings.end());
    is_modular_ = packages->module_streams > 0;
    return packages;
}

Result<RepoPackages> RepoSync::fetch_metadata(
    const FetchedRepomd& repomd, MetadataStage& stage,
    const std::vector<std::filesystem::path>& local_sources) {
    const auto url_of = [&repomd](const RepomdRecord& record) {
        return join_url(record.location_base ? *record.location_base : repomd.base_url,
                        record.location_href);
    };
    // The record parsed: primary, or primary_zck when the repository has no primary or
    // (without --download-metadata) when chunks are to be reused (parse_record).
    const RepomdRecord* primary = repomd.parsed.find("primary");
    if (primary == nullptr) {
        primary = repomd.parsed.find("primary_zck");
    }
    if (primary == nullptr) {
        return make_error(ErrorCode::BadInput, "repomd.xml has no primary record",
                          join_url(repomd.base_url, kRepomdHref));
    }
    // Parsed by the step that fetched this revision (UpstreamRevision::primary): not fetched again.
    const std::shared_ptr<const PackageIndex> parsed =
        options_.upstream ? options_.upstream->primary : nullptr;
    const RepomdRecord* delta_record = nullptr;  // assembled by parse_record
    if (!parsed && !options_.download_metadata && metadata_on_disk()) {
        primary = parse_record(repomd.parsed, *primary, stage.dir(), url_of, delta_record);
    }
    std::vector<const RepomdRecord*> records;
    if (options_.download_metadata && !options_.urls_only) {  // -u needs primary.xml only
        for (const RepomdRecord& record : repomd.parsed.records) {
            if (!options_.dnf_cache || dnf_reads(record.type)) {
                records.push_back(&record);
            }
        }
    } else {
        if (!parsed) {
            records.push_back(primary);
        }
        // dnf's --newest-only keeps the newest packages of every module stream.
        if (const RepomdRecord* modules = repomd.parsed.find("modules");
            modules != nullptr && selection_options_.newest_only) {
            records.push_back(modules);
        }
        // --advisories selects by the repository's updateinfo.
        if (const RepomdRecord* updateinfo = repomd.parsed.find("updateinfo");
            updateinfo != nullptr && selection_options_.advisories.active()) {
            records.push_back(updateinfo);
        }
        const RepomdRecord* comps = comps_record(repomd.parsed);
        if (options_.download_comps && !options_.urls_only && comps != nullptr) {
            records.push_back(comps);
        }
    }
    std::vector<DownloadRequest> requests;
    for (const RepomdRecord* record : records) {
        auto relative =
            record_destination(*record, repo_.id, join_url(repomd.base_url, kRepomdHref));
        if (!relative) {
            return tl::unexpected(std::move(relative.error()));
        }
        DownloadRequest request;
        request.mirrors = mirrors_;
        request.href = record->location_base
                           ? join_url(*record->location_base, record->location_href)
                           : record->location_href;
        request.destination = *relative;
        request.checksum_type = record->checksum.type;
        request.expected_digest = record->checksum.hex;
        // Old createrepo wrote records without <size>: verified by checksum alone.
        request.expected_size = record->size.value_or(kUnknownSize);
        if (record != delta_record && record->size &&
            !seed_from_local_copy(stage.dir(), *relative, request.expected_size, local_sources) &&
            options_.zchunk && !relative->has_parent_path()) {
            if (auto previous =
                    find_previous_revision(relative->filename().string(), local_sources)) {
                (void)assemble_zck_delta(*record, *relative, url_of(*record), stage.dir(),
                                         *previous, "downloading it in full");
            }
        }
        requests.push_back(std::move(request));
    }
    RepoPackageSource source;
    source.primary_path = stage.dir() / primary->location_href.substr(kRepodataPrefix.size());
    source.primary_name = url_of(*primary);
    source.primary_open_size = primary->open_size;
    source.primary_parsed = parsed;
    const RepomdRecord* modules = repomd.parsed.find("modules");
    if (modules != nullptr && selection_options_.newest_only) {
        source.modules_path = stage.dir() / modules->location_href.substr(kRepodataPrefix.size());
        source.modules_name = url_of(*modules);
    }
    const RepomdRecord* updateinfo = repomd.parsed.find("updateinfo");
    if (updateinfo != nullptr && selection_options_.advisories.active()) {
        source.updateinfo_path =
            stage.dir() / updateinfo->location_href.substr(kRepodataPrefix.size());
        source.updateinfo_name = url_of(*updateinfo);
    }
    // With every record to fetch (--download-metadata), primary is parsed as soon as it and the
    // records the selection reads are verified, on a thread of its own, while the others (the
    // large filelists and other) download; SyncEvents::revision_parsed tells it from there.
    std::set<std::size_t> inputs;
    for (std::size_t index = 0; index < records.size(); ++index) {
        if (records[index] == primary || (source.modules_path && records[index] == modules) ||
            (source.updateinfo_path && records[index] == updateinfo)) {
            inputs.insert(index);
        }
    }
    const bool early = !parsed && inputs.size() < records.size();
    std::optional<Result<RepoPackages>> early_parse;
    std::jthread parser;
    const std::shared_ptr<const UpstreamRevision> revision = report_.upstream;  // fetched
    const auto parse = [this, &source, &parsed, &revision] {
        auto packages = read_repo_packages(source, selection_options_);
        if (packages && !parsed && options_.events != nullptr && revision) {
            options_.events->revision_parsed(
                repo_.id, std::make_shared<const UpstreamRevision>(UpstreamRevision{
                              revision->source, revision->repomd, packages->index}));
        }
        return packages;
    };
    SyncEvents* const told = options_.download_metadata ? options_.events : nullptr;
    std::optional<RecordsArriving> arriving;
    if (told != nullptr || early) {
        std::function<void()> ready;
        if (early) {
            ready = [&parser, &early_parse, &parse] {
                parser = std::jthread([&early_parse, &parse] { early_parse = parse(); });
            };
        }
        arriving.emplace(told, repo_.id, stage.dir(), records, requests, std::move(inputs),
                         std::move(ready));
    }
    auto fetched = requests.empty() ? Result<DownloadReport>(DownloadReport{})
                                    : downloader_.run(stage.dir(), requests,
                                                      arriving ? &*arriving : nullptr, stop_);
    if (parser.joinable()) {
        parser.join();
    }
    if (!fetched) {
        return tl::unexpected(std::move(fetched.error()));
    }
    // The first record that failed explains the others (a full disk stops the rest).
    std::optional<std::size_t> unfinished;
    for (std::size_t index = 0; index < requests.size(); ++index) {
        const FileStatus status = fetched->files[index].status;
        if (status == FileStatus::Failed) {
            unfinished = index;
            break;
        }
        if (status != FileStatus::Downloaded && status != FileStatus::AlreadyPresent &&
            !unfinished) {
            unfinished = index;
        }
    }
    if (unfinished) {
        const FileResult& result = fetched->files[*unfinished];
        Error error = result.error.value_or(
            Error{ErrorCode::Interrupted, "interrupted", records[*unfinished]->location_href, 0});
        // A remote failure is named by its href, not by the staging path it was written to;
        // a local one (a full disk) keeps the local path where writing failed.
        error.message = "metadata '" + records[*unfinished]->type + "': " + error.message;
        if (error.code != ErrorCode::Io) {
            error.subject = records[*unfinished]->location_href;
        }
        return tl::unexpected(std::move(error));
    }
    auto packages = early_parse ? std::move(*early_parse) : parse();
    if (packages && !parsed && primary->type == "primary_zck" && !options_.download_metadata &&
        metadata_on_disk()) {
        keep_primary_zck(source.primary_path);
    }
    return packages;
}

void RepoSync::list_urls(const Repomd& repomd, const PackageIndex& index,
                         const Selection& selection) {
    const std::string first_mirror = mirrors_->order().front();
    const auto record_url = [&first_mirror](const RepomdRecord& record) {
        return join_url_as_dnf(pick_base_url(first_mirror, record.location_base),
                               record.location_href);
    };
    if (options_.download_metadata) {
        for (const RepomdRecord& record : repomd.records) {
            report_.urls.push_back(record_url(record));
        }
    }
    if (options_.download_comps) {
        if (const RepomdRecord* comps = comps_record(repomd)) {
            report_.urls.push_back(record_url(*comps));
        }
    }
    for (const std::size_t position : selection.positions) {
        const PackageView package = index[position];
        const std::string base(
            pick_base_url(first_mirror, package.location_base.empty()
                                            ? std::optional<std::string>()
                                            : std::optional<std::string>(package.location_base)));
        report_.urls.push_back(join_url_as_dnf(base, package.location_href));
    }
}

Result<void> RepoSync::save_comps(const Repomd& repomd, const MetadataStage& stage) {
    const RepomdRecord* comps = comps_record(repomd);
    if (comps == nullptr) {
        return {};
    }
    const std::filesystem::path staged =
        stage.dir() / comps->location_href.substr(kRepodataPrefix.size());
    DecompressOptions decompress;
    decompress.expected_size = comps->open_size;
    decompress.ceiling = kMaxCompsBytes;
    auto reader = Decompressor::open(staged, decompress);
    if (!reader) {
        return tl::unexpected(std::move(reader.error()));
    }
    std::string content;
    for (;;) {
        auto chunk = reader->read();
        if (!chunk) {
            Error error = std::move(chunk.error());
            error.message = "comps '" + comps->location_href + "': " + error.message;
            return tl::unexpected(std::move(error));
        }
        if (chunk->empty()) {
            break;
        }
        content.append(chunk->data(), chunk->size());
    }
    if (comps->open_checksum &&
        hash_bytes(comps->open_checksum->type, content) != comps->open_checksum->hex) {
        return make_error(ErrorCode::Corrupt,
                          "comps '" + comps->location_href +
                              "': the decompressed content does not match its open-checksum",
                          repo_.id);
    }
    if (auto written = store_->write_document(store::kCompsKey, content); !written) {
        return written;
    }
    const std::filesystem::path destination = store_->describe(store::kCompsKey);
    report_.comps_saved = destination;
    if (options_.events != nullptr) {
        options_.events->comps_saved(repo_.id, destination);
    }
    return {};
}

}  // namespace rpmirror
