// --publish-partial end to end: an upstream where one package answers 404 and another never
// matches its checksum (tests/integration/fault_server.py), on the command line and in a job.
// Without the option the previous metadata stays (exit 1); with it the mirror publishes metadata
// listing exactly the packages it holds (read back with dnf), names the failed ones and exits 3;
// the next run, upstream repaired, publishes the complete metadata.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

const std::string kMediumNevra = "rpmirror-sample-medium-1.0-1.noarch";
const std::string kSmallNevra = "rpmirror-sample-small-1.0-1.noarch";

class PartialPublication : public SyncFixture {
  protected:
    // Mirrors revision 1 of an upstream repository (the sample repository without kMedium and
    // kSmall) into `repo_dir` with `mirror_once`, then makes revision 2 upstream (both added
    // back) and returns a server of it where kMedium answers 404 and kSmall comes with wrong
    // bytes, every time.
    FaultServer& broken_revision_two(const std::function<void(const std::string&)>& mirror_once) {
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
        for (const std::string& name : {kMedium, kSmall}) {
            fs::rename(upstream_ / "Packages" / name, tmp_ / name);
        }
        recreate_repo(upstream_, "1704153600", tmp_ / "logs");
        mirror_once(serve(upstream_).url("/"));
        for (const std::string& name : {kMedium, kSmall}) {
            fs::rename(tmp_ / name, upstream_ / "Packages" / name);
        }
        recreate_repo(upstream_, "1704240000", tmp_ / "logs");
        faulty_ = std::make_unique<FaultServer>(
            upstream_,
            nlohmann::json{{"paths",
                            {{"/Packages/" + kMedium, {{{"status", 404}}}},
                             {"/Packages/" + kSmall, {{{"corrupt", true}}}}}}},
            tmp_.path());
        return *faulty_;
    }

    std::vector<std::string> args_for(const std::string& url) const {
        return {"--repofrompath", "sample," + url,      "--repo", "sample", "-p",
                mirror_.string(), "--download-metadata"};
    }

    // The hrefs primary.xml of the repository at `dir` lists, sorted (read with gzip and a
    // regular expression: independent of rpmirror's parser).
    std::vector<std::string> primary_hrefs(const fs::path& dir) {
        const std::string xml = gunzip(only_file_ending(dir / "repodata", "-primary.xml.gz"));
        static const std::regex location(R"re(<location href="([^"]+)"/>)re");
        std::vector<std::string> found;
        for (auto it = std::sregex_iterator(xml.begin(), xml.end(), location);
             it != std::sregex_iterator(); ++it) {
            found.push_back((*it)[1].str());
        }
        std::sort(found.begin(), found.end());
        return found;
    }

    // The package files of the repository at `dir`, as "Packages/<name>" sorted.
    static std::vector<std::string> held_files(const fs::path& dir) {
        std::vector<std::string> files;
        for (const std::string& name : package_names(dir)) {
            if (name.ends_with(".rpm") && !name.starts_with(".")) {  // not a .part
                files.push_back("Packages/" + name);
            }
        }
        return files;
    }

    // dnf repoquery of the repository at `dir` (file://): its packages' locations, sorted.
    std::vector<std::string> dnf_locations(const fs::path& dir) {
        auto [exit_code, locations] =
            dnf_repoquery(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)), dir, "%{location}");
        EXPECT_EQ(exit_code, 0) << "dnf repoquery of " << dir;
        return locations;
    }

