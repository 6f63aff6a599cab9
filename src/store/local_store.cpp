// A mirror in a local directory tree (see store/local_store.hpp).
#include "store/local_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "fs/walk.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::store {

namespace {

StoredFile stored_file(const struct stat& st) {
    const SyncStateFile file = state_file_of({}, st);
    return {file.size, LocalStore::version_of(file.mtime_ns, file.inode, file.ctime_ns)};
}

class HeldRunLock final : public RepoLock {
  public:
    explicit HeldRunLock(fs::RunLock lock) : lock_(std::move(lock)) {}

  private:
    fs::RunLock lock_;
};

// The finding for an entry that is not a regular file (fs::lookup_beneath).
CheckedFile finding_for(const fs::Entry& entry, const std::filesystem::path& root) {
    CheckedFile checked;
    switch (entry.kind) {
        case fs::EntryKind::Missing:
            checked.finding = Finding::Missing;
            break;
        case fs::EntryKind::Symlink:
            checked.finding = Finding::NotRegular;
            checked.detail = "symlink, not followed";
            break;
        case fs::EntryKind::Directory:
        case fs::EntryKind::Other:
            checked.finding = Finding::NotRegular;
            checked.detail = fs::file_kind_name(entry.st.st_mode);
            break;
        case fs::EntryKind::Escapes:
            checked.finding = Finding::Escapes;
            checked.detail = "a symlinked directory on the way leads outside " + root.string() +
                             "; not followed";
            break;
        case fs::EntryKind::Regular:
        case fs::EntryKind::Error:
            checked.finding = Finding::Unreadable;
            checked.detail = std::strerror(entry.sys_errno);
            break;
    }
    return checked;
}

// The mirror's root, opened to look files up beneath it (fs::lookup_beneath), and what `key`
// is there: Missing iff the root itself is missing, Error iff it cannot be opened.
struct OpenRoot {
    explicit OpenRoot(const std::filesystem::path& root)
        : fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)),
          open_errno(fd ? 0 : errno) {}

    fs::Entry lookup(std::string_view key) const {
        if (fd) {
            return fs::lookup_beneath(fd.get(), std::filesystem::path(key));
        }
        return {
            open_errno == ENOENT ? fs::EntryKind::Missing : fs::EntryKind::Error, {}, open_errno};
    }

    UniqueFd fd;
    int open_errno;
};

}  // namespace

LocalStore::LocalStore(std::filesystem::path root, std::filesystem::path state_dir)
    : root_(std::move(root)),
      state_dir_(state_dir.empty() ? fs::default_state_dir() : std::move(state_dir)),
      metadata_root_(root_) {}

void LocalStore::set_sync_layout(std::filesystem::path metadata_root,
                                 std::vector<std::filesystem::path> package_roots) {
    metadata_root_ = std::move(metadata_root);
    package_roots_ = std::move(package_roots);
}

const std::filesystem::path& LocalStore::root_of(std::string_view key) const {
    const std::string_view top = key.substr(0, key.find('/'));
    return key == kCompsKey || (top != key && fs::is_metadata_dir_name(top)) ? metadata_root_
                                                                             : root_;
}

std::string LocalStore::version_of(std::int64_t mtime_ns, std::uint64_t inode,
                                   std::int64_t ctime_ns) {
    return fmt::format("{} {} {}", mtime_ns, inode, ctime_ns);
}

std::string LocalStore::describe(std::string_view key) const {
    return (root_of(key) / key).string();
}

