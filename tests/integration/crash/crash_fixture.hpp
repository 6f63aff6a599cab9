// The fixture of the crash-safety tests: an OLD revision of a real repository mirrored with
// --download-metadata, a NEW upstream revision (packages added and deleted), the real binary run
// with the I/O fault seam armed (RPMIRROR_FAULT, see src/fs/fault.hpp), and the checks that
// must hold after any kill: every file under a final name verified, repodata/ the old or the new
// complete one, nothing outside the destination.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "download/download_options.hpp"
#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {

namespace crash {

namespace fs = std::filesystem;

// Returns true iff `name` is a download in progress (".<name>.part").
inline bool is_part_name(const std::string& name) {
    return name.size() > 5 && name.front() == '.' && name.ends_with(".part");
}

// What a mirror directory holds after a (killed) run, as the checks see it.
struct MirrorScan {
    std::map<std::string, std::string> packages;  // Packages/<name> -> sha256
    std::map<std::string, std::string> repodata;  // repodata/ as tree_digests
    std::uint64_t resumable_part_bytes = 0;       // bytes in Packages/.<name>.part files
    // Files in staging directories left by a killed run, under their final names (not .part):
    // name -> sha256. The next run may reuse them.
    std::map<std::string, std::string> staged;
    std::vector<std::string> unexpected;  // anything else, with a reason
};

// Moves the calling process (a test process: ctest runs each test in its own) into a private
// mount namespace, so that what it mounts is seen by it and its children only and vanishes with
// it. Returns false iff that is not allowed here (not root, or a container forbids it).
inline bool enter_private_mount_namespace() {
    return ::geteuid() == 0 && ::unshare(CLONE_NEWNS) == 0 &&
           ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
}

// A mount made by a test, detached in the destructor (before the temporary directory goes).
class ScopedMount {
  public:
    ScopedMount(const std::string& source, const fs::path& target, const std::string& type,
                unsigned long flags, const std::string& options)
        : target_(target) {
        fs::create_directories(target);
        is_mounted_ = ::mount(source.c_str(), target.c_str(), type.empty() ? nullptr : type.c_str(),
                              flags, options.empty() ? nullptr : options.c_str()) == 0;
    }
    ScopedMount(const ScopedMount&) = delete;
    ScopedMount& operator=(const ScopedMount&) = delete;
    ~ScopedMount() {
        if (is_mounted_) {
            ::umount2(target_.c_str(), MNT_DETACH);
        }
    }
    bool is_mounted() const { return is_mounted_; }
    // Makes a bind mount read-only. Returns false iff the kernel refused.
    bool remount_read_only() const {
        return ::mount(nullptr, target_.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
                       nullptr) == 0;
    }

  private:
    fs::path target_;
    bool is_mounted_ = false;
};

// A FUSE filesystem mounted by a test in its private mount namespace (`command`: bindfs,
// flushfs, which return once the mount is made), detached in the destructor.
class FuseMount {
  public:
    FuseMount(const std::vector<std::string>& command, const fs::path& mount_point,
              const fs::path& logs)
        : mount_point_(mount_point) {
        fs::create_directories(mount_point);
        // The daemon outlives a test that dies (a sanitizer halting it): it must not hold
        // ctest's output pipe, or ctest waits for it until the test's timeout.
        for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
            const int fd = std::stoi(entry.path().filename().string());
            if (fd > 2) {
                ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
            }
        }
        const CommandResult mounted = run_to_end(command, logs);
        mounted_ = mounted.exit_code == 0;
        error_ = command.front() + " (scripts/deps installs it): " + mounted.err;
    }
    FuseMount(const FuseMount&) = delete;
    FuseMount& operator=(const FuseMount&) = delete;
    ~FuseMount() {
        if (mounted_) {
            ::umount2(mount_point_.c_str(), MNT_DETACH);
        }
    }
    bool mounted() const { return mounted_; }
    // Why the mount failed.
    const std::string& error() const { return error_; }

  private:
    fs::path mount_point_;
    bool mounted_ = false;
    std::string error_;
};

}  // namespace crash

