// Trees that overlap (jobs/overlap.hpp), end to end with nginx, real repositories and the
// real binary: a snapshot directory inside the repository, nested job destinations (on disk,
// through a symlink, through a bind mount, as S3 prefixes), each refused before anything is
// written; the
// --delete walk leaving alone what such a layout made by an older rpmirror holds; and the run
// lock shared by two spellings of one directory.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncOverlap : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    }

    // The reproduction's command line: the sample repository as `small` into `repo_dir` itself.
    std::vector<std::string> small_args(const std::string& url, const fs::path& repo_dir,
                                        const std::vector<std::string>& extra) const {
        std::vector<std::string> args{
            "--repofrompath", "small," + url,       "--repo", "small", "-p", repo_dir.string(),
            "--norepopath",   "--download-metadata"};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }

    // Writes rpmirror.conf and runs `rpmirror sync --config-file` on it (job mode takes no dnf
    // isolation options: its jobs have baseurls), prefixed by `wrapper` (e.g. unshare).
    CommandResult run_jobs(const std::string& config_text,
                           const std::vector<std::string>& wrapper = {}) {
        config_ = TempDir::write_at(tmp_ / "etc" / "rpmirror.conf", config_text);
        std::vector<std::string> argv = wrapper;
        for (const std::string& arg : rpmirror_sync_argv({"--config-file", config_.string()})) {
            argv.push_back(arg);
        }
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // "<config>:<line>".
    std::string at(int line) const { return config_.string() + ":" + std::to_string(line); }

    // The job lines `rpmirror sync --config-file` prints when jobs `a` and `b` are refused for
    // `inner` (b's, at line 7) inside `outer` (a's, at line 3).
    void expect_both_refused(const CommandResult& result, const std::string& inner,
                             const std::string& outer, const std::string& how = "") {
        EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
        const std::string overlap = inner + " (repository directory of job 'b', " + at(7) +
                                    ") is " + (inner.starts_with("s3://") ? "under " : "inside ") +
                                    outer + " (repository directory of job 'a', " + at(3) + ")" +
                                    how +
                                    "; refused: the repository's --delete removes every "
                                    "package beneath its directory that its own metadata "
                                    "does not list";
        EXPECT_NE(result.err.find("a: " + at(3) + ": job 'a': destination: " + overlap + "\n"),
                  std::string::npos)
            << result.err;
        EXPECT_NE(result.err.find("b: " + at(7) + ": job 'b': destination: " + overlap + "\n"),
                  std::string::npos)
            << result.err;
        EXPECT_NE(result.err.find("a: FAILED: not run"), std::string::npos) << result.err;
        EXPECT_NE(result.err.find("b: FAILED: not run"), std::string::npos) << result.err;
    }

    // Two jobs: `a` (line 1; its destination at line 3, delete = 1) and `b` (line 5; its
    // destination at line 7).
    static std::string two_jobs(const std::string& url_a, const std::string& destination_a,
                                const std::string& url_b, const std::string& destination_b,
                                const std::string& main = "") {
        return main + "[a]\nbaseurl = " + url_a + "\ndestination = " + destination_a +
               "\ndelete = 1\n[b]\nbaseurl = " + url_b + "\ndestination = " + destination_b +
               "\ndownload-metadata = 1\n";
    }

    // The file names of the packages under `dir` (recursively).
    static std::set<std::string> rpms_under(const fs::path& dir) {
        std::set<std::string> names;
        for (const auto& entry : fs::recursive_directory_iterator(dir)) {
            if (entry.path().extension() == ".rpm") {
                names.insert(fs::relative(entry.path(), dir).string());
            }
        }
        return names;
    }

    fs::path upstream_;
    fs::path config_;
};

