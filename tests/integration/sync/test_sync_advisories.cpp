// --advisories, --advisory-severity and --as-of: a mirror of what advisories select, or of the
// repository as it stood on a date. The packages mirrored are exactly those the advisories list
// (or those built by then); the published updateinfo lists only the advisories selected, each
// with only the packages the mirror holds; dnf reads the mirror and lists the same advisories as
// upstream filtered the same way; what is left out is in --json.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

// The index test repository's packages (build dates 2024-01-01, 02-01, 03-01) under four
// advisories of three types, severities and issue dates.
constexpr std::string_view kUpdateinfo = R"(<?xml version="1.0" encoding="UTF-8"?>
<updates>
  <update from="sec@example.org" status="final" type="security" version="1">
    <id>IDX-2024-1</id>
    <title>multi: a security fix</title>
    <issued date="2024-02-02 00:00:00"/>
    <severity>Important</severity>
    <pkglist>
      <collection short="idx">
        <name>idx</name>
        <package name="rpmirror-idx-multi" version="1.9" release="1" epoch="0" arch="x86_64">
          <filename>rpmirror-idx-multi-1.9-1.x86_64.rpm</filename>
        </package>
        <package name="rpmirror-idx-multi" version="1.9" release="1" epoch="0" arch="aarch64">
          <filename>rpmirror-idx-multi-1.9-1.aarch64.rpm</filename>
        </package>
      </collection>
    </pkglist>
  </update>
  <update from="bug@example.org" status="final" type="bugfix" version="1">
    <id>IDX-2024-2</id>
    <title>noarch: a snapshot</title>
    <issued date="2024-03-02 00:00:00"/>
    <pkglist>
      <collection short="idx">
        <name>idx</name>
        <package name="rpmirror-idx-noarch" version="1.0^git1" release="1" epoch="0" arch="noarch">
          <filename>rpmirror-idx-noarch-1.0^git1-1.noarch.rpm</filename>
        </package>
      </collection>
    </pkglist>
  </update>
  <update from="sec@example.org" status="final" type="security" version="1">
    <id>IDX-2024-3</id>
    <title>multi and epoch: a critical fix</title>
    <issued date="2024-03-02 00:00:00"/>
    <severity>Critical</severity>
    <pkglist>
      <collection short="idx">
        <name>idx</name>
        <package name="rpmirror-idx-multi" version="1.10" release="1" epoch="0" arch="x86_64">
          <filename>rpmirror-idx-multi-1.10-1.x86_64.rpm</filename>
        </package>
        <package name="rpmirror-idx-epoch" version="1.0" release="1" epoch="1" arch="x86_64">
          <filename>rpmirror-idx-epoch-1.0-1.x86_64.rpm</filename>
        </package>
      </collection>
    </pkglist>
  </update>
  <update from="enh@example.org" status="final" type="enhancement" version="1">
    <id>IDX-2024-4</id>
    <title>multi 1.0</title>
    <issued date="2024-01-02 00:00:00"/>
    <pkglist>
      <collection short="idx">
        <name>idx</name>
        <package name="rpmirror-idx-multi" version="1.0" release="1" epoch="0" arch="x86_64">
          <filename>rpmirror-idx-multi-1.0-1.x86_64.rpm</filename>
        </package>
        <package name="rpmirror-idx-multi" version="1.0" release="1" epoch="0" arch="i686">
          <filename>rpmirror-idx-multi-1.0-1.i686.rpm</filename>
        </package>
      </collection>
    </pkglist>
  </update>
</updates>
)";

