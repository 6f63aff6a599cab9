// What a sync tells: a package's events as they happen (PackageEvent, SyncEvents) and one
// repository's outcome (RepoSyncReport), as `rpmirror sync` and a job run report them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror {

class SyncEvents;
struct UpstreamRevision;  // what a sync fetched of upstream: the library's own

struct PackageEvent {
    enum class Kind {
        Downloaded,      // fetched and verified now
        AlreadyPresent,  // the file in the mirror was verified: nothing fetched
        MirrorFailed,    // one attempt failed; another mirror or retry follows
        Failed,          // no attempt left
        Linked,          // --dedupe: linked from another repository, nothing fetched
    };
    Kind kind = Kind::Downloaded;
    std::string file_name;    // the href's last component, as dnf names a package
    std::size_t done = 0;     // packages Downloaded, Linked or AlreadyPresent so far, this one
    std::size_t total = 0;    // packages selected
    std::uint64_t bytes = 0;  // bytes received (Downloaded) or the package's size
    double seconds = 0;       // from the first attempt's start to the end (Downloaded)
    std::string url;          // MirrorFailed: the URL tried
    long http_status = 0;     // MirrorFailed: the HTTP status, 0 = none
    std::string reason;       // MirrorFailed, Failed: what happened
    bool mirrors_exhausted = false;  // Failed: every mirror was tried (not a local failure)
};

// A record of a repository's repomd.xml, fetched and verified (size and checksum) before the sync
// parses or publishes anything (SyncEvents::record_fetched).
struct RecordEvent {
    std::string repo_id;
    std::string type;            // "primary", "filelists", "modules", ...
    std::filesystem::path file;  // the verified file, to be read before the handler returns
    // The types of the records this fetch still waits for (those before this one are not).
    std::vector<std::string> pending;
};

// Receives a sync's events on the thread that runs it, never concurrently (revision_parsed aside).
class SyncEvents {
  public:
    virtual ~SyncEvents() = default;
    virtual void package(const PackageEvent& event) = 0;
    // -m: comps.xml of `repo_id` was written to `path` (before any package is downloaded).
    virtual void comps_saved(const std::string& repo_id, const std::filesystem::path& path) {
        (void)repo_id;
        (void)path;
    }
    // With download_metadata, each record as soon as it is verified (the sync goes on once the
    // handler returns: `event.file` may be gone or renamed then).
    virtual void record_fetched(const RecordEvent& event) { (void)event; }
    // The revision of `repo_id` this sync fetched, its primary parsed: what SyncOptions::upstream
    // takes for a next sync of the same revision (which then fetches neither repomd.xml nor
    // primary). Once per sync that fetches and parses primary itself; with download_metadata as
    // soon as the records primary needs are verified, while the others download (called then
    // from the thread that parses, maybe during another event of this sync), before anything is
    // published and whether or not the other records arrive.
    virtual void revision_parsed(const std::string& repo_id,
                                 const std::shared_ptr<const UpstreamRevision>& revision) {
        (void)repo_id;
        (void)revision;
    }
};

struct PackageFailure {
    std::string package;                // NEVRA
    std::string reason;                 // the final error
    std::vector<std::string> attempts;  // "URL: what happened", in order
    // --gpgcheck removed the file: the line dnf reposync prints for it ("Removing NAME.rpm:
    // Package NAME.rpm is not signed"); empty for every other failure.
    std::string dnf_message = {};
};

struct RepoSyncReport {
    std::string repo_id;
    std::filesystem::path repo_dir;  // where its packages are
    std::optional<Error> error;      // set iff the repository as a whole failed
    // Set with `error` iff the run was refused as a mistake before anything changed (an unknown
    // --arch, a --delete that would empty most of the mirror): the command exits 2.
    bool refused = false;
    // Set with `error` iff it was fetching the metadata (mirror list, repomd.xml, primary.xml)
    // that failed: what a repository's skip_if_unavailable=1 turns into a warning.
    bool metadata_unavailable = false;
    bool noop = false;                  // nothing to do: repomd.xml and every file unchanged
    std::size_t upstream_packages = 0;  // packages primary.xml lists
    std::size_t selected = 0;           // packages the filters kept
    std::size_t downloaded = 0;         // fetched and verified in this run
    std::uint64_t bytes_downloaded = 0;
    std::size_t kept = 0;      // already present and verified
    std::size_t replaced = 0;  // present but wrong (size or checksum): downloaded again
    std::size_t resumed = 0;   // continued from a .part of an earlier run
    std::size_t retries = 0;
    // --dedupe: linked from another repository instead of downloaded, and their bytes; packages
    // found there that could not be linked (downloaded instead) are link_fallbacks.
    std::size_t linked = 0;
    std::uint64_t linked_bytes = 0;
    std::size_t link_fallbacks = 0;
    std::vector<std::filesystem::path> deleted;  // --delete, relative to repo_dir
    // The keys (relative to repo_dir, '/'-separated) of every package the index selected: the
    // repository owns them, whether this run placed them or found them (an installation tree
    // refuses an image of the same name).
    std::vector<std::string> package_keys;
    std::vector<PackageFailure> failures;
    std::size_t signatures_checked = 0;  // --gpgcheck: packages whose signature was checked
    bool metadata_published = false;
    // --publish-partial: set iff the metadata was published without the packages of `failures`
    // (it lists exactly the packages the mirror holds); the command exits 3 then, unless
    // something else failed.
    bool partial = false;
    // With `partial`: the keys (relative to repo_dir) of the selected packages it left out.
    std::vector<std::string> left_out;
    // -u: what dnf reposync prints, raw hrefs joined to the mirror: with --download-metadata
    // every record of repomd.xml first, with -m the comps record, then the packages.
    std::vector<std::string> urls;
    std::optional<std::filesystem::path> comps_saved;  // -m: the comps.xml written
    // zchunk records assembled from a previous copy and the changed chunks (SyncOptions::zchunk),
    // the bytes they took from the server (headers, chunks, multipart framing), and their sizes
    // less those bytes (0 for a record whose delta cost more than its size).
    std::size_t zck_records = 0;
    std::uint64_t zck_bytes_fetched = 0;
    std::uint64_t zck_bytes_saved = 0;
    // Why a zchunk delta was not used (the record was downloaded in full), one line each.
    std::vector<std::string> zck_fallbacks;
    std::vector<std::string> warnings;  // e.g. metadata kept back, packages filtered out
    // Advisories the published updateinfo left out (filtered mirrors, --advisories, --as-of), one
    // "ID: why" each.
    std::vector<std::string> advisories_left_out;
    // An s3:// destination: requests sent to the store (S3Client::request_count, all clients).
    std::uint64_t s3_requests = 0;
    // An s3:// destination: the spool directory packages passed through, and whether it was on a
    // memory-backed filesystem.
    std::filesystem::path s3_spool;
    bool s3_spool_in_memory = false;
    double seconds = 0;
    // The revision of upstream the sync worked from (its mirrors, repomd.xml and signature), for
    // a next step over the same revision (SyncOptions::upstream); null if none was fetched.
    std::shared_ptr<const UpstreamRevision> upstream;

    // Returns true iff the repository synced completely.
    bool ok() const { return !error && failures.empty(); }
};

// How a user reads `relative` (a key of `report`'s repository, e.g. one of `deleted`) beneath
// the mirror: an absolute path, or the s3:// URL of the object.
std::string describe_in_mirror(const RepoSyncReport& report, const std::filesystem::path& relative);

}  // namespace rpmirror
