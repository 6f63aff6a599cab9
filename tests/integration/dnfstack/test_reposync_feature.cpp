// dnf-behave-tests/dnf/plugins-core/reposync.feature (ci-dnf-stack dnf-4-stack, 2a79b28f), every
// scenario in upstream order, each run with `dnf reposync` and with `rpmirror reposync`
// (see dnfstack_fixture.hpp for what differs from upstream and why).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/dnfstack/dnfstack_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class DnfStackReposync : public DnfStackScenario {
  protected:
    std::string download_path() const { return "--download-path=" + tempdir_.string(); }

    // The comps file the fixture was built with (upstream compares with comps.xml.zst, unpacked).
    fs::path fixture_comps() const {
        return fixture_sources("dnf-ci-thirdparty-updates") / "comps.xml";
    }

    // `dnf group list` over a repository "testrepo" at `baseurl` (the first repository dropped)
    // lists DNF-CI-Testgroup.
    void expect_group_list_shows_testgroup(const std::string& dropped, const fs::path& baseurl) {
        configure_repository("testrepo", baseurl.string());
        drop_repository(dropped);
        const CommandResult groups = dnf({"group", "list"});
        ASSERT_EQ(groups.exit_code, 0) << groups.out << groups.err;
        EXPECT_EQ(without_metadata_lines(groups.out),
                  (std::vector<std::string>{"Available Groups:", "   DNF-CI-Testgroup"}))
            << groups.out;
    }
};

// Scenarios for fixes newer than Debian 12's dnf-plugins-core 4.3.1: dnf 4.14 here fails them
// (each says why), so they run against rpmirror only.
class DnfStackReposyncNewer : public DnfStackReposync {};

TEST_P(DnfStackReposync, BaseFunctionality) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(: SuperRipper-1\.2-1\.)")) << result.out;
    EXPECT_TRUE(contains_match(result.out, R"(: SuperRipper-1\.3-1\.)")) << result.out;
    const std::string package = "x86_64/CQRlib-extension-1.6-2.x86_64.rpm";
    EXPECT_TRUE(same_contents(tempdir_ / "dnf-ci-thirdparty-updates" / package,
                              fixture_repo("dnf-ci-thirdparty-updates") / package));
}

TEST_P(DnfStackReposync, NewestOnly) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path(), "--newest-only"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(: SuperRipper-1\.3-1\.)")) << result.out;
    EXPECT_FALSE(contains_match(result.out, R"(: SuperRipper-1\.2-1\.)")) << result.out;
}

TEST_P(DnfStackReposync, Downloadcomps) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path(), "--downloadcomps"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(
        contains_match(result.out, "comps.xml for repository dnf-ci-thirdparty-updates saved"))
        << result.out;
    const fs::path synced = tempdir_ / "dnf-ci-thirdparty-updates";
    EXPECT_TRUE(same_contents(synced / "comps.xml", fixture_comps()));
    execute(
        {"createrepo_c", "--no-database", "--simple-md-filenames", "--groupfile", "comps.xml", "."},
        synced);
    expect_group_list_shows_testgroup("dnf-ci-thirdparty-updates", synced);
}