class SyncAdvisories : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = tmp_ / "upstream";
        fs::copy(test_repo("index-repo"), upstream_, fs::copy_options::recursive);
        const fs::path xml = TempDir::write_at(tmp_ / "updateinfo.xml", std::string(kUpdateinfo));
        run_checked({"modifyrepo_c", "--mdtype", "updateinfo", xml.string(),
                     (upstream_ / "repodata").string()},
                    tmp_ / "logs");
        server_ = &serve(upstream_);
    }

    CommandResult mirror(const std::vector<std::string>& filters,
                         const std::string& destination = "mirror") {
        std::vector<std::string> args{"--repofrompath",
                                      "idx," + server_->url("/"),
                                      "--repo",
                                      "idx",
                                      "-p",
                                      (tmp_ / destination).string(),
                                      "--download-metadata",
                                      "--delete",
                                      "--json",
                                      (tmp_ / "report.json").string()};
        args.insert(args.end(), filters.begin(), filters.end());
        return sync(args);
    }

    nlohmann::json report() const {
        return nlohmann::json::parse(read_file(tmp_ / "report.json"))["repositories"][0];
    }

    fs::path repo() const { return tmp_ / "mirror" / "idx"; }

    // The mirrored package files' names.
    std::set<std::string> mirrored() const {
        std::set<std::string> names;
        for (const auto& entry : fs::recursive_directory_iterator(repo())) {
            if (entry.path().extension() == ".rpm") {
                names.insert(entry.path().filename().string());
            }
        }
        return names;
    }

    // dnf (as of x86_64, into installroot `root`) with `args`, from the repository at `url`.
    CommandResult dnf_in(const fs::path& root, const std::string& url,
                         const std::vector<std::string>& args) {
        const fs::path work = tmp_ / ("dnf-" + std::to_string(++dnf_runs_));
        std::vector<std::string> argv = isolated_dnf(work);
        fs::create_directories(work / "log");
        argv.insert(argv.end(),
                    {"--disableplugin=*", "--forcearch=x86_64", "--nogpgcheck", "--installroot",
                     root.string(), "--repofrompath=m," + url, "--repo=m"});
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
        return result;
    }

    // A machine at the oldest baseline: multi 1.0 and epoch 0:5.0 installed from upstream.
    fs::path baseline(const std::string& name) {
        const fs::path root = tmp_ / name;
        dnf_in(root, server_->url("/"),
               {"install", "rpmirror-idx-multi-1.0-1.x86_64", "rpmirror-idx-epoch-0:5.0-1.x86_64"});
        return root;
    }

    // The packages installed in `root`, sorted.
    std::vector<std::string> installed(const fs::path& root) {
        const CommandResult query = run_to_end(
            {"rpm", "-qa", "--root", root.string(), "--qf", "%{nevra}\n"}, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.err;
        std::vector<std::string> lines = lines_of(query.out);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    // The advisory IDs of the mirror's updateinfo (gunzipped, read with a regular expression).
    std::vector<std::string> published_ids() {
        const std::string xml = gunzip(only_file_ending(repo() / "repodata", "-updateinfo.xml.gz"));
        static const std::regex id("<id>([^<]+)</id>");
        std::vector<std::string> ids;
        for (auto it = std::sregex_iterator(xml.begin(), xml.end(), id);
             it != std::sregex_iterator(); ++it) {
            ids.push_back((*it)[1].str());
        }
        return ids;
    }

    fs::path upstream_;
    NginxServer* server_ = nullptr;
    int dnf_runs_ = 0;
};

TEST_F(SyncAdvisories, SecurityOnlyMirrorHoldsExactlyTheSecurityFixesAndDnfListsTheSameAdvisories) {
    const CommandResult run = mirror({"--advisories", "security", "-a", "x86_64"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(mirrored(), (std::set<std::string>{"rpmirror-idx-multi-1.9-1.x86_64.rpm",
                                                 "rpmirror-idx-multi-1.10-1.x86_64.rpm",
                                                 "rpmirror-idx-epoch-1.0-1.x86_64.rpm"}));
    EXPECT_EQ(published_ids(), (std::vector<std::string>{"IDX-2024-1", "IDX-2024-3"}));
    const std::string xml = gunzip(only_file_ending(repo() / "repodata", "-updateinfo.xml.gz"));
    EXPECT_EQ(xml.find("aarch64"), std::string::npos) << "a package the mirror lacks is dropped";
    EXPECT_EQ(report()["advisories_left_out"],
              nlohmann::json({"IDX-2024-2: not selected (--advisories, --advisory-severity)",
                              "IDX-2024-4: not selected (--advisories, --advisory-severity)"}));
    EXPECT_NE(run.err.find("updateinfo: 2 advisories left out"), std::string::npos) << run.err;
    // verify checks the mirror against what was selected (recorded as its result).
    const CommandResult verified = run_to_end(
        {rpmirror_binary(), "verify", "-p", (tmp_ / "mirror").string(), "-c",
         (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string()},
        tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    // dnf reads the mirror's advisories as upstream's, filtered the same way, on a machine at
    // an older baseline; `dnf upgrade --security` from the mirror brings exactly the security
    // fixes it brings from upstream.
    const fs::path from_mirror = baseline("root-mirror");
    const fs::path from_upstream = baseline("root-upstream");
    const std::string mirror_url = "file://" + repo().string();
    const CommandResult listed = dnf_in(from_mirror, mirror_url, {"updateinfo", "list", "--all"});
    EXPECT_NE(listed.out.find("IDX-2024-1"), std::string::npos) << listed.out;
    EXPECT_EQ(lines_of(listed.out), lines_of(dnf_in(from_upstream, server_->url("/"),
                                                    {"updateinfo", "list", "--all", "--security"})
                                                 .out));
    dnf_in(from_mirror, mirror_url, {"upgrade", "--security"});
    dnf_in(from_upstream, server_->url("/"), {"upgrade", "--security"});
    EXPECT_EQ(installed(from_mirror), installed(from_upstream));
    EXPECT_NE(installed(from_mirror), installed(baseline("root-baseline")));

    // Severity narrows it; the same options again are a no-op.
    const CommandResult critical =
        mirror({"--advisories", "security", "-a", "x86_64", "--advisory-severity", "critical"});
    ASSERT_EQ(critical.exit_code, 0) << critical.err;
    EXPECT_EQ(mirrored(), (std::set<std::string>{"rpmirror-idx-multi-1.10-1.x86_64.rpm",
                                                 "rpmirror-idx-epoch-1.0-1.x86_64.rpm"}));
    EXPECT_EQ(published_ids(), (std::vector<std::string>{"IDX-2024-3"}));
    const CommandResult again =
        mirror({"--advisories", "security", "-a", "x86_64", "--advisory-severity", "Critical"});
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_TRUE(report()["noop"].get<bool>());
}

// What a filtered mirror leaves out of updateinfo is said when it is news (in the singular for
// one): not again by a run that publishes nothing, nor by one that publishes metadata leaving
// out the same advisories; again when what is left out changes.
TEST_F(SyncAdvisories, AdvisoriesLeftOutAreToldWhenTheyChangeNotOnEveryRun) {
    const CommandResult first = mirror({"-a", "x86_64"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_NE(first.err.find("idx: warning: updateinfo: 1 advisory left out (the first: "
                             "IDX-2024-2: no package of it is mirrored); --json lists them"),
              std::string::npos)
        << first.err;
    EXPECT_EQ(report()["advisories_left_out"].size(), 1U);
    const CommandResult second = mirror({"-a", "x86_64"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_TRUE(report()["noop"].get<bool>());
    EXPECT_EQ(second.err.find("left out"), std::string::npos) << second.err;
    EXPECT_EQ(second.out.find("left out"), std::string::npos) << second.out;

    // Upstream's updateinfo recompressed: a new repomd.xml, republished, the same advisories
    // left out (still listed in --json), nothing said.
    const fs::path xml = TempDir::write_at(tmp_ / "updateinfo.xml", std::string(kUpdateinfo));
    run_checked({"modifyrepo_c", "--mdtype", "updateinfo", "--compress-type", "xz", xml.string(),
                 (upstream_ / "repodata").string()},
                tmp_ / "logs");
    const CommandResult third = mirror({"-a", "x86_64"});
    ASSERT_EQ(third.exit_code, 0) << third.out << third.err;
    EXPECT_FALSE(report()["noop"].get<bool>());
    EXPECT_TRUE(report()["metadata_published"].get<bool>()) << report();
    EXPECT_EQ(report()["advisories_left_out"].size(), 1U);
    EXPECT_EQ(third.err.find("left out"), std::string::npos) << third.err;

    // Another filter leaves out others: said again.
    const CommandResult fourth = mirror({"-a", "x86_64", "--advisories", "security"});
    ASSERT_EQ(fourth.exit_code, 0) << fourth.out << fourth.err;
    EXPECT_NE(fourth.err.find("updateinfo: 2 advisories left out"), std::string::npos)
        << fourth.err;
}

TEST_F(SyncAdvisories, AsOfMirrorsTheRepositoryAsItStoodThatDayWithItsAdvisoriesOfThen) {
    const CommandResult run = mirror({"--as-of", "2024-02-15", "-n"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const std::set<std::string> files = mirrored();
    for (const std::string& name : files) {
        EXPECT_EQ(name.find("1.10"), std::string::npos) << name << ": built on 2024-03-01";
        EXPECT_EQ(name.find("git1"), std::string::npos) << name << ": built on 2024-03-01";
    }
    EXPECT_TRUE(files.contains("rpmirror-idx-multi-1.9-1.x86_64.rpm"))
        << "the newest x86_64 build on that day";
    EXPECT_TRUE(files.contains("rpmirror-idx-epoch-1.0-1.x86_64.rpm"));
    EXPECT_FALSE(files.contains("rpmirror-idx-multi-1.0-1.x86_64.rpm")) << "superseded by then";
    EXPECT_TRUE(files.contains("rpmirror-idx-multi-1.0-1.i686.rpm"));
    EXPECT_EQ(published_ids(), (std::vector<std::string>{"IDX-2024-1", "IDX-2024-4"}));
    const nlohmann::json left_out = report()["advisories_left_out"];
    EXPECT_EQ(left_out, nlohmann::json({"IDX-2024-2: issued after the --as-of date",
                                        "IDX-2024-3: issued after the --as-of date"}));
    // IDX-2024-4 keeps only its i686 package: its x86_64 one was superseded by 1.9 by then.
    const std::string xml = gunzip(only_file_ending(repo() / "repodata", "-updateinfo.xml.gz"));
    EXPECT_EQ(xml.find("rpmirror-idx-multi-1.0-1.x86_64.rpm"), std::string::npos);
    EXPECT_NE(xml.find("rpmirror-idx-multi-1.0-1.i686.rpm"), std::string::npos);
}

// Two baselines a month apart: diff lists exactly what was built (02-01) and the advisory issued
// (IDX-2024-1, 02-02) in between, nothing else.
TEST_F(SyncAdvisories, DiffBetweenTwoAsOfMirrorsListsExactlyWhatCameInBetween) {
    const CommandResult january = mirror({"--as-of", "2024-01-15", "-n"}, "january");
    ASSERT_EQ(january.exit_code, 0) << january.out << january.err;
    const CommandResult february = mirror({"--as-of", "2024-02-15", "-n"}, "february");
    ASSERT_EQ(february.exit_code, 0) << february.out << february.err;
    const CommandResult diffed =
        run_to_end({rpmirror_binary(), "diff", "--json", (tmp_ / "january" / "idx").string(),
                    (tmp_ / "february" / "idx").string()},
                   tmp_ / "logs");
    ASSERT_NE(diffed.exit_code, 2) << diffed.out << diffed.err;
    const nlohmann::json diff = nlohmann::json::parse(diffed.out);
    std::set<std::string> came;  // name-evr.arch of what is new in february
    for (const char* kind : {"added", "upgraded"}) {
        for (const nlohmann::json& entry : diff["packages"][kind]) {
            came.insert(entry["name"].get<std::string>() + "-" +
                        entry.value("new_evr", entry.value("evr", "")) + "." +
                        entry["arch"].get<std::string>());
        }
    }
    EXPECT_EQ(came, (std::set<std::string>{
                        "rpmirror-idx-multi-1.9-1.x86_64", "rpmirror-idx-multi-1.9-1.aarch64",
                        "rpmirror-idx-epoch-1:1.0-1.x86_64", "rpmirror-idx-noarch-1.0-1.noarch",
                        "rpmirror-idx-noarch-1.0-1.src"}))
        << diffed.out;
    EXPECT_TRUE(diff["packages"]["removed"].empty()) << diffed.out;
    EXPECT_TRUE(diff["packages"]["downgraded"].empty()) << diffed.out;
    EXPECT_TRUE(diff["packages"]["changed"].empty()) << diffed.out;
    ASSERT_EQ(diff["advisories"]["added"].size(), 1U) << diffed.out;
    EXPECT_EQ(diff["advisories"]["added"][0]["id"], "IDX-2024-1");
    EXPECT_TRUE(diff["advisories"]["removed"].empty()) << diffed.out;
}

// --as-of with --with-dependencies: the closure as the repository stood then.
TEST_F(SyncAdvisories, AsOfWithDependenciesSolvesOverWhatWasBuiltByThen) {
    const CommandResult run = mirror({"--as-of", "2024-02-15", "-a", "x86_64", "--packages",
                                      "rpmirror-idx-multi", "--with-dependencies"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(mirrored(), (std::set<std::string>{"rpmirror-idx-multi-1.9-1.x86_64.rpm"}));
    // IDX-2024-1 keeps its x86_64 package; IDX-2024-4's are not mirrored; the later two were
    // issued after the date.
    EXPECT_EQ(published_ids(), (std::vector<std::string>{"IDX-2024-1"}));
    // dnf installs it from the mirror alone.
    dnf_in(tmp_ / "root", "file://" + repo().string(), {"install", "rpmirror-idx-multi"});
    EXPECT_EQ(installed(tmp_ / "root"),
              (std::vector<std::string>{"rpmirror-idx-multi-1.9-1.x86_64"}));
    // Before anything was built: the name is an error, nothing published.
    const CommandResult early = mirror({"--as-of", "2023-12-01", "-a", "x86_64", "--packages",
                                        "rpmirror-idx-multi", "--with-dependencies"},
                                       "early");
    EXPECT_EQ(early.exit_code, 1) << early.out << early.err;
    EXPECT_NE(early.err.find("'rpmirror-idx-multi'"), std::string::npos) << early.err;
    EXPECT_FALSE(fs::exists(tmp_ / "early" / "idx" / "repodata" / "repomd.xml"));
}

// --advisories with --with-dependencies: the advisories' packages, each with what it needs, over
// two repositories, one of which publishes no advisories (it may still give dependencies).
TEST_F(SyncAdvisories, AdvisoriesWithDependenciesMirrorTheFixesAndWhatTheyNeed) {
    const fs::path plain = tmp_ / "plain";
    fs::copy(test_repo("index-repo"), plain, fs::copy_options::recursive);
    const NginxServer& other = serve(plain);
    const CommandResult run =
        mirror({"--repofrompath", "plain," + other.url("/"), "--repo", "plain", "--advisories",
                "security", "-a", "x86_64", "--with-dependencies"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(mirrored(), (std::set<std::string>{"rpmirror-idx-multi-1.9-1.x86_64.rpm",
                                                 "rpmirror-idx-multi-1.10-1.x86_64.rpm",
                                                 "rpmirror-idx-epoch-1.0-1.x86_64.rpm"}));
    EXPECT_EQ(published_ids(), (std::vector<std::string>{"IDX-2024-1", "IDX-2024-3"}));
    EXPECT_TRUE(fs::exists(tmp_ / "mirror" / "plain" / "repodata" / "repomd.xml"))
        << "the repository that gives nothing is published, empty";
    // dnf upgrades a machine at the oldest baseline with the security fixes from the mirror.
    const fs::path root = baseline("advised");
    dnf_in(root, "file://" + repo().string(), {"upgrade", "--security"});
    EXPECT_EQ(installed(root), (std::vector<std::string>{"rpmirror-idx-epoch-1:1.0-1.x86_64",
                                                         "rpmirror-idx-multi-1.10-1.x86_64"}));
    // No repository publishing advisories: an error naming them, nothing published.
    const CommandResult none =
        sync({"--repofrompath", "plain," + other.url("/"), "--repo", "plain", "-p",
              (tmp_ / "none").string(), "--advisories", "security", "--with-dependencies"});
    EXPECT_EQ(none.exit_code, 1) << none.out << none.err;
    EXPECT_NE(none.err.find("publishes advisories"), std::string::npos) << none.err;
    EXPECT_FALSE(fs::exists(tmp_ / "none" / "plain" / "repodata"));
}

TEST_F(SyncAdvisories, BadValuesAndARepositoryWithoutAdvisoriesAreErrorsThatPublishNothing) {
    for (const auto& [args, message] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--advisory-severity", "urgent"},
              "--advisory-severity urgent: expected Low, Moderate, Important or Critical"},
             {{"--as-of", "yesterday"},
              "--as-of yesterday: expected YYYY-MM-DD or seconds since the epoch"},
             {{"--advisories", "IDX-2024-2", "-a", "x86_64", "--packages", "rpmirror-idx-multi",
               "--with-dependencies"},
              "the advisories selected list no package x86_64 can install in idx that the "
              "package specs select"}}) {
        const CommandResult refused = mirror(args);
        EXPECT_NE(refused.exit_code, 0) << args.front();
        EXPECT_NE(refused.err.find(message), std::string::npos) << refused.err;
        EXPECT_FALSE(fs::exists(repo() / "repodata")) << args.front();
    }
    // A repository that publishes no updateinfo: nothing to select from.
    NginxServer& plain = serve(test_repo("index-repo"));
    const CommandResult none =
        sync({"--repofrompath", "plain," + plain.url("/"), "--repo", "plain", "-p",
              (tmp_ / "mirror").string(), "--download-metadata", "--advisories", "security"});
    EXPECT_NE(none.exit_code, 0);
    EXPECT_NE(none.err.find("publishes no advisories"), std::string::npos) << none.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "plain" / "repodata"));
}

}  // namespace
}  // namespace rpmirror::test
