// The snapshot export-<bundle> `rpmirror export` keeps of what it exported: made with --copy
// where hard links cannot be (and a clear error suggesting it otherwise), never rotated out by a
// sync's --keep-snapshots (it is the far side's state, the next --base), found by `--base auto`
// (the newest one: what a timer exports against), and a clear error once it is removed; never
// mistaken for a sync's snapshot of the same state.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/crash/crash_fixture.hpp"
#include "integration/export/export_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

using ExportSnapshots = ExportFixture;

nlink_t links_of(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_nlink;
}

// A --snapshot-dir on another filesystem (tmpfs: link() fails with EXDEV): the export is refused
// naming --copy, leaving no bundle and no snapshot; with --copy the snapshot holds copies.
TEST_F(ExportSnapshots, WhereHardLinksCannotBeMadeTheErrorSaysCopyAndCopyWorks) {
    ASSERT_TRUE(crash::enter_private_mount_namespace())
        << "needs root and a private mount namespace for a tmpfs mount";
    const fs::path other = tmp_ / "other";
    const crash::ScopedMount mounted("tmpfs", other, "tmpfs", 0, "size=64m");
    ASSERT_TRUE(mounted.is_mounted());
    ASSERT_EQ(sync_near().exit_code, 0);

    const CommandResult refused =
        export_bundle("linked", {"--repo", "alpha", "--snapshot-dir", other.string()});
    EXPECT_EQ(refused.exit_code, 1) << refused.out;
    EXPECT_NE(refused.err.find("(snapshots must be on the mirror's filesystem, or taken with "
                               "--copy): Invalid cross-device link"),
              std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(tmp_ / "linked"));
    EXPECT_FALSE(fs::exists(other / "snapshots" / "alpha" / "export-linked"));

    const nlink_t live_links = links_of(near_ / "alpha" / kMediumHref);
    const CommandResult copied =
        export_bundle("copied", {"--repo", "alpha", "--snapshot-dir", other.string(), "--copy"});
    ASSERT_EQ(copied.exit_code, 0) << copied.out << copied.err;
    const fs::path kept = other / "snapshots" / "alpha" / "export-copied";
    EXPECT_EQ(published(kept), published(near_ / "alpha"));
    EXPECT_EQ(links_of(kept / kMediumHref), 1U);
    EXPECT_EQ(links_of(near_ / "alpha" / kMediumHref), live_links) << "no link to the copy";
    ASSERT_EQ(import_bundle("copied", far_).exit_code, 0);
    EXPECT_EQ(published(far_ / "alpha"), published(near_ / "alpha"));
}

