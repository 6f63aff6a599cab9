// How one repository is synced: SyncOptions, every option of `rpmirror sync` a library user sets
// (run_sync runs it). Its own header so that the configuration readers (dnf's .repo files,
// rpmirror.conf jobs) depend on what a sync takes, not on the sync.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/dedupe/dedupe.hpp"
#include "rpmirror/index/selection.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

class SyncEvents;         // rpmirror/sync/sync_report.hpp
struct UpstreamRevision;  // what a sync fetched of upstream (RepoSyncReport::upstream)

// The keys --gpgcheck trusts (--gpgcheck-keys).
enum class PackageKeySource {
    Rpmdb,       // dnf's rule: the keys imported in the rpm database of `installroot`
    Repository,  // the repository's gpgkey files (a mirror host that does not run the distro)
};

// When a mirror's packages are fetched (--download-policy, job key download-policy; Pulp's names).
enum class DownloadPolicy {
    Immediate,  // by the sync: every selected package, before the metadata is published
    // The sync fetches and publishes the metadata only; `rpmirror serve` fetches a listed package
    // from upstream at its first request, verifies it against the published metadata and keeps
    // it (OnDemand) or only passes it on (Streamed).
    OnDemand,
    Streamed,
};

// Parses one of download_policy_name's names. Returns Error{BadInput} whose subject is `shown`
// ("--download-policy", "FILE:LINE: download-policy") naming the value and the names otherwise.
// Thread-safe.
Result<DownloadPolicy> parse_download_policy(std::string_view text, std::string_view shown);

// The packages an on-demand sync fetches eagerly (--prefetch, job key prefetch; the hybrid
// policy): those of the sync's selection that this selects too, fetched and verified as an
// immediate sync fetches them; the rest are left for `rpmirror serve` to fetch on demand.
struct Prefetch {
    // "newest": the newest version of each name.arch of the selection (as --newest-only
    // selects them, the selection's arches, includes and excludes applied first).
    bool newest = false;
    // Package names or fnmatch globs, matched as includepkgs are (name, name.arch, NEVRA forms).
    std::vector<std::string> globs;
    // Every selected package: set by run_sync for an on-demand job that takes a snapshot
    // (rpmirror/run/sync_run.hpp), so that the snapshot holds everything its metadata lists.
    bool everything = false;
    // "closure": the dependency closure of the job's packages (with-dependencies, solved as for
    // a dependency-closed mirror), while the mirror lists everything upstream lists. `nevras` is
    // the repository's share of it, set by the run once solved (unset: nothing prefetched).
    bool closure = false;
    std::optional<std::vector<std::string>> nevras;

    // True iff anything is prefetched.
    bool active() const { return newest || !globs.empty() || everything || closure; }
};

// Parses a --prefetch value: "newest", "closure", or package names/globs separated by commas or
// white space. Returns Error{BadInput} whose subject is `shown` ("--prefetch", "FILE:LINE:
// prefetch") naming the value iff it is empty, or a name holds a character no package name has
// ('/', quotes, control characters), or "newest" or "closure" is mixed with anything.
// Thread-safe.
Result<Prefetch> parse_prefetch(std::string_view text, std::string_view shown);

