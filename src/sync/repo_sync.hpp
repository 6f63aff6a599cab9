// RepoSync, the work of one sync (Syncer::sync in sync.cpp runs it). Its member functions are
// defined by concern: repo_sync.cpp (the sequence of stages), signatures.cpp, fetch_metadata.cpp,
// zchunk_reuse.cpp, packages.cpp (the packages placed through the store's staging area),
// publish.cpp (the store opened, the publish, the state, the no-op).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dedupe/dedupe.hpp"
#include "download/download.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "plan/plan.hpp"
#include "publish/publish.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/util/error.hpp"
#include "signature/signature.hpp"
#include "store/object_store.hpp"
#include "store/sync_store.hpp"
#include "sync/events.hpp"
#include "sync/repo_source.hpp"
#include "sync/sync.hpp"

namespace rpmirror {

inline constexpr std::string_view kRepodataPrefix = "repodata/";

// Returns the record -m saves as comps.xml, in the order dnf reposync looks for one (group,
// group_gz, then the xz variant createrepo_c can write), or null iff there is none.
const RepomdRecord* comps_record(const Repomd& repomd);

// The lock a sync holds (Syncer::sync's: lock_repository's, or the caller's), and the repository
// directory it locks (repo_directory's spelling; an s3:// one for a bucket).
struct HeldLock {
    RepoLock* lock = nullptr;  // null: none (-u)
    std::filesystem::path dir;
};

// The work of one sync, stage by stage; each stage records its outcome in `report`.
class RepoSync {
  public:
    // `root`: the lock held for the sync; a repository that lies elsewhere (--upstream-layout's
    // release, a tree's variant) is locked at its own place too, when its store is opened.
    RepoSync(Downloader& downloader, const RepoConfig& repo, const SyncOptions& options,
             ProgressSink* progress, std::stop_token stop, RepoSyncReport& report,
             HeldLock root = {});

    // The stages, in order: the keys, the mirrors and repomd.xml (checked with repo_gpgcheck),
    // the no-op, the records and the selection, then the packages and the metadata of the
    // destination (a directory, or an s3:// one); -u stops after the selection.
    Result<void> run();

    // The requests the store cost (a bucket's, all clients), into the report.
    void record_requests();

  private:
    // repo_sync.cpp: what the stages share.

    RecordedPublishing recorded_publishing() const;

    bool checks_packages() const;

    std::string fingerprint() const;

    // After the selection, for every store: the packages placed (place_packages, over the
    // store's Placement); with every package there, the metadata is published and the sync
    // recorded (publish), then --upstream-layout's end.
    Result<void> sync_to_store(const FetchedRepomd& repomd, MetadataStage& stage,
                               const PackageIndex& index, const Selection& selection);

    // True iff the run goes on to publish: every package is in place, or (--publish-partial) the
    // ones that failed are left out of what is published (leave_out_failed). Otherwise (a package
    // failed, or the run was stopped) warns, with --download-metadata, that nothing was published:
    // the metadata published before stays in place, or (none yet) what to run.
    bool published_after_packages(const PackageIndex& index);

    // Records that the repository's metadata could not be fetched (skip_if_unavailable's case)
    // unless the run was interrupted or the local disk failed, and returns `error`.
    tl::unexpected<Error> metadata_unavailable(Error error);

    // signatures.cpp: repo_gpgcheck and --gpgcheck.

    // Loads the repository's keys (repo_gpgcheck; --gpgcheck with them) and the keys packages
    // are checked against (--gpgcheck, load_package_keys).
    Result<void> load_keys();

    // --gpgcheck: the keys packages are checked against, as options_.package_keys says.
    Result<void> load_package_keys();

    // The revision the sync works from: options_.upstream when an earlier step fetched it, else
    // the mirrors resolved, repomd.xml fetched and, with repo_gpgcheck, its signature checked.
    // Returns the error of the first that failed (the metadata marked unavailable but for a bad
    // signature).
    Result<std::shared_ptr<const UpstreamRevision>> upstream_revision();

    // With repo_gpgcheck, fetches repomd.xml.asc from the mirror that served `repomd` and checks
    // it against the repository's keys. Returns an error naming the signature's URL iff it is
    // missing or not a good signature by one of them.
    Result<void> check_repomd_signature(FetchedRepomd& repomd);

    // Returns repomd.xml.asc of the mirror at `base_url`, nullopt iff it has none (404/410), or
    // the error of any other failure (publishing without a signature upstream has would lose it).
    // Over the downloader's connections.
    Result<std::optional<std::string>> fetch_signature(const std::string& base_url);

