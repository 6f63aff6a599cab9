// `rpmirror sync` with repo_gpgcheck (repomd.xml.asc) and --gpgcheck (package signatures),
// against repositories signed in the test with its own gpg keys and rpmsign, served by nginx.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

const std::string kTiny = "rpmirror-sample-tiny-1.0-1.noarch.rpm";
const std::string kSmall = "rpmirror-sample-small-1.0-1.noarch.rpm";
const std::string kMedium = "rpmirror-sample-medium-1.0-1.noarch.rpm";
const std::string kDocs = "rpmirror-sample-docs-1.0-1.noarch.rpm";
const std::string kData = "rpmirror-sample-data-1.0-1.noarch.rpm";

class SyncSignatureTest : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (IsSkipped()) {
            return;
        }
        if (!signing_tools_available()) {
            GTEST_FAIL()
                << "/usr/bin/gpg or /usr/bin/rpmsign not found; scripts/deps installs them "
                   "(Debian packages gpg, rpm)";
        }
    }

    // A copy of the sample repository at tmp_/`name` whose packages are signed as `signers` says
    // (a package not listed stays unsigned), with repodata/ regenerated for them and repomd.xml
    // signed by `repomd_signer` (no repomd.xml.asc iff nullopt).
    std::filesystem::path signed_repo(const std::string& name,
                                      const std::map<std::string, Signer>& signers,
                                      std::optional<Signer> repomd_signer) {
        const auto repo = copy_repo(test_repo("sample-repo"), tmp_ / name);
        for (const auto& [package, signer] : signers) {
            test_keys().sign_rpm(signer, repo / "Packages" / package);
        }
        recreate_repo(repo, "1704067200", tmp_ / "logs");
        sign_repomd(repo, repomd_signer);
        return repo;
    }

    static void sign_repomd(const std::filesystem::path& repo, std::optional<Signer> signer) {
        const auto signature = repo / "repodata" / "repomd.xml.asc";
        std::filesystem::remove(signature);
        if (signer) {
            test_keys().sign_detached(*signer, repo / "repodata" / "repomd.xml", signature);
        }
    }

    static std::map<std::string, Signer> all_signed_by(Signer signer) {
        return {
            {kTiny, signer}, {kSmall, signer}, {kMedium, signer}, {kDocs, signer}, {kData, signer}};
    }

    // Writes reposdir/<id>.repo for the repository at `baseurl`.
    void write_repo_file(const std::string& id, const std::string& baseurl, bool gpgcheck,
                         bool repo_gpgcheck, const std::vector<std::string>& gpgkeys) {
        std::string text = "[" + id + "]\nname=" + id + "\nbaseurl=" + baseurl + "\n";
        text += std::string("gpgcheck=") + (gpgcheck ? "1" : "0") + "\n";
        text += std::string("repo_gpgcheck=") + (repo_gpgcheck ? "1" : "0") + "\n";
        if (!gpgkeys.empty()) {
            text += "gpgkey=";
            for (const std::string& key : gpgkeys) {
                text += key + " ";
            }
            text += "\n";
        }
        TempDir::write_at(tmp_ / "empty-reposdir" / (id + ".repo"), text);
    }

    static std::string file_url(Signer signer) {
        return "file://" + test_keys().key_file(signer).string();
    }

    CommandResult sync_signed(const std::vector<std::string>& extra) {
        std::vector<std::string> args{"--repo", "signed", "-p", (tmp_ / "mirror").string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return sync(args);
    }

    // The mixed repository of the --gpgcheck tests: tiny signed by the repository's key, small
    // by a key the repository does not list, medium unsigned, docs by its expired key, and data
    // signed by its key but with one byte of the payload changed afterwards (the metadata is
    // made after that, so the checksum matches: only the signature can tell).
    std::filesystem::path mixed_repo() {
        const auto repo = copy_repo(test_repo("sample-repo"), tmp_ / "mixed");
        test_keys().sign_rpm(Signer::Good, repo / "Packages" / kTiny);
        test_keys().sign_rpm(Signer::Other, repo / "Packages" / kSmall);
        test_keys().sign_rpm(Signer::Expired, repo / "Packages" / kDocs);
        const auto data = repo / "Packages" / kData;
        test_keys().sign_rpm(Signer::Good, data);
        std::string bytes = read_file(data);
        bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x55);
        TempDir::write_at(data, bytes);
        recreate_repo(repo, "1704067200", tmp_ / "logs");
        return repo;
    }

    std::filesystem::path mirrored(const std::string& package) const {
        return tmp_ / "mirror" / "signed" / "Packages" / package;
    }
};

// ---------------------------------------------------------------------------------------------
// repo_gpgcheck