Result<Listing> LocalStore::list_files(bool partials) {
    UniqueFd root = fs::open_directory(root_, /*nofollow=*/true);
    if (!root) {
        const int open_errno = errno;
        if (open_errno == ENOENT) {
            return Listing{};
        }
        std::error_code ignored;
        if (std::filesystem::is_symlink(root_, ignored)) {
            return make_error(ErrorCode::Unsafe, "is a symlink; not walking through it",
                              root_.string());
        }
        return make_errno_error("cannot open directory", root_.string(), open_errno);
    }
    // The metadata directories at the top are not descended into (is_package_key), nor another
    // mirror synced into a directory below this one, by whatever command line or job: the
    // state directory has its state (a mirror of packages only has no repodata/repomd.xml to
    // tell it by, fs::NestedTrees).
    const fs::DescendFilter descend = [this](const std::filesystem::path& relative,
                                             const struct stat&) {
        if (!relative.has_parent_path() &&
            !is_package_key(relative.filename().string() + "/package.rpm")) {
            return false;
        }
        std::error_code ignored;
        return !std::filesystem::exists(sync_state_path(state_dir_, root_ / relative), ignored);
    };
    Listing packages;
    const fs::RpmVisitor record = [&packages](int, const std::string&,
                                              const std::filesystem::path& relative,
                                              const struct stat& st) -> Result<bool> {
        packages.emplace(relative.generic_string(), stored_file(st));
        return true;
    };
    auto walked = fs::walk_rpm_files(
        std::move(root), root_, descend, record, fs::NestedTrees::Skip,
        partials ? std::function<bool(std::string_view)>(&fs::is_part_name) : nullptr);
    if (!walked) {
        return tl::unexpected(std::move(walked.error()));
    }
    return packages;
}

Result<Listing> LocalStore::list_packages() {
    return list_files(false);
}

Result<Listing> LocalStore::list_partials() {
    return list_files(true);
}

Result<std::optional<StoredFile>> LocalStore::stat(std::string_view key) {
    struct stat st {};
    const std::filesystem::path path = root_of(key) / key;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            return std::optional<StoredFile>();
        }
        return make_errno_error("cannot stat", path.string(), errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return std::optional<StoredFile>();
    }
    return std::optional<StoredFile>(stored_file(st));
}

Result<std::vector<std::string>> LocalStore::remove_packages(std::span<const std::string> keys) {
    for (const std::string& key : keys) {
        if (!is_package_key(key)) {
            return make_error(ErrorCode::BadInput, "is not a package of the mirror; not removed",
                              describe(key));
        }
    }
    return remove_beneath(keys, /*symlinks_too=*/false);
}

Result<std::vector<std::string>> LocalStore::remove_partials(std::span<const std::string> keys) {
    for (const std::string& key : keys) {
        if (!fs::is_part_name(std::filesystem::path(key).filename().native()) ||
            fs::is_reserved_key(std::filesystem::path(key).parent_path().generic_string())) {
            return make_error(ErrorCode::BadInput,
                              "is not a download's temporary file; not removed", describe(key));
        }
    }
    // Each one locked exclusively until it is gone: one a live download holds (its shared lock)
    // is skipped, and a download that opens it meanwhile waits, then finds it unlinked and
    // starts a new one (DestinationRoot::open_part).
    std::vector<std::string> unheld;
    std::vector<UniqueFd> locks;
    for (const std::string& key : keys) {
        const std::filesystem::path path = root_ / key;
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (fd && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
            continue;  // a live download writes it
        }
        unheld.push_back(key);
        locks.push_back(std::move(fd));
    }
    return remove_beneath(unheld, /*symlinks_too=*/false);
}

Result<std::vector<std::string>> LocalStore::remove_beneath(std::span<const std::string> keys,
                                                            bool symlinks_too) {
    std::vector<std::string> removed;
    for (const std::string& key : keys) {
        auto outcome = fs::remove_beneath(root_, key, symlinks_too);
        if (!outcome) {
            return tl::unexpected(std::move(outcome.error()));
        }
        if (*outcome == fs::Removal::Removed) {
            removed.push_back(key);
        }
    }
    return removed;
}

Result<std::string> LocalStore::read(std::string_view key) {
    const std::filesystem::path& root = root_of(key);
    const fs::Entry entry = OpenRoot(root).lookup(key);
    if (entry.kind == fs::EntryKind::Missing) {
        return make_error(ErrorCode::NotFound, "no such file", describe(key));
    }
    if (entry.kind != fs::EntryKind::Regular) {
        return make_error(ErrorCode::Unsafe,
                          "not a regular file (" + finding_for(entry, root).detail + ")",
                          describe(key));
    }
    return fs::read_file(root / key);
}

