// Snapshots of a mirrored repository and published names (see rpmirror/snapshot.hpp).
#include "rpmirror/snapshot.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <ctime>
#include <map>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "rpmirror/audit.hpp"
#include "rpmirror/checksum.hpp"
#include "rpmirror/plan.hpp"
#include "util/fault.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kCreatingInfix = ".creating-";
constexpr std::string_view kRemovingInfix = ".removing-";
constexpr std::size_t kMaxNameBytes = 200;

Result<fs::RunLock> take_lock(const SnapshotRoot& root, const SnapshotLock& lock) {
    return fs::RunLock::acquire(lock.state_dir.empty() ? fs::default_state_dir() : lock.state_dir,
                                root.repo_dir, lock.wait);
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
    info.created_ns =
        static_cast<std::int64_t>(dir_st.st_mtim.tv_sec) * 1'000'000'000 + dir_st.st_mtim.tv_nsec;
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
        return {};
    }

    std::size_t linked() const { return linked_; }

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

// Returns the snapshot entry `name` as list_snapshots describes it (without published names).
Result<SnapshotInfo> describe_snapshot(const SnapshotRoot& root, std::string_view name) {
    auto dir = snapshot_directory(root, name);
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

// remove_snapshot without the lock.
Result<SnapshotInfo> remove_locked(const SnapshotRoot& root, std::string_view name) {
    auto info = describe_snapshot(root, name);
    if (!info) {
        return info;
    }
    const auto published = published_links(root);
    std::vector<std::string> names;
    for (auto [it, end] = published.equal_range(std::string(name)); it != end; ++it) {
        names.push_back(it->second);
    }
    if (!names.empty()) {
        std::sort(names.begin(), names.end());
        std::string list;
        for (const std::string& published_name : names) {
            list += (list.empty() ? "" : ", ") + published_name;
        }
        return make_error(ErrorCode::BadInput,
                          fmt::format("is published as {}; publish another snapshot under that "
                                      "name first",
                                      list),
                          info->dir.string());
    }
    const UniqueFd dir_fd = fs::open_directory(root.snapshots_dir, true);
    if (!dir_fd) {
        return make_errno_error("cannot open", root.snapshots_dir.string(), errno);
    }
    const std::string doomed =
        fmt::format(".{}{}{}", name, kRemovingInfix, static_cast<long>(::getpid()));
    if (fault::renameat(dir_fd.get(), std::string(name).c_str(), dir_fd.get(), doomed.c_str()) !=
        0) {
        return make_errno_error("cannot remove", info->dir.string(), errno);
    }
    std::error_code error;
    std::filesystem::remove_all(root.snapshots_dir / doomed, error);
    if (error) {
        return make_errno_error("cannot remove all of", (root.snapshots_dir / doomed).string(),
                                error.value());
    }
    (void)fs::sync_directory(dir_fd.get(), root.snapshots_dir);
    return info;
}

}  // namespace

Result<SnapshotRoot> snapshot_root(std::string_view repo_id, const std::filesystem::path& repo_dir,
                                   const std::filesystem::path& base) {
    SnapshotRoot root;
    root.repo_id = std::string(repo_id);
    root.repo_dir = std::filesystem::absolute(repo_dir).lexically_normal();
    const std::filesystem::path absolute_base = std::filesystem::absolute(base).lexically_normal();
    root.snapshots_dir = absolute_base / "snapshots" / repo_id;
    root.published_dir = absolute_base / "published";
    for (const auto& reserved : {absolute_base / "snapshots", root.published_dir}) {
        if (root.repo_dir == reserved || root.repo_dir.parent_path() == reserved) {
            return make_error(ErrorCode::BadInput,
                              "the repository directory is where snapshots would be kept; "
                              "choose another --snapshot-dir",
                              root.repo_dir.string());
        }
    }
    return root;
}