TEST_F(SyncSignatureTest, RepoGpgcheckWithAGoodSignatureSyncsAndPublishesTheSignature) {
    const auto repo = signed_repo("upstream", {}, Signer::Good);
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true, {file_url(Signer::Good)});
    const CommandResult result = sync_signed({"--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_digests(tmp_ / "mirror" / "signed"), package_digests(repo));
    EXPECT_EQ(read_file(tmp_ / "mirror" / "signed" / "repodata" / "repomd.xml.asc"),
              read_file(repo / "repodata" / "repomd.xml.asc"));
}

TEST_F(SyncSignatureTest, RepoGpgcheckKeyIsFetchedOverHttp) {
    const auto repo = signed_repo("upstream", {}, Signer::Good);
    std::filesystem::create_directories(repo / "keys");
    std::filesystem::copy_file(test_keys().key_file(Signer::Good), repo / "keys" / "RPM-GPG-KEY");
    NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true, {server.url("/keys/RPM-GPG-KEY")});
    const CommandResult result = sync_signed({});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::vector<std::string> uris = uris_since(server, 0);
    EXPECT_NE(std::find(uris.begin(), uris.end(), "/keys/RPM-GPG-KEY"), uris.end());
    EXPECT_NE(std::find(uris.begin(), uris.end(), "/repodata/repomd.xml.asc"), uris.end());
    EXPECT_EQ(package_digests(tmp_ / "mirror" / "signed"), package_digests(repo));
}

TEST_F(SyncSignatureTest, RepomdModifiedAfterSigningFailsAndKeepsThePreviousMirror) {
    const auto repo = signed_repo("upstream", {}, Signer::Good);
    NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true, {file_url(Signer::Good)});
    ASSERT_EQ(sync_signed({"--download-metadata"}).exit_code, 0);
    const auto before = tree_digests(tmp_ / "mirror");

    // Upstream's repomd.xml changes after it was signed (a new revision, the old signature).
    std::string repomd = read_file(repo / "repodata" / "repomd.xml");
    const auto revision = repomd.find("1704067200");
    ASSERT_NE(revision, std::string::npos);
    repomd.replace(revision, 10, "1704067201");
    TempDir::write_at(repo / "repodata" / "repomd.xml", repomd);

    const std::size_t seen = log_size(server);
    const CommandResult result = sync_signed({"--download-metadata"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("signed: FAILED"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(server.url("/repodata/repomd.xml.asc")), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("bad signature"), std::string::npos) << result.err;
    // Nothing else was fetched, nothing in the mirror changed.
    EXPECT_EQ(uris_since(server, seen),
              (std::vector<std::string>{"/repodata/repomd.xml", "/repodata/repomd.xml.asc"}));
    EXPECT_EQ(tree_digests(tmp_ / "mirror"), before);
}

TEST_F(SyncSignatureTest, RepomdSignedByAnotherKeyFailsNamingTheKey) {
    const auto repo = signed_repo("upstream", {}, Signer::Other);
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true, {file_url(Signer::Good)});
    const CommandResult result = sync_signed({"--download-metadata"});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("signed with key 0x" + test_keys().key_id(Signer::Other) +
                              " which is not among the repository's gpgkey"),
              std::string::npos)
        << result.err;
    EXPECT_FALSE(std::filesystem::exists(tmp_ / "mirror" / "signed" / "Packages"));
    EXPECT_FALSE(std::filesystem::exists(tmp_ / "mirror" / "signed" / "repodata"));
}

TEST_F(SyncSignatureTest, UnsignedRepomdFailsNamingTheMissingSignature) {
    const auto repo = signed_repo("upstream", {}, std::nullopt);
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true, {file_url(Signer::Good)});
    const CommandResult result = sync_signed({});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find(server.url("/repodata/repomd.xml.asc")), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("not signed"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(tmp_ / "mirror" / "signed" / "Packages"));
}

TEST_F(SyncSignatureTest, RepomdSignedByAnExpiredKeyFails) {
    const auto repo = signed_repo("upstream", {}, Signer::Expired);
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true,
                    {file_url(Signer::Good), file_url(Signer::Expired)});
    const CommandResult result = sync_signed({});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("key 0x" + test_keys().key_id(Signer::Expired)), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("expired on 2020-06-01"), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(tmp_ / "mirror" / "signed" / "Packages"));
}

TEST_F(SyncSignatureTest, RepoGpgcheckWithoutGpgkeyIsAClearError) {
    const auto repo = signed_repo("upstream", {}, Signer::Good);
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, true, {});
    const CommandResult result = sync_signed({});
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE(result.err.find("signed: FAILED"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("no gpgkey"), std::string::npos) << result.err;
}

// ---------------------------------------------------------------------------------------------
// --gpgcheck

