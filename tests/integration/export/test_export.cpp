// `rpmirror export` and `rpmirror import`, end to end: real repositories (rpmbuild +
// createrepo_c) served by nginx and synced by the real binary, bundles carried to an empty
// destination with its own state directory, dnf reading what was imported, `rpmirror verify`
// checking it, and damaged, incomplete, wrongly based or wrongly signed bundles refused with the
// destination untouched.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "integration/crash/crash_fixture.hpp"
#include "integration/export/export_fixture.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

using Export = ExportFixture;

TEST_F(Export, CompleteBundleOfThreeRepositoriesImportsAndDnfReadsEachAndVerifyPasses) {
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult exported = export_bundle("full");
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
    const nlohmann::json written = manifest("full");
    EXPECT_EQ(written["kind"], "complete");
    EXPECT_GT(written["chunks"].size(), 1U);  // files span 100 KiB chunks
    for (const auto& chunk : written["chunks"]) {
        EXPECT_LE(fs::file_size(tmp_ / "full" / chunk["name"].get<std::string>()), 100U * 1024);
    }
    // The bundle is read from a read-only mount (as root, as CI runs: a read-only bind mount in
    // the test's own mount namespace, where root cannot write either; otherwise a directory
    // without write permission), and nothing is written into it.
    std::optional<crash::ScopedMount> read_only;
    std::string bundle = "full";
    if (::geteuid() == 0) {
        ASSERT_TRUE(crash::enter_private_mount_namespace());
        read_only.emplace((tmp_ / "full").string(), tmp_ / "full-ro", "", MS_BIND, "");
        ASSERT_TRUE(read_only->is_mounted() && read_only->remount_read_only());
        EXPECT_FALSE(std::ofstream(tmp_ / "full-ro" / "probe")) << "the mount is writable";
        bundle = "full-ro";
    } else {
        fs::permissions(tmp_ / "full", fs::perms::owner_write | fs::perms::group_write,
                        fs::perm_options::remove);
    }
    const CommandResult imported = import_bundle(bundle, far_);
    read_only.reset();
    fs::permissions(tmp_ / "full", fs::perms::owner_write, fs::perm_options::add);
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    for (const std::string& id : kExportIds) {
        EXPECT_EQ(published(far_ / id), published(near_ / id)) << id;
        EXPECT_EQ(dnf_names(far_ / id), dnf_names(near_ / id)) << id;
        EXPECT_TRUE(fs::is_directory(far_ / "snapshots" / id / "full")) << imported.out;
    }
    const CommandResult verified = verify(far_);
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    // Imported again: already there, nothing placed.
    const CommandResult again = import_bundle("full", far_);
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("alpha: already at bundle full"), std::string::npos) << again.out;
}