Result<std::filesystem::path> LocalStore::local_copy(std::string_view key,
                                                     const std::filesystem::path&) {
    return root_ / key;
}

Result<bool> LocalStore::holds_below(std::string_view key) {
    std::error_code ignored;
    return std::filesystem::is_directory(std::filesystem::symlink_status(root_ / key, ignored));
}

std::vector<CheckedFile> LocalStore::check_files(std::span<const ExpectedFile> files,
                                                 const CheckOptions& options) {
    std::vector<CheckedFile> checked(files.size());
    const OpenRoot root(root_);
    std::vector<VerifyRequest> requests;
    std::vector<std::size_t> requested;
    std::vector<struct stat> before;  // of each requested file, before it was read
    for (std::size_t index = 0; index < files.size(); ++index) {
        const ExpectedFile& file = files[index];
        const fs::Entry entry = root.lookup(file.key);
        if (entry.kind != fs::EntryKind::Regular) {
            checked[index] = finding_for(entry, root_);
            continue;
        }
        const auto actual_size = static_cast<std::uint64_t>(entry.st.st_size);
        if (file.size && *file.size != actual_size) {
            checked[index].finding = Finding::SizeMismatch;
            checked[index].actual_size = actual_size;
            continue;
        }
        requests.push_back({root_ / file.key, file.type, file.digest, file.size});
        requested.push_back(index);
        before.push_back(entry.st);
    }
    VerifyOptions verify_options;
    verify_options.threads = options.threads;
    verify_options.hash.use_cache = options.use_cache;
    if (!options.trust && !trust_) {
        trust_ = cache_trust_of(state_dir_, root_);
    }
    verify_options.hash.trust = options.trust ? options.trust : trust_;
    const std::vector<VerifyResult> results = verify_files(requests, verify_options);
    for (std::size_t slot = 0; slot < results.size(); ++slot) {
        const VerifyResult& result = results[slot];
        CheckedFile& out = checked[requested[slot]];
        out.actual_size = result.actual_size;
        if (!result.from_cache &&
            (result.status == VerifyStatus::Ok || result.status == VerifyStatus::DigestMismatch)) {
            out.bytes_read = result.actual_size;
        }
        switch (result.status) {
            case VerifyStatus::Ok: {
                out.finding = Finding::Intact;
                out.from_cache = result.from_cache;
                // The version checked: the file found again is the one looked up before it was
                // read (the same inode, size and mtime; a cache entry written meanwhile moved only
                // its ctime), so the version now is the content just checked.
                const fs::Entry again = root.lookup(files[requested[slot]].key);
                const struct stat& was = before[slot];
                if (again.kind == fs::EntryKind::Regular && fs::same_content(again.st, was)) {
                    out.version = stored_file(again.st).version;
                }
                break;
            }
            case VerifyStatus::DigestMismatch:
                out.finding = Finding::DigestMismatch;
                out.actual_digest = result.actual_digest;
                break;
            case VerifyStatus::SizeMismatch:
                out.finding = Finding::SizeMismatch;
                break;
            case VerifyStatus::Missing:
                out.finding = Finding::Missing;
                break;
            case VerifyStatus::IoError:
                out.finding = Finding::Unreadable;
                out.detail = result.error ? result.error->to_string() : "unknown error";
                break;
        }
    }
    return checked;
}

Result<std::unique_ptr<MirrorStore>> LocalStore::beside(const std::filesystem::path& root) {
    return std::unique_ptr<MirrorStore>(std::make_unique<LocalStore>(root, state_dir_));
}