    // --download-metadata: readies the signature published with repomd.xml: a --sign-key that
    // cannot sign fails the run here; else, without repo_gpgcheck (which fetched it already),
    // upstream's repomd.xml.asc is fetched into `repomd` (fetch_signature).
    Result<void> prepare_published_signature(FetchedRepomd& repomd);

    // --gpgcheck: checks every package now in the mirror (downloaded or kept) on worker threads.
    // One with a verdict against it is removed; one that could not be checked is kept. Both are
    // reported as failures.
    void check_package_signatures(const PackageIndex& index);

    // --gpgcheck before committing (a bucket's spool): judges plan_ target `target`, complete
    // as `file`, on a commit worker (several at once). True: store it (good, or it could not be
    // judged, as a local --gpgcheck keeps such a file); false: a verdict against it. What it
    // reports waits in spool_failures_ for Placement::end_batch.
    bool judge_staged(const PackageIndex& index, std::size_t target,
                      const std::filesystem::path& file);

    // fetch_metadata.cpp: the records, comps (-m) and the URLs (-u).

    // True iff the records are staged, kept and published in a local metadata directory (the
    // store's staging area is in place: a directory), not passed through a spool (a bucket's)
    // nor only read (-u).
    bool metadata_on_disk() const { return staging_ && staging_->in_place(); }

    // Creates the directory the records are staged in. -u writes nothing into the mirror: its
    // primary.xml is staged in the temp directory. An s3:// destination stages it in its spool
    // (memory, not a disk), and uploads it from there. A local mirror stages it in its metadata
    // directory.
    Result<MetadataStage> create_stage() const;

    // fetch_metadata into `stage`, then the index's issues into the report. For a local mirror,
    // records that staging directories left by a killed run (or the live repodata/) already
    // hold are reused, then those directories are cleared.
    Result<RepoPackages> fetch_packages(const FetchedRepomd& repomd, MetadataStage& stage);

    // Error{BadInput} (report_.refused is set by the caller) iff the run is a mistake to refuse
    // before anything changes: an --arch neither rpm nor the repository knows, or (--delete
    // without --force-delete) a selection that would leave the mirror with no package, or with
    // fewer than half of the packages it holds (kMassDeletionFloor or more).
    Result<void> refuse_mistakes(const PackageIndex& index, const Selection& selection);

    // Removes the packages' download temporaries (".NAME.rpm.part") beneath the mirror that no
    // selected package this run failed to complete will resume, with a warning naming them (best
    // effort).
    void remove_stale_partials();

    // Downloads the records this sync needs into `stage` (primary, and modules with
    // --newest-only; every record with --download-metadata), verified by size and checksum, and
    // reads and selects the packages (read_repo_packages, the files named by their URLs).
    // Records found with the expected size in one of `local_sources` are copied instead
    // (verified like downloads; a mismatch is downloaded anew).
    Result<RepoPackages> fetch_metadata(const FetchedRepomd& repomd, MetadataStage& stage,
                                        const std::vector<std::filesystem::path>& local_sources);

    // -u: the URLs dnf reposync prints, in its order: with --download-metadata every record of
    // repomd.xml, with -m the comps record, then the selected packages.
    void list_urls(const Repomd& repomd, const PackageIndex& index, const Selection& selection);

    // -m: writes the comps record staged in `stage` uncompressed to <metadata dir>/comps.xml
    // (replaced atomically), as dnf reposync does. Nothing iff the repository has none.
    Result<void> save_comps(const Repomd& repomd, const MetadataStage& stage);

    // zchunk_reuse.cpp: records copied from a local copy or assembled from a zchunk delta.

    // Where the default mode (no --download-metadata, which keeps no repodata/) keeps the last
    // primary_zck it parsed, the previous copy of the next run's delta: beside the sync state,
    // one file per repository.
    std::filesystem::path kept_primary_zck_path() const;

    // Puts `parsed` (a primary_zck that verified and parsed; the staging area's, deleted after
    // the run) over kept_primary_zck_path(), atomically: a hard link where both are on one
    // filesystem (a Fedora primary_zck is ~90 MB: no copy), else a copy. Best effort: a failure
    // is a warning (the next run downloads primary whole).
    void keep_primary_zck(const std::filesystem::path& parsed);

