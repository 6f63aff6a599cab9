// Crash safety, proven: `rpmirror sync --download-metadata --delete` from an OLD mirrored
// revision to a NEW upstream one, killed with SIGKILL at every create, write, sync, rename and
// unlink it makes (the I/O fault seam, src/fs/fault.hpp) and in the middle of transfers (the
// fault server trickling a body). After each kill: every file under a final name verified,
// repodata/ the old or the new complete one, nothing outside the destination; then an unarmed run
// completes the mirror, fetching no more than what remained minus what .part files held.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/crash/crash_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

using CrashSafety = CrashFixture;

constexpr std::string_view kKillLine = "rpmirror-fault: kill before ";

// The phase of the sync a kill line ("rpmirror-fault: kill before <op> #<n>: <subject>") hit.
std::string phase_of(const std::string& stderr_text) {
    const std::size_t start = stderr_text.find(kKillLine);
    if (start == std::string::npos) {
        return "";
    }
    const std::string line = stderr_text.substr(
        start + kKillLine.size(), stderr_text.find('\n', start) - start - kKillLine.size());
    const std::string op = line.substr(0, line.find(' '));
    const std::string subject = line.substr(line.find(": ") + 2);
    if (op == "unlink") {
        return "delete";
    }
    if (subject.ends_with(".lock")) {
        return "lock";  // the run lock's file in the state directory, before anything else
    }
    if (op == "sync" || subject.find("repomd.xml") != std::string::npos ||
        subject.find("/repos/") != std::string::npos || subject == "repodata") {
        return "publication";
    }
    if (subject.find(".repodata.staging-") != std::string::npos) {
        return "metadata";
    }
    if (subject.find(".rpm") != std::string::npos) {
        return "download";
    }
    return op == "rename" ? "metadata" : "other";  // records are renamed by their leaf name
}

TEST_F(CrashSafety, SigkillAtEveryIoOperationLeavesAVerifiedMirrorThatTheNextRunCompletes) {
    run_kill_loop();
}

// The same over the publication NFS, CIFS and FUSE get (no RENAME_EXCHANGE: plain renames).
TEST_F(CrashSafety, SigkillAtEveryIoOperationOfThePlainRenamePublishKeepsEveryListedRecord) {
    merged_publish_ = true;
    run_kill_loop();
}

}  // namespace

void CrashFixture::run_kill_loop() {
    build_revisions();
    const fs::path box = tmp_ / "box";
    std::map<std::string, int> kills_per_phase;
    std::map<std::string, int> kills_per_op;
    std::set<std::string> distinct_points;
    int runs_resuming_part_files = 0;
    int runs_finishing_first = 0;
    for (const std::string op : {"create", "write", "sync", "rename", "unlink"}) {
        for (int call = 1;; ++call) {
            const std::string fault = "kill:" + op + ":" + std::to_string(call);
            fresh_old_mirror(box);
            const CommandResult killed = sync_with_fault(fault, args_for("new", box / "mirror"));
            if (killed.exit_code == 0) {
                // Fewer than `call` operations of this kind: the run completed unharmed.
                EXPECT_EQ(killed.err.find(kKillLine), std::string::npos) << fault;
                expect_new_revision(box, fault);
                ++runs_finishing_first;
                break;
            }
            ASSERT_EQ(killed.exit_code, 128 + SIGKILL) << fault << "\n" << killed.out << killed.err;
            const std::string phase = phase_of(killed.err);
            ASSERT_FALSE(phase.empty()) << fault << ": no kill line\n" << killed.err;
            distinct_points.insert(fault);
            ++kills_per_phase[phase];
            ++kills_per_op[op];

            const crash::MirrorScan after = expect_consistent(box, fault + " (" + phase + ")");
            if (after.resumable_part_bytes > 0) {
                ++runs_resuming_part_files;
            }
            expect_completes(box, after, fault + " (" + phase + ")");
            if (HasFailure()) {
                return;  // one broken point explains itself; the rest would repeat it
            }
        }
    }
    std::string figures;
    for (const auto& [phase, count] : kills_per_phase) {
        figures += " " + phase + "=" + std::to_string(count);
    }
    figures += " ;";
    for (const auto& [op, count] : kills_per_op) {
        figures += " " + op + "=" + std::to_string(count);
    }
    std::cout << "[ figures  ] SIGKILL points survived: " << distinct_points.size() << " ("
              << figures << " ); runs resuming .part files: " << runs_resuming_part_files << '\n';
    EXPECT_GE(distinct_points.size(), 50U);
    for (const std::string phase : {"metadata", "download", "publication", "delete"}) {
        EXPECT_GE(kills_per_phase[phase], 2) << phase;
    }
    EXPECT_EQ(runs_finishing_first, 5) << "every kind of operation was exhausted";
}