// The first reproduction: `--snapshot-dir` the repository directory itself (with --norepopath).
// It used to sync and keep the snapshot under D/small/snapshots/, which the next --delete wiped.
TEST_F(SyncOverlap, ASnapshotDirThatIsTheRepositoryIsRefusedBeforeAnythingIsWritten) {
    NginxServer& server = serve(upstream_);
    const fs::path d = tmp_ / "D";
    const fs::path repo_dir = d / "small";
    for (const std::string& spelling :
         {repo_dir.string(), repo_dir.string() + "/", (d / "." / "small").string()}) {
        const CommandResult refused = sync(small_args(
            server.url("/"), repo_dir, {"--snapshot=s1", "--snapshot-dir", spelling, "--delete"}));
        EXPECT_EQ(refused.exit_code, 2) << spelling << "\n" << refused.out << refused.err;
        EXPECT_NE(refused.err.find("rpmirror: " + (fs::path(spelling) / "snapshots").string() +
                                   " (snapshot tree of --snapshot, --snapshot-dir " + spelling +
                                   ") is inside " + repo_dir.string() +
                                   " (repository directory of repository 'small', -p " +
                                   repo_dir.string() +
                                   " --norepopath); refused: the repository's --delete removes "
                                   "every package beneath its directory"),
                  std::string::npos)
            << refused.err;
        EXPECT_FALSE(fs::exists(d)) << "nothing written";
    }
    // Without --snapshot-dir the snapshots would go under -p, the repository itself: refused the
    // same way, before the sync (it used to sync first and then fail the snapshot).
    const CommandResult no_dir = sync(small_args(server.url("/"), repo_dir, {"--snapshot=s1"}));
    EXPECT_EQ(no_dir.exit_code, 2) << no_dir.out << no_dir.err;
    EXPECT_NE(no_dir.err.find("(snapshot tree of --snapshot, no --snapshot-dir: under -p " +
                              repo_dir.string() + ") is inside " + repo_dir.string()),
              std::string::npos)
        << no_dir.err;
    // Through a symlink: the message shows where both resolve.
    fs::create_directories(d / "real");
    fs::create_directory_symlink("real", d / "link");
    const CommandResult linked = sync(
        small_args(server.url("/"), d / "real" / "small",
                   {"--snapshot=s1", "--snapshot-dir", (d / "link" / "small" / "kept").string()}));
    EXPECT_EQ(linked.exit_code, 2) << linked.out << linked.err;
    EXPECT_NE(linked.err.find("(they resolve to " + (d / "real/small/kept/snapshots").string() +
                              " and " + (d / "real/small").string() + ")"),
              std::string::npos)
        << linked.err;
    EXPECT_FALSE(fs::exists(d / "real" / "small"));
    EXPECT_TRUE(uris_since(server, 0).empty()) << "nothing fetched";
}

// Defence in depth: a snapshot an older rpmirror kept inside the repository survives --delete,
// which still removes the repository's own unlisted packages.
TEST_F(SyncOverlap, DeleteLeavesASnapshotKeptInsideTheRepositoryAndRemovesItsOwnUnlisted) {
    NginxServer& server = serve(upstream_);
    const fs::path repo_dir = tmp_ / "D" / "small";
    const CommandResult snapshotted =
        sync(small_args(server.url("/"), repo_dir,
                        {"--snapshot=s1", "--snapshot-dir", (tmp_ / "D/base").string()}));
    ASSERT_EQ(snapshotted.exit_code, 0) << snapshotted.out << snapshotted.err;
    // Where the older rpmirror let it be (the same tree: hard links of the mirror's packages).
    fs::rename(tmp_ / "D/base/snapshots", repo_dir / "snapshots");
    const fs::path snapshot = repo_dir / "snapshots" / "small" / "s1";
    ASSERT_EQ(rpms_under(snapshot).size(), 5U);
    // And one being built when that run was killed (no repomd.xml yet).
    const fs::path building = repo_dir / "snapshots" / "small" / ".s2.creating-AbC123" / "Packages";
    fs::create_directories(building);
    fs::create_hard_link(repo_dir / "Packages" / kData, building / kData);
    const auto snapshot_before = tree_digests(snapshot);
    // Upstream drops a package; a stray package in a plain subdirectory is the mirror's own.
    fs::remove(upstream_ / "Packages" / kMedium);
    recreate_repo(upstream_, "1704240000", tmp_ / "logs");
    TempDir::write_at(repo_dir / "extra" / "stray-1.0-1.noarch.rpm", "not listed");

    // The reproduction's second command.
    const CommandResult deleted =
        sync(small_args(server.url("/"), repo_dir, {"--delete", "--no-cache"}));
    ASSERT_EQ(deleted.exit_code, 0) << deleted.out << deleted.err;
    EXPECT_EQ(tree_digests(snapshot), snapshot_before) << "every package and record of s1 kept";
    EXPECT_TRUE(fs::exists(building / kData));
    EXPECT_FALSE(fs::exists(repo_dir / "Packages" / kMedium)) << "--delete still deletes";
    EXPECT_FALSE(fs::exists(repo_dir / "extra" / "stray-1.0-1.noarch.rpm"));
    EXPECT_EQ(package_digests(repo_dir), package_digests(upstream_));
    EXPECT_NE(deleted.out.find("deleted 2"), std::string::npos) << deleted.out;
}