class CrashFixture : public SyncFixture {
  protected:
    // Builds old/ and new/ upstream revisions under one nginx, mirrors old/ into template_.
    // OLD = the sample repository (without its 3 MB package) + the first 6 packages of the index
    // repository;
    // NEW = OLD without the tiny and small sample packages and those 6, plus the other 7.
    // So a sync from OLD to NEW fetches metadata, downloads 7 packages, keeps 3 and deletes 8.
    void build_revisions() {
        const std::filesystem::path old_up =
            copy_repo(test_repo("sample-repo"), tmp_ / "up" / "old");
        const std::filesystem::path new_up =
            copy_repo(test_repo("sample-repo"), tmp_ / "up" / "new");
        std::vector<std::filesystem::path> index_packages;
        for (const auto& entry :
             std::filesystem::directory_iterator(test_repo("index-repo") / "Packages")) {
            index_packages.push_back(entry.path());
        }
        std::sort(index_packages.begin(), index_packages.end());
        for (std::size_t position = 0; position < index_packages.size(); ++position) {
            const std::filesystem::path& package = index_packages[position];
            std::filesystem::copy_file(
                package, (position < 6 ? old_up : new_up) / "Packages" / package.filename());
        }
        // The 3 MB package would only make every one of the many runs slower.
        for (const std::filesystem::path& up : {old_up, new_up}) {
            std::filesystem::remove(up / "Packages" / "rpmirror-sample-data-1.0-1.noarch.rpm");
        }
        std::filesystem::remove(new_up / "Packages" / "rpmirror-sample-tiny-1.0-1.noarch.rpm");
        std::filesystem::remove(new_up / "Packages" / "rpmirror-sample-small-1.0-1.noarch.rpm");
        recreate_repo(old_up, "1704153600", tmp_ / "logs");
        recreate_repo(new_up, "1704240000", tmp_ / "logs");
        old_upstream_ = old_up;
        new_upstream_ = new_up;
        server_ = &serve(tmp_ / "up");
        for (const std::filesystem::path& up : {old_up, new_up}) {
            for (const auto& [name, digest] : tree_digests(up / "Packages")) {
                known_packages_[name] = digest;
            }
        }
        old_repodata_ = tree_digests(old_up / "repodata");
        new_repodata_ = tree_digests(new_up / "repodata");
        for (const auto& entry : std::filesystem::directory_iterator(new_up / "Packages")) {
            new_packages_[entry.path().filename().string()] =
                std::filesystem::file_size(entry.path());
        }
        for (const auto& entry : std::filesystem::directory_iterator(new_up / "repodata")) {
            if (entry.path().filename() != "repomd.xml") {
                new_records_[entry.path().filename().string()] =
                    std::filesystem::file_size(entry.path());
            }
        }
        repomd_size_ = std::filesystem::file_size(new_up / "repodata" / "repomd.xml");

        const CommandResult first = sync(args_for("old", template_));
        ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
        ASSERT_EQ(tree_digests(template_ / "sample", kStateFile), tree_digests(old_upstream_));
    }

    // The sync arguments for upstream revision `revision` ("old" or "new") into `mirror`.
    std::vector<std::string> args_for(const std::string& revision,
                                      const std::filesystem::path& mirror) const {
        return {"--repofrompath",
                "sample," + server_->url("/" + revision + "/"),
                "--repo",
                "sample",
                "-p",
                mirror.string(),
                "--download-metadata",
                "--delete",
                "--state-dir",
                state_dir_for(mirror).string()};
    }

    // The state directory of the runs into `mirror`: beside its box, outside the destination
    // (a read-only or full destination must not hide the mirror's own errors).
    std::filesystem::path state_dir_for(const std::filesystem::path& mirror) const {
        return tmp_ / ("state-" + mirror.parent_path().filename().string());
    }

