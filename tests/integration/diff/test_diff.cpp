// `rpmirror diff`: two upstream revisions built here (one package added, one removed, one
// upgraded, one downgraded, one advisory added and one removed) compared as directories, over
// HTTP and file://, as JSON, and a mirror against its upstream (--repo); bad inputs are errors
// naming what was wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// An updateinfo.xml listing `ids` (each "ID TYPE").
std::string updateinfo(const std::vector<std::pair<std::string, std::string>>& advisories) {
    std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<updates>\n";
    for (const auto& [id, type] : advisories) {
        xml +=
            "  <update from=\"test@rpmirror.invalid\" status=\"stable\" type=\"" + type +
            "\" version=\"2.0\">\n    <id>" + id + "</id>\n    <title>" + id +
            " title</title>\n    <issued date=\"2026-01-01 00:00:00\"/>\n"
            "    <references><reference href=\"https://x.invalid/1\" id=\"1\" type=\"bugzilla\"/>"
            "</references>\n    <pkglist><collection short=\"c\"><name>c</name>"
            "<package name=\"alpha\" version=\"2.0\" release=\"1\" epoch=\"0\" arch=\"x86_64\">"
            "<filename>alpha-2.0-1.x86_64.rpm</filename></package></collection></pkglist>\n"
            "  </update>\n";
    }
    return xml + "</updates>\n";
}

const std::vector<std::string> kExpectedLines{
    "added      rpmirror-sample-small.noarch  1.0-1",
    "removed    gamma.x86_64  8.0-1",
    "upgraded   alpha.x86_64  1.2-1 -> 2.0-1",
    "downgraded beta.noarch  0.5-1 -> 0.3-1",
    "advisory added    RPMIRROR-2026-0002  (security)  RPMIRROR-2026-0002 title",
    "advisory removed  RPMIRROR-2026-0001  (bugfix)  RPMIRROR-2026-0001 title",
};
constexpr const char* kSummary =
    "1 added, 1 removed, 1 upgraded, 1 downgraded, 0 changed; advisories: 1 added, 1 removed";

class Diff : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        old_ = make_revision(
            "old",
            {"versions:alpha-1.2-1.x86_64.rpm", "versions:beta-0.5-1.noarch.rpm",
             "versions:gamma-8.0-1.x86_64.rpm", "sample:rpmirror-sample-tiny-1.0-1.noarch.rpm"},
            {{"RPMIRROR-2025-0001", "enhancement"}, {"RPMIRROR-2026-0001", "bugfix"}});
        new_ = make_revision(
            "new",
            {"versions:alpha-2.0-1.x86_64.rpm", "versions:beta-0.3-1.noarch.rpm",
             "sample:rpmirror-sample-tiny-1.0-1.noarch.rpm",
             "sample:rpmirror-sample-small-1.0-1.noarch.rpm"},
            {{"RPMIRROR-2025-0001", "enhancement"}, {"RPMIRROR-2026-0002", "security"}});
    }

    // A repository under tmp_/`name` holding `packages` ("versions:FILE" from the versions
    // repository, "sample:FILE" from the sample repository) and an updateinfo record.
    fs::path make_revision(const std::string& name, const std::vector<std::string>& packages,
                           const std::vector<std::pair<std::string, std::string>>& advisories) {
        const fs::path repo = tmp_ / name;
        fs::create_directories(repo / "Packages");
        for (const std::string& package : packages) {
            const std::size_t colon = package.find(':');
            const fs::path from =
                test_repo(package.substr(0, colon) == "versions" ? "versions-repo"
                                                                 : "sample-repo") /
                "Packages" / package.substr(colon + 1);
            fs::copy_file(from, repo / "Packages" / from.filename());
        }
        recreate_repo(repo, "1", tmp_ / "logs");
        const fs::path xml =
            TempDir::write_at(tmp_ / (name + "-updateinfo.xml"), updateinfo(advisories));
        run_checked(
            {"modifyrepo_c", "--mdtype", "updateinfo", xml.string(), (repo / "repodata").string()},
            tmp_ / "logs");
        return repo;
    }

    CommandResult diff(const std::vector<std::string>& args) {
        std::vector<std::string> argv{rpmirror_binary(), "diff"};
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // The change lines of diff's output (everything but the summary line).
    static std::vector<std::string> change_lines(const std::string& out) {
        std::vector<std::string> lines = lines_of(out);
        if (!lines.empty()) {
            lines.pop_back();
        }
        return lines;
    }

    fs::path old_;
    fs::path new_;
};

