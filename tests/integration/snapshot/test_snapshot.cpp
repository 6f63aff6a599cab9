// `rpmirror snapshot` and `sync --snapshot`, end to end: real repositories (rpmbuild +
// createrepo_c) served by nginx, the real binary, dnf reading each snapshot, link counts and `du`
// for the space a snapshot costs, a reader loop across publish switches, and a snapshot
// directory on another filesystem (a tmpfs mount) where hard links are refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>

#include <atomic>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "fs/state.hpp"
#include "integration/crash/crash_fixture.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/snapshot.hpp"
#include "support/source_tree.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

struct stat stat_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
    return st;
}

class Snapshot : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    }

    // `rpmirror sync` of the upstream into mirror_ (metadata, --delete), plus `extra`.
    CommandResult sync_mirror(const std::vector<std::string>& extra = {}) {
        if (server_ == nullptr) {
            server_ = &serve(upstream_);
        }
        std::vector<std::string> args{
            "--repofrompath", "sample," + server_->url("/"), "--repo",  "sample", "-p",
            mirror_.string(), "--download-metadata",         "--delete"};
        args.insert(args.end(), extra.begin(), extra.end());
        return sync(args);
    }

    // `rpmirror snapshot <verb> --repo sample -p mirror_ <args>`.
    CommandResult snapshot(const std::string& verb, const std::vector<std::string>& args = {}) {
        std::vector<std::string> argv{rpmirror_binary(), "snapshot", verb, "--repo", "sample", "-p",
                                      mirror_.string()};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    fs::path snapshot_dir(const std::string& name) const {
        return mirror_ / "snapshots" / "sample" / name;
    }

    // Moves `package` out of the upstream (kept aside) or back, and regenerates its metadata.
    void take_out(const std::string& package, const std::string& revision) {
        fs::rename(upstream_ / "Packages" / package, tmp_ / package);
        recreate_repo(upstream_, revision, tmp_ / "logs");
    }
    void put_back(const std::string& package, const std::string& revision) {
        fs::rename(tmp_ / package, upstream_ / "Packages" / package);
        recreate_repo(upstream_, revision, tmp_ / "logs");
    }

    // The names dnf lists in the repository at `dir`.
    std::vector<std::string> dnf_names(const fs::path& dir) {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)));
        argv.insert(argv.end(), {"--repofrompath=s,file://" + dir.string(), "--repo=s", "repoquery",
                                 "-a", "--qf", "%{name}"});
        const CommandResult query = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.err;
        return lines_of(query.out);
    }

    // Rebuilds the tiny package with another build time: the same file name, other bytes.
    void rebuild_tiny(const std::string& epoch) {
        const fs::path out = tmp_ / ("rebuilt-" + epoch);
        run_checked(
            {"env", "SOURCE_DATE_EPOCH=" + epoch, "rpmbuild", "--quiet", "-bb", "--define",
             "_rpmdir " + out.string(), "--define",
             "_topdir " + (tmp_ / ("rpmbuild-" + epoch)).string(), "--define",
             "use_source_date_epoch_as_buildtime 1",
             (source_root() / "tests" / "data" / "specs" / "rpmirror-sample-tiny.spec").string()},
            tmp_ / "logs");
        fs::copy_file(out / "noarch" / kTiny, upstream_ / "Packages" / kTiny,
                      fs::copy_options::overwrite_existing);
    }

    fs::path upstream_;
    fs::path mirror_ = tmp_ / "mirror";
    NginxServer* server_ = nullptr;
    int dnf_runs_ = 0;
};

