// `rpmirror sync` when the local side fails: a full disk (a small tmpfs mounted by the test in a
// private mount namespace), I/O errors injected through the fault seam (src/fs/fault.hpp), a
// read-only destination, permission denied, a destination that is a regular file. Each must end
// with a clear error naming the path, a failing exit code, the previous metadata in place, no
// corrupt file under a final name, and a re-run that completes once the cause is gone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "integration/crash/crash_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

using LocalErrors = CrashFixture;

// Fills the filesystem holding `file` until a write fails with ENOSPC, then gives `spare` bytes
// back. Returns false iff the filesystem never filled up (the premise of the test).
bool fill_leaving(const fs::path& file, off_t spare) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return false;
    }
    const std::vector<char> chunk(64 * 1024, 'x');
    off_t size = 0;
    int last_errno = 0;
    for (;;) {
        const ssize_t written = ::write(fd, chunk.data(), chunk.size());
        if (written <= 0) {
            last_errno = errno;
            break;
        }
        size += written;
    }
    const bool filled =
        last_errno == ENOSPC && ::ftruncate(fd, size > spare ? size - spare : 0) == 0;
    ::close(fd);
    return filled;
}

// The URIs the server saw more than once in `uris`.
std::vector<std::string> repeated(const std::vector<std::string>& uris) {
    std::map<std::string, int> counts;
    std::vector<std::string> result;
    for (const std::string& uri : uris) {
        if (++counts[uri] == 2) {
            result.push_back(uri);
        }
    }
    return result;
}

TEST_F(LocalErrors, FullDiskFailsNamingTheFileKeepsTheOldMetadataAndARerunCompletesAfterFreeing) {
    if (!crash::enter_private_mount_namespace()) {
        GTEST_SKIP() << "needs root and a private mount namespace for a small tmpfs";
    }
    build_revisions();
    const fs::path small = tmp_ / "small";
    crash::ScopedMount tmpfs("tmpfs", small, "tmpfs", 0, "size=8m,mode=0755");
    ASSERT_TRUE(tmpfs.is_mounted()) << std::strerror(errno);
    const fs::path box = small / "box";
    fresh_old_mirror(box);
    const fs::path filler = small / "filler";

    // Completely full: the first record of the new metadata cannot be written. Then room for
    // the metadata records only (5 pages spare): the packages cannot be written.
    off_t records_bytes = 0;
    for (const auto& [name, size] : new_records_) {
        records_bytes += static_cast<off_t>(size);
    }
    for (const off_t spare : {off_t{0}, records_bytes + 5 * 4096}) {
        const std::string context = "spare " + std::to_string(spare) + " bytes";
        ASSERT_TRUE(fill_leaving(filler, spare)) << context;
        const std::size_t log_before = log_size(*server_);
        const CommandResult full = sync_with_fault("", args_for("new", box / "mirror"));
        const auto uris = uris_since(*server_, log_before);

        EXPECT_EQ(full.exit_code, 1) << context << "\n" << full.out << full.err;
        EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << context << "\n"
                                                                               << full.err;
        EXPECT_NE(full.err.find((box / "mirror" / "sample").string() + "/"), std::string::npos)
            << context << ": the error names the file\n"
            << full.err;
        if (spare > 0) {
            EXPECT_NE(full.err.find("/Packages/"), std::string::npos)
                << context << ": the metadata fitted, a package did not\n"
                << full.err;
        }
        EXPECT_TRUE(repeated(uris).empty()) << context << ": a full disk is not retried";
        const crash::MirrorScan after = expect_consistent(box, context);
        EXPECT_EQ(after.repodata, old_repodata_) << context;
        fs::remove(filler);
    }

    const std::size_t log_before = log_size(*server_);
    const CommandResult rerun = sync_with_fault("", args_for("new", box / "mirror"));
    EXPECT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
    EXPECT_EQ(tree_digests(box / "mirror" / "sample", kStateFile), tree_digests(new_upstream_));
    EXPECT_FALSE(uris_since(*server_, log_before).empty());
}

// I/O errors injected at the n-th operation of a kind: each fails the run with the error's text
// and the path, leaves a consistent mirror, and an unarmed re-run completes it.
TEST_F(LocalErrors, InjectedIoErrorsFailCleanlyAndARerunCompletes) {
    build_revisions();
    const fs::path box = tmp_ / "box";
    const std::vector<std::string> faults = {
        "errno:create:3:EIO",    "errno:write:1:EIO",     "errno:write:9:EIO",
        "errno:write:3+:ENOSPC", "errno:sync:1:EIO",      "errno:sync:2:EIO",
        "errno:rename:3:EIO",    "errno:rename:10:EIO",   "errno:rename:14:EIO",
        "errno:unlink:1:EIO",    "errno:create:3+:EROFS", "errno:write:12:EDQUOT"};
    // (creates #1 and #2 are the run lock's files in the state directory, outside the
    // destination: by path, then by device and inode.)
    for (const std::string& fault : faults) {
        fresh_old_mirror(box);
        const CommandResult failed = sync_with_fault(fault, args_for("new", box / "mirror"));
        const std::string error_text = fault.ends_with("ENOSPC")   ? "No space left on device"
                                       : fault.ends_with("EROFS")  ? "Read-only file system"
                                       : fault.ends_with("EDQUOT") ? "Disk quota exceeded"
                                                                   : "Input/output error";

        EXPECT_EQ(failed.exit_code, 1) << fault << "\n" << failed.out << failed.err;
        EXPECT_NE(failed.err.find(error_text), std::string::npos) << fault << "\n" << failed.err;
        EXPECT_NE(failed.err.find((box / "mirror" / "sample").string()), std::string::npos)
            << fault << ": the error names the path\n"
            << failed.err;
        const crash::MirrorScan after = expect_consistent(box, fault);
        expect_completes(box, after, fault);
        if (HasFailure()) {
            return;
        }
    }
}