struct SyncOptions {
    std::filesystem::path download_path = ".";           // -p
    std::optional<std::filesystem::path> metadata_path;  // --metadata-path
    bool norepopath = false;                             // --norepopath
    bool download_metadata = false;                      // --download-metadata
    // With download_metadata, when the selection leaves out packages upstream lists: false =
    // publish primary/filelists/other rewritten to list exactly the mirrored packages (see
    // publish/filtered_metadata.hpp); true (--upstream-metadata) = upstream's, verbatim.
    bool upstream_metadata = false;
    // --sign-key: the secret key (of the user's gpg keyring) that signs a rewritten repomd.xml
    // (repomd.xml.asc); empty = a rewritten repomd.xml is published unsigned.
    std::string sign_key;
    // --publish-partial (job key publish-partial), with download_metadata and not
    // upstream_metadata: when packages fail (404, a checksum never matched) but the rest are in
    // place, the metadata is published anyway, rewritten as a filtered mirror's is to list
    // exactly the packages the mirror holds (RepoSyncReport::partial); the sync is recorded as
    // partial, so the next run is no no-op: it fetches the failed packages again and, once they
    // are all in place, publishes the complete metadata. false: nothing is published while a
    // package is missing (the previous metadata stays). An interrupted run publishes nothing.
    bool publish_partial = false;
    // --download-policy: OnDemand and Streamed (with download_metadata; not with
    // --upstream-layout, --flatten-hrefs or --treeinfo) fetch no package: the metadata is
    // published listing packages the mirror does not hold yet; those it holds are still checked
    // (a damaged one is fetched again), and --delete removes only packages no longer listed.
    DownloadPolicy download_policy = DownloadPolicy::Immediate;
    // --prefetch (job key prefetch; with download_policy OnDemand only): packages fetched by
    // the sync all the same; inactive = none.
    Prefetch prefetch;
    // Job key cache-max-size (with download_policy OnDemand only; `rpmirror serve`): the most
    // bytes of packages the mirror holds; past it, serve removes the least recently served
    // packages no kept snapshot holds (serve/eviction.hpp). 0 = no bound.
    std::uint64_t cache_max_size = 0;
    bool delete_unlisted = false;  // --delete
    // --force-delete: --delete even where it would leave the mirror with no package, or with
    // fewer than half of the packages it holds (one of at least 20 packages);
    // without it such a run is refused before anything changes (RepoSyncReport::refused).
    bool force_delete = false;
    bool urls_only = false;  // -u: list URLs, download nothing
    // -m/--downloadcomps: the repository's comps (group_gz, else group) written uncompressed as
    // <metadata directory>/comps.xml, as dnf reposync does; nothing iff it has none.
    bool download_comps = false;
    // --remote-time: downloaded files get the server's Last-Modified time.
    bool remote_time = false;
    bool use_checksum_cache = true;  // verify existing files via xattrs
    // zchunk records ("*_zck", with --download-metadata): when a previous copy is at hand (the
    // live repodata/ or a staging directory a killed run left), only the header and the chunks
    // that changed are fetched (ranged requests), then the whole is verified; any failure of
    // that path downloads the record in full. Without --download-metadata, primary_zck is
    // parsed instead of primary, by delta from the copy the last run kept in the state
    // directory (doc/zchunk.md); a failed delta parses primary, downloaded in full.
    // false = --zchunk=off: always in full, primary parsed.
    bool zchunk = true;
    std::optional<std::filesystem::path> safe_write_path;  // --safe-write-path
    // --upstream-layout: the repository keeps upstream's path under the destination
    // (`<-p>/<repoid>/<path of the URL repomd.xml came from>/`), and packages may live anywhere
    // under `<-p>/<repoid>/` (the URL's host root), as Amazon Linux's releases share one
    // blobstore through hrefs such as "../../../../../blobstore/<sha256>/<name>.rpm". A file
    // there outside the repository's own directory is shared with the other releases: it is
    // kept when it matches and never replaced when it does not (that package fails).
    bool upstream_layout = false;
    // --mirror-url (with upstream_layout): the URL clients reach `<-p>/<repoid>/` at. A repository
    // configured with a mirrorlist gets that mirror list rewritten in the mirror, at the same
    // path, naming this URL plus the repository's path, after its metadata is published.
    std::string mirror_url;
    // --keep-releases N (with upstream_layout and delete_unlisted): after the sync, of this
    // repository's releases beneath the layout root (the trees whose path is this one's with one
    // directory above its last replaced, as a GUID is) that rpmirror synced, this one and the N-1
    // synced most recently are kept; the others are removed (their directory and the mirror list
    // --mirror-url wrote for them), and then the blobs no remaining repository lists. A release
    // rpmirror did not sync is never removed. 0: off.
    unsigned keep_releases = 0;
    // --flatten-hrefs: packages whose hrefs climb out of the repository are placed inside it
    // (PathPolicy::flatten), and with --download-metadata the published primary.xml names them
    // there (rewritten as a filtered mirror's is, signed with --sign-key): a self-contained
    // repository from one whose packages live beside it (Amazon Linux's blobstore).
    bool flatten_hrefs = false;
    // Every package at its file name directly in the repository's directory, whatever its href
    // (dnf's cache); two of one file name are refused. Not with download_metadata,
    // upstream_layout, flatten_hrefs or treeinfo.
    bool packages_by_file_name = false;
    // --treeinfo: the repository's URL is an installation tree (.treeinfo, productmd 1.x or the
    // older anaconda format): every file its [checksums] lists (kernel, initrd, install.img,
    // boot.iso, ...) is mirrored and verified against its checksum, every variant and addon
    // repository it names is mirrored as a repository beneath the tree (the tree's root is one
    // only when the .treeinfo names it, or names none), and .treeinfo is published last,
    // atomically, once all of that succeeded. --skip-bad-images: an image that cannot be had
    // with its listed checksum is a warning (and left out), not a failure. A variant whose
    // repository lies outside the tree is left out with a warning naming the command that
    // mirrors it where the published .treeinfo points.
    bool treeinfo = false;
    bool skip_bad_images = false;
    // Without treeinfo: the first sync of a repository that also serves a .treeinfo warns once,
    // naming --treeinfo (false: for the repositories of a tree that treeinfo mirrors).
    bool announce_tree = true;
    // The destination is dnf's cache, which dnf alone reads (the prefetch): with download_metadata
    // only the records dnf reads are fetched (no sqlite databases, no other.xml) and repomd.xml.asc
    // only with repo_gpgcheck; nothing is flushed to storage (the caller flushes before dnf runs);
    // the revision reported (RepoSyncReport::upstream) keeps primary.xml as parsed, for the step
    // that fetches the packages next. Never for a mirror.
    bool dnf_cache = false;
    // The revision an earlier sync of the same repository fetched moments ago
    // (RepoSyncReport::upstream): no mirror list, repomd.xml or signature is fetched again.
    std::shared_ptr<const UpstreamRevision> upstream;
    // --arch, --source, --newest-only, --min-buildtime. The repository's includepkgs and
    // excludepkgs are added to these by sync_repository.
    SelectionOptions selection;
    unsigned verify_threads = 0;  // 0 = all cores
    // -j: concurrent downloads for every repository, over the repositories'
    // max_parallel_downloads (which applies only when set in their configuration).
    std::optional<unsigned> parallel;
    // --connections-per-file, --segment-min-size (job keys connections-per-file,
    // segment-min-size): files of at least `segment_min_size` bytes are fetched as that many
    // ranges at once, over the mirrors in turn (1 = off).
    unsigned connections_per_file = 1;
    std::uint64_t segment_min_size = std::uint64_t{64} << 20;
    // --gpgcheck, with dnf reposync's meaning: in repositories with gpgcheck=1, every package
    // (downloaded or kept) is checked against the keys `package_keys` names; one with a definite
    // verdict (unsigned, unknown key, bad signature, revoked key, key expired before signing)
    // is removed and reported as a failure; one that cannot be checked (I/O error, EMFILE, key
    // expired after signing) is kept and reported as a failure. Repositories with gpgcheck=0 are
    // not checked.
    bool check_package_signatures = false;
    PackageKeySource package_keys = PackageKeySource::Rpmdb;
    // --installroot: the root whose rpm database holds the keys of PackageKeySource::Rpmdb.
    std::filesystem::path installroot = "/";
    // --state-dir: where rpmirror keeps its state and locks, outside the mirror; empty = the
    // default ($RPMIRROR_STATE_DIR, /var/lib/rpmirror for root, $XDG_STATE_HOME/rpmirror).
    std::filesystem::path state_dir;
    // The repository's lock (lock_repository): taken for the whole sync (not with -u).
    // Without `lock_wait` a sync fails at once when another run holds it; with it, waits that
    // long (--wait-lock).
    std::optional<std::chrono::seconds> lock_wait;
    // --dedupe: before downloading, packages that another repository already holds (same
    // checksum type, digest and size, verified) are hard-linked (or reflinked) from it instead
    // (rpmirror/dedupe/dedupe.hpp). Searched: the other directories of `download_path` (the sibling
    // repositories; the repository's own directory and metadata directory never), then
    // `dedupe_dirs` (--dedupe-dir) in order. Off = download everything.
    DedupeMode dedupe = DedupeMode::Hardlink;
    std::vector<std::filesystem::path> dedupe_dirs;
    // Told about every package as it is downloaded, found present or fails; null = nobody.
    SyncEvents* events = nullptr;