    // Without --download-metadata: returns the record to download and parse instead of
    // `primary` (repomd's primary, or its primary_zck when it has no primary). With zchunk on and
    // a primary_zck in `repomd`, that is primary_zck: assembled now in `stage_dir` from the
    // copy the last run kept (kept_primary_zck_path) and the changed chunks, then
    // `delta_record` is set to it; downloaded whole iff no copy was kept. Iff the delta fails
    // (the reason in report_.zck_fallbacks), returns `primary`, and forgets a kept copy that
    // is no zchunk file.
    const RepomdRecord* parse_record(const Repomd& repomd, const RepomdRecord& primary,
                                     const std::filesystem::path& stage_dir,
                                     const std::function<std::string(const RepomdRecord&)>& url_of,
                                     const RepomdRecord*& delta_record);

    // Copies `relative` from the first of `sources` that has it with `expected_size` to its
    // .part name in `stage_dir`: the downloader then verifies the copy and fetches nothing
    // unless it does not match. Best effort: on any failure the record is simply downloaded.
    // Returns true iff a copy was made.
    static bool seed_from_local_copy(const std::filesystem::path& stage_dir,
                                     const std::filesystem::path& relative,
                                     std::uint64_t expected_size,
                                     const std::vector<std::filesystem::path>& sources);

    // Returns the most recently modified regular file directly in one of `sources` that is an
    // earlier revision of the record stored as `name` (the same name but for its digest
    // prefix), or nullopt iff there is none.
    static std::optional<std::filesystem::path> find_previous_revision(
        std::string_view name, const std::vector<std::filesystem::path>& sources);

    // zchunk: writes the .part of `relative` in `stage_dir` from `previous` (an earlier
    // revision of the record) and the chunks that changed, fetched from `url`
    // (download::fetch_zck_delta), and checks it against repomd.xml; the downloader then finds
    // it complete and verifies it as it does a seeded copy. Returns an error, and does nothing,
    // for a record that is no zchunk record. Best effort: on any other failure the .part is
    // removed and the reason, followed by "; " and `instead` (what the caller does instead), is
    // in report_.zck_fallbacks; the error returned names the previous copy iff it was the
    // cause (not a zchunk file).
    Result<void> assemble_zck_delta(const RepomdRecord& record,
                                    const std::filesystem::path& relative, const std::string& url,
                                    const std::filesystem::path& stage_dir,
                                    const std::filesystem::path& previous,
                                    std::string_view instead);

    // upstream_layout.cpp: --upstream-layout and --mirror-url.

    // Moves the repository (and its metadata) to `<layout root>/<path of base_url>/`, the layout
    // root being `-p`/<repoid>, where its packages may live anywhere. Returns Error{Unsafe}
    // naming the URL iff its path cannot be a directory beneath the root ("..", empty segments).
    Result<void> place_in_upstream_layout(std::string_view base_url);

    // --mirror-url: writes the repository's mirrorlist into the layout root at the path upstream
    // serves it from, naming --mirror-url plus the repository's path (replaced atomically, and
    // only when it differs). Returns its key relative to the repository, or nullopt when there
    // is none: without --mirror-url, and (with a warning) for a repository without a mirrorlist
    // or whose mirrorlist URL cannot be a path beneath the root.
    Result<std::optional<std::string>> publish_mirror_list();

    // The safe-write policy of a plan whose repository lies at `root` (the mirror's directory, or
    // its place in a bucket's spool) and whose packages may lie anywhere beneath `outside` (the
    // layout root, --safe-write-path; empty: nowhere else).
    PathPolicy path_policy(const std::filesystem::path& root,
                           const std::optional<std::filesystem::path>& outside) const;

    // After the metadata is published (or found up to date): --mirror-url's mirror list unless
    // publish() wrote it already, then the blobs (collect_blobs). Nothing without
    // --upstream-layout.
    Result<void> finish_upstream_layout(const std::vector<std::filesystem::path>& placed);

    // --upstream-layout: records the files of this sync that lie beneath the layout root but
    // outside the repository's directory (the blobs) in the layout's catalogue; with --delete,
    // then (--keep-releases) removes this repository's releases synced longest ago and every
    // catalogued blob that no repository beneath the layout root lists any more, only while it is
    // still the file rpmirror recorded (collect_layout, sync/layout_root.hpp). Any doubt (a tree
    // whose metadata cannot be read) removes nothing and is a warning; so is a file the
    // catalogue does not know. `placed`: the files this run wrote (relative to the repository's
    // directory); only files rpmirror wrote are ever catalogued, so only they are ever deleted.
    // `may_delete` false (a sync that failed, whose metadata was not published): they are only
    // catalogued.
    Result<void> collect_blobs(const std::vector<std::filesystem::path>& placed,
                               bool may_delete = true);

    // The repository's key below the layout root ("" = the root itself).
    std::string layout_key() const;