Result<void> validate_snapshot_name(std::string_view name, std::string_view what) {
    const auto bad = [&](std::string_view why) {
        return make_error(ErrorCode::BadInput, fmt::format("invalid {}: {}", what, why),
                          std::string(name));
    };
    if (name.empty()) {
        return bad("empty");
    }
    if (name.size() > kMaxNameBytes) {
        return bad(fmt::format("longer than {} bytes", kMaxNameBytes));
    }
    if (name.starts_with('.')) {
        return bad("starts with '.' (reserved for temporary names; '.' and '..' are not names)");
    }
    for (const char c : name) {
        if (c == '/') {
            return bad("contains '/'");
        }
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            return bad("contains a control character");
        }
    }
    return {};
}

std::string default_snapshot_name(std::chrono::system_clock::time_point when) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    std::array<char, 32> text{};
    const std::size_t length = std::strftime(text.data(), text.size(), "%Y%m%dT%H%M%SZ", &utc);
    return std::string(text.data(), length);
}

Result<std::filesystem::path> snapshot_directory(const SnapshotRoot& root, std::string_view name) {
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    const std::filesystem::path dir = root.snapshots_dir / name;
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error(ErrorCode::NotFound,
                          fmt::format("no snapshot {} of repository {}", name, root.repo_id),
                          dir.string());
    }
    return dir;
}