TEST_F(Diff, TwoDirectoriesListExactlyTheChangesMade) {
    const CommandResult result = diff({old_.string(), new_.string()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(change_lines(result.out), kExpectedLines) << result.out;
    EXPECT_EQ(lines_of(result.out).back(),
              old_.string() + " -> " + new_.string() + ": " + kSummary);

    const CommandResult reverse = diff({new_.string(), old_.string()});
    ASSERT_EQ(reverse.exit_code, 0) << reverse.out << reverse.err;
    EXPECT_EQ(change_lines(reverse.out),
              (std::vector<std::string>{
                  "added      gamma.x86_64  8.0-1",
                  "removed    rpmirror-sample-small.noarch  1.0-1",
                  "upgraded   beta.noarch  0.3-1 -> 0.5-1",
                  "downgraded alpha.x86_64  2.0-1 -> 1.2-1",
                  "advisory added    RPMIRROR-2026-0001  (bugfix)  RPMIRROR-2026-0001 title",
                  "advisory removed  RPMIRROR-2026-0002  (security)  RPMIRROR-2026-0002 title",
              }));

    const CommandResult same = diff({old_.string(), old_.string()});
    ASSERT_EQ(same.exit_code, 0) << same.out << same.err;
    EXPECT_EQ(lines_of(same.out),
              (std::vector<std::string>{
                  old_.string() + " -> " + old_.string() +
                  ": 0 added, 0 removed, 0 upgraded, 0 downgraded, 0 changed; advisories: 0 "
                  "added, 0 removed"}));
}

TEST_F(Diff, UrlsOverHttpAndFileGiveTheSameDiffAsJson) {
    NginxServer& server = serve(tmp_.path());
    const CommandResult result = diff({server.url("/old/"), "file://" + new_.string(), "--json"});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    const nlohmann::json document = nlohmann::json::parse(result.out);
    EXPECT_EQ(document.at("version"), 1);
    EXPECT_EQ(document.at("old"), server.url("/old/"));
    EXPECT_EQ(document.at("new"), "file://" + new_.string());
    const nlohmann::json& packages = document.at("packages");
    EXPECT_EQ(packages.at("added"),
              nlohmann::json::parse(
                  R"([{"name":"rpmirror-sample-small","arch":"noarch","evr":"1.0-1"}])"));
    EXPECT_EQ(packages.at("removed"),
              nlohmann::json::parse(R"([{"name":"gamma","arch":"x86_64","evr":"8.0-1"}])"));
    EXPECT_EQ(packages.at("upgraded"),
              nlohmann::json::parse(
                  R"([{"name":"alpha","arch":"x86_64","old_evr":"1.2-1","new_evr":"2.0-1"}])"));
    EXPECT_EQ(packages.at("downgraded"),
              nlohmann::json::parse(
                  R"([{"name":"beta","arch":"noarch","old_evr":"0.5-1","new_evr":"0.3-1"}])"));
    EXPECT_TRUE(packages.at("changed").empty());
    EXPECT_EQ(document.at("advisories").at("added"),
              nlohmann::json::parse(R"([{"id":"RPMIRROR-2026-0002","type":"security",
                                         "title":"RPMIRROR-2026-0002 title"}])"));
    EXPECT_EQ(document.at("advisories").at("removed").size(), 1U);
    EXPECT_EQ(document.at("summary").at("added"), 1);
    EXPECT_EQ(document.at("empty"), false);
    // Only metadata was fetched, never a package.
    EXPECT_TRUE(package_uris(uris_since(server, 0), "/old/Packages/").empty());
}

TEST_F(Diff, RepoComparesTheMirrorWithItsUpstream) {
    const fs::path upstream = tmp_ / "upstream";
    fs::copy(old_, upstream, fs::copy_options::recursive);
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const std::vector<std::string> source{"-c",
                                          (tmp_ / "empty.conf").string(),
                                          "--reposdir",
                                          (tmp_ / "empty-reposdir").string(),
                                          "--repofrompath",
                                          "up," + server.url("/")};
    std::vector<std::string> sync_args = source;
    sync_args.insert(sync_args.end(),
                     {"--repo", "up", "-p", mirror.string(), "--download-metadata"});
    const CommandResult synced = run_to_end(rpmirror_sync_argv(sync_args), tmp_ / "logs");
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;

    std::vector<std::string> diff_args = source;
    diff_args.insert(diff_args.end(), {"--repo", "up", "-p", mirror.string()});
    const CommandResult unchanged = diff(diff_args);
    ASSERT_EQ(unchanged.exit_code, 0) << unchanged.out << unchanged.err;
    EXPECT_TRUE(change_lines(unchanged.out).empty()) << unchanged.out;

    // Upstream moves on to the new revision.
    fs::remove_all(upstream / "Packages");
    fs::remove_all(upstream / "repodata");
    fs::copy(new_, upstream, fs::copy_options::recursive);
    const CommandResult changed = diff(diff_args);
    ASSERT_EQ(changed.exit_code, 0) << changed.out << changed.err;
    EXPECT_EQ(change_lines(changed.out), kExpectedLines) << changed.out;
    EXPECT_EQ(lines_of(changed.out).back(),
              (mirror / "up").string() + " -> up (upstream): " + kSummary);

    // One positional: that repository against the upstream.
    diff_args.push_back(new_.string());
    const CommandResult against = diff(diff_args);
    ASSERT_EQ(against.exit_code, 0) << against.out << against.err;
    EXPECT_TRUE(change_lines(against.out).empty()) << against.out;
}

TEST_F(Diff, BadInputsAreErrorsNamingWhatWasWrong) {
    const fs::path empty = tmp_ / "no-repodata";
    fs::create_directories(empty);
    const CommandResult no_repodata = diff({empty.string(), new_.string()});
    EXPECT_EQ(no_repodata.exit_code, 1);
    EXPECT_NE(no_repodata.err.find(empty.string() + ": no repository here (no "
                                                    "repodata/repomd.xml)"),
              std::string::npos)
        << no_repodata.err;
    EXPECT_TRUE(no_repodata.out.empty()) << no_repodata.out;

    const CommandResult missing = diff({(tmp_ / "nowhere").string(), new_.string()});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find((tmp_ / "nowhere").string()), std::string::npos) << missing.err;

    NginxServer& server = serve(tmp_.path());
    const CommandResult not_found = diff({server.url("/absent/"), new_.string()});
    EXPECT_EQ(not_found.exit_code, 1);
    EXPECT_NE(not_found.err.find(server.url("/absent/repodata/repomd.xml")), std::string::npos)
        << not_found.err;
    EXPECT_NE(not_found.err.find("404"), std::string::npos) << not_found.err;

    // A primary.xml that is not what repomd.xml says.
    const fs::path primary = only_file_ending(new_ / "repodata", "-primary.xml.gz");
    fs::resize_file(primary, fs::file_size(primary) - 10);
    const CommandResult corrupt = diff({old_.string(), new_.string()});
    EXPECT_EQ(corrupt.exit_code, 1);
    EXPECT_NE(corrupt.err.find(new_.string() + "/repodata/" + primary.filename().string()),
              std::string::npos)
        << corrupt.err;

    const CommandResult one = diff({old_.string()});
    EXPECT_EQ(one.exit_code, 2) << one.err;
    EXPECT_NE(one.err.find("give two repositories"), std::string::npos) << one.err;
}

}  // namespace
}  // namespace rpmirror::test
