// `rpmirror export` on the connected side keeps what it exported as the snapshot
// export-<bundle>, which the next `--base` names (by the bundle's directory or only its name),
// and `--format syncable` makes plain repository trees that dnf, zypper and `rpmirror sync` read
// with no import step, which `rpmirror import` also takes (and refuses when damaged);
// `--config-file` and `--job` pick the repositories as for `sync`.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "integration/export/export_fixture.hpp"
#include "support/zypper.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

using ExportFormats = ExportFixture;

TEST_F(ExportFormats, TheExportedStateIsKeptAsASnapshotThatTheNextBaseResolvesTo) {
    first_revision("alpha");
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult first = export_bundle("r1", {"--repo", "alpha"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_NE(first.out.find("snapshot export-r1 kept"), std::string::npos) << first.out;
    const nlohmann::json r1 = manifest("r1");
    EXPECT_EQ(r1["snapshot"], "export-r1");
    const fs::path kept = near_ / "snapshots" / "alpha" / "export-r1";
    ASSERT_TRUE(fs::is_directory(kept));
    EXPECT_EQ(hash_bytes(ChecksumType::Sha256, read_file(kept / "repodata" / "repomd.xml")),
              r1["repositories"][0]["repomd_sha256"]);
    EXPECT_EQ(published(kept), published(near_ / "alpha"));
    ASSERT_EQ(import_bundle("r1", far_).exit_code, 0);

    // The near side moves on; the bundle directory went with the courier: its name is enough.
    second_revision("alpha");
    ASSERT_EQ(sync_near().exit_code, 0);
    fs::rename(tmp_ / "r1", tmp_ / "carried-r1");
    const CommandResult second = export_bundle("r2", {"--repo", "alpha", "--base", "r1"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_EQ(manifest("r2")["base"]["repositories"]["alpha"],
              r1["repositories"][0]["repomd_sha256"]);
    expect_second_revision_imports("r2", "r1");

    // The snapshot a bundle of that name kept is not replaced: a second bundle named r2 is
    // refused, naming the snapshot, and leaves nothing.
    fs::create_directories(tmp_ / "elsewhere");
    const CommandResult again = rpmirror({"export", "-p", near_.string(), "--repo", "alpha", "-o",
                                          (tmp_ / "elsewhere" / "r2").string()});
    EXPECT_EQ(again.exit_code, 1);
    EXPECT_NE(again.err.find("snapshot export-r2 of repository alpha exists already"),
              std::string::npos)
        << again.err;
    EXPECT_FALSE(fs::exists(tmp_ / "elsewhere" / "r2"));

    // An export that fails after its snapshot was taken (no such signing key) takes it back.
    const CommandResult unsigned_export =
        export_bundle("r3", {"--repo", "alpha", "--sign-key", "no-such-key@example.invalid"});
    EXPECT_EQ(unsigned_export.exit_code, 1) << unsigned_export.out;
    EXPECT_FALSE(fs::exists(tmp_ / "r3"));
    EXPECT_FALSE(fs::exists(near_ / "snapshots" / "alpha" / "export-r3"));
}

TEST_F(ExportFormats,
       ASyncableBundleIsReadByDnfZypperAndSyncDirectlyAndImportsAndRefusesAFlippedByte) {
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult exported = export_bundle("plain", {"--format", "syncable"});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
    const nlohmann::json written = manifest("plain");
    EXPECT_EQ(written["layout"], "trees");
    for (const std::string& id : kExportIds) {
        const fs::path tree = tmp_ / "plain" / "repos" / id;
        EXPECT_EQ(published(tree), published(near_ / id)) << id;
        EXPECT_EQ(dnf_names(tree), dnf_names(near_ / id)) << id;
    }

    // zypper reads a tree as it stands (a plain directory repository): each package dnf lists.
    const fs::path zypper_root = tmp_ / "zypper-root";
    fs::create_directories(zypper_root);
    const auto zypper = [&](std::vector<std::string> args) {
        args.insert(args.begin(), {zypper_binary().string(), "--root", zypper_root.string(),
                                   "--non-interactive", "--no-gpg-checks"});
        return run_to_end(args, tmp_ / "logs");
    };
    const CommandResult added =
        zypper({"addrepo", "-f", "dir://" + (tmp_ / "plain" / "repos" / "gamma").string(), "mir"});
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
    const CommandResult refreshed = zypper({"refresh"});
    ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
    const CommandResult listed = zypper({"packages", "-r", "mir"});
    ASSERT_EQ(listed.exit_code, 0) << listed.out << listed.err;
    for (const std::string& name : dnf_names(near_ / "gamma")) {
        EXPECT_NE(listed.out.find("| " + name + " "), std::string::npos) << name << listed.out;
    }

    // `rpmirror sync` reads a tree through file://, no import step.
    const fs::path synced = tmp_ / "synced";
    const CommandResult from_bundle =
        sync({"-p", synced.string(), "--download-metadata", "--repofrompath",
              "alpha,file://" + (tmp_ / "plain" / "repos" / "alpha").string(), "--repo", "alpha"});
    ASSERT_EQ(from_bundle.exit_code, 0) << from_bundle.out << from_bundle.err;
    EXPECT_EQ(published(synced / "alpha"), published(near_ / "alpha"));

    // `rpmirror import` takes it as any bundle.
    const CommandResult imported = import_bundle("plain", far_);
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    for (const std::string& id : kExportIds) {
        EXPECT_EQ(published(far_ / id), published(near_ / id)) << id;
    }
    const CommandResult verified = verify(far_);
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;

    // A flipped byte in one of its packages: refused naming that file, nothing made.
    const fs::path flipped = damaged_copy("plain", "flipped");
    const fs::path package = flipped / "repos" / "beta" / kMediumHref;
    std::string bytes = read_file(package);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
    TempDir::write_at(package, bytes);
    const fs::path other = tmp_ / "other";
    const CommandResult refused = import_bundle("flipped", other);
    EXPECT_EQ(refused.exit_code, 1) << refused.out;
    EXPECT_NE(refused.err.find(package.string() + ": SHA-256"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(other));

    // Syncable bundles are complete.
    const CommandResult incremental =
        export_bundle("partial", {"--format", "syncable", "--base", (tmp_ / "plain").string()});
    EXPECT_EQ(incremental.exit_code, 1);
    EXPECT_NE(incremental.err.find("--format syncable: a syncable bundle is complete"),
              std::string::npos)
        << incremental.err;
    EXPECT_FALSE(fs::exists(tmp_ / "partial"));
}

// `export --config-file F --job GLOB` exports the jobs' repositories, as `sync` takes them.
TEST_F(ExportFormats, TheJobsOfAConfigurationPickTheRepositories) {
    const fs::path root = tmp_ / "jobs-root";
    std::string config = "[main]\ndestination = " + root.string() + "\n";
    for (const std::string& id : kExportIds) {
        config += "\n[" + id + "]\nbaseurl = " + serve(upstreams_[id]).url("/") +
                  "\ndownload-metadata = 1\n";
    }
    const fs::path file = TempDir::write_at(tmp_ / "etc" / "rpmirror.conf", config);
    const CommandResult synced =
        run_to_end(rpmirror_sync_argv({"--config-file", file.string()}), tmp_ / "logs");
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;

    const CommandResult exported = rpmirror({"export", "--config-file", file.string(), "--job",
                                             "alpha,gam*", "-o", (tmp_ / "two").string()});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
    std::vector<std::string> ids;
    const nlohmann::json written = manifest("two");
    for (const auto& repository : written["repositories"]) {
        ids.push_back(repository["id"]);
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"alpha", "gamma"}));
    EXPECT_TRUE(fs::is_directory(root / "snapshots" / "gamma" / "export-two"));
    const CommandResult imported = import_bundle("two", far_);
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    EXPECT_EQ(published(far_ / "alpha"), published(root / "alpha"));
    EXPECT_EQ(published(far_ / "gamma"), published(root / "gamma"));
    EXPECT_FALSE(fs::exists(far_ / "beta"));

    // A glob matching no job, and --repo beside the jobs: usage errors, no bundle.
    CommandResult refused = rpmirror({"export", "--config-file", file.string(), "--job", "delta*",
                                      "-o", (tmp_ / "none").string()});
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("delta*"), std::string::npos) << refused.err;
    refused = rpmirror({"export", "--config-file", file.string(), "--repo", "beta", "-o",
                        (tmp_ / "none").string()});
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("--repo: not with --config-file/--job"), std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(tmp_ / "none"));
}

}  // namespace
}  // namespace rpmirror::test