Result<SnapshotInfo> create_snapshot(const SnapshotRoot& root,
                                     const SnapshotCreateOptions& options) {
    const std::string name =
        options.name.value_or(default_snapshot_name(std::chrono::system_clock::now()));
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto lock = take_lock(root, options.lock);
    if (!lock) {
        return tl::unexpected(std::move(lock.error()));
    }
    const std::filesystem::path target = root.snapshots_dir / name;
    std::error_code exists_error;
    if (std::filesystem::exists(std::filesystem::symlink_status(target, exists_error))) {
        return make_error(
            ErrorCode::BadInput,
            fmt::format("snapshot {} of repository {} exists already", name, root.repo_id),
            target.string());
    }

    // Only a complete mirror: the state of the last successful sync names the live repomd.xml.
    const std::filesystem::path state_dir =
        options.lock.state_dir.empty() ? fs::default_state_dir() : options.lock.state_dir;
    const std::filesystem::path repomd_path = root.repo_dir / "repodata" / "repomd.xml";
    auto repomd = fs::read_file(repomd_path);
    if (!repomd) {
        return make_error(ErrorCode::BadInput,
                          "no repodata/repomd.xml: a snapshot needs a mirror synced with "
                          "--download-metadata",
                          root.repo_dir.string());
    }
    const std::string repomd_sha256 = hash_bytes(ChecksumType::Sha256, *repomd);
    const auto state = read_sync_state(sync_state_path(state_dir, root.repo_dir));
    if (!state || !state->selection) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("no completed `rpmirror sync` recorded for this mirror (in "
                                      "{}); sync it first",
                                      state_dir.string()),
                          root.repo_dir.string());
    }
    // A filtered mirror publishes its own repomd.xml (rewritten metadata); others upstream's.
    const std::string& published_sha256 = state->published_repomd_sha256.empty()
                                              ? state->repomd_sha256
                                              : state->published_repomd_sha256;
    if (published_sha256 != repomd_sha256) {
        return make_error(ErrorCode::BadInput,
                          "repodata/repomd.xml is not the one the last completed sync published "
                          "(the last sync did not complete, or the metadata was changed); sync "
                          "again first",
                          root.repo_dir.string());
    }

    // Every record and every selected package, present and intact.
    AuditOptions audit_options;
    audit_options.selection = state->selection->options;
    audit_options.use_checksum_cache = options.use_checksum_cache;
    audit_options.threads = options.threads;
    const RepoAuditReport live = audit_repository(root.repo_id, root.repo_dir, audit_options);
    if (!live.ok()) {
        return make_error(ErrorCode::BadInput,
                          "not a complete, verified mirror: " + describe_problems(live),
                          root.repo_dir.string());
    }
    if (live.intact.size() != live.verified) {
        return make_error(ErrorCode::Unsupported,
                          "packages outside the repository directory (--safe-write-path) cannot "
                          "be snapshotted",
                          root.repo_dir.string());
    }

    // Built under a temporary name, renamed into place when complete.
    if (std::error_code made;
        !std::filesystem::create_directories(root.snapshots_dir, made) && made) {
        return make_errno_error("cannot create", root.snapshots_dir.string(), made.value());
    }
    remove_stale_temporaries(root.snapshots_dir);
    std::string staging_template =
        (root.snapshots_dir / fmt::format(".{}{}XXXXXX", name, kCreatingInfix)).string();
    if (::mkdtemp(staging_template.data()) == nullptr) {
        return make_errno_error("cannot create a directory in", root.snapshots_dir.string(), errno);
    }
    TemporaryDirectory staging{std::filesystem::path(staging_template)};
    SnapshotBuilder builder(root, staging.path(), options.copy);
    if (auto opened = builder.open(); !opened) {
        return tl::unexpected(std::move(opened.error()));
    }
    for (const RepoAuditReport::IntactFile& file : live.intact) {
        if (auto added = builder.add(file.path, file.is_metadata); !added) {
            return tl::unexpected(std::move(added.error()));
        }
    }
    // The index itself, its signature and comps.xml (-m) are not records of repomd.xml.
    for (const std::filesystem::path& extra :
         {std::filesystem::path("repodata/repomd.xml"),
          std::filesystem::path("repodata/repomd.xml.asc"), std::filesystem::path("comps.xml")}) {
        struct stat st {};
        if (extra != "repodata/repomd.xml" &&
            (::lstat((root.repo_dir / extra).c_str(), &st) != 0 || !S_ISREG(st.st_mode))) {
            continue;
        }
        if (auto added = builder.add(extra, true); !added) {
            return tl::unexpected(std::move(added.error()));
        }
    }

    // What was linked is what was verified: the copy of the index is the one the state names,
    // and every record and package beneath the snapshot checks out (from the cache for links).
    auto copied_repomd = fs::read_file(staging.path() / "repodata" / "repomd.xml");
    if (!copied_repomd || hash_bytes(ChecksumType::Sha256, *copied_repomd) != repomd_sha256) {
        return make_error(ErrorCode::Corrupt,
                          "repodata/repomd.xml changed while the snapshot was taken",
                          root.repo_dir.string());
    }
    const RepoAuditReport copy = audit_repository(root.repo_id, staging.path(), audit_options);
    if (!copy.ok() || copy.verified != live.verified) {
        return make_error(ErrorCode::Corrupt,
                          "the snapshot does not verify: " + describe_problems(copy),
                          staging.path().string());
    }
    if (auto flushed = fs::flush_filesystem(staging.path()); !flushed) {
        return tl::unexpected(std::move(flushed.error()));
    }
    // created = now, whatever the last entry made in it.
    const std::array<timespec, 2> now{timespec{0, UTIME_NOW}, timespec{0, UTIME_NOW}};
    ::utimensat(AT_FDCWD, staging.path().c_str(), now.data(), AT_SYMLINK_NOFOLLOW);

    const UniqueFd snapshots_fd = fs::open_directory(root.snapshots_dir, true);
    if (!snapshots_fd) {
        return make_errno_error("cannot open", root.snapshots_dir.string(), errno);
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
                fmt::format("snapshot {} of repository {} exists already", name, root.repo_id),
                target.string());
        }
        return make_errno_error("cannot rename the new snapshot into place", target.string(),
                                errno);
    }
    staging.release();
    if (auto synced = fs::sync_directory(snapshots_fd.get(), root.snapshots_dir); !synced) {
        return tl::unexpected(std::move(synced.error()));
    }
    return describe_snapshot(root, name);
}

Result<std::vector<SnapshotInfo>> list_snapshots(const SnapshotRoot& root) {
    std::vector<SnapshotInfo> snapshots;
    std::error_code error;
    std::filesystem::directory_iterator entries(root.snapshots_dir, error);
    if (error == std::errc::no_such_file_or_directory) {
        return snapshots;
    }
    if (error) {
        return make_errno_error("cannot read", root.snapshots_dir.string(), error.value());
    }
    const auto published = published_links(root);
    for (const auto& entry : entries) {
        const std::string name = entry.path().filename().string();
        // Temporaries (".NAME.creating-*") and what is no snapshot name are not listed.
        if (!validate_snapshot_name(name, "snapshot name") || !entry.is_directory(error) ||
            entry.is_symlink(error)) {
            continue;
        }
        auto info = describe_snapshot(root, name);
        if (!info) {
            return tl::unexpected(std::move(info.error()));
        }
        for (auto [it, end] = published.equal_range(name); it != end; ++it) {
            info->published_as.push_back(it->second);
        }
        std::sort(info->published_as.begin(), info->published_as.end());
        snapshots.push_back(std::move(*info));
    }
    std::sort(snapshots.begin(), snapshots.end(),
              [](const SnapshotInfo& left, const SnapshotInfo& right) {
                  return left.created_ns != right.created_ns ? left.created_ns < right.created_ns
                                                             : left.name < right.name;
              });
    return snapshots;
}