    // Runs `rpmirror sync <args>` with RPMIRROR_FAULT=`fault` ("" = unarmed).
    CommandResult sync_with_fault(const std::string& fault, const std::vector<std::string>& args) {
        std::vector<std::string> argv{
            "env",
            "RPMIRROR_FAULT=" + fault,
            std::string("RPMIRROR_FS_FALLBACK=") + (merged_publish_ ? "1" : "0"),
            rpmirror_binary(),
            "sync",
            "-c",
            (tmp_ / "empty.conf").string(),
            "--reposdir",
            (tmp_ / "empty-reposdir").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // Replaces `box` with a copy of the mirrored OLD revision; returns the mirror directory.
    std::filesystem::path fresh_old_mirror(const std::filesystem::path& box) {
        std::filesystem::remove_all(box);
        std::filesystem::remove_all(state_dir_for(box / "mirror"));
        std::filesystem::create_directories(box);
        std::filesystem::copy(template_, box / "mirror", std::filesystem::copy_options::recursive);
        return box / "mirror";
    }

    // Scans `mirror`/sample: every file must be a verified package, a file of repodata/, a .part,
    // the state file or inside a staging directory; anything else is listed as unexpected.
    crash::MirrorScan scan(const std::filesystem::path& mirror) const {
        crash::MirrorScan result;
        for (const auto& entry : std::filesystem::directory_iterator(mirror)) {
            if (entry.path().filename() != "sample") {
                result.unexpected.push_back(entry.path().string() + ": outside the repository");
            }
        }
        const std::filesystem::path repo = mirror / "sample";
        for (auto it = std::filesystem::recursive_directory_iterator(repo);
             it != std::filesystem::recursive_directory_iterator(); ++it) {
            const std::filesystem::path relative = std::filesystem::relative(it->path(), repo);
            const std::string name = it->path().filename().string();
            const std::string top = relative.begin()->string();
            if (it->is_directory() && !it->is_symlink()) {
                if (top.starts_with(".repodata.staging-")) {
                    // Not a final name: the next run reuses complete records, then clears it.
                    for (const auto& [staged_name, digest] : tree_digests(it->path())) {
                        if (!crash::is_part_name(staged_name)) {
                            result.staged[staged_name] = digest;
                        }
                    }
                    it.disable_recursion_pending();
                } else if (top != "Packages" && top != "repodata") {
                    result.unexpected.push_back(relative.string() + ": unexpected directory");
                }
                continue;
            }
            if (!it->is_regular_file() || it->is_symlink()) {
                result.unexpected.push_back(relative.string() + ": not a regular file");
                continue;
            }
            if (top == "repodata") {
                continue;  // compared as a whole below
            }
            if (relative.parent_path() == "Packages" && crash::is_part_name(name)) {
                result.resumable_part_bytes += std::filesystem::file_size(it->path());
                continue;
            }
            if (relative.parent_path() == "Packages" && name.ends_with(".rpm")) {
                const std::string digest = hash_bytes(ChecksumType::Sha256, read_file(it->path()));
                const auto known = known_packages_.find(name);
                if (known == known_packages_.end() || known->second != digest) {
                    result.unexpected.push_back(relative.string() +
                                                ": digest matches no metadata (" + digest + ")");
                }
                result.packages[name] = digest;
                continue;
            }
            result.unexpected.push_back(relative.string() + ": unexpected file");
        }
        result.repodata = tree_digests(repo / "repodata");
        return result;
    }

    // Kills a sync of the NEW revision at every I/O operation in turn (each kind, n = 1, 2, ...
    // until a run completes); after each kill checks the mirror and completes it with a clean run.
    // Defined in test_kill_loop.cpp.
    void run_kill_loop();

    // Checks what must hold after any kill; returns the scan for further checks.
    crash::MirrorScan expect_consistent(const std::filesystem::path& box,
                                        const std::string& context) {
        for (const auto& entry : std::filesystem::directory_iterator(box)) {
            EXPECT_EQ(entry.path().filename(), "mirror") << context << ": written outside";
        }
        crash::MirrorScan result = scan(box / "mirror");
        for (const std::string& problem : result.unexpected) {
            ADD_FAILURE() << context << ": " << problem;
        }
        if (merged_publish_) {
            expect_readable_repodata(result.repodata, context);
        } else {
            EXPECT_TRUE(result.repodata == old_repodata_ || result.repodata == new_repodata_)
                << context << ": repodata/ is neither the old nor the new complete one";
        }
        return result;
    }

    // What a reader needs from repodata/ published by plain renames (RPMIRROR_FS_FALLBACK=1, as
    // on NFS and FUSE): repomd.xml is the old or the new one, every record it lists is there
    // with its digest, and every other file is a record of the old or the new revision.
    void expect_readable_repodata(const std::map<std::string, std::string>& repodata,
                                  const std::string& context) {
        const auto index = repodata.find("repomd.xml");
        ASSERT_NE(index, repodata.end()) << context << ": no repomd.xml";
        const bool is_new = index->second == new_repodata_.at("repomd.xml");
        EXPECT_TRUE(is_new || index->second == old_repodata_.at("repomd.xml"))
            << context << ": repomd.xml is neither the old nor the new one";
        for (const auto& [name, digest] : is_new ? new_repodata_ : old_repodata_) {
            const auto present = repodata.find(name);
            EXPECT_TRUE(present != repodata.end() && present->second == digest)
                << context << ": repomd.xml lists " << name << ", which is missing or wrong";
        }
        for (const auto& [name, digest] : repodata) {
            const auto old_record = old_repodata_.find(name);
            const auto new_record = new_repodata_.find(name);
            EXPECT_TRUE((old_record != old_repodata_.end() && old_record->second == digest) ||
                        (new_record != new_repodata_.end() && new_record->second == digest))
                << context << ": " << name << " is a record of neither revision";
        }
    }

    // Checks that the mirror in `box` is the NEW revision, complete: its packages exactly, and
    // its repodata/ (published by plain renames, repodata/ may also keep the records of the
    // index it replaced, for readers of that one).
    void expect_new_revision(const std::filesystem::path& box, const std::string& context) {
        const std::filesystem::path repo = box / "mirror" / "sample";
        EXPECT_EQ(tree_digests(repo / "Packages"), tree_digests(new_upstream_ / "Packages"))
            << context;
        const auto repodata = tree_digests(repo / "repodata");
        if (!merged_publish_) {
            EXPECT_EQ(repodata, new_repodata_) << context;
            EXPECT_EQ(tree_digests(repo), tree_digests(new_upstream_)) << context;
            return;
        }
        EXPECT_EQ(repodata.at("repomd.xml"), new_repodata_.at("repomd.xml")) << context;
        expect_readable_repodata(repodata, context);
    }

    // The bytes a completing run must still fetch after `scan`: repomd.xml (always asked for),
    // every NEW package not present and verified, every NEW record neither in repodata/ nor
    // complete in a staging directory.
    std::uint64_t bytes_remaining(const crash::MirrorScan& scan) const {
        std::uint64_t remaining = repomd_size_;
        for (const auto& [name, size] : new_packages_) {
            const auto present = scan.packages.find(name);
            if (present == scan.packages.end() || present->second != known_packages_.at(name)) {
                remaining += size;
            }
        }
        for (const auto& [name, size] : new_records_) {
            const std::string& digest = new_repodata_.at(name);
            const auto live = scan.repodata.find(name);
            const auto staged = scan.staged.find(name);
            if ((live == scan.repodata.end() || live->second != digest) &&
                (staged == scan.staged.end() || staged->second != digest)) {
                remaining += size;
            }
        }
        return remaining;
    }

    // Returns the body bytes nginx sent with 200/206 answers after its first `skip` log entries.
    // A sentinel request is made first, so every earlier request is logged when it is read.
    std::uint64_t bytes_served_since(std::size_t skip) {
        const std::string sentinel = "/.sentinel-bytes-" + std::to_string(++sentinels_);
        (void)fetch_document(server_->url(sentinel), DownloadOptions{});
        for (std::size_t wanted = skip + 1;; ++wanted) {
            const auto entries = server_->access_log(wanted);
            if (entries.size() < wanted) {
                ADD_FAILURE() << "nginx never logged " << sentinel;
                return 0;
            }
            std::uint64_t bytes = 0;
            for (std::size_t index = skip; index < entries.size(); ++index) {
                if (entries[index].value("uri", "") == sentinel) {
                    return bytes;
                }
                const int status = entries[index].value("status", 0);
                if (status == 200 || status == 206) {
                    bytes += entries[index].value("bytes", std::uint64_t{0});
                }
            }
            wanted = entries.size();
        }
    }

    // Runs an unarmed sync into `box`/mirror and checks that it completes the mirror by fetching
    // no more than `remaining` - resumable bytes. Returns the bytes nginx served.
    std::uint64_t expect_completes(const std::filesystem::path& box,
                                   const crash::MirrorScan& before, const std::string& context) {
        const std::uint64_t remaining = bytes_remaining(before);
        const std::size_t log_before = log_size(*server_);
        const CommandResult rerun = sync_with_fault("", args_for("new", box / "mirror"));
        EXPECT_EQ(rerun.exit_code, 0) << context << "\n" << rerun.out << rerun.err;
        expect_new_revision(box, context);
        const std::uint64_t served = bytes_served_since(log_before);
        EXPECT_LE(served, remaining - std::min(remaining, before.resumable_part_bytes))
            << context << ": resumed rather than re-downloaded (" << before.resumable_part_bytes
            << " bytes were in .part files)";
        return served;
    }

    std::filesystem::path template_ = tmp_ / "template";
    std::filesystem::path old_upstream_;
    std::filesystem::path new_upstream_;
    NginxServer* server_ = nullptr;
    std::map<std::string, std::string> known_packages_;  // name -> sha256, old and new
    std::map<std::string, std::uint64_t> new_packages_;  // name -> size, NEW revision
    std::map<std::string, std::string> old_repodata_;
    std::map<std::string, std::string> new_repodata_;
    std::map<std::string, std::uint64_t> new_records_;  // NEW repodata/ records -> size
    std::uint64_t repomd_size_ = 0;
    // Runs publish with plain renames (RPMIRROR_FS_FALLBACK=1), as on NFS, CIFS and FUSE.
    bool merged_publish_ = false;
};

}  // namespace rpmirror::test