    // packages.cpp: the packages placed in the store, once for every store, over a Placement
    // (below) over the store's staging area (staging_).
    class Placement;

    // The plan, then what the store holds judged while the packages it lacks are fetched (after
    // --dedupe found what it could copy), then those it holds damaged fetched again, then
    // --gpgcheck where the store does not check while storing. Each package kept, replaced,
    // fetched or failed is counted in the report; placed_targets_ and failed_targets_ say which.
    Result<void> place_packages(const PackageIndex& index, const Selection& selection,
                                Placement& placement);

    // Fetches `targets` into the placement, in batches of at most its batch_bytes() (a larger
    // package alone), each stored as it completes.
    Result<void> fetch_into(const PackageIndex& index, Placement& placement,
                            const std::vector<std::size_t>& targets);

    Result<void> download_targets(const PackageIndex& index,
                                  const std::vector<std::size_t>& targets);

    // The failure of a package whose file beyond the repository's directory (the layout root, the
    // safe write path) holds other content (`held`: "sha256 HEX", "N bytes"): such a file is
    // shared with other repositories or releases that may list it as it is, so it is never
    // replaced; the package fails instead.
    void shared_file_conflict(const PackageIndex& index, std::size_t target,
                              const std::string& where, const std::string& held);

    // Of `absent` (indices into plan_.targets), those --prefetch selects (SyncOptions::prefetch),
    // for an on-demand sync to fetch all the same; empty without a prefetch.
    std::vector<std::size_t> prefetched(const PackageIndex& index,
                                        std::vector<std::size_t> absent) const;

    // --delete: removes the store's packages `keep` does not name (store::delete_unlisted).
    Result<void> delete_unlisted(const std::set<std::string>& keep);

    // publish.cpp: the no-op, the metadata published and the sync recorded, over store_.

    // Opens the mirror this sync writes into (destination_, store::SyncStore::open: a directory
    // or a bucket) and its staging area (staging_), locks it (own_lock_) iff it is not the
    // directory root_lock_ locks, and reads what it holds; store_ is then its MirrorStore.
    Result<void> open_store();

    // True iff the repository's directory is not the one root_lock_ locks (and one is held).
    bool lies_elsewhere() const;

    // Keeps `locked` as own_lock_ (its warnings into the report).
    Result<void> hold_own_lock(Result<std::unique_ptr<RepoLock>> locked);

    // True iff the store's record says the last complete sync mirrored this repomd.xml with
    // these options, published what this one would, and nothing it recorded changed since.
    bool is_noop(const FetchedRepomd& repomd);

    // The no-op's report, events and --delete.
    Result<void> finish_noop();

    // True iff the metadata published is rewritten to list exactly the mirrored packages.
    bool rewrites_metadata() const;

    // --publish-partial: narrows plan_ to the packages in place, leaving out every target that
    // failed (failed_targets_, or named by a failure of the report: --gpgcheck's), their keys in
    // left_out_. Returns false, and changes nothing, iff none would be left (with a warning).
    bool leave_out_failed(const PackageIndex& index);

    // Writes, in `stage`, primary/filelists/other listing exactly the packages of plan_ and the
    // repomd.xml describing them (see publish/filtered_metadata.hpp), signed with
    // --sign-key. Returns the repomd.xml and its signature (none without --sign-key).
    Result<std::pair<std::string, std::optional<std::string>>> rewrite_metadata(
        const FetchedRepomd& repomd, const MetadataStage& stage, const PackageIndex& index);

    // Every package in place: the packages readied, the metadata published (upstream's, or
    // rewritten), the sync recorded, then --delete. The same sequence for every store.
    Result<void> publish(const FetchedRepomd& repomd, MetadataStage& stage,
                         const PackageIndex& index);