Result<RecordedSync> LocalStore::recorded() {
    RecordedSync recorded;
    const std::optional<SyncState> state = read_sync_state(sync_state_path(state_dir_, root_));
    if (!state) {
        return recorded;
    }
    recorded.exists = true;
    recorded.selection = state->selection;
    recorded.publishing = state->publishing;
    recorded.repomd_sha256 = state->repomd_sha256;
    recorded.published_repomd_sha256 = state->published_repomd_sha256;
    recorded.fingerprint = state->options_fingerprint;
    Listing versions;
    for (const std::vector<SyncStateFile>* files : {&state->files, &state->metadata_files}) {
        for (const SyncStateFile& file : *files) {
            versions.emplace(
                file.relative_path.generic_string(),
                StoredFile{file.size, version_of(file.mtime_ns, file.inode, file.ctime_ns)});
        }
    }
    for (const SyncStateFile& file : state->files) {
        recorded.packages.push_back(file.relative_path.generic_string());
    }
    recorded.versions = std::move(versions);
    return recorded;
}

RecordPlace LocalStore::record_of(std::string_view below, std::string_view name) {
    const std::filesystem::path entry =
        fs::state_entry(state_dir_, below.empty() ? root_ : root_ / std::string(below));
    return {disk_object_store(entry.parent_path()),
            entry.filename().string() + "." + std::string(name), /*apart=*/true};
}

std::string LocalStore::record_place() const {
    return "the state directory " + state_dir_.string();
}

void LocalStore::follow_links(const Listing& linked) {
    std::vector<RelinkedFile> relinked;
    const OpenRoot root(root_);
    for (const auto& [key, was] : linked) {
        SyncStateFile before;
        before.relative_path = key;
        before.size = was.size;
        if (std::sscanf(was.version.c_str(), "%" SCNd64 " %" SCNu64 " %" SCNd64, &before.mtime_ns,
                        &before.inode, &before.ctime_ns) != 3) {
            continue;
        }
        const fs::Entry now = root.lookup(key);
        if (now.kind == fs::EntryKind::Regular) {
            relinked.push_back({std::move(before), state_file_of(key, now.st)});
        }
    }
    // Each record beneath this root: its sync state, and a tree's image catalogue.
    for (const std::filesystem::path& recorded :
         {root_, root_ / std::string(kTreeImagesCatalogue)}) {
        (void)follow_own_links(sync_state_path(state_dir_, recorded), relinked);
    }
    trust_.reset();  // the records moved
}

Result<void> LocalStore::forget(const std::set<std::string>&) {
    // The state file records sizes and times, not checksums: without it the next sync verifies
    // every file (and cannot take its no-op shortcut).
    trust_.reset();
    std::error_code error;
    const std::filesystem::path path = sync_state_path(state_dir_, root_);
    if (!std::filesystem::remove(path, error) && error) {
        return make_error(ErrorCode::Io, "cannot remove the state file: " + error.message(),
                          path.string());
    }
    return {};
}

Result<std::vector<std::string>> LocalStore::remove_files(std::span<const std::string> keys) {
    return remove_beneath(keys, /*symlinks_too=*/true);
}

Result<std::unique_ptr<RepoLock>> LocalStore::lock(std::optional<std::chrono::seconds> wait,
                                                   std::stop_token stop) {
    auto held = fs::RunLock::acquire(state_dir_, root_, wait, std::move(stop));
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    return std::unique_ptr<RepoLock>(std::make_unique<HeldRunLock>(std::move(*held)));
}

Result<std::unique_ptr<RepoLock>> LocalStore::lock_present(
    std::optional<std::chrono::seconds> wait) {
    auto held =
        fs::RunLock::acquire(state_dir_, root_, wait, {}, fs::MissingDirectory::LockOnlyIfPresent);
    if (!held) {
        return tl::unexpected(std::move(held.error()));
    }
    return std::unique_ptr<RepoLock>(std::make_unique<HeldRunLock>(std::move(*held)));
}

bool state_files_unchanged(const std::filesystem::path& repo_dir, const SyncState& state) {
    Listing recorded;
    for (const SyncStateFile& file : state.files) {
        recorded.emplace(file.relative_path.generic_string(),
                         StoredFile{file.size, LocalStore::version_of(file.mtime_ns, file.inode,
                                                                      file.ctime_ns)});
    }
    LocalStore store(repo_dir);
    return files_unchanged(store, recorded);
}

}  // namespace rpmirror::store
