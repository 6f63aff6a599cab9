// Snapshots in a directory tree (snapshot/backend.hpp): packages hard-linked from the live mirror
// (or copied), metadata copied, built under a temporary name and renamed into place; a published
// name is a symlink switched by one rename. The layout and its guarantees:
// rpmirror/snapshot/snapshot.hpp.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <map>
#include <optional>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "fs/walk.hpp"
#include "metadata/treeinfo.hpp"
#include "rpmirror/audit/audit.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/plan/plan.hpp"
#include "snapshot/backend.hpp"
#include "fs/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace snapshot {

namespace {

// Temporary names; a repository's walk for packages stays out of them
// (fs::is_snapshot_staging_name).
constexpr std::string_view kCreatingInfix = fs::kSnapshotStagingInfix;
constexpr std::string_view kRemovingInfix = fs::kSnapshotRemovingInfix;

Result<fs::RunLock> take_lock(const SnapshotRoot& root, const SnapshotLock& lock) {
    return fs::RunLock::acquire(lock.state_dir.empty() ? fs::default_state_dir() : lock.state_dir,
                                root.repo_dir, lock.wait, {},
                                fs::MissingDirectory::LockOnlyIfPresent);
}

// The target of a published symlink to snapshot `name`, relative to `<published_dir>/<PUB>`.
std::filesystem::path link_target(const SnapshotRoot& root, std::string_view name) {
    return std::filesystem::path("..") / ".." / root.snapshots_dir.parent_path().filename() /
           root.snapshots_dir.filename() / name;
}

// Published name -> snapshot name, for every `<published_dir>/<PUB>/<repo id>` symlink that
// points into this repository's snapshots.
std::multimap<std::string, std::string> published_links(const SnapshotRoot& root) {
    std::multimap<std::string, std::string> by_snapshot;
    std::error_code error;
    const std::filesystem::path expected_parent = link_target(root, "x").parent_path();
    for (const auto& entry : std::filesystem::directory_iterator(root.published_dir, error)) {
        std::error_code ignored;
        const std::filesystem::path link = entry.path() / root.repo_id;
        if (!std::filesystem::is_symlink(std::filesystem::symlink_status(link, ignored))) {
            continue;
        }
        const std::filesystem::path target = std::filesystem::read_symlink(link, ignored);
        if (!ignored && target.parent_path() == expected_parent) {
            by_snapshot.emplace(target.filename().string(), entry.path().filename().string());
        }
    }
    return by_snapshot;
}

// Fills the counts of `info` by walking `info.dir` (lstat only, no symlink followed).
Result<void> measure(SnapshotInfo& info) {
    struct stat dir_st {};
    if (::lstat(info.dir.c_str(), &dir_st) != 0) {
        return make_errno_error("cannot read", info.dir.string(), errno);
    }
    info.created_ns = fs::timespec_ns(dir_st.st_mtim);
    std::error_code error;
    for (std::filesystem::recursive_directory_iterator it(info.dir, error), end;
         !error && it != end; it.increment(error)) {
        struct stat st {};
        if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
            continue;
        }
        ++info.files;
        info.bytes += static_cast<std::uint64_t>(st.st_size);
        if (st.st_nlink == 1) {
            info.unique_bytes += static_cast<std::uint64_t>(st.st_size);
        }
        if (it->path().extension() == ".rpm") {
            ++info.packages;
        }
    }
    if (error) {
        return make_errno_error("cannot read", info.dir.string(), error.value());
    }
    return {};
}

// Removes temporaries (`.NAME.creating-*`, `.NAME.removing-*`) interrupted runs left in
// `snapshots_dir`. Called with the run lock held: no running creation owns one.
void remove_stale_temporaries(const std::filesystem::path& snapshots_dir) {
    std::error_code error;
    std::vector<std::filesystem::path> stale;
    for (const auto& entry : std::filesystem::directory_iterator(snapshots_dir, error)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with('.') && (name.find(kCreatingInfix) != std::string::npos ||
                                      name.find(kRemovingInfix) != std::string::npos)) {
            stale.push_back(entry.path());
        }
    }
    for (const std::filesystem::path& path : stale) {
        std::filesystem::remove_all(path, error);
    }
}

