// What `rpmirror reposync` and `rpmirror sync` print and leave behind where dnf reposync users
// rely on it, each case side by side with real `dnf reposync` on the same repository served by
// nginx: per-package lines, -m/--downloadcomps, -u, --remote-time, and librepo's checksum cache
// in both directions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kComps =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!DOCTYPE comps PUBLIC \"-//Red Hat, Inc.//DTD Comps info//EN\" \"comps.dtd\">\n"
    "<comps>\n"
    "  <group>\n"
    "    <id>sample</id>\n"
    "    <name>Sample</name>\n"
    "    <description>The sample packages</description>\n"
    "    <default>true</default>\n"
    "    <uservisible>true</uservisible>\n"
    "    <packagelist>\n"
    "      <packagereq type=\"default\">rpmirror-sample-tiny</packagereq>\n"
    "    </packagelist>\n"
    "  </group>\n"
    "</comps>\n";

// 2001-02-03 04:05:06 UTC: a Last-Modified time no download could produce by accident.
constexpr time_t kUpstreamTime = 981173106;

std::string rstrip(std::string text) {
    while (!text.empty() && text.back() == ' ') {
        text.pop_back();
    }
    return text;
}

// The lines of `out` that name a package as dnf reposync's progress meter does, with the
// "(n/N): " counter replaced by "(N)" (the order of parallel downloads differs between runs) and
// sizes, rates and times cut off; other lines ("[SKIPPED] ...", "[FAILED] ...") with trailing
// spaces removed. Sorted.
std::vector<std::string> package_lines(const std::string& out) {
    static const std::regex counted(R"(^\((\d+)/(\d+)\): (\S+\.rpm) +.*B/s \| +.*B +\d\d:\d\d +$)");
    std::vector<std::string> lines;
    for (const std::string& line : lines_of(out)) {
        std::smatch match;
        if (std::regex_match(line, match, counted)) {
            EXPECT_EQ(line.size(), 79U) << line;
            lines.push_back("(" + match[2].str() + ") " + match[3].str());
        } else if (line.starts_with("[SKIPPED] ") || line.starts_with("[FAILED] ") ||
                   line.starts_with("[DELETED] ")) {
            EXPECT_GE(line.size(), 79U) << line;
            lines.push_back(rstrip(line));
        }
    }
    std::sort(lines.begin(), lines.end());
    return lines;
}

std::int64_t mtime_ns(const fs::path& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

std::string xattr_of(const fs::path& path, const std::string& name) {
    std::array<char, 512> value{};
    const ssize_t length = ::getxattr(path.c_str(), name.c_str(), value.data(), value.size());
    return length < 0 ? std::string() : std::string(value.data(), static_cast<std::size_t>(length));
}

void set_mtime(const fs::path& path, time_t seconds, long nanoseconds = 0) {
    const std::array<struct timespec, 2> times{{{seconds, nanoseconds}, {seconds, nanoseconds}}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times.data(), 0), 0) << path;
}