// The second reproduction: job a (delete = 1) at D/m, job b at D/m/updates. Both used to run, and
// a's --delete removed every package of b.
TEST_F(SyncOverlap, NestedJobDestinationsAreRefusedAtLoadNamingBothJobsAndLines) {
    NginxServer& sample = serve(upstream_);
    NginxServer& versions = serve(test_repo("versions-repo"));
    const fs::path d = tmp_ / "D";
    const CommandResult refused = run_jobs(two_jobs(
        sample.url("/"), (d / "m").string(), versions.url("/"), (d / "m" / "updates").string()));
    expect_both_refused(refused, (d / "m/updates").string(), (d / "m").string());
    EXPECT_FALSE(fs::exists(d));
    EXPECT_TRUE(uris_since(sample, 0).empty());
    EXPECT_TRUE(uris_since(versions, 0).empty());

    // Equal, spelled with ".." and a trailing slash: the same refusal, as the same directory.
    fs::create_directories(d / "other");
    const CommandResult equal =
        run_jobs(two_jobs(sample.url("/"), (d / "m").string(), versions.url("/"),
                          (d / "other" / ".." / "m" / "").string()));
    EXPECT_EQ(equal.exit_code, 1) << equal.out << equal.err;
    EXPECT_NE(equal.err.find("b: " + at(7) + ": job 'b': destination: " + (d / "m").string() +
                             " (repository directory of job 'b', " + at(7) +
                             ") is the same directory as " + (d / "m").string() +
                             " (repository directory of job 'a', " + at(3) +
                             "); refused: one tree cannot have two owners"),
              std::string::npos)
        << equal.err;
    EXPECT_FALSE(fs::exists(d / "m"));
}