// Returns every file and directory under `root` with its digest (files) or "dir", for comparing
// trees before and after a run that must touch nothing.
std::map<std::string, std::string> snapshot(const fs::path& root) {
    std::map<std::string, std::string> entries = tree_digests(root);
    for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
         ++it) {
        if (it->is_directory()) {
            entries[fs::relative(it->path(), root).string()] = "dir";
        }
    }
    return entries;
}

TEST_F(LocalErrors, ReadOnlyDestinationFailsNamingItAndTouchesNothing) {
    if (!crash::enter_private_mount_namespace()) {
        GTEST_SKIP() << "needs root and a private mount namespace for a read-only bind mount";
    }
    build_revisions();
    const fs::path box = tmp_ / "box";
    fresh_old_mirror(box);
    crash::ScopedMount bind(box.string(), box, "", MS_BIND, "");
    ASSERT_TRUE(bind.is_mounted() && bind.remount_read_only()) << std::strerror(errno);
    const auto before = snapshot(box);

    const CommandResult failed = sync_with_fault("", args_for("new", box / "mirror"));

    EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
    EXPECT_NE(failed.err.find("Read-only file system"), std::string::npos) << failed.err;
    EXPECT_NE(failed.err.find((box / "mirror" / "sample").string()), std::string::npos)
        << failed.err;
    EXPECT_EQ(snapshot(box), before);
}

// Runs rpmirror as `nobody`: the temporary directory is opened up for it to read the
// configuration, the destination's parent stays root's.
TEST_F(LocalErrors, PermissionDeniedOnTheDestinationOrASubdirectoryFailsNamingItAndTouchesNothing) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to run rpmirror as nobody";
    }
    build_revisions();
    fs::permissions(tmp_.path(), fs::perms::owner_all | fs::perms::group_read |
                                     fs::perms::group_exec | fs::perms::others_read |
                                     fs::perms::others_exec);
    const fs::path box = tmp_ / "box";
    fresh_old_mirror(box);
    // The state directory is nobody's to use (it is outside the destination).
    fs::create_directories(state_dir_for(box / "mirror"));
    fs::permissions(state_dir_for(box / "mirror"), fs::perms::all);
    // The repository directory is root's (nobody cannot create the staging directory there); in
    // the second case only Packages/ is closed (metadata could be fetched, packages cannot).
    for (const bool only_packages : {false, true}) {
        const std::string context = only_packages ? "Packages/ not writable" : "not writable";
        if (only_packages) {
            fs::permissions(box, fs::perms::others_write, fs::perm_options::add);
            fs::permissions(box / "mirror", fs::perms::others_write, fs::perm_options::add);
            fs::permissions(box / "mirror" / "sample", fs::perms::others_write,
                            fs::perm_options::add);
        }
        const auto before = snapshot(box);
        std::vector<std::string> argv{"setpriv",
                                      "--reuid=nobody",
                                      "--regid=nogroup",
                                      "--clear-groups",
                                      "--",
                                      rpmirror_binary(),
                                      "sync",
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        for (const std::string& arg : args_for("new", box / "mirror")) {
            argv.push_back(arg);
        }
        const CommandResult failed = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(failed.err);

        EXPECT_EQ(failed.exit_code, 1) << context << "\n" << failed.out << failed.err;
        EXPECT_NE(failed.err.find("Permission denied"), std::string::npos) << context << "\n"
                                                                           << failed.err;
        EXPECT_NE(failed.err.find((box / "mirror" / "sample").string()), std::string::npos)
            << context << "\n"
            << failed.err;
        EXPECT_EQ(snapshot(box), before) << context;
        EXPECT_EQ(scan(box / "mirror").repodata, old_repodata_) << context;
    }
}

TEST_F(LocalErrors, DestinationThatIsARegularFileFailsNamingItAndStaysAsItWas) {
    build_revisions();
    const fs::path not_a_directory = TempDir::write_at(tmp_ / "box" / "mirror", "a file");
    for (const std::string& path :
         {not_a_directory.string(), (not_a_directory / "below").string()}) {
        std::vector<std::string> args = args_for("new", path);
        const CommandResult failed = sync_with_fault("", args);

        EXPECT_TRUE(failed.exit_code == 1 || failed.exit_code == 2)
            << path << ": " << failed.exit_code << "\n"
            << failed.out << failed.err;
        EXPECT_NE(failed.err.find(not_a_directory.string()), std::string::npos) << failed.err;
        EXPECT_NE(failed.err.find("Not a directory"), std::string::npos) << failed.err;
        EXPECT_EQ(read_file(not_a_directory), "a file");
        std::size_t entries = 0;
        for (const auto& entry : fs::directory_iterator(tmp_ / "box")) {
            (void)entry;
            ++entries;
        }
        EXPECT_EQ(entries, 1U);
    }
}

}  // namespace
}  // namespace rpmirror::test