// A temporary directory removed with everything in it unless released.
class TemporaryDirectory {
  public:
    explicit TemporaryDirectory(std::filesystem::path path) : path_(std::move(path)) {}
    TemporaryDirectory(const TemporaryDirectory&) = delete;
    TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
    ~TemporaryDirectory() {
        if (!path_.empty()) {
            std::error_code ignored;
            std::filesystem::remove_all(path_, ignored);
        }
    }
    const std::filesystem::path& path() const { return path_; }
    void release() { path_.clear(); }

  private:
    std::filesystem::path path_;
};

// Copies the regular file `name` of the directory `from_dir` to a new file `name` in `to_dir`,
// with its mode and times. `shown` names the source in errors.
Result<void> copy_file_at(int from_dir, int to_dir, const std::string& name,
                          const std::filesystem::path& shown,
                          const std::filesystem::path& shown_destination) {
    const UniqueFd source(::openat(from_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!source || ::fstat(source.get(), &st) != 0) {
        return make_errno_error("cannot open", shown.string(), errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error(ErrorCode::Unsafe, "not a regular file", shown.string());
    }
    const UniqueFd destination(fs::create_file_at(to_dir, name, shown_destination.string()));
    if (!destination) {
        return make_errno_error("cannot create", shown_destination.string(), errno);
    }
    std::vector<char> buffer(kDefaultBufferSize);
    for (;;) {
        const ssize_t got = ::read(source.get(), buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got < 0) {
            return make_errno_error("cannot read", shown.string(), errno);
        }
        if (got == 0) {
            break;
        }
        for (ssize_t written = 0; written < got;) {
            const ssize_t result = fault::write(destination.get(), buffer.data() + written,
                                                static_cast<std::size_t>(got - written));
            if (result < 0 && errno != EINTR) {
                return make_errno_error("cannot write", shown_destination.string(), errno);
            }
            written += std::max<ssize_t>(result, 0);
        }
    }
    const std::array<timespec, 2> times{st.st_atim, st.st_mtim};
    if (::fchmod(destination.get(), st.st_mode & 07777) != 0 ||
        ::futimens(destination.get(), times.data()) != 0) {
        return make_errno_error("cannot set the mode and times of", shown_destination.string(),
                                errno);
    }
    return {};
}

bool refuses_links(int error) {
    return error == EXDEV || error == EPERM || error == ENOTSUP || error == EOPNOTSUPP ||
           error == EMLINK;
}

// Builds one snapshot: the files of the live mirror, linked or copied into a temporary directory.
class SnapshotBuilder {
  public:
    SnapshotBuilder(const SnapshotRoot& root, const std::filesystem::path& staging, bool copy)
        : root_(root), staging_(staging), copy_(copy) {}

    Result<void> open() {
        live_fd_ = fs::open_directory(root_.repo_dir, true);
        if (!live_fd_) {
            return make_errno_error("cannot open", root_.repo_dir.string(), errno);
        }
        staging_fd_ = fs::open_directory(staging_, true);
        if (!staging_fd_) {
            return make_errno_error("cannot open", staging_.string(), errno);
        }
        return {};
    }

    // Links (or copies, iff `copy_` or `is_metadata`) `relative` from the live mirror.
    Result<void> add(const std::filesystem::path& relative, bool is_metadata) {
        const std::filesystem::path parent = relative.parent_path();
        const std::string name = relative.filename().string();
        auto from = source_directory(parent);
        if (!from) {
            return tl::unexpected(std::move(from.error()));
        }
        auto to = destination_directory(parent);
        if (!to) {
            return tl::unexpected(std::move(to.error()));
        }
        const std::filesystem::path shown = root_.repo_dir / relative;
        const std::filesystem::path shown_destination = staging_ / relative;
        if (copy_ || is_metadata) {
            return copy_file_at(*from, *to, name, shown, shown_destination);
        }
        struct stat before {};
        const bool stated = ::fstatat(*from, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) == 0;
        if (::linkat(*from, name.c_str(), *to, name.c_str(), 0) != 0) {
            const int link_errno = errno;
            if (refuses_links(link_errno)) {
                return make_errno_error(
                    fmt::format("cannot hard-link {} here (snapshots must be on the mirror's "
                                "filesystem, or taken with --copy)",
                                shown.string()),
                    root_.snapshots_dir.string(), link_errno);
            }
            return make_errno_error("cannot link " + shown.string() + " to",
                                    shown_destination.string(), link_errno);
        }
        ++linked_;
        // What the link itself changed (the ctime): recorded, so the copy's audit believes the
        // cache as the live audit did, and the live record follows (follow_own_links).
        struct stat after {};
        if (stated && ::fstatat(*to, name.c_str(), &after, AT_SYMLINK_NOFOLLOW) == 0 &&
            after.st_ino == before.st_ino && after.st_size == before.st_size &&
            fs::timespec_ns(after.st_mtim) == fs::timespec_ns(before.st_mtim)) {
            relinked_.push_back({state_file_of(relative, before), state_file_of(relative, after)});
            copy_trust_->vouch(after.st_ino, static_cast<std::uint64_t>(after.st_size),
                               fs::timespec_ns(after.st_mtim), fs::timespec_ns(after.st_ctim));
        }
        return {};
    }

    std::size_t linked() const { return linked_; }

    // Every file linked, before and after its link.
    const std::vector<RelinkedFile>& relinked() const { return relinked_; }

    // Vouches for the files as the links left them, and only for those: the snapshot's copy
    // is audited with it.
    std::shared_ptr<const CacheTrust> copy_trust() const { return copy_trust_; }

  private:
    Result<int> source_directory(const std::filesystem::path& parent) {
        auto found = sources_.find(parent);
        if (found == sources_.end()) {
            UniqueFd fd = fs::open_directory_beneath(live_fd_.get(), parent);
            if (!fd) {
                return make_errno_error("cannot open", (root_.repo_dir / parent).string(), errno);
            }
            found = sources_.emplace(parent, std::move(fd)).first;
        }
        return found->second.get();
    }

    Result<int> destination_directory(const std::filesystem::path& parent) {
        auto found = destinations_.find(parent);
        if (found == destinations_.end()) {
            auto fd = fs::make_directories_beneath(staging_fd_.get(), parent, staging_);
            if (!fd) {
                return tl::unexpected(std::move(fd.error()));
            }
            found = destinations_.emplace(parent, std::move(*fd)).first;
        }
        return found->second.get();
    }

    const SnapshotRoot& root_;
    std::filesystem::path staging_;
    bool copy_;
    UniqueFd live_fd_;
    UniqueFd staging_fd_;
    std::map<std::filesystem::path, UniqueFd> sources_;
    std::map<std::filesystem::path, UniqueFd> destinations_;
    std::size_t linked_ = 0;
    std::vector<RelinkedFile> relinked_;
    std::shared_ptr<CacheTrust> copy_trust_ = std::make_shared<CacheTrust>();
};

// The first problems of `report`, for an error message.
std::string describe_problems(const RepoAuditReport& report) {
    if (report.error) {
        return report.error->to_string();
    }
    std::string text = fmt::format("{} problem(s)", report.problems.size());
    for (std::size_t index = 0; index < report.problems.size() && index < 3; ++index) {
        text +=
            fmt::format("{} {}: {}", index == 0 ? ":" : ";", report.problems[index].path.string(),
                        report.problems[index].describe());
    }
    return text;
}

}  // namespace

class LocalBackend final : public Backend {
  public:
    explicit LocalBackend(const SnapshotRoot& root) : root_(root) {}

    Result<std::optional<std::string>> read_small(std::optional<std::string_view> name,
                                                  std::string_view key) override {
        const std::filesystem::path dir = name ? root_.snapshots_dir / *name : root_.repo_dir;
        auto read = fs::read_file(dir / key);
        if (!read) {
            if (read.error().code == ErrorCode::NotFound) {
                return std::optional<std::string>();
            }
            return tl::unexpected(std::move(read.error()));
        }
        return std::optional<std::string>(std::move(*read));
    }

    Result<void> lock(const SnapshotLock& lock) override {
        auto held = take_lock(root_, lock);
        if (!held) {
            return tl::unexpected(std::move(held.error()));
        }
        lock_.emplace(std::move(*held));
        return {};
    }

    Result<bool> exists(std::string_view name) override {
        std::error_code error;
        return std::filesystem::exists(
            std::filesystem::symlink_status(root_.snapshots_dir / name, error));
    }

    Result<SnapshotInfo> build(const std::string& name,
                               const SnapshotCreateOptions& options) override {
        const std::filesystem::path target = root_.snapshots_dir / name;
        std::error_code exists_error;
        // An installation tree (.treeinfo at the root) is snapshotted whole: every repository it
        // names, its images, and .treeinfo, as `sync --treeinfo` publishes them.
        std::optional<std::string> treeinfo;
        std::vector<std::string> parts{""};
        if (auto text = fs::read_file(root_.repo_dir / std::string(kTreeinfoName))) {
            auto tree = parse_treeinfo(*text, (root_.repo_dir / kTreeinfoName).string());
            if (!tree) {
                return tl::unexpected(std::move(tree.error()));
            }
            treeinfo = std::move(*text);
            parts = tree->repositories;
        }
        std::vector<LiveRepository> repositories;
        for (const std::string& part : parts) {
            auto live = check_live(part, options);
            if (!live) {
                return tl::unexpected(std::move(live.error()));
            }
            repositories.push_back(std::move(*live));
        }
        std::optional<RepoAuditReport> images;
        if (treeinfo) {
            images = audit_tree_images(root_.repo_id, root_.repo_dir, options.use_checksum_cache,
                                       options.threads,
                                       cache_trust_of(options.lock.state_dir, root_.repo_dir));
            if (!images->ok()) {
                return make_error(
                    ErrorCode::BadInput,
                    "not a complete, verified installation tree: " + describe_problems(*images),
                    root_.repo_dir.string());
            }
        }

        // Built under a temporary name, renamed into place when complete.
        if (std::error_code made;
            !std::filesystem::create_directories(root_.snapshots_dir, made) && made) {
            return make_errno_error("cannot create", root_.snapshots_dir.string(), made.value());
        }
        remove_stale_temporaries(root_.snapshots_dir);
        std::string staging_template =
            (root_.snapshots_dir / fmt::format(".{}{}XXXXXX", name, kCreatingInfix)).string();
        if (::mkdtemp(staging_template.data()) == nullptr) {
            return make_errno_error("cannot create a directory in", root_.snapshots_dir.string(),
                                    errno);
        }
        TemporaryDirectory staging{std::filesystem::path(staging_template)};
        SnapshotBuilder builder(root_, staging.path(), options.copy);
        if (auto opened = builder.open(); !opened) {
            return tl::unexpected(std::move(opened.error()));
        }
        for (const LiveRepository& live : repositories) {
            if (auto added = add_repository(builder, live); !added) {
                return tl::unexpected(std::move(added.error()));
            }
        }
        if (treeinfo) {
            for (const RepoAuditReport::IntactFile& image : images->intact) {
                if (auto added = builder.add(image.path, false); !added) {
                    return tl::unexpected(std::move(added.error()));
                }
            }
            if (auto added = builder.add(std::string(kTreeinfoName), true); !added) {
                return tl::unexpected(std::move(added.error()));
            }
        }

        // What was linked is what was verified: each copy of an index is the one its state
        // names, and every record, package and image beneath the snapshot checks out (from the
        // cache for links).
        for (const LiveRepository& live : repositories) {
            if (auto copied = verify_copy(staging.path(), live, builder.copy_trust()); !copied) {
                return tl::unexpected(std::move(copied.error()));
            }
        }
        if (treeinfo) {
            auto copied = fs::read_file(staging.path() / std::string(kTreeinfoName));
            const RepoAuditReport copy =
                audit_tree_images(root_.repo_id, staging.path(), options.use_checksum_cache,
                                  options.threads, builder.copy_trust());
            if (!copied || *copied != *treeinfo) {
                return make_error(ErrorCode::Corrupt,
                                  ".treeinfo changed while the snapshot was taken",
                                  root_.repo_dir.string());
            }
            if (!copy.ok() || copy.verified != images->verified) {
                return make_error(ErrorCode::Corrupt,
                                  "the snapshot's images do not verify: " + describe_problems(copy),
                                  staging.path().string());
            }
        }
        if (auto flushed = fs::flush_filesystem(staging.path()); !flushed) {
            return tl::unexpected(std::move(flushed.error()));
        }
        // created = now, whatever the last entry made in it.
        const std::array<timespec, 2> now{timespec{0, UTIME_NOW}, timespec{0, UTIME_NOW}};
        ::utimensat(AT_FDCWD, staging.path().c_str(), now.data(), AT_SYMLINK_NOFOLLOW);

        const UniqueFd snapshots_fd = fs::open_directory(root_.snapshots_dir, true);
        if (!snapshots_fd) {
            return make_errno_error("cannot open", root_.snapshots_dir.string(), errno);
        }
        const std::string staging_name = staging.path().filename().string();
        int renamed = fault::renameat2(snapshots_fd.get(), staging_name.c_str(), snapshots_fd.get(),
                                       name.c_str(), RENAME_NOREPLACE);
        if (renamed != 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) &&
            !std::filesystem::exists(std::filesystem::symlink_status(target, exists_error))) {
            // NFS, CIFS, FUSE: no RENAME_NOREPLACE. We hold the lock: nobody else creates it.
            renamed = fault::renameat(snapshots_fd.get(), staging_name.c_str(), snapshots_fd.get(),
                                      name.c_str());
        }
        if (renamed != 0) {
            if (errno == EEXIST || errno == ENOTEMPTY) {
                return make_error(
                    ErrorCode::BadInput,
                    fmt::format("snapshot {} of repository {} exists already", name, root_.repo_id),
                    target.string());
            }
            return make_errno_error("cannot rename the new snapshot into place", target.string(),
                                    errno);
        }
        staging.release();
        if (auto synced = fs::sync_directory(snapshots_fd.get(), root_.snapshots_dir); !synced) {
            return tl::unexpected(std::move(synced.error()));
        }
        // The live mirror's records follow the links just made (they moved each file's ctime
        // only): the next sync stays a no-op, its cache still vouched for. Best effort: a record
        // not moved costs the next sync its no-op, never a wrong answer.
        const std::filesystem::path state_dir =
            options.lock.state_dir.empty() ? fs::default_state_dir() : options.lock.state_dir;
        for (const LiveRepository& live : repositories) {
            const std::filesystem::path dir =
                live.part.empty() ? root_.repo_dir : root_.repo_dir / live.part;
            (void)follow_own_links(sync_state_path(state_dir, dir), builder.relinked());
        }
        if (treeinfo) {
            (void)follow_own_links(
                sync_state_path(state_dir, root_.repo_dir / std::string(kTreeImagesCatalogue)),
                builder.relinked());
        }
        return describe(name);
    }

    Result<SnapshotInfo> describe(std::string_view name) override {
        auto dir = snapshot_directory(root_, name);
        if (!dir) {
            return tl::unexpected(std::move(dir.error()));
        }
        SnapshotInfo info;
        info.name = std::string(name);
        info.dir = std::move(*dir);
        if (auto measured = measure(info); !measured) {
            return tl::unexpected(std::move(measured.error()));
        }
        return info;
    }

    Result<std::vector<std::string>> names() override {
        std::vector<std::string> names;
        std::error_code error;
        std::filesystem::directory_iterator entries(root_.snapshots_dir, error);
        if (error == std::errc::no_such_file_or_directory) {
            return names;
        }
        if (error) {
            return make_errno_error("cannot read", root_.snapshots_dir.string(), error.value());
        }
        for (const auto& entry : entries) {
            std::string name = entry.path().filename().string();
            // Temporaries (".NAME.creating-*") and what is no snapshot name are not listed.
            if (validate_snapshot_name(name, "snapshot name") && entry.is_directory(error) &&
                !entry.is_symlink(error)) {
                names.push_back(std::move(name));
            }
        }
        return names;
    }

    Result<std::multimap<std::string, std::string>> published() override {
        return published_links(root_);
    }

    Result<void> point(std::string_view published_name, std::string_view name) override {
        const std::filesystem::path publish_dir = root_.published_dir / published_name;
        if (std::error_code made; !std::filesystem::create_directories(publish_dir, made) && made) {
            return make_errno_error("cannot create", publish_dir.string(), made.value());
        }
        const UniqueFd dir_fd = fs::open_directory(publish_dir, true);
        if (!dir_fd) {
            return make_errno_error("cannot open", publish_dir.string(), errno);
        }
        const std::filesystem::path link = publish_dir / root_.repo_id;
        struct stat st {};
        if (::fstatat(dir_fd.get(), root_.repo_id.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISLNK(st.st_mode)) {
            return make_error(ErrorCode::Unsafe,
                              fmt::format("is a {}, not a published name's symlink; not replaced",
                                          S_ISDIR(st.st_mode) ? "directory" : "file"),
                              link.string());
        }
        const std::string temporary =
            fmt::format(".{}.publish-{}", root_.repo_id, static_cast<long>(::getpid()));
        ::unlinkat(dir_fd.get(), temporary.c_str(), 0);  // left by an interrupted run (lock held)
        if (::symlinkat(link_target(root_, name).c_str(), dir_fd.get(), temporary.c_str()) != 0) {
            return make_errno_error("cannot create a symlink in", publish_dir.string(), errno);
        }
        // One rename: a reader resolves the old snapshot or the new one. A directory that appeared
        // meanwhile is not replaced (rename fails with EISDIR).
        if (fault::renameat(dir_fd.get(), temporary.c_str(), dir_fd.get(), root_.repo_id.c_str()) !=
            0) {
            const int rename_errno = errno;
            ::unlinkat(dir_fd.get(), temporary.c_str(), 0);
            return make_errno_error("cannot switch", link.string(), rename_errno);
        }
        return fs::sync_directory(dir_fd.get(), publish_dir);
    }

    Result<void> erase(const SnapshotInfo& info) override {
        const UniqueFd dir_fd = fs::open_directory(root_.snapshots_dir, true);
        if (!dir_fd) {
            return make_errno_error("cannot open", root_.snapshots_dir.string(), errno);
        }
        const std::string doomed =
            fmt::format(".{}{}{}", info.name, kRemovingInfix, static_cast<long>(::getpid()));
        if (fault::renameat(dir_fd.get(), info.name.c_str(), dir_fd.get(), doomed.c_str()) != 0) {
            return make_errno_error("cannot remove", info.dir.string(), errno);
        }
        std::error_code error;
        std::filesystem::remove_all(root_.snapshots_dir / doomed, error);
        if (error) {
            return make_errno_error("cannot remove all of", (root_.snapshots_dir / doomed).string(),
                                    error.value());
        }
        (void)fs::sync_directory(dir_fd.get(), root_.snapshots_dir);
        return {};
    }

  private:
    // One repository of the live mirror (the mirror's root, or a tree's repository at `part`),
    // checked complete and verified.
    struct LiveRepository {
        std::filesystem::path part;  // relative to the mirror's root ("" = the root)
        std::string repomd_sha256;
        AuditOptions audit_options;
        RepoAuditReport audit;
    };

    // Checks the repository at `part` of the live mirror: the state of its last successful sync
    // names the live repomd.xml, and every record and every selected package is present and
    // intact (the audit).
    Result<LiveRepository> check_live(const std::string& part,
                                      const SnapshotCreateOptions& options) const {
        LiveRepository live;
        live.part = part;
        const std::filesystem::path dir = part.empty() ? root_.repo_dir : root_.repo_dir / part;
        const std::filesystem::path state_dir =
            options.lock.state_dir.empty() ? fs::default_state_dir() : options.lock.state_dir;
        auto repomd = fs::read_file(dir / "repodata" / "repomd.xml");
        if (!repomd) {
            return make_error(ErrorCode::BadInput,
                              "no repodata/repomd.xml: a snapshot needs a mirror synced with "
                              "--download-metadata",
                              dir.string());
        }
        live.repomd_sha256 = hash_bytes(ChecksumType::Sha256, *repomd);
        const auto state = read_sync_state(sync_state_path(state_dir, dir));
        if (!state || !state->selection) {
            return make_error(
                ErrorCode::BadInput,
                fmt::format("no completed `rpmirror sync` recorded for this mirror (in "
                            "{}); sync it first",
                            state_dir.string()),
                dir.string());
        }
        // A filtered mirror publishes its own repomd.xml (rewritten metadata); others upstream's.
        const std::string& published_sha256 = state->published_repomd_sha256.empty()
                                                  ? state->repomd_sha256
                                                  : state->published_repomd_sha256;
        if (published_sha256 != live.repomd_sha256) {
            return make_error(
                ErrorCode::BadInput,
                "repodata/repomd.xml is not the one the last completed sync published "
                "(the last sync did not complete, or the metadata was changed); sync "
                "again first",
                dir.string());
        }
        live.audit_options.selection = state->selection->options;
        live.audit_options.use_checksum_cache = options.use_checksum_cache;
        live.audit_options.trust = cache_trust_of(state_dir, dir);
        live.audit_options.threads = options.threads;
        live.audit = audit_repository(root_.repo_id, dir, live.audit_options);
        if (!live.audit.ok()) {
            return make_error(ErrorCode::BadInput,
                              "not a complete, verified mirror: " + describe_problems(live.audit),
                              dir.string());
        }
        if (live.audit.intact.size() != live.audit.verified) {
            return make_error(
                ErrorCode::Unsupported,
                "packages outside the repository directory (--safe-write-path) cannot "
                "be snapshotted",
                dir.string());
        }
        return live;
    }

    // Adds the files of `live` to the snapshot: its records and packages, then its index, the
    // index's signature and comps.xml (-m), which are not records of repomd.xml.
    Result<void> add_repository(SnapshotBuilder& builder, const LiveRepository& live) const {
        for (const RepoAuditReport::IntactFile& file : live.audit.intact) {
            if (auto added = builder.add(live.part / file.path, file.is_metadata); !added) {
                return added;
            }
        }
        for (const std::filesystem::path& extra : {std::filesystem::path("repodata/repomd.xml"),
                                                   std::filesystem::path("repodata/repomd.xml.asc"),
                                                   std::filesystem::path("comps.xml")}) {
            const std::filesystem::path relative = live.part / extra;
            struct stat st {};
            if (extra != "repodata/repomd.xml" &&
                (::lstat((root_.repo_dir / relative).c_str(), &st) != 0 || !S_ISREG(st.st_mode))) {
                continue;
            }
            if (auto added = builder.add(relative, true); !added) {
                return added;
            }
        }
        return {};
    }

    // Checks the copy of `live` beneath `staging`: its index is the one the state names, and it
    // audits as the live repository did.
    Result<void> verify_copy(const std::filesystem::path& staging, const LiveRepository& live,
                             std::shared_ptr<const CacheTrust> trust) const {
        const std::filesystem::path dir = live.part.empty() ? staging : staging / live.part;
        auto copied_repomd = fs::read_file(dir / "repodata" / "repomd.xml");
        if (!copied_repomd ||
            hash_bytes(ChecksumType::Sha256, *copied_repomd) != live.repomd_sha256) {
            return make_error(ErrorCode::Corrupt,
                              "repodata/repomd.xml changed while the snapshot was taken",
                              (root_.repo_dir / live.part).string());
        }
        AuditOptions copy_options = live.audit_options;
        copy_options.trust = std::move(trust);
        const RepoAuditReport copy = audit_repository(root_.repo_id, dir, copy_options);
        if (!copy.ok() || copy.verified != live.audit.verified) {
            return make_error(ErrorCode::Corrupt,
                              "the snapshot does not verify: " + describe_problems(copy),
                              dir.string());
        }
        return {};
    }

    const SnapshotRoot& root_;
    std::optional<fs::RunLock> lock_;
};

std::unique_ptr<Backend> local_backend(const SnapshotRoot& root) {
    return std::make_unique<LocalBackend>(root);
}

}  // namespace snapshot

Result<std::filesystem::path> snapshot_directory(const SnapshotRoot& root, std::string_view name) {
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    const std::filesystem::path dir = root.snapshots_dir / name;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return tl::unexpected(snapshot::no_snapshot(root, name, dir.string()));
    }
    return dir;
}

}  // namespace rpmirror