namespace {

TEST_F(CrashSafety, RunsKilledOneAfterTheOtherNeverCorruptTheMirrorAndARunCompletesIt) {
    build_revisions();
    const fs::path box = tmp_ / "box";
    fresh_old_mirror(box);
    // Each run starts from what the killed ones before it left (staging directories, .part
    // files, a half delete) and dies a little later than the one before: at its (n+1)-th rename,
    // or at its (2n+1)-th write.
    int kills = 0;
    for (;; ++kills) {
        ASSERT_LT(kills, 60) << "never completed";
        const std::string fault = kills % 2 == 0 ? "kill:rename:" + std::to_string(kills / 2 + 2)
                                                 : "kill:write:" + std::to_string(kills + 2);
        const CommandResult run = sync_with_fault(fault, args_for("new", box / "mirror"));
        if (run.exit_code == 0) {
            break;
        }
        ASSERT_EQ(run.exit_code, 128 + SIGKILL) << run.out << run.err;
        expect_consistent(box, "kill #" + std::to_string(kills + 1) + " " + fault);
    }
    EXPECT_GE(kills, 5);
    EXPECT_EQ(tree_digests(box / "mirror" / "sample", kStateFile), tree_digests(new_upstream_));
}

// SIGKILL while the fault server is in the middle of sending `trickled` (its body 512 bytes at a
// time), once the .part file holds some of it; then an unarmed run against nginx completes.
class CrashMidTransfer : public CrashFixture {
  protected:
    void kill_mid_transfer(const std::string& trickled, bool is_metadata) {
        const fs::path box = tmp_ / "box";
        const fs::path mirror = fresh_old_mirror(box);
        FaultServer trickling(tmp_ / "up", {{"paths", {{trickled, {{{"trickle", {512, 0.05}}}}}}}},
                              tmp_.path());
        std::vector<std::string> argv{rpmirror_binary(),
                                      "sync",
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string(),
                                      "--repofrompath",
                                      "sample," + trickling.url("/new/"),
                                      "--repo",
                                      "sample",
                                      "-p",
                                      mirror.string(),
                                      "--download-metadata",
                                      "--delete"};
        const std::string part_name = "." + fs::path(trickled).filename().string() + ".part";
        const auto part_bytes = [&] {
            std::error_code ignored;
            for (auto it = fs::recursive_directory_iterator(mirror, ignored);
                 it != fs::recursive_directory_iterator(); it.increment(ignored)) {
                if (it->path().filename() == part_name) {
                    return static_cast<std::uint64_t>(fs::file_size(it->path(), ignored));
                }
            }
            return std::uint64_t{0};
        };
        RunningCommand running(argv, tmp_ / "killed");
        ASSERT_TRUE(wait_until([&] {
            return !trickling.requests_for(trickled).empty() && part_bytes() > 0;
        })) << running.err();
        running.signal(SIGKILL);
        ASSERT_EQ(running.wait(), 128 + SIGKILL);
        expect_no_sanitizer_report(running.err());

        const crash::MirrorScan after = expect_consistent(box, "killed during " + trickled);
        EXPECT_EQ(after.repodata, old_repodata_) << "nothing published mid-transfer";
        if (!is_metadata) {
            EXPECT_GT(after.resumable_part_bytes, 0U);
        }
        expect_completes(box, after, "killed during " + trickled);
    }
};

TEST_F(CrashMidTransfer, SigkillInTheMiddleOfAPackageTransferIsResumedByTheNextRun) {
    build_revisions();
    const std::string package = "/new/Packages/rpmirror-idx-noarch-1.0-1.src.rpm";
    kill_mid_transfer(package, false);
    bool resumed = false;
    for (const auto& entry : server_->access_log()) {
        if (entry.value("uri", "") == package) {
            const std::string range = entry.value("range", "");
            EXPECT_TRUE(range.starts_with("bytes=") && range != "bytes=0-") << range;
            resumed = true;
        }
    }
    EXPECT_TRUE(resumed) << "the rest of the package was asked for";
}

TEST_F(CrashMidTransfer, SigkillInTheMiddleOfAMetadataRecordKeepsTheOldMetadata) {
    build_revisions();
    std::string primary;
    for (const auto& entry : fs::directory_iterator(new_upstream_ / "repodata")) {
        if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
            primary = "/new/repodata/" + entry.path().filename().string();
        }
    }
    ASSERT_FALSE(primary.empty());
    kill_mid_transfer(primary, true);
}

}  // namespace
}  // namespace rpmirror::test