TEST_P(DnfStackReposync, DownloadcompsWithoutComps) {
    use_repository("dnf-ci-rich", fixture_repo("dnf-ci-rich"), true);
    const CommandResult result = reposync({download_path(), "--downloadcomps"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(contains_match(result.out, "comps.xml for repository dnf-ci-rich saved"))
        << result.out;
}

TEST_P(DnfStackReposync, DownloadcompsUncompressedInRepodata) {
    const fs::path repo = copy_for_modification("dnf-ci-thirdparty-updates");
    execute({"modifyrepo_c", "--remove", "group", (repo / "repodata").string()});
    execute({"modifyrepo_c", "--remove", "group_gz", (repo / "repodata").string()});
    execute({"modifyrepo_c", "--no-compress", "--mdtype", "group", fixture_comps().string(),
             (repo / "repodata").string()});
    use_repository("dnf-ci-thirdparty-updates", repo, true);
    const CommandResult result = reposync({download_path(), "--downloadcomps"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(
        same_contents(tempdir_ / "dnf-ci-thirdparty-updates" / "comps.xml", fixture_comps()));
}

TEST_P(DnfStackReposync, DownloadcompsWithMetadataPath) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const fs::path metadata = tempdir_ / "downloadedmetadata";
    const CommandResult result =
        reposync({download_path(), "--metadata-path=" + metadata.string(), "--downloadcomps"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(
        contains_match(result.out, "comps.xml for repository dnf-ci-thirdparty-updates saved"))
        << result.out;
    EXPECT_TRUE(
        same_contents(metadata / "dnf-ci-thirdparty-updates" / "comps.xml", fixture_comps()));
}

TEST_P(DnfStackReposync, DownloadMetadata) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path(), "--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    expect_group_list_shows_testgroup("dnf-ci-thirdparty-updates",
                                      tempdir_ / "dnf-ci-thirdparty-updates");
}

const std::vector<std::string> kNodejsOfEveryStream{
    "nodejs-8.11.4-1.module_2030+42747d40.x86_64.rpm",
    "nodejs-10.11.0-1.module_2200+adbac02b.x86_64.rpm",
    "nodejs-11.0.0-1.module_2311+8d497411.x86_64.rpm",
};

TEST_P(DnfStackReposync, ModularAllStreams) {
    use_repository("dnf-ci-fedora-modular", fixture_repo("dnf-ci-fedora-modular"), true);
    const CommandResult result = reposync({download_path()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const std::string& name : kNodejsOfEveryStream) {
        EXPECT_TRUE(fs::exists(tempdir_ / "dnf-ci-fedora-modular" / "x86_64" / name)) << name;
    }
}

TEST_P(DnfStackReposync, ModularAllStreamsEvenIfModuleDisabled) {
    use_repository("dnf-ci-fedora-modular", fixture_repo("dnf-ci-fedora-modular"), true);
    const CommandResult disabled = dnf({"module", "disable", "nodejs"});
    ASSERT_EQ(disabled.exit_code, 0) << disabled.out << disabled.err;
    uses_installroot_ = true;  // where dnf keeps the module's state
    const CommandResult result = reposync({download_path()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const std::string& name : kNodejsOfEveryStream) {
        EXPECT_TRUE(fs::exists(tempdir_ / "dnf-ci-fedora-modular" / "x86_64" / name)) << name;
    }
}

TEST_P(DnfStackReposync, RespectsExcludes) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path(), "--excludepkgs=SuperRipper"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(: CQRlib-extension-1\.6-2\.src\.rpm)")) << result.out;
    EXPECT_TRUE(contains_match(result.out, R"(: CQRlib-extension-1\.6-2\.x86_64\.rpm)"))
        << result.out;
    EXPECT_FALSE(contains_match(result.out, "SuperRipper")) << result.out;
    const fs::path synced = tempdir_ / "dnf-ci-thirdparty-updates";
    EXPECT_EQ(ls(synced / "x86_64"),
              (std::vector<std::string>{"CQRlib-extension-1.6-2.x86_64.rpm"}));
    EXPECT_EQ(ls(synced / "src"), (std::vector<std::string>{"CQRlib-extension-1.6-2.src.rpm"}));
}

TEST_P(DnfStackReposync, RespectsIncludes) {
    use_repository("dnf-ci-fedora", fixture_repo("dnf-ci-fedora"), true);
    const CommandResult result =
        reposync({download_path(), "--arch=noarch", "--setopt=includepkgs=abcde"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(abcde-2\.9\.2-1\.fc29\.noarch\.rpm)")) << result.out;
    EXPECT_EQ(find_all(tempdir_),
              (std::vector<std::string>{"dnf-ci-fedora", "dnf-ci-fedora/noarch",
                                        "dnf-ci-fedora/noarch/abcde-2.9.2-1.fc29.noarch.rpm"}));
}

TEST_P(DnfStackReposync, RespectsExcludesButNotModularExcludes) {
    use_repository("dnf-ci-fedora-modular", fixture_repo("dnf-ci-fedora-modular"), true);
    const CommandResult result = reposync({download_path(), "--setopt=includepkgs=postgresql"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(: postgresql-6\.1-1\.)")) << result.out;
    EXPECT_TRUE(contains_match(result.out, R"(: postgresql-9\.6\.8-1\.)")) << result.out;
    EXPECT_FALSE(contains_match(result.out, "ninja")) << result.out;
    EXPECT_FALSE(contains_match(result.out, "nodejs")) << result.out;
    const fs::path synced = tempdir_ / "dnf-ci-fedora-modular";
    EXPECT_EQ(ls(synced / "x86_64"),
              (std::vector<std::string>{"postgresql-6.1-1.module_2514+aa9aadc5.x86_64.rpm",
                                        "postgresql-9.6.8-1.module_1710+b535a823.x86_64.rpm"}));
    EXPECT_EQ(ls(synced / "src"),
              (std::vector<std::string>{"postgresql-6.1-1.module_2514+aa9aadc5.src.rpm",
                                        "postgresql-9.6.8-1.module_1710+b535a823.src.rpm"}));
}

TEST_P(DnfStackReposync, DeleteRemovesPackagesNoLongerInTheRepository) {
    use_repository("setopt.ext", fixture_repo("setopt.ext"), false);
    const CommandResult first = reposync({download_path()});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const fs::path synced = tempdir_ / "setopt.ext";
    for (const char* file : {"x86_64/wget-1.0-1.fc29.x86_64.rpm", "src/wget-1.0-1.fc29.src.rpm",
                             "x86_64/flac-1.0-1.fc29.x86_64.rpm", "src/flac-1.0-1.fc29.src.rpm",
                             "x86_64/flac-libs-1.0-1.fc29.x86_64.rpm"}) {
        EXPECT_TRUE(fs::exists(synced / file)) << file;
    }
    use_repository("setopt.ext", fixture_repo("setopt"), false);
    const CommandResult second = reposync({download_path(), "--refresh", "--delete"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_TRUE(fs::exists(synced / "x86_64/wget-1.0-1.fc29.x86_64.rpm"));
    EXPECT_TRUE(fs::exists(synced / "src/wget-1.0-1.fc29.src.rpm"));
    EXPECT_FALSE(fs::exists(synced / "x86_64/flac-1.0-1.fc29.x86_64.rpm"));
    EXPECT_FALSE(fs::exists(synced / "src/flac-1.0-1.fc29.src.rpm"));
    EXPECT_FALSE(fs::exists(synced / "x86_64/flac-libs-1.0-1.fc29.x86_64.rpm"));
}

TEST_P(DnfStackReposync, DeleteWithSeveralRepositoriesKeepsTheirContent) {
    use_repository("reposync", fixture_repo("reposync"), true);
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path(), "--delete"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_FALSE(contains_match(result.out, R"(\[DELETED\])")) << result.out;
    for (const char* file :
         {"reposync/x86_64/wget-1.0-1.fc29.x86_64.rpm", "reposync/src/wget-1.0-1.fc29.src.rpm",
          "dnf-ci-thirdparty-updates/x86_64/SuperRipper-1.3-1.x86_64.rpm",
          "dnf-ci-thirdparty-updates/x86_64/SuperRipper-1.2-1.x86_64.rpm",
          "dnf-ci-thirdparty-updates/x86_64/CQRlib-extension-1.6-2.x86_64.rpm",
          "dnf-ci-thirdparty-updates/src/SuperRipper-1.3-1.src.rpm",
          "dnf-ci-thirdparty-updates/src/SuperRipper-1.2-1.src.rpm",
          "dnf-ci-thirdparty-updates/src/CQRlib-extension-1.6-2.src.rpm"}) {
        EXPECT_TRUE(fs::exists(tempdir_ / file)) << file;
    }
}

TEST_P(DnfStackReposync, RemoteTimeOfPackages) {
    use_repository("reposync", fixture_repo("reposync"), true);
    const CommandResult result = reposync({download_path(), "--remote-time"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(\([12]/2\): wget-1\.0-1\.fc29\.x86_64\.rpm .*)"))
        << result.out;
    EXPECT_TRUE(contains_match(result.out, R"(\([12]/2\): wget-1\.0-1\.fc29\.src\.rpm .*)"))
        << result.out;
    const std::string package = "x86_64/wget-1.0-1.fc29.x86_64.rpm";
    const fs::path synced = tempdir_ / "reposync" / package;
    EXPECT_TRUE(same_contents(synced, fixture_repo("reposync") / package));
    // HTTP's Last-Modified has whole seconds.
    EXPECT_EQ(mtime_ns(synced) / 1000000000,
              mtime_ns(fixture_repo("reposync") / package) / 1000000000);
}

TEST_P(DnfStackReposync, RemoteTimeOfMetadata) {
    use_repository("reposync", fixture_repo("reposync"), true);
    const CommandResult result =
        reposync({download_path(), "--download-metadata", "--remote-time"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string primary = "repodata/primary.xml.gz";
    const fs::path synced = tempdir_ / "reposync" / primary;
    EXPECT_TRUE(same_contents(synced, fixture_repo("reposync") / primary));
    EXPECT_EQ(mtime_ns(synced) / 1000000000,
              mtime_ns(fixture_repo("reposync") / primary) / 1000000000);
}

TEST_P(DnfStackReposync, Urls) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({"--urls"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string server = R"(http://127\.0\.0\.1:[0-9]+/)";
    expect_lines_match(result.out, {server + R"(src/CQRlib-extension-1\.6-2\.src\.rpm)",
                                    server + R"(x86_64/CQRlib-extension-1\.6-2\.x86_64\.rpm)",
                                    server + R"(src/SuperRipper-1\.2-1\.src\.rpm)",
                                    server + R"(x86_64/SuperRipper-1\.2-1\.x86_64\.rpm)",
                                    server + R"(src/SuperRipper-1\.3-1\.src\.rpm)",
                                    server + R"(x86_64/SuperRipper-1\.3-1\.x86_64\.rpm)"});
}

TEST_P(DnfStackReposync, UrlsWithDownloadMetadata) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({"--urls", "--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const std::string server = R"(http://127\.0\.0\.1:[0-9]+/)";
    // Upstream's zstd repository has one comps record (comps.xml.zst); this gzip one has two.
    expect_lines_match(
        result.out,
        {server + R"(repodata/primary\.xml\.gz)", server + R"(repodata/filelists\.xml\.gz)",
         server + R"(repodata/other\.xml\.gz)", server + R"(repodata/comps\.xml)",
         server + R"(repodata/comps\.xml\.gz)", server + R"(src/CQRlib-extension-1\.6-2\.src\.rpm)",
         server + R"(x86_64/CQRlib-extension-1\.6-2\.x86_64\.rpm)",
         server + R"(src/SuperRipper-1\.2-1\.src\.rpm)",
         server + R"(x86_64/SuperRipper-1\.2-1\.x86_64\.rpm)",
         server + R"(src/SuperRipper-1\.3-1\.src\.rpm)",
         server + R"(x86_64/SuperRipper-1\.3-1\.x86_64\.rpm)"});
}

TEST_P(DnfStackReposync, NewestOnlyModularMulticontext) {
    const std::string id = "dnf-ci-multicontext-hybrid-multiversion-modular";
    use_repository(id, fixture_repo(id), true);
    const CommandResult result = reposync({"--newest-only", download_path()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const fs::path synced = tempdir_ / id / "x86_64";
    for (const char* present :
         {"nodejs-5.4.1-2.module_2011+41787af1.x86_64.rpm",
          "nodejs-5.4.1-2.module_3012+41787ba4.x86_64.rpm", "nodejs-5.12.2-3.fc29.x86_64.rpm",
          "postgresql-9.6.8-1.module_1710+b535a823.x86_64.rpm",
          "postgresql-9.8.1-1.module_9790+c535b823.x86_64.rpm"}) {
        EXPECT_TRUE(fs::exists(synced / present)) << present;
    }
    for (const char* absent :
         {"nodejs-5.3.1-1.module_2011+41787af0.x86_64.rpm",
          "nodejs-5.3.1-1.module_3012+41787ba3.x86_64.rpm", "nodejs-5.12.1-1.fc29.x86_64.rpm"}) {
        EXPECT_FALSE(fs::exists(synced / absent)) << absent;
    }
}

TEST_P(DnfStackReposync, NewestOnlyModularNotInLatestContext) {
    use_repository("reposync-newest-modular", fixture_repo("reposync-newest-modular"), false);
    const CommandResult result = reposync({"--newest-only", download_path()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    // 0.9-1: the highest non-modular NEVRA; 1.0-2: in the latest stream version; 1.0-9: the
    // highest modular NEVRA.
    EXPECT_EQ(
        ls(tempdir_ / "reposync-newest-modular" / "x86_64"),
        (std::vector<std::string>{"labirinto-0.9-1.x86_64.rpm", "labirinto-1.0-2.module.x86_64.rpm",
                                  "labirinto-1.0-9.module.x86_64.rpm"}));
}

TEST_P(DnfStackReposync, NorepopathWithOneRepository) {
    use_repository("reposync", fixture_repo("reposync"), true);
    const CommandResult result = reposync({download_path(), "--norepopath"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out, R"(\([12]/2\): wget-1\.0-1\.fc29\.x86_64\.rpm .*)"))
        << result.out;
    EXPECT_TRUE(contains_match(result.out, R"(\([12]/2\): wget-1\.0-1\.fc29\.src\.rpm .*)"))
        << result.out;
    for (const char* file : {"x86_64/wget-1.0-1.fc29.x86_64.rpm", "src/wget-1.0-1.fc29.src.rpm"}) {
        EXPECT_TRUE(same_contents(tempdir_ / file, fixture_repo("reposync") / file)) << file;
    }
}

TEST_P(DnfStackReposync, NorepopathWithSeveralRepositoriesFails) {
    use_repository("reposync", fixture_repo("reposync"), true);
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const CommandResult result = reposync({download_path(), "--norepopath"});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.err, "Error: Can't use --norepopath with multiple repositories\n");
}

// dnf 4.14 here fails it: dnf-plugins-core 4.3.1 ignores --norepopath for --metadata-path
// (RHEL-40914, fixed upstream later).
TEST_P(DnfStackReposyncNewer, NorepopathMetadataPathDownloadMetadata) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const fs::path metadata = tempdir_ / "downloadedmetadata";
    const CommandResult result =
        reposync({download_path(), "--norepopath", "--metadata-path=" + metadata.string(),
                  "--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(
        same_contents(metadata / "repodata" / "primary.xml.gz",
                      fixture_repo("dnf-ci-thirdparty-updates") / "repodata" / "primary.xml.gz"));
}

// dnf 4.14 here fails it: dnf-plugins-core 4.3.1 ignores --norepopath for --metadata-path
// (RHEL-40914).
TEST_P(DnfStackReposyncNewer, NorepopathMetadataPathDownloadcomps) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), true);
    const fs::path metadata = tempdir_ / "downloadedmetadata";
    const CommandResult result =
        reposync({download_path(), "--norepopath", "--metadata-path=" + metadata.string(),
                  "--downloadcomps"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(same_contents(metadata / "comps.xml", fixture_comps()));
}

class DnfStackReposyncGpg : public DnfStackReposync {
  protected:
    void use_reposync_gpg() {
        use_repository(
            "reposync-gpg", fixture_repo("reposync-gpg"), false,
            {{"gpgcheck", "1"},
             {"gpgkey",
              "file://" +
                  (fixtures_ / "gpgkeys" / "reposync-gpg" / "reposync-gpg-public").string()}});
        uses_installroot_ = true;  // dnf checks against the installroot's rpmdb
    }
};

TEST_P(DnfStackReposyncGpg, RemovesUnsignedAndNotInstalledKeyPackages) {
    use_reposync_gpg();
    const CommandResult result = reposync({download_path(), "--gpgcheck"});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    std::vector<std::string> lines = lines_of(result.err);
    if (!lines.empty() && lines.front().starts_with("warning: ")) {
        EXPECT_TRUE(contains_match(
            lines.front(), R"(^warning: .*/reposync-gpg/src/dedalo-signed-1\.0-1\.fc29\.src)"
                           R"(\.rpm: Header V4 .SA/SHA256 Signature, key ID .*: NOKEY$)"))
            << lines.front();
        lines.erase(lines.begin());
    }
    EXPECT_EQ(lines, (std::vector<std::string>{
                         "Removing dedalo-signed-1.0-1.fc29.src.rpm: Public key for "
                         "dedalo-signed-1.0-1.fc29.src.rpm is not installed",
                         "Removing dedalo-signed-1.0-1.fc29.x86_64.rpm: Public key for "
                         "dedalo-signed-1.0-1.fc29.x86_64.rpm is not installed",
                         "Removing dedalo-unsigned-1.0-1.fc29.src.rpm: Package "
                         "dedalo-unsigned-1.0-1.fc29.src.rpm is not signed",
                         "Removing dedalo-unsigned-1.0-1.fc29.x86_64.rpm: Package "
                         "dedalo-unsigned-1.0-1.fc29.x86_64.rpm is not signed",
                         "Error: GPG signature check failed.",
                     }))
        << result.err;
    const fs::path synced = tempdir_ / "reposync-gpg" / "x86_64";
    EXPECT_FALSE(fs::exists(synced / "dedalo-unsigned-1.0-1.fc29.x86_64.rpm"));
    EXPECT_FALSE(fs::exists(synced / "dedalo-signed-1.0-1.fc29.x86_64.rpm"));
}

TEST_P(DnfStackReposyncGpg, RemovesUnsignedPackages) {
    use_reposync_gpg();
    // Upstream installs dedalo-signed "to ensure the key is imported to rpmdb".
    const CommandResult installed = dnf({"install", "dedalo-signed"});
    ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
    const CommandResult result = reposync({download_path(), "--gpgcheck"});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_EQ(result.err,
              "Removing dedalo-unsigned-1.0-1.fc29.src.rpm: Package "
              "dedalo-unsigned-1.0-1.fc29.src.rpm is not signed\n"
              "Removing dedalo-unsigned-1.0-1.fc29.x86_64.rpm: Package "
              "dedalo-unsigned-1.0-1.fc29.x86_64.rpm is not signed\n"
              "Error: GPG signature check failed.\n");
    const fs::path synced = tempdir_ / "reposync-gpg" / "x86_64";
    EXPECT_FALSE(fs::exists(synced / "dedalo-unsigned-1.0-1.fc29.x86_64.rpm"));
    EXPECT_TRUE(fs::exists(synced / "dedalo-signed-1.0-1.fc29.x86_64.rpm"));
}

TEST_P(DnfStackReposync, DoesNotStopOnTheFirstError) {
    const fs::path repo = copy_for_modification("simple-base");
    use_repository("simple-base", repo, false);
    fs::remove(repo / "src" / "dedalo-1.0-1.fc29.src.rpm");
    const CommandResult result = reposync({download_path()});
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_TRUE(contains_match(result.out,
                               R"(\[FAILED\] dedalo-1.0-1.fc29.src.rpm: No more mirrors to try - )"
                               R"(All mirrors were already tried without success)"))
        << result.out;
    for (const char* file :
         {"src/labirinto-1.0-1.fc29.src.rpm", "src/vagare-1.0-1.fc29.src.rpm",
          "x86_64/dedalo-1.0-1.fc29.x86_64.rpm", "x86_64/labirinto-1.0-1.fc29.x86_64.rpm",
          "x86_64/vagare-1.0-1.fc29.x86_64.rpm"}) {
        EXPECT_TRUE(fs::exists(tempdir_ / "simple-base" / file)) << file;
    }
}

// dnf 4.14 here fails it: dnf-plugins-core 4.3.1 downloads a duplicated NEVRA twice (RHEL-64320,
// fixed upstream later).
TEST_P(DnfStackReposyncNewer, DuplicatedNevraIsDownloadedOnce) {
    const fs::path repo = copy_for_modification("simple-base");
    // Upstream adds --duplicated-nevra=keep, which createrepo_c 0.17 does not know: it keeps
    // duplicates without being asked.
    execute({"createrepo_c", "--quiet", "-n", "x86_64/labirinto-1.0-1.fc29.x86_64.rpm", "-n",
             "x86_64/labirinto-1.0-1.fc29.x86_64.rpm", repo.string()});
    use_repository("simple-base", repo, false);
    const CommandResult result = reposync({download_path()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_TRUE(fs::exists(tempdir_ / "simple-base/x86_64/labirinto-1.0-1.fc29.x86_64.rpm"));
    EXPECT_TRUE(contains_match(result.out, R"(labirinto-1\.0-1\.fc29\.x86_64\.rpm)")) << result.out;
    const std::string once = R"(labirinto-1\.0-1\.fc29\.x86_64\.rpm)";
    EXPECT_FALSE(contains_match(result.out, once + R"([\s\S]*)" + once)) << result.out;
}

// dnf 4.14 here fails it: dnf-plugins-core 4.3.1 has no --min-buildtime (RHEL-119475 added it
// later): exit 2.
TEST_P(DnfStackReposyncNewer, MinBuildtime) {
    const fs::path repo = copy_for_modification("simple-base");
    // Every package rebuilt with buildtime 2005-03-16 19:06, labirinto again with 2011-03-13.
    std::vector<std::string> sources;
    for (const std::string& name : ls(repo / "src")) {
        sources.push_back((repo / "src" / name).string());
    }
    auto rebuild = [&](const std::string& epoch, const std::vector<std::string>& packages) {
        std::vector<std::string> argv{"env",
                                      "SOURCE_DATE_EPOCH=" + epoch,
                                      "rpmbuild",
                                      "--quiet",
                                      "-rb",
                                      "--define",
                                      "_rpmdir .",
                                      "--define",
                                      "dist .fc29",
                                      "--define",
                                      "use_source_date_epoch_as_buildtime 1",
                                      "--define",
                                      "_topdir " + (tmp_ / "rpmbuild").string()};
        argv.insert(argv.end(), packages.begin(), packages.end());
        execute(argv, repo);
    };
    rebuild("1111000000", sources);
    rebuild("1300000000", {(repo / "src" / "labirinto-1.0-1.fc29.src.rpm").string()});
    fs::remove_all(repo / "src");
    execute({"createrepo_c", "--quiet", "--no-database", "--simple-md-filenames",
             "--revision=1550000000", repo.string()});
    use_repository("simple-base", repo, false);
    const CommandResult result = reposync({"--urls", "--min-buildtime", "2008-1-1"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    expect_lines_match(result.out,
                       {R"(.*/repos/simple-base/x86_64/labirinto-1\.0-1\.fc29\.x86_64\.rpm)"});
    EXPECT_EQ(result.err, "");
}

INSTANTIATE_TEST_SUITE_P(Both, DnfStackReposync,
                         ::testing::Values(Reposync::Dnf, Reposync::Rpmirror), reposync_name);
INSTANTIATE_TEST_SUITE_P(RpmirrorOnly, DnfStackReposyncNewer, ::testing::Values(Reposync::Rpmirror),
                         reposync_name);
INSTANTIATE_TEST_SUITE_P(Both, DnfStackReposyncGpg,
                         ::testing::Values(Reposync::Dnf, Reposync::Rpmirror), reposync_name);

}  // namespace
}  // namespace rpmirror::test
