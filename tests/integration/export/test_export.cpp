// `rpmirror export` and `rpmirror import`, end to end: real repositories (rpmbuild +
// createrepo_c) served by nginx and synced by the real binary, bundles carried to an empty
// destination with its own state directory, dnf reading what was imported, `rpmirror verify`
// checking it, and damaged, incomplete, wrongly based or wrongly signed bundles refused with the
// destination untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kIds{"alpha", "beta", "gamma"};

class Export : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        for (const std::string& id : kIds) {
            upstreams_[id] = copy_repo(test_repo("sample-repo"), tmp_ / "upstream" / id);
        }
    }

    // `rpmirror sync` of every upstream into near_ (metadata, --delete).
    CommandResult sync_near() {
        std::vector<std::string> args{"-p", near_.string(), "--download-metadata", "--delete"};
        for (const std::string& id : kIds) {
            if (servers_.find(id) == servers_.end()) {
                servers_[id] = &serve(upstreams_[id]);
            }
            args.insert(args.end(),
                        {"--repofrompath", id + "," + servers_[id]->url("/"), "--repo", id});
        }
        return sync(args);
    }

    CommandResult rpmirror(std::vector<std::string> args,
                           const std::vector<std::string>& env = {}) {
        std::vector<std::string> argv{"env"};
        argv.insert(argv.end(), env.begin(), env.end());
        argv.push_back(rpmirror_binary());
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    CommandResult export_bundle(const std::string& name, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{
            "export", "-p", near_.string(), "-o", (tmp_ / name).string(), "--chunk-size", "100k"};
        args.insert(args.end(), extra.begin(), extra.end());
        return rpmirror(args, {"GNUPGHOME=" + test_keys().home().string()});
    }

    CommandResult import_bundle(const std::string& name, const fs::path& into,
                                std::vector<std::string> extra = {}) {
        std::vector<std::string> args{"import",      (tmp_ / name).string(),    "-p", into.string(),
                                      "--state-dir", (into.string() + "-state")};
        args.insert(args.end(), extra.begin(), extra.end());
        return rpmirror(args);
    }

    nlohmann::json manifest(const std::string& name) {
        return nlohmann::json::parse(read_file(tmp_ / name / "manifest.json"));
    }

    // The names dnf lists in the repository at `dir` (dnf must read it).
    std::vector<std::string> dnf_names(const fs::path& dir) {
        auto [exit_code, names] =
            dnf_repoquery(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)), dir, "%{name}");
        EXPECT_EQ(exit_code, 0) << dir;
        EXPECT_FALSE(names.empty()) << dir;
        return names;
    }

    // The published files of a repository (packages and repodata/), with their digests.
    static std::map<std::string, std::string> published(const fs::path& repo) {
        auto digests = package_digests(repo);
        for (const auto& [path, digest] : prefixed(tree_digests(repo / "repodata"), "repodata/")) {
            digests[path] = digest;
        }
        return digests;
    }

    // The files outside repodata/ the first repository of `written` carries; adds every carried
    // file's size to `bytes`.
    static std::vector<std::string> carried_packages(const nlohmann::json& written,
                                                     std::uint64_t& bytes) {
        std::vector<std::string> packages;
        for (const auto& file : written["repositories"][0]["files"]) {
            if (!file.contains("chunk")) {
                continue;
            }
            const std::string key = file["key"];
            bytes += file["size"].get<std::uint64_t>();
            if (!key.starts_with("repodata/")) {
                packages.push_back(key);
            }
        }
        return packages;
    }

    // The files outside repodata/ the first repository of `written` lists as gone (the old
    // metadata's records are gone too).
    static std::vector<std::string> removed_packages(const nlohmann::json& written) {
        std::vector<std::string> packages;
        for (const auto& key : written["repositories"][0]["removed"]) {
            if (!key.get<std::string>().starts_with("repodata/")) {
                packages.push_back(key);
            }
        }
        return packages;
    }

    // A bundle's copy with one change, for the refusals (the bundle itself stays good).
    fs::path damaged_copy(const std::string& name, const std::string& as) {
        fs::copy(tmp_ / name, tmp_ / as, fs::copy_options::recursive);
        return tmp_ / as;
    }

    // Changes upstream `id`: medium added back, data removed (a second revision).
    void second_revision(const std::string& id) {
        fs::rename(tmp_ / ("aside-" + id), upstreams_[id] / "Packages" / kMedium);
        fs::remove(upstreams_[id] / "Packages" / kData);
        recreate_repo(upstreams_[id], "1704240000", tmp_ / "logs");
    }
    void first_revision(const std::string& id) {
        fs::rename(upstreams_[id] / "Packages" / kMedium, tmp_ / ("aside-" + id));
        recreate_repo(upstreams_[id], "1704153600", tmp_ / "logs");
    }

    std::map<std::string, fs::path> upstreams_;
    std::map<std::string, NginxServer*> servers_;
    fs::path near_ = tmp_ / "near";
    fs::path far_ = tmp_ / "far";
    int dnf_runs_ = 0;
};

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
    // The bundle is read from a read-only directory, and nothing is written into it.
    fs::permissions(tmp_ / "full", fs::perms::owner_write | fs::perms::group_write,
                    fs::perm_options::remove);
    const CommandResult imported = import_bundle("full", far_);
    fs::permissions(tmp_ / "full", fs::perms::owner_write, fs::perm_options::add);
    ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    for (const std::string& id : kIds) {
        EXPECT_EQ(published(far_ / id), published(near_ / id)) << id;
        EXPECT_EQ(dnf_names(far_ / id), dnf_names(near_ / id)) << id;
        EXPECT_TRUE(fs::is_directory(far_ / "snapshots" / id / "full")) << imported.out;
    }
    const CommandResult verified =
        rpmirror({"verify", "-p", far_.string(), "-c", (tmp_ / "empty.conf").string(), "--reposdir",
                  (tmp_ / "empty-reposdir").string(), "--state-dir", far_.string() + "-state"});
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