Result<void> publish_snapshot(const SnapshotRoot& root, std::string_view name,
                              std::string_view published_name, const SnapshotLock& lock) {
    if (auto valid = validate_snapshot_name(published_name, "published name"); !valid) {
        return valid;
    }
    auto held = take_lock(root, lock);
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    if (auto dir = snapshot_directory(root, name); !dir) {
        return tl::unexpected(std::move(dir.error()));
    }
    const std::filesystem::path publish_dir = root.published_dir / published_name;
    if (std::error_code made; !std::filesystem::create_directories(publish_dir, made) && made) {
        return make_errno_error("cannot create", publish_dir.string(), made.value());
    }
    const UniqueFd dir_fd = fs::open_directory(publish_dir, true);
    if (!dir_fd) {
        return make_errno_error("cannot open", publish_dir.string(), errno);
    }
    const std::filesystem::path link = publish_dir / root.repo_id;
    struct stat st {};
    if (::fstatat(dir_fd.get(), root.repo_id.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISLNK(st.st_mode)) {
        return make_error(ErrorCode::Unsafe,
                          fmt::format("is a {}, not a published name's symlink; not replaced",
                                      S_ISDIR(st.st_mode) ? "directory" : "file"),
                          link.string());
    }
    const std::string temporary =
        fmt::format(".{}.publish-{}", root.repo_id, static_cast<long>(::getpid()));
    ::unlinkat(dir_fd.get(), temporary.c_str(), 0);  // left by an interrupted run (lock held)
    if (::symlinkat(link_target(root, name).c_str(), dir_fd.get(), temporary.c_str()) != 0) {
        return make_errno_error("cannot create a symlink in", publish_dir.string(), errno);
    }
    // One rename: a reader resolves the old snapshot or the new one. A directory that appeared
    // meanwhile is not replaced (rename fails with EISDIR).
    if (fault::renameat(dir_fd.get(), temporary.c_str(), dir_fd.get(), root.repo_id.c_str()) != 0) {
        const int rename_errno = errno;
        ::unlinkat(dir_fd.get(), temporary.c_str(), 0);
        return make_errno_error("cannot switch", link.string(), rename_errno);
    }
    return fs::sync_directory(dir_fd.get(), publish_dir);
}

Result<SnapshotInfo> remove_snapshot(const SnapshotRoot& root, std::string_view name,
                                     const SnapshotLock& lock) {
    if (auto valid = validate_snapshot_name(name, "snapshot name"); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    auto held = take_lock(root, lock);
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    return remove_locked(root, name);
}

Result<std::vector<SnapshotInfo>> prune_snapshots(const SnapshotRoot& root, std::size_t keep,
                                                  const SnapshotLock& lock) {
    auto held = take_lock(root, lock);
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    auto snapshots = list_snapshots(root);
    if (!snapshots) {
        return tl::unexpected(std::move(snapshots.error()));
    }
    std::vector<SnapshotInfo> removed;
    const std::size_t older = snapshots->size() > keep ? snapshots->size() - keep : 0;
    for (std::size_t index = 0; index < older; ++index) {
        const SnapshotInfo& candidate = (*snapshots)[index];
        if (!candidate.published_as.empty()) {
            continue;
        }
        auto gone = remove_locked(root, candidate.name);
        if (!gone) {
            return tl::unexpected(std::move(gone.error()));
        }
        removed.push_back(std::move(*gone));
    }
    return removed;
}

}  // namespace rpmirror