    Downloader& downloader_;
    const RepoConfig& repo_;
    const SyncOptions& options_;
    ProgressSink* progress_;
    std::stop_token stop_;
    RepoSyncReport& report_;
    HeldLock root_lock_;
    std::unique_ptr<RepoLock> own_lock_;  // the repository's own, iff it lies elsewhere
    std::filesystem::path repo_dir_;
    std::filesystem::path metadata_dir_;
    // --upstream-layout: `-p`/<repoid>, the URL's host root (repo_dir_ lies beneath it).
    std::filesystem::path layout_root_;
    bool mirror_list_published_ = false;  // by publish(), before the state was recorded
    SelectionOptions selection_options_;
    std::string repomd_sha256_;
    bool is_modular_ = false;  // module streams took part in the selection
    std::vector<std::pair<std::string, std::uint64_t>> noop_packages_;  // key, size
    std::unique_ptr<store::SyncStore> destination_;  // the mirror, once opened (open_store)
    store::MirrorStore* store_ = nullptr;            // destination_'s, once opened
    std::shared_ptr<MirrorList> mirrors_;
    SyncPlan plan_;
    std::optional<Keyring> keys_;              // the repository's gpgkey: repo_gpgcheck, --gpgcheck
    std::optional<Keyring> installed_keys_;    // --gpgcheck with PackageKeySource::Rpmdb
    const Keyring* package_keys_ = nullptr;    // --gpgcheck: keys_ or installed_keys_
    std::string trusted_key_ids_;              // of package_keys_, for the options fingerprint
    std::set<std::size_t> failed_targets_;     // indices into plan_.targets that failed to download
    std::vector<std::size_t> placed_targets_;  // indices into plan_.targets this run fetched
    // --publish-partial: the keys of the failed packages leave_out_failed took out of plan_.
    std::vector<std::string> left_out_;
    std::size_t packages_done_ = 0;            // packages downloaded or found present (events)
    std::unique_ptr<store::Staging> staging_;  // where packages are made (destination_'s)
    // --gpgcheck before committing (a staging area not in place, a bucket's spool): the check's
    // failures by target, and how many it checked.
    std::mutex spool_failures_mutex_;
    std::map<std::size_t, PackageFailure> spool_failures_;
    std::atomic<std::size_t> spool_checked_{0};
};

// How a store receives the packages of a sync (RepoSync::place_packages drives it), written
// once over the store's staging area (store::ObjectStore::stage): the plan's paths lie beneath
// its directory, the packages download there in batches of at most its capacity, and each is
// committed as it completes (on disk a download's rename already placed it; a bucket's spool
// uploads it, while the others download, then unlinks it), --gpgcheck judging it first where
// the staging area is not in place; the store records what was committed
// (store::MirrorStore::record_placed). What the store already holds is judged while the rest
// download (a directory's files hashed on worker threads; a bucket's state and ETag listing),
// and --dedupe copies inside the store what the repositories beside it hold (hard links or
// reflinks on disk; server-side copies in a bucket).
class RepoSync::Placement {
  public:
    // `staging` (sync.staging_) must outlive it.
    Placement(RepoSync& sync, store::Staging& staging) : sync_(sync), staging_(staging) {}

    // The directory the plan's paths are relative to, and beneath which packages download.
    std::filesystem::path root() const;
    // Where packages may lie beyond root() (the layout root, --safe-write-path), if anywhere.
    std::optional<std::filesystem::path> outside() const;

    // Sorts the plan's targets (RepoSync::plan_) into those to fetch and those the store holds,
    // judged (store::SyncStore::survey: hashed on worker threads while the others download, or
    // from the store's record); each judgement's item is a target.
    store::Survey survey(const PackageIndex& index);

    // --dedupe: places those of `absent` another repository holds by a link or a copy inside
    // the store. Returns the rest.
    std::vector<std::size_t> copy_duplicates(const PackageIndex& index,
                                             std::vector<std::size_t> absent);

    // The most bytes one batch may download before it is stored (the staging area's capacity).
    std::uint64_t batch_bytes() const { return staging_.capacity(); }
    // Starts storing `batch` (targets) as each completes; returns the sink the downloads report
    // to (`outer`, or one that commits and forwards to it). `batch` outlives end_batch().
    ProgressSink* begin_batch(const std::vector<std::size_t>& batch, ProgressSink* outer);
    // Waits for the batch to be stored and recorded; the packages that could not be are failures
    // (in the report and failed_targets_). Returns an error iff the sync must stop.
    Result<void> end_batch();

    // True iff --gpgcheck judges each package before it is stored (in a staging area not in
    // place: a bucket's spool), not once it is in place (a directory).
    bool checks_while_storing() const { return !staging_.in_place(); }

  private:
    // copy_duplicates' copies (dedupe/copies.hpp), per package of `absent` (targets) whether it
    // is now placed, each recorded as the sync's.
    DedupeOutcome copy_from(const store::Siblings& siblings, std::span<const std::size_t> absent);
    // Hands package `target`, complete beneath root(), to the staging area.
    void commit(std::size_t target);

    RepoSync& sync_;
    store::Staging& staging_;
    const PackageIndex* index_ = nullptr;  // survey()'s
    // By target: its key (relative to root()), checksum, what the plan found (survey()'s).
    std::vector<store::WantedFile> packages_;
    const std::vector<std::size_t>* batch_ = nullptr;  // begin_batch()'s
    std::optional<CommitOnFinish> commits_;
};

}  // namespace rpmirror
