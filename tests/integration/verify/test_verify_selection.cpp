// `rpmirror verify` audits a mirror with the selection its sync recorded (-a, --source, -n,
// --min-buildtime, includepkgs/excludepkgs): a filtered mirror passes, and `--repair` downloads
// nothing outside the selection. Filters on verify's command line override the recorded ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class VerifySelection : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        server_ = &serve(test_repo("index-repo"));
        mirror_ = tmp_ / "mirror";
        // Upstream's metadata (listing every package), so that verify's own filters have
        // packages outside the recorded selection to find.
        const CommandResult synced = sync(
            {"--repofrompath", "idx," + server_->url("/"), "--repo", "idx", "-p", mirror_.string(),
             "-a", "x86_64,noarch", "--newest-only", "--download-metadata", "--upstream-metadata"});
        ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    }

    CommandResult verify(const std::vector<std::string>& args) {
        std::vector<std::string> argv{rpmirror_binary(),
                                      "verify",
                                      "-p",
                                      mirror_.string(),
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    fs::path package(const std::string& name) const { return mirror_ / "idx/Packages" / name; }

    NginxServer* server_ = nullptr;
    fs::path mirror_;
};

const std::vector<std::string> kSelected{
    "rpmirror-idx-epoch-1.0-1.x86_64.rpm",
    "rpmirror-idx-multi-1.10-1.x86_64.rpm",
    "rpmirror-idx-noarch-1.0^git1-1.noarch.rpm",
};

TEST_F(VerifySelection, AMirrorMadeWithArchAndNewestOnlyPassesWithTheRecordedSelection) {
    std::vector<std::string> present;
    for (const auto& entry : fs::directory_iterator(mirror_ / "idx/Packages")) {
        present.push_back(entry.path().filename().string());
    }
    std::sort(present.begin(), present.end());
    ASSERT_EQ(present, kSelected);

    const CommandResult verified = verify({});

    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    EXPECT_NE(verified.out.find(
                  "idx: selection: --arch x86_64,noarch --newest-only (recorded by sync)\n"),
              std::string::npos)
        << verified.out;
    EXPECT_NE(verified.out.find("idx: OK"), std::string::npos) << verified.out;
}

TEST_F(VerifySelection, AllPackagesIgnoresTheRecordedSelection) {
    const CommandResult verified = verify({"--all-packages", "-q"});

    EXPECT_EQ(verified.exit_code, 1) << verified.out << verified.err;
    EXPECT_NE(verified.out.find("idx: Packages/rpmirror-idx-multi-1.0-1.aarch64.rpm: missing\n"),
              std::string::npos)
        << verified.out;
    EXPECT_EQ(verified.out.find("rpmirror-idx-multi-1.10-1.x86_64.rpm"), std::string::npos)
        << verified.out;
}

TEST_F(VerifySelection, FiltersOnTheCommandLineOverrideTheRecordedOnes) {
    const CommandResult source = verify({"--source", "-q"});
    EXPECT_EQ(source.exit_code, 1) << source.out << source.err;
    EXPECT_EQ(source.out,
              "idx: Packages/rpmirror-idx-multi-1.10-1.src.rpm: missing\n"
              "idx: Packages/rpmirror-idx-noarch-1.0-1.src.rpm: missing\n");

    const CommandResult x86_64_only = verify({"-a", "x86_64"});
    EXPECT_EQ(x86_64_only.exit_code, 0) << x86_64_only.out << x86_64_only.err;
    EXPECT_NE(x86_64_only.out.find("idx: selection: --arch x86_64 --newest-only (recorded by "
                                   "sync, overridden by the command line)"),
              std::string::npos)
        << x86_64_only.out;
}

TEST_F(VerifySelection, RepairDownloadsOnlyDamagedPackagesOfTheSelection) {
    std::string bytes = read_file(package("rpmirror-idx-multi-1.10-1.x86_64.rpm"));
    bytes[bytes.size() / 2] ^= 0x55;
    TempDir::write_at(package("rpmirror-idx-multi-1.10-1.x86_64.rpm"), bytes);
    fs::remove(package("rpmirror-idx-epoch-1.0-1.x86_64.rpm"));
    const std::size_t before = log_size(*server_);

    const CommandResult repaired =
        verify({"--repair", "--no-cache", "--repofrompath", "idx," + server_->url("/")});

    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_EQ(package_uris(uris_since(*server_, before)),
              (std::vector<std::string>{"/Packages/rpmirror-idx-epoch-1.0-1.x86_64.rpm",
                                        "/Packages/rpmirror-idx-multi-1.10-1.x86_64.rpm"}));
    std::vector<std::string> present;
    for (const auto& entry : fs::directory_iterator(mirror_ / "idx/Packages")) {
        present.push_back(entry.path().filename().string());
    }
    std::sort(present.begin(), present.end());
    EXPECT_EQ(present, kSelected);
    EXPECT_EQ(verify({"-q"}).exit_code, 0);
}

// A filtered mirror signed with --sign-key: the repair republishes its rewritten metadata
// signed with the same key (the state records it), not unsigned.
TEST_F(VerifySelection, RepairSignsTheRewrittenMetadataWithTheMirrorsKey) {
    if (!signing_tools_available()) {
        GTEST_FAIL() << "/usr/bin/gpg or /usr/bin/rpmsign not found; scripts/deps installs them";
    }
    ::setenv("GNUPGHOME", test_keys().home().c_str(), 1);
    const fs::path signed_mirror = tmp_ / "signed";
    const CommandResult synced =
        sync({"--repofrompath", "idx," + server_->url("/"), "--repo", "idx", "-p",
              signed_mirror.string(), "-a", "x86_64,noarch", "--download-metadata", "--sign-key",
              test_keys().key_id(Signer::Good)});
    ASSERT_EQ(synced.exit_code, 0) << synced.err;
    const fs::path repodata = signed_mirror / "idx" / "repodata";
    ASSERT_TRUE(fs::exists(repodata / "repomd.xml.asc"));
    fs::path victim;
    for (const auto& entry : fs::directory_iterator(signed_mirror / "idx" / "Packages")) {
        victim = entry.path();
    }
    ASSERT_FALSE(victim.empty());
    fs::remove(victim);

    mirror_ = signed_mirror;
    const CommandResult repaired =
        verify({"--repair", "--repofrompath", "idx," + server_->url("/")});
    ::unsetenv("GNUPGHOME");
    EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
    EXPECT_TRUE(fs::exists(victim));
    ASSERT_TRUE(fs::exists(repodata / "repomd.xml.asc")) << repaired.out << repaired.err;
    const CommandResult verified =
        run_to_end({kGpgBinary, "--homedir", test_keys().home().string(), "--verify",
                    (repodata / "repomd.xml.asc").string(), (repodata / "repomd.xml").string()},
                   tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.err;
}

}  // namespace
}  // namespace rpmirror::test