// Two exports with syncs --keep-snapshots 1 between them: the export snapshots stay (only the
// dated history rotates), `--base auto` finds the newest, and a removed base is a clear error.
TEST_F(ExportSnapshots, KeepSnapshotsKeepsEveryExportBaseAndBaseAutoTakesTheNewest) {
    first_revision("alpha");
    ASSERT_EQ(sync_near().exit_code, 0);
    // No export yet: --base auto makes a complete bundle.
    const CommandResult first = export_bundle("r1", {"--repo", "alpha", "--base", "auto"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_NE(first.out.find(", complete; snapshot export-r1 kept"), std::string::npos)
        << first.out;
    EXPECT_EQ(manifest("r1")["kind"], "complete");
    ASSERT_EQ(import_bundle("r1", far_).exit_code, 0);

    second_revision("alpha");
    const fs::path snapshots = near_ / "snapshots" / "alpha";
    for (const char* name : {"s1", "s2"}) {
        const CommandResult synced =
            sync_near({std::string("--snapshot=") + name, "--keep-snapshots", "1"});
        ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    }
    EXPECT_FALSE(fs::exists(snapshots / "s1"));
    EXPECT_TRUE(fs::is_directory(snapshots / "s2"));
    EXPECT_TRUE(fs::is_directory(snapshots / "export-r1"));

    const CommandResult second = export_bundle("r2", {"--repo", "alpha", "--base", "auto"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_NE(second.out.find(", incremental on r1; snapshot export-r2 kept"), std::string::npos)
        << second.out;
    expect_second_revision_imports("r2", "r1");

    // Another rotation keeps both export snapshots.
    const CommandResult synced = sync_near({"--snapshot=s3", "--keep-snapshots", "1"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_FALSE(fs::exists(snapshots / "s2"));
    EXPECT_TRUE(fs::is_directory(snapshots / "export-r1"));
    EXPECT_TRUE(fs::is_directory(snapshots / "export-r2"));

    // Unchanged since r2: --base auto takes r2 (the newest), and carries only metadata.
    const CommandResult third = export_bundle("r3", {"--repo", "alpha", "--base", "auto"});
    ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
    EXPECT_EQ(manifest("r3")["base"]["name"], "r2");
    std::uint64_t carried_bytes = 0;
    EXPECT_EQ(carried_packages(manifest("r3"), carried_bytes), std::vector<std::string>{});

    // The base removed by hand: --base naming it is a clear error, and nothing is made.
    const CommandResult removed =
        rpmirror({"snapshot", "remove", "export-r2", "-p", near_.string(), "--repo", "alpha"});
    ASSERT_EQ(removed.exit_code, 0) << removed.out << removed.err;
    const CommandResult gone = export_bundle("r4", {"--repo", "alpha", "--base", "r2"});
    EXPECT_EQ(gone.exit_code, 1) << gone.out;
    EXPECT_NE(
        gone.err.find("--base r2: neither a bundle directory (with manifest.json) nor a "
                      "snapshot r2 or export-r2 of any of the repositories exported under " +
                      near_.string() + " (removed? `rpmirror snapshot list` shows those kept)"),
        std::string::npos)
        << gone.err;
    EXPECT_FALSE(fs::exists(tmp_ / "r4"));
    EXPECT_FALSE(fs::exists(snapshots / "export-r4"));
}

// The snapshot an export keeps is the far side's state, not the mirror's history: a sync
// --snapshot of the same state right after takes a dated snapshot of its own (the export's is not
// "unchanged since"), and the next same-state sync names that dated one.
TEST_F(ExportSnapshots, ASyncSnapshotAfterAnExportIsNotTheExportsSnapshot) {
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult exported = export_bundle("e1", {"--repo", "alpha"});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;

    const CommandResult taken = sync_near({"--snapshot"});
    ASSERT_EQ(taken.exit_code, 0) << taken.out << taken.err;
    EXPECT_EQ(taken.out.find("unchanged since snapshot export-"), std::string::npos) << taken.out;
    std::vector<std::string> dated;
    for (const auto& entry : fs::directory_iterator(near_ / "snapshots" / "alpha")) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("export-") && !name.starts_with(".")) {
            dated.push_back(name);
        }
    }
    ASSERT_EQ(dated.size(), 1U) << taken.out;
    EXPECT_NE(taken.out.find("alpha: snapshot " + dated.front()), std::string::npos) << taken.out;
    EXPECT_TRUE(fs::is_directory(near_ / "snapshots" / "alpha" / "export-e1"));

    const CommandResult again = sync_near({"--snapshot"});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(
        again.out.find("alpha: snapshot: none taken, unchanged since snapshot " + dated.front()),
        std::string::npos)
        << again.out;
}

// --keep-exports N: once the bundle is made, the export snapshots but the newest N are removed,
// each said; the one the new bundle names stays, and the next --base auto finds it.
TEST_F(ExportSnapshots, KeepExportsRemovesAllButTheNewestAndNeverTheOneTheBundleNames) {
    ASSERT_EQ(sync_near().exit_code, 0);
    const fs::path snapshots = near_ / "snapshots" / "alpha";
    for (const char* name : {"k1", "k2"}) {
        const CommandResult made = export_bundle(name, {"--repo", "alpha"});
        ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
    }
    const CommandResult kept =
        export_bundle("k3", {"--repo", "alpha", "--base", "auto", "--keep-exports", "2"});
    ASSERT_EQ(kept.exit_code, 0) << kept.out << kept.err;
    EXPECT_NE(kept.out.find("alpha: export-k1: removed older export snapshot"), std::string::npos)
        << kept.out;
    EXPECT_EQ(kept.out.find("export-k2: removed"), std::string::npos) << kept.out;
    EXPECT_FALSE(fs::exists(snapshots / "export-k1"));
    EXPECT_TRUE(fs::is_directory(snapshots / "export-k2"));
    EXPECT_TRUE(fs::is_directory(snapshots / "export-k3"));

    const CommandResult only = export_bundle("k4", {"--repo", "alpha", "--keep-exports", "1"});
    ASSERT_EQ(only.exit_code, 0) << only.out << only.err;
    EXPECT_FALSE(fs::exists(snapshots / "export-k2"));
    EXPECT_FALSE(fs::exists(snapshots / "export-k3"));
    EXPECT_TRUE(fs::is_directory(snapshots / "export-k4"));
    const CommandResult next = export_bundle("k5", {"--repo", "alpha", "--base", "auto"});
    ASSERT_EQ(next.exit_code, 0) << next.out << next.err;
    EXPECT_EQ(manifest("k5")["base"]["name"], "k4");
}

}  // namespace
}  // namespace rpmirror::test