TEST_F(Export, IncrementalBundleHoldsOnlyWhatChangedAndAppliesOntoItsBaseOnly) {
    first_revision("alpha");
    ASSERT_EQ(sync_near().exit_code, 0);
    ASSERT_EQ(export_bundle("r1", {"--repo", "alpha"}).exit_code, 0);
    ASSERT_EQ(import_bundle("r1", far_).exit_code, 0);
    second_revision("alpha");
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult exported =
        export_bundle("r2", {"--repo", "alpha", "--base", (tmp_ / "r1").string()});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;

    // It carries the new package and the new metadata, nothing else; data is listed as gone.
    const nlohmann::json written = manifest("r2");
    EXPECT_EQ(written["kind"], "incremental");
    std::uint64_t carried_bytes = 0;
    EXPECT_EQ(carried_packages(written, carried_bytes), std::vector<std::string>{kMediumHref});
    std::uint64_t chunk_bytes = 0;
    for (const auto& chunk : written["chunks"]) {
        chunk_bytes += fs::file_size(tmp_ / "r2" / chunk["name"].get<std::string>());
    }
    EXPECT_EQ(chunk_bytes, carried_bytes);
    std::uint64_t metadata_bytes = 0;
    for (const auto& entry : fs::directory_iterator(near_ / "alpha" / "repodata")) {
        metadata_bytes += entry.file_size();
    }
    EXPECT_EQ(chunk_bytes, fs::file_size(near_ / "alpha" / kMediumHref) + metadata_bytes);
    EXPECT_EQ(removed_packages(written), std::vector<std::string>{kDataHref});

    // Onto another base (an empty destination): refused naming both, nothing made.
    const fs::path other = tmp_ / "other";
    const CommandResult refused = import_bundle("r2", other);
    EXPECT_EQ(refused.exit_code, 1) << refused.out;
    EXPECT_NE(refused.err.find("holds no repository"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("its base r1"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(other / "alpha"));

    // Onto its base: the far side is the near side's second revision.
    const CommandResult imported = import_bundle("r2", far_);
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    EXPECT_EQ(published(far_ / "alpha"), published(near_ / "alpha"));
    EXPECT_FALSE(fs::exists(far_ / "alpha" / kDataHref));
    EXPECT_TRUE(fs::is_directory(far_ / "snapshots" / "alpha" / "r2"));
    EXPECT_EQ(dnf_names(far_ / "alpha"), dnf_names(near_ / "alpha"));
}

TEST_F(Export, IncrementalAgainstASnapshotCarriesOnlyTheChange) {
    first_revision("beta");
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult snapped =
        rpmirror({"snapshot", "create", "--repo", "beta", "-p", near_.string(), "--name", "s1"});
    ASSERT_EQ(snapped.exit_code, 0) << snapped.out << snapped.err;
    second_revision("beta");
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult exported = export_bundle("d1", {"--repo", "beta", "--base", "s1"});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
    const nlohmann::json written = manifest("d1");
    EXPECT_EQ(written["base"]["name"], "s1");
    EXPECT_EQ(written["base"]["repositories"]["beta"],
              hash_bytes(ChecksumType::Sha256, read_file(near_ / "snapshots" / "beta" / "s1" /
                                                         "repodata" / "repomd.xml")));
    std::uint64_t carried_bytes = 0;
    EXPECT_EQ(carried_packages(written, carried_bytes), std::vector<std::string>{kMediumHref});
    EXPECT_EQ(removed_packages(written), std::vector<std::string>{kDataHref});
}

TEST_F(Export, DamagedMissingOrBadlySignedBundlesAreRefusedAndTheDestinationIsUntouched) {
    ASSERT_EQ(sync_near().exit_code, 0);
    const CommandResult exported =
        export_bundle("signed", {"--sign-key", test_keys().key_id(Signer::Good)});
    ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
    ASSERT_TRUE(fs::exists(tmp_ / "signed" / "manifest.json.asc"));
    fs::create_directories(far_);
    TempDir::write_at(far_ / "keep.txt", "a file the import must leave alone\n");
    const auto before = tree_digests(tmp_ / "signed");
    const auto far_before = tree_digests(far_);

    // A flipped byte in a chunk.
    const fs::path flipped = damaged_copy("signed", "flipped");
    const fs::path chunk = flipped / "chunk-000001";
    std::string bytes = read_file(chunk);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x01);
    TempDir::write_at(chunk, bytes);
    CommandResult refused = import_bundle("flipped", far_);
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find(chunk.string() + ": SHA-256"), std::string::npos) << refused.err;
    EXPECT_EQ(tree_digests(far_), far_before);

    // A missing chunk.
    const fs::path missing = damaged_copy("signed", "missing");
    fs::remove(missing / "chunk-000002");
    refused = import_bundle("missing", far_);
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find((missing / "chunk-000002").string() + ": missing"),
              std::string::npos)
        << refused.err;
    EXPECT_EQ(tree_digests(far_), far_before);

    // Signed by another key than the keyring's, and a manifest changed after signing.
    refused =
        import_bundle("signed", far_, {"--keyring", test_keys().key_file(Signer::Other).string()});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("manifest.json.asc"), std::string::npos) << refused.err;
    const fs::path edited = damaged_copy("signed", "edited");
    std::string text = read_file(edited / "manifest.json");
    text.replace(text.find("\"name\": \"signed\""), 16, "\"name\": \"sigxed\"");
    TempDir::write_at(edited / "manifest.json", text);
    refused =
        import_bundle("edited", far_, {"--keyring", test_keys().key_file(Signer::Good).string()});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("bad signature"), std::string::npos) << refused.err;
    EXPECT_EQ(tree_digests(far_), far_before);

    // The bundle itself was never written to; with the right key it imports.
    EXPECT_EQ(tree_digests(tmp_ / "signed"), before);
    const CommandResult imported =
        import_bundle("signed", far_, {"--keyring", test_keys().key_file(Signer::Good).string()});
    EXPECT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    EXPECT_EQ(published(far_ / "alpha"), published(near_ / "alpha"));
    EXPECT_TRUE(fs::exists(far_ / "keep.txt"));
}

// A second import of the same bundle after the first stopped (a failure after the chunks were
// checked) does not read the chunks checked already.
TEST_F(Export, AResumedImportDoesNotCheckTheChunksCheckedBefore) {
    ASSERT_EQ(sync_near().exit_code, 0);
    ASSERT_EQ(export_bundle("resume").exit_code, 0);
    // The destination is a file: the checks pass, the placement fails.
    TempDir::write_at(tmp_ / "blocked", "not a directory\n");
    const CommandResult failed = import_bundle("resume", tmp_ / "blocked");
    EXPECT_EQ(failed.exit_code, 1) << failed.out;
    const std::size_t chunks = manifest("resume")["chunks"].size();
    fs::remove(tmp_ / "blocked");
    const CommandResult resumed = import_bundle("resume", tmp_ / "blocked");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find("0 chunk(s) checked, " + std::to_string(chunks) +
                               " checked by an earlier run"),
              std::string::npos)
        << resumed.out;
}

}  // namespace
}  // namespace rpmirror::test