TEST_F(SyncSignatureTest, GpgcheckWithGoodSignaturesSyncsAndPublishes) {
    const auto repo = signed_repo("upstream", all_signed_by(Signer::Good), std::nullopt);
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), true, false, {file_url(Signer::Good)});
    const CommandResult result = sync_signed({"--gpgcheck", "--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_digests(tmp_ / "mirror" / "signed"), package_digests(repo));
    EXPECT_TRUE(std::filesystem::exists(tmp_ / "mirror" / "signed" / "repodata" / "repomd.xml"));
    // The checked mirror is a no-op next time.
    const CommandResult again = sync_signed({"--gpgcheck", "--download-metadata"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
}

TEST_F(SyncSignatureTest, GpgcheckRemovesEveryPackageThatFailsAndExits1) {
    const auto repo = mixed_repo();
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), true, false,
                    {file_url(Signer::Good), file_url(Signer::Expired)});
    const CommandResult result = sync_signed({"--gpgcheck", "--download-metadata"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_TRUE(std::filesystem::exists(mirrored(kTiny)));
    for (const std::string& removed : {kSmall, kMedium, kDocs, kData}) {
        EXPECT_FALSE(std::filesystem::exists(mirrored(removed))) << removed;
    }
    const auto line_for = [&](const std::string& name) {
        for (const std::string& line : lines_of(result.err)) {
            if (line.starts_with("signed: " + name)) {
                return line;
            }
        }
        return std::string();
    };
    EXPECT_NE(line_for("rpmirror-sample-small-1.0-1.noarch")
                  .find("signed with key 0x" + test_keys().key_id(Signer::Other)),
              std::string::npos)
        << result.err;
    EXPECT_NE(line_for("rpmirror-sample-medium-1.0-1.noarch").find("not signed"), std::string::npos)
        << result.err;
    EXPECT_NE(line_for("rpmirror-sample-docs-1.0-1.noarch").find("expired on 2020-06-01"),
              std::string::npos)
        << result.err;
    EXPECT_NE(line_for("rpmirror-sample-data-1.0-1.noarch").find("bad signature"),
              std::string::npos)
        << result.err;
    EXPECT_EQ(line_for("rpmirror-sample-tiny-1.0-1.noarch"), "");
    // Metadata that lists the removed packages is not published.
    EXPECT_FALSE(std::filesystem::exists(tmp_ / "mirror" / "signed" / "repodata"));
}

TEST_F(SyncSignatureTest, GpgcheckChecksPackagesKeptFromAnUncheckedRun) {
    const auto repo = mixed_repo();
    NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), true, false,
                    {file_url(Signer::Good), file_url(Signer::Expired)});
    const CommandResult unchecked = sync_signed({"--download-metadata"});
    ASSERT_EQ(unchecked.exit_code, 0) << unchecked.err;
    ASSERT_TRUE(std::filesystem::exists(mirrored(kSmall)));
    const auto published = tree_digests(tmp_ / "mirror" / "signed" / "repodata");

    const std::size_t seen = log_size(server);
    const CommandResult checked = sync_signed(
        {"--gpgcheck", "--download-metadata", "--json", (tmp_ / "report.json").string()});
    EXPECT_EQ(checked.exit_code, 1) << checked.err;
    const auto report = nlohmann::json::parse(read_file(tmp_ / "report.json"));
    EXPECT_EQ(report["repositories"][0]["kept"], 5);
    EXPECT_EQ(report["repositories"][0]["signatures_checked"], 5);
    EXPECT_EQ(report["repositories"][0]["failed"], 4);
    EXPECT_TRUE(std::filesystem::exists(mirrored(kTiny)));
    for (const std::string& removed : {kSmall, kMedium, kDocs, kData}) {
        EXPECT_FALSE(std::filesystem::exists(mirrored(removed))) << removed;
    }
    // Checked where they were: nothing downloaded again; the previous repodata/ stays.
    EXPECT_TRUE(package_uris(uris_since(server, seen)).empty());
    EXPECT_EQ(tree_digests(tmp_ / "mirror" / "signed" / "repodata"), published);
}

TEST_F(SyncSignatureTest, GpgcheckLeavesRepositoriesWithGpgcheckOffUnchecked) {
    const auto repo = mixed_repo();
    const NginxServer& server = serve(repo);
    write_repo_file("signed", server.url("/"), false, false, {file_url(Signer::Good)});
    const CommandResult result = sync_signed({"--gpgcheck"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(package_digests(tmp_ / "mirror" / "signed"), package_digests(repo));
}

TEST_F(SyncSignatureTest, GpgcheckAppliesToRepofrompathWithSetopt) {
    const auto repo = mixed_repo();
    const NginxServer& server = serve(repo);
    const std::vector<std::string> base{
        "--repofrompath",          "signed," + server.url("/"), "--repo", "signed", "-p",
        (tmp_ / "mirror").string()};
    // --repofrompath repositories have gpgcheck off, as in dnf: nothing is checked.
    std::vector<std::string> args = base;
    args.push_back("--gpgcheck");
    const CommandResult unchecked = sync(args);
    ASSERT_EQ(unchecked.exit_code, 0) << unchecked.err;
    ASSERT_TRUE(std::filesystem::exists(mirrored(kMedium)));
    args.push_back("--setopt=signed.gpgcheck=1");
    args.push_back("--setopt=signed.gpgkey=" + file_url(Signer::Good));
    const CommandResult checked = sync(args);
    EXPECT_EQ(checked.exit_code, 1) << checked.err;
    EXPECT_TRUE(std::filesystem::exists(mirrored(kTiny)));
    EXPECT_FALSE(std::filesystem::exists(mirrored(kMedium)));
}

}  // namespace
}  // namespace rpmirror::test