// The layout the second reproduction left (b's mirror inside a's directory, made before the
// refusal): a's --delete no longer enters it.
TEST_F(SyncOverlap, AJobsDeleteLeavesARepositoryNestedInItsDirectory) {
    NginxServer& sample = serve(upstream_);
    const fs::path versions_repo = test_repo("versions-repo");
    NginxServer& versions = serve(versions_repo);
    const fs::path m = tmp_ / "D" / "m";
    const CommandResult updates = sync({"--repofrompath", "updates," + versions.url("/"), "--repo",
                                        "updates", "-p", m.string(), "--download-metadata"});
    ASSERT_EQ(updates.exit_code, 0) << updates.out << updates.err;
    ASSERT_EQ(rpms_under(m / "updates"), rpms_under(versions_repo));
    // A mirror of packages only (dnf reposync's default: no repodata/ to tell it by), synced by
    // another command line into a directory below: the state directory knows it.
    const CommandResult packages_only =
        sync({"--repofrompath", "pkgs," + versions.url("/"), "--repo", "pkgs", "-p",
              (m / "nested").string(), "--norepopath"});
    ASSERT_EQ(packages_only.exit_code, 0) << packages_only.out << packages_only.err;
    ASSERT_EQ(rpms_under(m / "nested"), rpms_under(versions_repo));

    const CommandResult a =
        run_jobs("[a]\nbaseurl = " + sample.url("/") + "\ndestination = " + m.string() +
                 "\ndelete = 1\ndownload-metadata = 1\n");
    ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
    EXPECT_EQ(a.out.find("a: deleted"), std::string::npos) << a.out;
    EXPECT_EQ(package_digests(m / "updates"), package_digests(versions_repo));
    EXPECT_EQ(package_digests(m), package_digests(upstream_));
    EXPECT_EQ(rpms_under(m / "nested"), rpms_under(versions_repo));
    // The check: verify finds b's mirror complete.
    const CommandResult verified = run_to_end(
        {rpmirror_binary(), "verify", "-p", m.string(), "--repo", "updates", "-c",
         (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string(),
         "--repofrompath", "updates," + versions.url("/")},
        tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
}

TEST_F(SyncOverlap, ANestedDestinationThroughASymlinkIsRefused) {
    const fs::path d = tmp_ / "D";
    fs::create_directories(d / "real" / "m");
    fs::create_directory_symlink("real", d / "link");
    const CommandResult refused =
        run_jobs(two_jobs("http://127.0.0.1:1/a/", (d / "real" / "m").string(),
                          "http://127.0.0.1:1/b/", (d / "link" / "m" / "updates").string()));
    expect_both_refused(refused, (d / "link/m/updates").string(), (d / "real/m").string(),
                        " (they resolve to " + (d / "real/m/updates").string() + " and " +
                            (d / "real/m").string() + ")");
    EXPECT_FALSE(fs::exists(d / "real" / "m" / "updates"));
}

// A bind mount in a private mount namespace of a user namespace: no root needed. (Where the host
// forbids unprivileged user namespaces, the test says so and is skipped.)
TEST_F(SyncOverlap, ANestedDestinationThroughABindMountIsRefused) {
    const CommandResult probe =
        run_to_end({"unshare", "--user", "--map-root-user", "--mount", "true"}, tmp_ / "logs");
    if (probe.exit_code != 0) {
        GTEST_SKIP() << "unshare --user --mount is not allowed here: " << probe.err;
    }
    const fs::path d = tmp_ / "D";
    fs::create_directories(d / "m");
    fs::create_directories(d / "bind");
    const CommandResult refused =
        run_jobs(two_jobs("http://127.0.0.1:1/a/", (d / "m").string(), "http://127.0.0.1:1/b/",
                          (d / "bind" / "updates").string()),
                 {"unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                  "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"", "sh", (d / "m").string(),
                  (d / "bind").string()});
    expect_both_refused(refused, (d / "bind/updates").string(), (d / "m").string(),
                        " (" + (d / "bind/updates").string() + " and " + (d / "m").string() +
                            " are one directory by device and inode: a bind mount)");
    EXPECT_TRUE(fs::is_empty(d / "m")) << "the mount was private and nothing was written";
}

// Refused at load, so no job reaches the store (the endpoint is a closed port).
TEST_F(SyncOverlap, NestedS3PrefixesInAJobsConfigurationAreRefusedAtLoad) {
    const CommandResult refused =
        run_jobs(two_jobs("http://127.0.0.1:1/a/", "s3://mirror/m", "http://127.0.0.1:1/b/",
                          "s3://mirror/m/updates/", "[main]\ns3-endpoint = http://127.0.0.1:1\n"),
                 {"env", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test"});
    // (with [main] first, a's destination is at line 5 and b's at line 9)
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    const std::string overlap = "s3://mirror/m/updates/ (repository directory of job 'b', " +
                                at(9) +
                                ") is under s3://mirror/m (repository directory of job "
                                "'a', " +
                                at(5) + "); refused: ";
    EXPECT_NE(refused.err.find("a: " + at(5) + ": job 'a': destination: " + overlap),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("b: " + at(9) + ": job 'b': destination: " + overlap),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("a: FAILED: not run"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("b: FAILED: not run"), std::string::npos) << refused.err;
}

// Two runs through two spellings of one directory (the real path, then a symlink to its
// parent): the second is refused while the first holds the lock, and fetches nothing.
TEST_F(SyncOverlap, TwoRunsThroughTwoSpellingsOfOneDirectoryShareTheRunLock) {
    // The big package trickles in (64 KiB per 0.1 s) so that the first run is still going.
    const std::string data_path = "/Packages/" + kData;
    FaultServer server(
        upstream_,
        {{"paths", {{data_path, {{{"trickle", {65536, 0.1}}}, nlohmann::json::object()}}}}},
        tmp_.path());
    const fs::path real = tmp_ / "D" / "real";
    fs::create_directories(real);
    fs::create_directory_symlink("real", tmp_ / "D" / "link");
    const auto args = [&](const fs::path& download_path) {
        return std::vector<std::string>{"-c",
                                        (tmp_ / "empty.conf").string(),
                                        "--reposdir",
                                        (tmp_ / "empty-reposdir").string(),
                                        "--repofrompath",
                                        "sample," + server.url("/"),
                                        "--repo",
                                        "sample",
                                        "-p",
                                        download_path.string(),
                                        "--download-metadata"};
    };
    RunningCommand first(rpmirror_sync_argv(args(real)), tmp_ / "first");
    ASSERT_TRUE(wait_until([&] { return !server.requests_for(data_path).empty(); })) << first.err();
    const std::size_t repomd_requests = server.requests_for("/repodata/repomd.xml").size();

    const CommandResult second =
        run_to_end(rpmirror_sync_argv(args(tmp_ / "D" / "link")), tmp_ / "logs");
    EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
    EXPECT_NE(
        second.err.find("repository directory " + (tmp_ / "D/link/sample").string() +
                        " is being synced by another rpmirror (pid " + std::to_string(first.pid()) +
                        ", as " + (real / "sample").string() + ")"),
        std::string::npos)
        << second.err;
    EXPECT_EQ(server.requests_for("/repodata/repomd.xml").size(), repomd_requests)
        << "the refused run fetched nothing";
    first.signal(SIGINT);
    EXPECT_EQ(first.wait(), 130) << first.out() << first.err();
}

}  // namespace
}  // namespace rpmirror::test