    // What a partial publication of revision 2 promises in the repository at `dir`: the metadata
    // is new (not revision 1's), lists exactly the packages held (primary read directly, and dnf
    // reads the same), which are all but the two failed ones, and `output` names both.
    void expect_partial_publication(const fs::path& dir, const std::string& old_repomd,
                                    const std::string& output) {
        EXPECT_NE(read_file(dir / "repodata" / "repomd.xml"), old_repomd) << "published anew";
        const std::vector<std::string> held = held_files(dir);
        EXPECT_EQ(held, (std::vector<std::string>{kDataHref, kDocsHref, kTinyHref}));
        EXPECT_EQ(primary_hrefs(dir), held);
        EXPECT_EQ(dnf_locations(dir), held);
        EXPECT_NE(output.find(kMediumNevra), std::string::npos) << output;
        EXPECT_NE(output.find(kSmallNevra), std::string::npos) << output;
        EXPECT_NE(output.find("metadata published without the 2 package(s) that failed"),
                  std::string::npos)
            << output;
        // The mirror checks out against what it published.
        const CommandResult verified = run_to_end(
            {rpmirror_binary(), "verify", "-p", dir.parent_path().string(), "-c",
             (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string()},
            tmp_ / "logs");
        EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    }

    // A clean run of `run_clean` (upstream served whole) publishes upstream's revision 2 as it
    // is, every package in place.
    void expect_complete_after(const std::function<CommandResult()>& run_clean,
                               const fs::path& dir) {
        const CommandResult rerun = run_clean();
        EXPECT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
        EXPECT_EQ(tree_digests(dir, kStateFile), tree_digests(upstream_, kStateFile));
        EXPECT_EQ(dnf_locations(dir).size(), 5U);
    }

    fs::path mirror_ = tmp_ / "mirror";
    fs::path upstream_;
    std::unique_ptr<FaultServer> faulty_;
    int dnf_runs_ = 0;
};

TEST_F(PartialPublication, FailedPackagesAreLeftOutOfPublishedMetadataAndTheNextRunCompletes) {
    const fs::path repo = mirror_ / "sample";
    FaultServer& faulty = broken_revision_two([&](const std::string& url) {
        const CommandResult first = sync(args_for(url));
        ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    });
    const std::string old_repomd = read_file(repo / "repodata" / "repomd.xml");
    ASSERT_FALSE(old_repomd.empty());

    // Without the option: unchanged behaviour, the previous metadata stays.
    const CommandResult held_back = sync(args_for(faulty.url("/")));
    EXPECT_EQ(held_back.exit_code, 1) << held_back.out << held_back.err;
    EXPECT_EQ(read_file(repo / "repodata" / "repomd.xml"), old_repomd);
    EXPECT_NE(held_back.err.find("the published metadata stays in place"), std::string::npos)
        << held_back.err;

    const fs::path json_report = tmp_ / "report.json";
    std::vector<std::string> args = args_for(faulty.url("/"));
    args.insert(args.end(), {"--publish-partial", "--delete", "--json", json_report.string()});
    const CommandResult partial = sync(args);

    EXPECT_EQ(partial.exit_code, 3) << partial.out << partial.err;
    expect_partial_publication(repo, old_repomd, partial.err);
    const auto report = nlohmann::json::parse(read_file(json_report), nullptr, false);
    ASSERT_FALSE(report.is_discarded());
    EXPECT_EQ(report["exit_code"], 3);
    const nlohmann::json& entry = report["repositories"][0];
    EXPECT_EQ(entry["metadata_published"], true);
    EXPECT_EQ(entry["partial"], true);
    EXPECT_EQ(entry["left_out"].get<std::set<std::string>>(),
              (std::set<std::string>{kMediumHref, kSmallHref}))
        << entry.dump();
    std::set<std::string> failed;
    for (const auto& failure : entry["failures"]) {
        failed.insert(failure["package"].get<std::string>());
        EXPECT_FALSE(failure["reason"].get<std::string>().empty()) << failure.dump();
    }
    EXPECT_EQ(failed, (std::set<std::string>{kMediumNevra, kSmallNevra}));

    // Upstream still broken: not a no-op (the failed packages are asked for again).
    const std::size_t asked = faulty.requests_for("/Packages/" + kMedium).size();
    const CommandResult again = sync(args);
    EXPECT_EQ(again.exit_code, 3) << again.out << again.err;
    EXPECT_GT(faulty.requests_for("/Packages/" + kMedium).size(), asked);

    NginxServer& healthy = serve(upstream_);
    expect_complete_after(
        [&] {
            std::vector<std::string> clean = args_for(healthy.url("/"));
            clean.push_back("--publish-partial");
            return sync(clean);
        },
        repo);
}

TEST_F(PartialPublication, NeedsDownloadMetadataAndIsNotForUpstreamMetadata) {
    const std::string url = serve(test_repo("sample-repo")).url("/");
    const CommandResult without = sync({"--repofrompath", "sample," + url, "--repo", "sample", "-p",
                                        mirror_.string(), "--publish-partial"});
    EXPECT_EQ(without.exit_code, 2) << without.err;
    EXPECT_NE(without.err.find("--download-metadata"), std::string::npos) << without.err;
    std::vector<std::string> upstream_metadata = args_for(url);
    upstream_metadata.insert(upstream_metadata.end(), {"--publish-partial", "--upstream-metadata"});
    const CommandResult verbatim = sync(upstream_metadata);
    EXPECT_EQ(verbatim.exit_code, 2) << verbatim.err;
    EXPECT_NE(verbatim.err.find("--upstream-metadata"), std::string::npos) << verbatim.err;
    EXPECT_FALSE(fs::exists(mirror_));
}

class PartialPublicationJob : public PartialPublication {
  protected:
    CommandResult run_job(const std::string& url, const std::string& keys) {
        const fs::path config = TempDir::write_at(tmp_ / "etc" / "rpmirror.conf",
                                                  "[main]\ndestination = " + mirror_.string() +
                                                      "\n\n[sample]\nbaseurl = " + url +
                                                      "\ndownload-metadata = 1\n" + keys);
        CommandResult result =
            run_to_end(rpmirror_sync_argv({"--config-file", config.string(), "--json",
                                           (tmp_ / "jobs.json").string()}),
                       tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }
};

TEST_F(PartialPublicationJob, JobKeyPublishesWithoutTheFailedPackagesAndExitsThree) {
    const fs::path repo = mirror_ / "sample";
    FaultServer& faulty = broken_revision_two([&](const std::string& url) {
        const CommandResult first = run_job(url, "");
        ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    });
    const std::string old_repomd = read_file(repo / "repodata" / "repomd.xml");

    const CommandResult held_back = run_job(faulty.url("/"), "");
    EXPECT_EQ(held_back.exit_code, 1) << held_back.out << held_back.err;
    EXPECT_EQ(read_file(repo / "repodata" / "repomd.xml"), old_repomd);

    const CommandResult partial =
        run_job(faulty.url("/"), "publish-partial = 1\nsnapshot = partial\n");

    EXPECT_EQ(partial.exit_code, 3) << partial.out << partial.err;
    expect_partial_publication(repo, old_repomd, partial.err);
    EXPECT_FALSE(fs::exists(mirror_ / "snapshots" / "sample" / "partial"));
    EXPECT_NE(partial.err.find("snapshot not taken"), std::string::npos) << partial.err;
    EXPECT_NE((partial.out + partial.err).find("metadata published without the failed packages"),
              std::string::npos)
        << partial.out << partial.err;
    const auto report = nlohmann::json::parse(read_file(tmp_ / "jobs.json"), nullptr, false);
    ASSERT_FALSE(report.is_discarded());
    EXPECT_EQ(report["exit_code"], 3);
    EXPECT_EQ(report["repositories"][0]["partial"], true);

    NginxServer& healthy = serve(upstream_);
    expect_complete_after(
        [&] { return run_job(healthy.url("/"), "publish-partial = 1\nsnapshot = complete\n"); },
        repo);
    EXPECT_TRUE(fs::exists(mirror_ / "snapshots" / "sample" / "complete" / "repodata"));
}

TEST_F(PartialPublicationJob, JobKeyWithoutDownloadMetadataFailsTheJobNamingTheKey) {
    const std::string url = serve(test_repo("sample-repo")).url("/");
    const fs::path config =
        TempDir::write_at(tmp_ / "etc" / "rpmirror.conf",
                          "[main]\ndestination = " + mirror_.string() +
                              "\n\n[sample]\nbaseurl = " + url + "\npublish-partial = 1\n");
    const CommandResult result =
        run_to_end(rpmirror_sync_argv({"--config-file", config.string()}), tmp_ / "logs");
    EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
    EXPECT_NE(result.err.find("publish-partial: needs download-metadata = 1"), std::string::npos)
        << result.err;
    EXPECT_FALSE(fs::exists(mirror_ / "sample" / "Packages"));
}

}  // namespace
}  // namespace rpmirror::test