    // An s3:// destination: `download_path` is "s3://BUCKET/PREFIX" (checked with
    // store::Destination, never normalised as a path); `metadata_path`, when set, must be the same
    // location. Packages pass through a bounded local spool on their way to the store; the
    // metadata is published last, repodata/repomd.xml the very last (see doc/s3.md).
    // --s3-endpoint, --s3-region, --s3-profile, --s3-addressing; the rest comes from the
    // environment and ~/.aws (as the AWS CLI finds them).
    s3::S3Overrides s3;
    // --s3-spool-dir: where packages wait between download and upload; empty = a fresh
    // directory in /dev/shm (memory; $TMPDIR with a warning when /dev/shm is not a tmpfs),
    // removed at the end (store/spool.hpp).
    std::filesystem::path s3_spool_dir;
    // --s3-spool-size: at most this many bytes of packages are in the spool at once (a batch);
    // a larger package is a batch on its own. At least s3_part_size.
    std::uint64_t s3_spool_size = 512ULL * 1024 * 1024;
    unsigned s3_parallel = 4;                          // --s3-parallel: concurrent uploads
    std::uint64_t s3_part_size = 64ULL * 1024 * 1024;  // --s3-part-size: multipart above it
    std::string s3_acl;                                // --s3-acl: canned ACL of every object
};

// One package's outcome, told as it happens (for `rpmirror reposync`'s dnf-style lines).

// Checks --upstream-layout and --mirror-url (the same keys of a job) against the other
// options. Returns Error{BadInput} naming the option and why iff --keep-releases is set without
// --upstream-layout and --delete, iff --mirror-url is set without
// --upstream-layout or is not an http://, https:// or file:// URL, or --upstream-layout is
// combined with --metadata-path (the metadata must sit where its hrefs resolve from) or
// --safe-write-path (the layout decides where packages may live); and Error{BadInput} iff
// --flatten-hrefs is combined with --upstream-layout (which keeps the hrefs) or --upstream-metadata
// (upstream's metadata points outside the mirror); Error{BadInput} iff
// --treeinfo is combined with --metadata-path, --upstream-layout or --flatten-hrefs, or
// --skip-bad-images is given without --treeinfo; Error{BadInput} whose subject is
// "--download-policy" iff a policy other than immediate is given without --download-metadata or
// with --upstream-layout, --flatten-hrefs or --treeinfo; Error{BadInput} whose subject is
// "--prefetch" iff a prefetch is set with a policy other than on-demand.
Result<void> check_placement_options(const SyncOptions& options);

}  // namespace rpmirror