// Two upstream revisions, a snapshot of each: the second costs only the package that changed
// (and its metadata), dnf reads each, and removing the first frees only what nothing else links.
TEST_F(Snapshot, TheSecondSnapshotCostsOnlyTheChangedPackagesAndDnfReadsEach) {
    take_out(kMedium, "1704153600");
    ASSERT_EQ(sync_mirror().exit_code, 0);
    const CommandResult first = snapshot("create", {"--name", "r1"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_NE(first.out.find("sample: snapshot r1: 4 packages"), std::string::npos) << first.out;

    put_back(kMedium, "1704240000");
    fs::rename(upstream_ / "Packages" / kData, tmp_ / kData);
    recreate_repo(upstream_, "1704240000", tmp_ / "logs");
    ASSERT_EQ(sync_mirror().exit_code, 0);
    const CommandResult second = snapshot("create", {"--name", "r2"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;

    // Each snapshot is the repository as it was: its packages and its metadata.
    EXPECT_EQ(package_digests(snapshot_dir("r2")), package_digests(upstream_));
    EXPECT_EQ(tree_digests(snapshot_dir("r2") / "repodata"), tree_digests(upstream_ / "repodata"));
    EXPECT_TRUE(fs::exists(snapshot_dir("r1") / "Packages" / kData));
    EXPECT_FALSE(fs::exists(snapshot_dir("r1") / "Packages" / kMedium));
    EXPECT_EQ(dnf_names(snapshot_dir("r1")),
              (std::vector<std::string>{"rpmirror-sample-data", "rpmirror-sample-docs",
                                        "rpmirror-sample-small", "rpmirror-sample-tiny"}));
    EXPECT_EQ(dnf_names(snapshot_dir("r2")),
              (std::vector<std::string>{"rpmirror-sample-docs", "rpmirror-sample-medium",
                                        "rpmirror-sample-small", "rpmirror-sample-tiny"}));

    // Space: the packages r2 shares with r1 are the same inodes; du (which counts a hard-linked
    // file once) charges r2 with the new package and its metadata only.
    std::uint64_t expected_second = 0;
    std::set<ino_t> first_inodes;
    for (const auto& entry : fs::recursive_directory_iterator(snapshot_dir("r1"))) {
        if (entry.is_regular_file()) {
            first_inodes.insert(stat_of(entry.path()).st_ino);
        }
    }
    std::vector<std::string> new_packages;
    for (const auto& entry : fs::recursive_directory_iterator(snapshot_dir("r2"))) {
        if (!entry.is_regular_file() || first_inodes.contains(stat_of(entry.path()).st_ino)) {
            continue;
        }
        expected_second += stat_of(entry.path()).st_size;
        if (entry.path().extension() == ".rpm") {
            new_packages.push_back(entry.path().filename().string());
        }
    }
    EXPECT_EQ(new_packages, std::vector<std::string>{kMedium});
    const CommandResult du = run_to_end(
        {"du", "-sb", snapshot_dir("r1").string(), snapshot_dir("r2").string()}, tmp_ / "logs");
    ASSERT_EQ(du.exit_code, 0) << du.err;
    const std::vector<std::string> du_lines = lines_of(du.out);
    ASSERT_EQ(du_lines.size(), 2U) << du.out;
    // du -b also counts the directories' own sizes (4096 each: r2/, Packages/, repodata/).
    EXPECT_EQ(std::stoull(du_lines[1]), expected_second + 3 * 4096) << du.out;
    std::cout << "[ figures  ] du -sb r1 r2: " << du_lines[0] << " | " << du_lines[1]
              << " (medium package " << fs::file_size(snapshot_dir("r2") / "Packages" / kMedium)
              << " bytes)\n";

    // list --json: r1 alone holds the package the live mirror deleted.
    const CommandResult listed = snapshot("list", {"--json"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    const auto json = nlohmann::json::parse(listed.out);
    ASSERT_EQ(json["snapshots"].size(), 2U) << listed.out;
    EXPECT_EQ(json["snapshots"][0]["name"], "r1");
    EXPECT_EQ(json["snapshots"][1]["name"], "r2");
    EXPECT_EQ(json["snapshots"][0]["packages"], 4);
    const std::uint64_t data_size = fs::file_size(snapshot_dir("r1") / "Packages" / kData);
    EXPECT_GE(json["snapshots"][0]["unique_bytes"].get<std::uint64_t>(), data_size);
    EXPECT_LT(json["snapshots"][1]["unique_bytes"].get<std::uint64_t>(), data_size);

    // diff names snapshots and published names: exactly the change between the revisions.
    ASSERT_EQ(snapshot("publish", {"r2", "--as", "prod"}).exit_code, 0);
    for (const char* new_side : {"snapshot:sample/r2", "published:prod/sample"}) {
        const CommandResult diffed = run_to_end({rpmirror_binary(), "diff", "-p", mirror_.string(),
                                                 "--json", "snapshot:sample/r1", new_side},
                                                tmp_ / "logs");
        ASSERT_EQ(diffed.exit_code, 0) << diffed.err;
        const auto diff = nlohmann::json::parse(diffed.out);
        ASSERT_EQ(diff["packages"]["added"].size(), 1U) << diffed.out;
        EXPECT_EQ(diff["packages"]["added"][0]["name"], "rpmirror-sample-medium");
        ASSERT_EQ(diff["packages"]["removed"].size(), 1U) << diffed.out;
        EXPECT_EQ(diff["packages"]["removed"][0]["name"], "rpmirror-sample-data");
        EXPECT_TRUE(diff["packages"]["upgraded"].empty()) << diffed.out;
    }
    const CommandResult unknown = run_to_end({rpmirror_binary(), "diff", "-p", mirror_.string(),
                                              "snapshot:sample/r9", "snapshot:sample/r2"},
                                             tmp_ / "logs");
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_NE(unknown.err.find("r9"), std::string::npos) << unknown.err;

    // Removing r1 frees its own files only: r2's links lose one count, nothing else changes.
    const fs::path shared = snapshot_dir("r2") / "Packages" / kTiny;
    EXPECT_EQ(stat_of(shared).st_nlink, 3U);  // live, r1, r2
    const CommandResult removed = snapshot("remove", {"r1"});
    ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    EXPECT_FALSE(fs::exists(snapshot_dir("r1")));
    EXPECT_EQ(stat_of(shared).st_nlink, 2U);
    EXPECT_EQ(package_digests(snapshot_dir("r2")), package_digests(upstream_));
    EXPECT_EQ(package_digests(mirror_ / "sample"), package_digests(upstream_));
}

// A filtered mirror publishes its own (rewritten) metadata; its snapshot is that mirror, and
// dnf reads from it exactly the packages mirrored.
TEST_F(Snapshot, AFilteredMirrorWithRewrittenMetadataIsSnapshotted) {
    const CommandResult synced = sync_mirror({"-x", "rpmirror-sample-data"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    ASSERT_FALSE(fs::exists(mirror_ / "sample" / "Packages" / kData));
    const CommandResult created = snapshot("create", {"--name", "filtered"});
    ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
    EXPECT_EQ(tree_digests(snapshot_dir("filtered") / "repodata"),
              tree_digests(mirror_ / "sample" / "repodata"));
    const std::vector<std::string> names = dnf_names(snapshot_dir("filtered"));
    EXPECT_FALSE(names.empty());
    EXPECT_EQ(std::count(names.begin(), names.end(), "rpmirror-sample-data"), 0);
    EXPECT_EQ(std::count(names.begin(), names.end(), "rpmirror-sample-tiny"), 1);
}

// yum-utils #68: a re-sync that replaces a package (same name, another build) replaces it by
// rename, so the snapshot's copy keeps the old bytes.
TEST_F(Snapshot, AResyncThatReplacesAPackageLeavesTheSnapshotsCopyUnchanged) {
    ASSERT_EQ(sync_mirror().exit_code, 0);
    ASSERT_EQ(snapshot("create", {"--name", "before"}).exit_code, 0);
    const fs::path in_snapshot = snapshot_dir("before") / "Packages" / kTiny;
    const std::string old_digest = hash_bytes(ChecksumType::Sha256, read_file(in_snapshot));

    rebuild_tiny("1800000000");
    recreate_repo(upstream_, "1704240000", tmp_ / "logs");
    const std::string new_digest =
        hash_bytes(ChecksumType::Sha256, read_file(upstream_ / "Packages" / kTiny));
    ASSERT_NE(new_digest, old_digest) << "the rebuild must change the package's bytes";
    const CommandResult resynced = sync_mirror();
    ASSERT_EQ(resynced.exit_code, 0) << resynced.out << resynced.err;

    EXPECT_EQ(hash_bytes(ChecksumType::Sha256, read_file(in_snapshot)), old_digest);
    EXPECT_EQ(hash_bytes(ChecksumType::Sha256, read_file(mirror_ / "sample" / "Packages" / kTiny)),
              new_digest);
    EXPECT_NE(stat_of(in_snapshot).st_ino, stat_of(mirror_ / "sample" / "Packages" / kTiny).st_ino);
    EXPECT_EQ(stat_of(in_snapshot).st_nlink, 1U);
    // The old snapshot still verifies as a whole, and a new one has the new build.
    const CommandResult after = snapshot("create", {"--name", "after"});
    ASSERT_EQ(after.exit_code, 0) << after.out << after.err;
    EXPECT_EQ(
        hash_bytes(ChecksumType::Sha256, read_file(snapshot_dir("after") / "Packages" / kTiny)),
        new_digest);
    EXPECT_EQ(dnf_names(snapshot_dir("before")).size(), 5U);
}

// `publish` switches a published name while a reader reads repomd.xml and every record it lists
// (checksums checked) through it, and never sees a mix; the reader runs until K switches are done.
TEST_F(Snapshot, PublishSwitchesAtomicallyWhileAReaderReadsEveryRecord) {
    ASSERT_EQ(sync_mirror().exit_code, 0);
    ASSERT_EQ(snapshot("create", {"--name", "one"}).exit_code, 0);
    take_out(kMedium, "1704240000");
    ASSERT_EQ(sync_mirror().exit_code, 0);
    ASSERT_EQ(snapshot("create", {"--name", "two"}).exit_code, 0);
    const CommandResult published = snapshot("publish", {"one", "--as", "prod"});
    ASSERT_EQ(published.exit_code, 0) << published.out << published.err;
    const fs::path link = mirror_ / "published" / "prod" / "sample";
    EXPECT_EQ(fs::read_symlink(link), fs::path("../../snapshots/sample/one"));
    const std::set<std::string> indexes{read_file(snapshot_dir("one") / "repodata/repomd.xml"),
                                        read_file(snapshot_dir("two") / "repodata/repomd.xml")};
    ASSERT_EQ(indexes.size(), 2U);

    auto root = snapshot_root("sample", mirror_ / "sample", mirror_);
    ASSERT_TRUE(root.has_value());
    std::atomic<bool> done{false};
    std::atomic<int> passes{0};
    std::atomic<int> mixed{0};  // misses.size(), readable while the reader runs
    std::vector<std::string> misses;
    std::set<std::string> seen;
    // (<checksum type="sha256">HEX</checksum>, then <location href="..."/>) per record; no
    // std::regex in the thread (libstdc++'s locale cache races under TSan).
    const auto records = [](const std::string& index) {
        std::vector<std::pair<std::string, std::string>> found;
        constexpr std::string_view kChecksum = "<checksum type=\"sha256\">";
        constexpr std::string_view kHref = "<location href=\"";
        for (auto at = index.find(kChecksum); at != std::string::npos;
             at = index.find(kChecksum, at)) {
            at += kChecksum.size();
            const std::string digest = index.substr(at, index.find('<', at) - at);
            const auto href = index.find(kHref, at) + kHref.size();
            found.emplace_back(index.substr(href, index.find('"', href) - href), digest);
        }
        return found;
    };
    std::thread reader([&] {
        while (!done.load()) {
            // A reader resolves the published name once (as a web server resolves a request's
            // path) and reads the index and its records from that snapshot.
            const int dir_fd = ::open(link.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dir_fd < 0) {
                misses.push_back("cannot open the published directory");
                continue;
            }
            const auto read_at = [dir_fd](const std::string& relative) {
                std::string bytes;
                const int fd = ::openat(dir_fd, relative.c_str(), O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                    return std::string("<missing>");
                }
                char buffer[65536];
                for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) {
                    bytes.append(buffer, static_cast<std::size_t>(got));
                }
                ::close(fd);
                return bytes;
            };
            const std::string index = read_at("repodata/repomd.xml");
            if (!indexes.contains(index)) {
                misses.push_back("repomd.xml is neither snapshot's (" +
                                 std::to_string(index.size()) + " bytes)");
            }
            for (const auto& [href, digest] : records(index)) {
                if (hash_bytes(ChecksumType::Sha256, read_at(href)) != digest) {
                    misses.push_back(href);
                }
            }
            // And the path as a client names it, resolved anew: always a whole index.
            if (!indexes.contains(read_file(link / "repodata" / "repomd.xml"))) {
                misses.push_back("repomd.xml through the path is neither snapshot's");
            }
            seen.insert(index);
            ::close(dir_fd);
            mixed = static_cast<int>(misses.size());
            ++passes;
        }
    });
    constexpr int kSwitches = 40;
    for (int switched = 0; switched < kSwitches; ++switched) {
        const int before = passes.load();
        // The reader completes a pass that started after the previous switch, then the next.
        while (passes.load() < before + 2 && mixed.load() < 1000) {
            std::this_thread::yield();
        }
        auto done_switch = publish_snapshot(*root, switched % 2 == 0 ? "two" : "one", "prod", {});
        ASSERT_TRUE(done_switch.has_value()) << done_switch.error().to_string();
    }
    done = true;
    reader.join();
    EXPECT_TRUE(misses.empty()) << misses.size() << " misses, the first: " << misses.front();
    EXPECT_EQ(seen, indexes) << "the reader saw both snapshots";
    EXPECT_GE(passes.load(), 2 * kSwitches);
    std::cout << "[ figures  ] " << passes.load() << " reader passes over " << kSwitches
              << " switches, " << misses.size() << " mixed\n";
    EXPECT_EQ(fs::read_symlink(link), fs::path("../../snapshots/sample/one"));
    const auto listed = nlohmann::json::parse(snapshot("list", {"--json"}).out);
    EXPECT_EQ(listed["snapshots"][0]["published_as"], nlohmann::json::array({"prod"}));
    EXPECT_EQ(listed["snapshots"][1]["published_as"], nlohmann::json::array());
}

// Bad input changes nothing and says what was wrong.
TEST_F(Snapshot, BadInputIsAClearErrorAndChangesNothing) {
    ASSERT_EQ(sync_mirror().exit_code, 0);
    ASSERT_EQ(snapshot("create", {"--name", "good"}).exit_code, 0);
    const auto before = tree_digests(mirror_ / "snapshots");

    const CommandResult again = snapshot("create", {"--name", "good"});
    EXPECT_EQ(again.exit_code, 1);
    EXPECT_NE(again.err.find("snapshot good of repository sample exists already"),
              std::string::npos)
        << again.err;
    for (const char* bad : {"a/b", "..", ".hidden", "tab\there"}) {
        const CommandResult refused = snapshot("create", {"--name", bad});
        EXPECT_NE(refused.exit_code, 0) << bad;
        EXPECT_NE(refused.err.find("invalid snapshot name"), std::string::npos)
            << bad << ": " << refused.err;
    }
    const CommandResult unknown = snapshot("publish", {"nosuch", "--as", "prod"});
    EXPECT_EQ(unknown.exit_code, 1);
    EXPECT_NE(unknown.err.find("no snapshot nosuch of repository sample"), std::string::npos)
        << unknown.err;
    EXPECT_NE(snapshot("remove", {"nosuch"}).err.find("no snapshot nosuch"), std::string::npos);

    // A repository being synced (its run lock held) is not snapshotted.
    {
        auto held =
            rpmirror::fs::RunLock::acquire(rpmirror::fs::default_state_dir(), mirror_ / "sample");
        ASSERT_TRUE(held.has_value()) << held.error().to_string();
        const CommandResult busy = snapshot("create", {"--name", "busy"});
        EXPECT_EQ(busy.exit_code, 1);
        EXPECT_NE(busy.err.find("is being synced by another rpmirror (pid " +
                                std::to_string(::getpid()) + ")"),
                  std::string::npos)
            << busy.err;
    }
    // --norepopath: the snapshots cannot go beside the repository's directory by default.
    const CommandResult no_base =
        run_to_end({rpmirror_binary(), "snapshot", "list", "--repo", "sample", "-p",
                    (mirror_ / "sample").string(), "--norepopath"},
                   tmp_ / "logs");
    EXPECT_EQ(no_base.exit_code, 2);
    EXPECT_NE(no_base.err.find("with --norepopath, give --snapshot-dir"), std::string::npos)
        << no_base.err;

    // A published name whose path is a real directory is not replaced.
    fs::create_directories(mirror_ / "published" / "prod" / "sample" / "repodata");
    TempDir::write_at(mirror_ / "published" / "prod" / "sample" / "repodata" / "repomd.xml", "x");
    const CommandResult over_dir = snapshot("publish", {"good", "--as", "prod"});
    EXPECT_EQ(over_dir.exit_code, 1);
    EXPECT_NE(over_dir.err.find("is a directory, not a published name's symlink; not replaced"),
              std::string::npos)
        << over_dir.err;
    EXPECT_EQ(read_file(mirror_ / "published" / "prod" / "sample" / "repodata" / "repomd.xml"),
              "x");

    // A published snapshot is not removed.
    ASSERT_EQ(snapshot("publish", {"good", "--as", "test"}).exit_code, 0);
    const CommandResult in_use = snapshot("remove", {"good"});
    EXPECT_EQ(in_use.exit_code, 1);
    EXPECT_NE(in_use.err.find("is published as test"), std::string::npos) << in_use.err;
    EXPECT_EQ(tree_digests(mirror_ / "snapshots"), before);

    // A damaged package (replaced, not changed in place: that would change the snapshot's
    // hard link too): refused, and nothing left under the name or a temporary one.
    const fs::path damaged = mirror_ / "sample" / "Packages" / kMedium;
    const std::string original = read_file(damaged);
    const auto replace = [&](const std::string& contents) {
        TempDir::write_at(tmp_ / "replacement", contents);
        fs::rename(tmp_ / "replacement", damaged);
    };
    replace(original.substr(0, original.size() / 2));
    const CommandResult from_damaged = snapshot("create", {"--name", "broken"});
    EXPECT_EQ(from_damaged.exit_code, 1);
    EXPECT_NE(from_damaged.err.find("not a complete, verified mirror: 1 problem(s): Packages/" +
                                    kMedium + ": size mismatch"),
              std::string::npos)
        << from_damaged.err;
    EXPECT_EQ(tree_digests(mirror_ / "snapshots"), before);

    // A mirror whose last sync rpmirror has no record of (another state directory).
    replace(original);
    std::vector<std::string> argv{
        rpmirror_binary(), "snapshot",    "create",
        "--repo",          "sample",      "-p",
        mirror_.string(),  "--state-dir", (tmp_ / "other-state").string()};
    const CommandResult unsynced = run_to_end(argv, tmp_ / "logs");
    EXPECT_EQ(unsynced.exit_code, 1);
    EXPECT_NE(unsynced.err.find("no completed `rpmirror sync` recorded for this mirror"),
              std::string::npos)
        << unsynced.err;

    // Metadata changed after the sync (the last sync did not publish what is live).
    TempDir::write_at(tmp_ / "repomd.xml",
                      read_file(mirror_ / "sample" / "repodata" / "repomd.xml") + "\n");
    fs::rename(tmp_ / "repomd.xml", mirror_ / "sample" / "repodata" / "repomd.xml");
    const CommandResult changed = snapshot("create", {"--name", "changed"});
    EXPECT_EQ(changed.exit_code, 1);
    EXPECT_NE(changed.err.find("is not the one the last completed sync published"),
              std::string::npos)
        << changed.err;
    EXPECT_EQ(tree_digests(mirror_ / "snapshots"), before);
}

// Killed just before the snapshot is renamed into place (the fault seam's kill): nothing under
// the name; the next create removes the temporary and succeeds. An I/O error there is reported
// and leaves nothing either.
TEST_F(Snapshot, AKilledOrFailedCreateLeavesNoHalfSnapshot) {
    ASSERT_EQ(sync_mirror().exit_code, 0);
    std::vector<std::string> argv{"env",
                                  "RPMIRROR_FAULT=kill:rename:1",
                                  rpmirror_binary(),
                                  "snapshot",
                                  "create",
                                  "--repo",
                                  "sample",
                                  "-p",
                                  mirror_.string(),
                                  "--name",
                                  "k"};
    const CommandResult killed = run_to_end(argv, tmp_ / "logs");
    EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.err;
    EXPECT_NE(killed.err.find("rpmirror-fault: kill before rename #1"), std::string::npos)
        << killed.err;
    EXPECT_FALSE(fs::exists(snapshot_dir("k")));
    std::vector<std::string> leftovers;
    for (const auto& entry : fs::directory_iterator(mirror_ / "snapshots" / "sample")) {
        leftovers.push_back(entry.path().filename().string());
    }
    ASSERT_EQ(leftovers.size(), 1U);
    EXPECT_TRUE(leftovers[0].starts_with(".k.creating-")) << leftovers[0];
    EXPECT_EQ(snapshot("list").out, "");

    argv[1] = "RPMIRROR_FAULT=errno:rename:1:EIO";
    const CommandResult failed = run_to_end(argv, tmp_ / "logs");
    EXPECT_EQ(failed.exit_code, 1);
    EXPECT_NE(failed.err.find(snapshot_dir("k").string() +
                              ": cannot rename the new snapshot into place: Input/output error"),
              std::string::npos)
        << failed.err;
    EXPECT_TRUE(fs::is_empty(mirror_ / "snapshots" / "sample"));

    const CommandResult created = snapshot("create", {"--name", "k"});
    ASSERT_EQ(created.exit_code, 0) << created.err;
    EXPECT_EQ(package_digests(snapshot_dir("k")), package_digests(upstream_));
    EXPECT_EQ(tree_digests(snapshot_dir("k") / "repodata"), tree_digests(upstream_ / "repodata"));
}

// A snapshot directory on another filesystem (a tmpfs mount: link() fails with EXDEV): a clear
// error and nothing left; --copy works there.
TEST_F(Snapshot, AFilesystemWithoutHardLinksIsAClearErrorAndCopyWorks) {
    ASSERT_TRUE(crash::enter_private_mount_namespace())
        << "needs root and a private mount namespace for a tmpfs mount";
    const crash::ScopedMount other("tmpfs", tmp_ / "other", "tmpfs", 0, "size=64m");
    ASSERT_TRUE(other.is_mounted());
    ASSERT_EQ(sync_mirror().exit_code, 0);

    const CommandResult refused =
        snapshot("create", {"--name", "x", "--snapshot-dir", (tmp_ / "other").string()});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("(snapshots must be on the mirror's filesystem, or taken with "
                               "--copy): Invalid cross-device link"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(tree_digests(tmp_ / "other" / "snapshots"), (std::map<std::string, std::string>{}));

    const CommandResult copied =
        snapshot("create", {"--name", "x", "--copy", "--snapshot-dir", (tmp_ / "other").string()});
    ASSERT_EQ(copied.exit_code, 0) << copied.out << copied.err;
    const fs::path copy = tmp_ / "other" / "snapshots" / "sample" / "x";
    EXPECT_EQ(package_digests(copy), package_digests(upstream_));
    EXPECT_EQ(stat_of(copy / "Packages" / kTiny).st_nlink, 1U);
    EXPECT_EQ(stat_of(mirror_ / "sample" / "Packages" / kTiny).st_nlink, 1U);
}

// sync --snapshot after each complete sync; --keep-snapshots keeps the newest N and every
// published one.
TEST_F(Snapshot, SyncSnapshotsAfterEachRunAndKeepsTheNewestAndThePublished) {
    const CommandResult first = sync_mirror({"--snapshot"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const auto listed = nlohmann::json::parse(snapshot("list", {"--json"}).out);
    ASSERT_EQ(listed["snapshots"].size(), 1U);
    const std::string dated = listed["snapshots"][0]["name"];
    EXPECT_TRUE(std::regex_match(dated, std::regex("[0-9]{8}T[0-9]{6}Z"))) << dated;
    EXPECT_NE(first.out.find("sample: snapshot " + dated + ": 5 packages"), std::string::npos)
        << first.out;
    ASSERT_EQ(snapshot("publish", {dated, "--as", "prod"}).exit_code, 0);

    // Upstream unchanged: the sync is a no-op (the snapshot's links did not end it) and takes no
    // identical snapshot under a new dated name.
    const CommandResult unchanged = sync_mirror({"--snapshot"});
    ASSERT_EQ(unchanged.exit_code, 0) << unchanged.out << unchanged.err;
    EXPECT_NE(unchanged.out.find("sample: up to date (5 packages unchanged"), std::string::npos)
        << unchanged.out;
    EXPECT_NE(unchanged.out.find("sample: snapshot: none taken, unchanged since snapshot " + dated),
              std::string::npos)
        << unchanged.out;
    EXPECT_EQ(nlohmann::json::parse(snapshot("list", {"--json"}).out)["snapshots"].size(), 1U);

    ASSERT_EQ(sync_mirror({"--snapshot=s2"}).exit_code, 0);
    take_out(kMedium, "1704240000");
    ASSERT_EQ(sync_mirror({"--snapshot=s3"}).exit_code, 0);
    const CommandResult pruned = sync_mirror({"--snapshot=s4", "--keep-snapshots", "1"});
    ASSERT_EQ(pruned.exit_code, 0) << pruned.out << pruned.err;
    EXPECT_NE(pruned.out.find("sample: removed snapshot s2"), std::string::npos) << pruned.out;
    EXPECT_NE(pruned.out.find("sample: removed snapshot s3"), std::string::npos) << pruned.out;
    std::vector<std::string> names;
    const auto remaining = nlohmann::json::parse(snapshot("list", {"--json"}).out);
    for (const auto& entry : remaining["snapshots"]) {
        names.push_back(entry["name"]);
    }
    EXPECT_EQ(names, (std::vector<std::string>{dated, "s4"}));
    EXPECT_EQ(dnf_names(mirror_ / "published" / "prod" / "sample").size(), 5U);
    EXPECT_EQ(dnf_names(snapshot_dir("s4")).size(), 4U);

    // A sync that fails (a listed package is gone upstream) takes no snapshot.
    put_back(kMedium, "1704326400");
    fs::remove(upstream_ / "Packages" / kMedium);
    const CommandResult failed = sync_mirror({"--snapshot=s5"});
    EXPECT_EQ(failed.exit_code, 1);
    EXPECT_FALSE(fs::exists(snapshot_dir("s5")));
}

}  // namespace
}  // namespace rpmirror::test