// Overwrites the file `path` in place with as many other bytes, and puts its mtime back: only a
// hash can tell (the checksum caches of rpmirror and librepo key on the mtime).
void corrupt_keeping_mtime(const fs::path& path) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0) << path;
    std::string bytes = read_file(path);
    for (char& byte : bytes) {
        byte = static_cast<char>(~byte);
    }
    {
        std::ofstream out(path, std::ios::binary | std::ios::in);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    set_mtime(path, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

std::vector<fs::path> packages_in(const fs::path& dir) {
    std::vector<fs::path> packages;
    if (!fs::exists(dir)) {
        return packages;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
        if (entry.is_regular_file() && entry.path().extension() == ".rpm") {
            packages.push_back(entry.path());
        }
    }
    std::sort(packages.begin(), packages.end());
    return packages;
}

class SyncOutput : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        if (::system("dnf reposync --help > /dev/null 2>&1") != 0) {  // NOLINT(cert-env33-c)
            GTEST_FAIL() << "`dnf reposync` does not run; scripts/deps installs it (Debian "
                            "packages dnf, dnf-plugins-core)";
        }
        const fs::path probe = TempDir::write_at(tmp_ / "xattr-probe", "x");
        if (::setxattr(probe.c_str(), "user.probe", "1", 1, 0) != 0) {
            GTEST_FAIL() << tmp_.path() << " refuses user xattrs (tmpfs?): set TMPDIR to a "
                         << "directory on ext4, xfs or btrfs";
        }
    }

    // Runs dnf (isolated, its own state directory) with repository `id` at `url`; `-q` only
    // with `quiet`.
    CommandResult dnf(const std::string& id, const std::string& url,
                      const std::vector<std::string>& args, bool quiet = false) {
        std::vector<std::string> argv =
            isolated_dnf(tmp_ / ("dnf-state-" + std::to_string(++dnf_runs_)));
        if (!quiet) {
            std::erase(argv, "-q");
        }
        argv.push_back("--repofrompath=" + id + "," + url);
        argv.push_back("--repo=" + id);
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    // Runs `rpmirror reposync` (the alias that speaks dnf's language) with repository `id`.
    CommandResult reposync(const std::string& id, const std::string& url,
                           const std::vector<std::string>& args) {
        std::vector<std::string> argv{rpmirror_binary(),
                                      "reposync",
                                      "-c",
                                      (tmp_ / "empty.conf").string(),
                                      "--reposdir",
                                      (tmp_ / "empty-reposdir").string(),
                                      "--repofrompath",
                                      id + "," + url,
                                      "--repo",
                                      id};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // The sample repository with a comps file: createrepo_c -g writes `group` and `group_gz`.
    fs::path comps_repo() {
        const fs::path repo = copy_repo(test_repo("sample-repo"), tmp_ / "comps-repo");
        const fs::path comps = TempDir::write_at(tmp_ / "comps.xml", std::string(kComps));
        run_checked({"createrepo_c", "--quiet", "-g", comps.string(), repo.string()},
                    tmp_ / "logs");
        return repo;
    }

    int dnf_runs_ = 0;
};

TEST_F(SyncOutput, ReposyncPrintsEachPackageAsDnfDoes) {
    NginxServer& server = serve(test_repo("sample-repo"));
    const std::string url = server.url("/");

    const CommandResult by_dnf = dnf("r", url, {"reposync", "-p", (tmp_ / "dnf").string()});
    const CommandResult ours = reposync("r", url, {"-p", (tmp_ / "ours").string()});
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.out << by_dnf.err;
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    const std::vector<std::string> expected = package_lines(by_dnf.out);
    ASSERT_EQ(expected.size(), 5U) << by_dnf.out;
    EXPECT_EQ(package_lines(ours.out), expected) << ours.out;
    EXPECT_EQ(ours.err, "");

    // Again: every package is there, "[SKIPPED] <file>: Already downloaded".
    const CommandResult dnf_again = dnf("r", url, {"reposync", "-p", (tmp_ / "dnf").string()});
    const CommandResult ours_again = reposync("r", url, {"-p", (tmp_ / "ours").string()});
    ASSERT_EQ(dnf_again.exit_code, 0) << dnf_again.err;
    ASSERT_EQ(ours_again.exit_code, 0) << ours_again.err;
    const std::vector<std::string> skipped = package_lines(dnf_again.out);
    ASSERT_EQ(skipped.size(), 5U) << dnf_again.out;
    EXPECT_TRUE(skipped.front().starts_with("[SKIPPED] ")) << skipped.front();
    // rpmirror's no-op (unchanged repomd.xml and files) reports them skipped too ...
    EXPECT_EQ(package_lines(ours_again.out), skipped) << ours_again.out;
    // ... and so does a sync without its state (a mirror dnf made, say), which verifies them.
    const CommandResult verified = reposync(
        "r", url, {"-p", (tmp_ / "ours").string(), "--state-dir", (tmp_ / "state").string()});
    ASSERT_EQ(verified.exit_code, 0) << verified.err;
    EXPECT_EQ(package_lines(verified.out), skipped) << verified.out;
}

TEST_F(SyncOutput, ReposyncReportsAMissingPackageAsDnfDoes) {
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    fs::remove(upstream / "Packages" / "rpmirror-sample-tiny-1.0-1.noarch.rpm");
    NginxServer& server = serve(upstream);

    const CommandResult by_dnf =
        dnf("r", server.url("/"), {"reposync", "-p", (tmp_ / "dnf").string()});
    const CommandResult ours = reposync("r", server.url("/"), {"-p", (tmp_ / "ours").string()});
    EXPECT_EQ(by_dnf.exit_code, 1) << by_dnf.out << by_dnf.err;
    EXPECT_EQ(ours.exit_code, by_dnf.exit_code) << ours.out << ours.err;
    const std::vector<std::string> expected = package_lines(by_dnf.out);
    EXPECT_NE(std::find(expected.begin(), expected.end(),
                        "[FAILED] rpmirror-sample-tiny-1.0-1.noarch.rpm: No more mirrors to try - "
                        "All mirrors were already tried without success"),
              expected.end())
        << by_dnf.out;
    EXPECT_EQ(package_lines(ours.out), expected) << ours.out;
    // The attempt is named as dnf names it ("[MIRROR] <file>: Status code: 404 for <url>").
    EXPECT_NE(
        ours.out.find("[MIRROR] rpmirror-sample-tiny-1.0-1.noarch.rpm: Status code: 404 for " +
                      server.url("/Packages/rpmirror-sample-tiny-1.0-1.noarch.rpm")),
        std::string::npos)
        << ours.out;
}

TEST_F(SyncOutput, ReposyncFailsForAnUnknownRepositoryAsDnfDoes) {
    NginxServer& server = serve(test_repo("sample-repo"));
    std::vector<std::string> dnf_argv = isolated_dnf(tmp_ / "dnf-state");
    for (const char* arg : {"reposync", "--repo", "nosuch", "-p"}) {
        dnf_argv.push_back(arg);
    }
    dnf_argv.push_back((tmp_ / "dnf").string());
    const CommandResult by_dnf = run_to_end(dnf_argv, tmp_ / "logs");
    const CommandResult ours =
        run_to_end({rpmirror_binary(), "reposync", "-c", (tmp_ / "empty.conf").string(),
                    "--reposdir", (tmp_ / "empty-reposdir").string(), "--repofrompath",
                    "r," + server.url("/"), "--repo", "nosuch", "-p", (tmp_ / "ours").string()},
                   tmp_ / "logs");
    EXPECT_EQ(by_dnf.exit_code, 1) << by_dnf.err;
    EXPECT_EQ(ours.exit_code, by_dnf.exit_code) << ours.err;
    EXPECT_NE(by_dnf.err.find("Error: Unknown repo: 'nosuch'"), std::string::npos) << by_dnf.err;
    EXPECT_TRUE(ours.err.starts_with("Error: ")) << ours.err;
    EXPECT_NE(ours.err.find("nosuch"), std::string::npos) << ours.err;
    EXPECT_EQ(ours.out, "");
}

struct CompsCase {
    std::string name;
    std::vector<std::string> options;  // "@META@" stands for a metadata directory
    std::string comps_path;            // where comps.xml lands, relative to the output root
};

void PrintTo(const CompsCase& comps_case, std::ostream* stream) {
    *stream << comps_case.name;
}

class SyncComps : public SyncOutput, public ::testing::WithParamInterface<CompsCase> {};

TEST_P(SyncComps, WritesCompsWhereAndAsDnfDoes) {
    const CompsCase& comps_case = GetParam();
    NginxServer& server = serve(comps_repo());
    const auto args_for = [&comps_case](const fs::path& root) {
        std::vector<std::string> args{"-m", "-p", (root / "packages").string()};
        for (const std::string& option : comps_case.options) {
            args.push_back(option == "@META@" ? (root / "metadata").string() : option);
        }
        return args;
    };
    std::vector<std::string> dnf_args{"reposync"};
    for (const std::string& arg : args_for(tmp_ / "dnf")) {
        dnf_args.push_back(arg);
    }
    const CommandResult by_dnf = dnf("r", server.url("/"), dnf_args);
    const CommandResult ours = reposync("r", server.url("/"), args_for(tmp_ / "ours"));
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.out << by_dnf.err;
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;

    EXPECT_EQ(read_file(tmp_ / "dnf" / comps_case.comps_path), kComps);
    EXPECT_EQ(tree_digests(tmp_ / "ours"), tree_digests(tmp_ / "dnf"));
    const std::string saved = "comps.xml for repository r saved\n";
    EXPECT_NE(by_dnf.out.find(saved), std::string::npos) << by_dnf.out;
    EXPECT_NE(ours.out.find(saved), std::string::npos) << ours.out;
}

INSTANTIATE_TEST_SUITE_P(
    Options, SyncComps,
    ::testing::Values(CompsCase{"Default", {}, "packages/r/comps.xml"},
                      CompsCase{
                          "MetadataPath", {"--metadata-path", "@META@"}, "metadata/r/comps.xml"},
                      CompsCase{"Norepopath", {"--norepopath"}, "packages/comps.xml"},
                      CompsCase{"WithMetadata", {"--download-metadata"}, "packages/r/comps.xml"}),
    [](const ::testing::TestParamInfo<CompsCase>& info) { return info.param.name; });

TEST_F(SyncOutput, CompsFromAnUncompressedOnlyRecord) {
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    const fs::path comps = TempDir::write_at(tmp_ / "comps.xml", std::string(kComps));
    run_checked({"modifyrepo_c", "--no-compress", "--mdtype=group", comps.string(),
                 (upstream / "repodata").string()},
                tmp_ / "logs");
    NginxServer& server = serve(upstream);

    const CommandResult ours = sync({"--repofrompath", "r," + server.url("/"), "--repo", "r", "-m",
                                     "-p", (tmp_ / "ours").string()});
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    EXPECT_EQ(read_file(tmp_ / "ours" / "r" / "comps.xml"), kComps);
    EXPECT_NE(ours.out.find("comps.xml for repository r saved"), std::string::npos) << ours.out;
}

TEST_F(SyncOutput, NoCompsRecordMeansNoCompsFile) {
    NginxServer& server = serve(test_repo("sample-repo"));
    const CommandResult by_dnf =
        dnf("r", server.url("/"), {"reposync", "-m", "-p", (tmp_ / "dnf").string()});
    const CommandResult ours =
        reposync("r", server.url("/"), {"-m", "-p", (tmp_ / "ours").string()});
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.err;
    EXPECT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    EXPECT_FALSE(fs::exists(tmp_ / "ours" / "r" / "comps.xml"));
    EXPECT_EQ(ours.out.find("comps.xml"), std::string::npos) << ours.out;
    EXPECT_EQ(tree_digests(tmp_ / "ours"), tree_digests(tmp_ / "dnf"));
}

TEST_F(SyncOutput, CompsRecordWithAWrongChecksumFailsTheRepository) {
    const fs::path upstream = comps_repo();
    for (const auto& entry : fs::directory_iterator(upstream / "repodata")) {
        if (entry.path().filename().string().ends_with("-comps.xml")) {
            corrupt_keeping_mtime(entry.path());  // same size, other bytes
        }
    }
    NginxServer& server = serve(upstream);
    const CommandResult ours = sync({"--repofrompath", "r," + server.url("/"), "--repo", "r", "-m",
                                     "-p", (tmp_ / "ours").string()});
    EXPECT_EQ(ours.exit_code, 1) << ours.out << ours.err;
    EXPECT_NE(ours.err.find("metadata 'group'"), std::string::npos) << ours.err;
    EXPECT_NE(ours.err.find("-comps.xml"), std::string::npos) << ours.err;
    EXPECT_FALSE(fs::exists(tmp_ / "ours" / "r" / "comps.xml"));
    EXPECT_TRUE(packages_in(tmp_ / "ours").empty());
}

TEST_F(SyncOutput, UrlsAreWhatDnfPrints) {
    // hrefs with a '+', a space and a literal "%20": dnf prints them raw, joined to the mirror.
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    const fs::path packages = upstream / "Packages";
    fs::rename(packages / "rpmirror-sample-tiny-1.0-1.noarch.rpm",
               packages / "tiny+plus 1.0.noarch.rpm");
    fs::rename(packages / "rpmirror-sample-small-1.0-1.noarch.rpm",
               packages / "small%20encoded.noarch.rpm");
    recreate_repo(upstream, "2", tmp_ / "logs");
    const fs::path comps = TempDir::write_at(tmp_ / "comps.xml", std::string(kComps));
    run_checked(
        {"modifyrepo_c", "--mdtype=group", comps.string(), (upstream / "repodata").string()},
        tmp_ / "logs");
    NginxServer& server = serve(upstream);

    for (const std::vector<std::string>& options :
         std::vector<std::vector<std::string>>{{"-u"},
                                               {"-u", "--download-metadata"},
                                               {"-u", "-m"},
                                               {"-u", "-m", "--download-metadata"}}) {
        std::vector<std::string> dnf_args{"reposync", "-p", (tmp_ / "dnf").string()};
        dnf_args.insert(dnf_args.end(), options.begin(), options.end());
        const CommandResult by_dnf = dnf("r", server.url("/"), dnf_args, /*quiet=*/true);
        std::vector<std::string> args{
            "--repofrompath",        "r," + server.url("/"), "--repo", "r", "-p",
            (tmp_ / "ours").string()};
        args.insert(args.end(), options.begin(), options.end());
        const CommandResult ours = sync(args);
        ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.err;
        ASSERT_EQ(ours.exit_code, 0) << ours.err;
        // The same lines in the same order: records in repomd.xml's order, then packages
        // (primary.xml's order).
        EXPECT_EQ(ours.out, by_dnf.out) << options.back();
        EXPECT_NE(ours.out.find(server.url("/Packages/tiny+plus 1.0.noarch.rpm")),
                  std::string::npos)
            << ours.out;
        EXPECT_NE(ours.out.find(server.url("/Packages/small%20encoded.noarch.rpm")),
                  std::string::npos)
            << ours.out;
    }
    EXPECT_FALSE(fs::exists(tmp_ / "ours"));

    // And the files those hrefs name are the ones downloaded.
    const CommandResult synced = sync(
        {"--repofrompath", "r," + server.url("/"), "--repo", "r", "-p", (tmp_ / "ours").string()});
    ASSERT_EQ(synced.exit_code, 0) << synced.err;
    EXPECT_EQ(read_file(tmp_ / "ours" / "r" / "Packages" / "tiny+plus 1.0.noarch.rpm"),
              read_file(packages / "tiny+plus 1.0.noarch.rpm"));
    EXPECT_EQ(read_file(tmp_ / "ours" / "r" / "Packages" / "small%20encoded.noarch.rpm"),
              read_file(packages / "small%20encoded.noarch.rpm"));
}

TEST_F(SyncOutput, RemoteTimeGivesFilesTheServersTimeAndResyncIsANoop) {
    const fs::path upstream = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
    for (const auto& entry : fs::recursive_directory_iterator(upstream)) {
        if (entry.is_regular_file()) {
            set_mtime(entry.path(), kUpstreamTime);
        }
    }
    NginxServer& server = serve(upstream);
    const std::vector<std::string> args{
        "--repofrompath", "r," + server.url("/"), "--repo", "r", "-p", (tmp_ / "ours").string(),
        "--remote-time",  "--download-metadata"};
    const CommandResult ours = sync(args);
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    const CommandResult by_dnf =
        dnf("r", server.url("/"), {"reposync", "--remote-time", "-p", (tmp_ / "dnf").string()});
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.err;

    const std::vector<fs::path> mirrored = packages_in(tmp_ / "ours");
    ASSERT_EQ(mirrored.size(), 5U);
    for (const fs::path& package : mirrored) {
        const std::int64_t expected_ns = std::int64_t{kUpstreamTime} * 1'000'000'000;
        EXPECT_EQ(mtime_ns(package), expected_ns) << package;
        EXPECT_EQ(mtime_ns(tmp_ / "dnf" / fs::relative(package, tmp_ / "ours")), expected_ns);
        // librepo's cache entry (dnf trusts it) is keyed on the time the file now has.
        EXPECT_EQ(xattr_of(package, "user.Librepo.checksum.mtime"), std::to_string(expected_ns));
    }
    for (const auto& entry : fs::directory_iterator(tmp_ / "ours" / "r" / "repodata")) {
        if (entry.path().filename() != "repomd.xml") {
            EXPECT_EQ(mtime_ns(entry.path()), std::int64_t{kUpstreamTime} * 1'000'000'000)
                << entry.path();
        }
    }

    // The state and the checksum cache hold the remote times: nothing is fetched again.
    const std::size_t before = log_size(server);
    const CommandResult again = sync(args);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
    EXPECT_EQ(uris_since(server, before), std::vector<std::string>{"/repodata/repomd.xml"});
}

TEST_F(SyncOutput, DnfTrustsTheChecksumCacheOfFilesRpmirrorDownloaded) {
    NginxServer& server = serve(test_repo("sample-repo"));
    const CommandResult ours = sync({"--repofrompath", "r," + server.url("/"), "--repo", "r", "-p",
                                     (tmp_ / "mirror").string()});
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    const std::vector<fs::path> mirrored = packages_in(tmp_ / "mirror");
    ASSERT_EQ(mirrored.size(), 5U);
    for (const fs::path& package : mirrored) {
        EXPECT_EQ(xattr_of(package, "user.Librepo.checksum.mtime"),
                  std::to_string(mtime_ns(package)));
        EXPECT_EQ(xattr_of(package, "user.Librepo.checksum.sha256"),
                  hash_bytes(ChecksumType::Sha256, read_file(package)));
        // Only a hash could tell now; dnf must not hash.
        corrupt_keeping_mtime(package);
    }
    const std::size_t before = log_size(server);
    const CommandResult by_dnf =
        dnf("r", server.url("/"), {"reposync", "-p", (tmp_ / "mirror").string()});
    ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.out << by_dnf.err;
    const std::vector<std::string> lines = package_lines(by_dnf.out);
    ASSERT_EQ(lines.size(), 5U) << by_dnf.out;
    for (const std::string& line : lines) {
        EXPECT_TRUE(line.starts_with("[SKIPPED] ") && line.ends_with(": Already downloaded"))
            << line;
    }
    EXPECT_TRUE(package_uris(uris_since(server, before)).empty());
}

// librepo's cache entries are written for dnf, never believed by rpmirror (CacheTrust): packages
// corrupted in place under dnf's entries, their mtimes put back, are hashed, found and fetched
// again by the first sync, without --no-cache.
TEST_F(SyncOutput, RpmirrorNeverTrustsTheChecksumCacheDnfWrote) {
    NginxServer& server = serve(test_repo("sample-repo"));
    // dnf writes its cache when it verifies an existing file: the second run.
    for (int run = 0; run < 2; ++run) {
        const CommandResult by_dnf =
            dnf("r", server.url("/"), {"reposync", "-p", (tmp_ / "mirror").string()});
        ASSERT_EQ(by_dnf.exit_code, 0) << by_dnf.err;
    }
    const std::vector<fs::path> mirrored = packages_in(tmp_ / "mirror");
    ASSERT_EQ(mirrored.size(), 5U);
    for (const fs::path& package : mirrored) {
        ASSERT_EQ(xattr_of(package, "user.Librepo.checksum.mtime"),
                  std::to_string(mtime_ns(package)));
        corrupt_keeping_mtime(package);
    }
    const std::size_t before = log_size(server);
    const CommandResult ours = sync({"--repofrompath", "r," + server.url("/"), "--repo", "r", "-p",
                                     (tmp_ / "mirror").string(), "--json", "-"});
    ASSERT_EQ(ours.exit_code, 0) << ours.out << ours.err;
    const auto report = nlohmann::json::parse(ours.out);
    EXPECT_EQ(report["repositories"][0]["kept"], 0) << ours.out;
    EXPECT_EQ(report["repositories"][0]["replaced"], 5) << ours.out;
    EXPECT_EQ(package_uris(uris_since(server, before)).size(), 5U);
    EXPECT_EQ(tree_digests(tmp_ / "mirror" / "r" / "Packages"),
              tree_digests(test_repo("sample-repo") / "Packages"));
}

}  // namespace
}  // namespace rpmirror::test
