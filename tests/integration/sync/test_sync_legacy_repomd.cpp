// Repositories whose repomd.xml was written by the tools of the yum era, end to end: upstream is
// a repository built by the test (rpmbuild + createrepo_c, the sample-repo fixture) whose
// repomd.xml is then given what the Python createrepo wrote, fractional timestamps
// (<timestamp>1355315696.84</timestamp>). repomd.xml has no checksum of its own and nothing is
// signed, so the edit leaves a valid repository: dnf reads it, and so must rpmirror.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncLegacyRepomd : public SyncFixture {
  protected:
    // A copy of the sample repository whose repomd.xml timestamps all have a fraction.
    fs::path fractional_timestamp_upstream() {
        const fs::path upstream = tmp_ / "upstream";
        fs::copy(test_repo("sample-repo"), upstream, fs::copy_options::recursive);
        const fs::path repomd = upstream / "repodata" / "repomd.xml";
        const std::string original = read_file(repomd);
        const std::string edited =
            std::regex_replace(original, std::regex("<timestamp>([0-9]+)</timestamp>"),
                               "<timestamp>$1.84</timestamp>");
        EXPECT_NE(edited, original) << "createrepo_c wrote no <timestamp>";
        TempDir::write_at(repomd, edited);  // the copy's, not the shared fixture's
        return upstream;
    }

    // `dnf repoquery -a` of `url` (isolated), NEVRAs sorted; fails the test iff dnf fails.
    std::vector<std::string> repoquery(const std::string& url) {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)));
        argv.insert(argv.end(), {"--repofrompath=m," + url, "--repo=m", "repoquery", "-a", "--qf",
                                 "%{name}-%{evr}.%{arch}"});
        const CommandResult result = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
        std::vector<std::string> lines = lines_of(result.out);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    static std::vector<std::string> rpm_names(const fs::path& dir) {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(dir)) {
            names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }

    int dnf_runs_ = 0;
};

const std::vector<std::string> kSamplePackages = {
    "rpmirror-sample-data-1.0-1.noarch",   "rpmirror-sample-docs-1.0-1.noarch",
    "rpmirror-sample-medium-1.0-1.noarch", "rpmirror-sample-small-1.0-1.noarch",
    "rpmirror-sample-tiny-1.0-1.noarch",
};

TEST_F(SyncLegacyRepomd, FractionalTimestampRepositoryMirrorsAndDnfReadsTheMirror) {
    const fs::path upstream = fractional_timestamp_upstream();
    NginxServer& server = serve(upstream);
    // dnf reads the upstream as it is.
    ASSERT_EQ(repoquery(server.url("/")), kSamplePackages);

    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced = sync({"--repofrompath", "old," + server.url("/"), "--repo", "old",
                                       "-p", mirror.string(), "--download-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(rpm_names(mirror / "old" / "Packages"), rpm_names(upstream / "Packages"));
    for (const std::string& name : rpm_names(upstream / "Packages")) {
        EXPECT_EQ(read_file(mirror / "old" / "Packages" / name),
                  read_file(upstream / "Packages" / name))
            << name;
    }
    // The metadata is upstream's, byte for byte (the fractions included).
    EXPECT_EQ(read_file(mirror / "old" / "repodata" / "repomd.xml"),
              read_file(upstream / "repodata" / "repomd.xml"));
    EXPECT_EQ(repoquery("file://" + (mirror / "old").string()), kSamplePackages);

    // Again: nothing changed upstream, nothing to do.
    const CommandResult again = sync({"--repofrompath", "old," + server.url("/"), "--repo", "old",
                                      "-p", mirror.string(), "--download-metadata"});
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
}

TEST_F(SyncLegacyRepomd, FractionalTimestampRepositoryMirrorsWithoutItsMetadataToo) {
    const fs::path upstream = fractional_timestamp_upstream();
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced =
        sync({"--repofrompath", "old," + server.url("/"), "--repo", "old", "-p", mirror.string()});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(rpm_names(mirror / "old" / "Packages"), rpm_names(upstream / "Packages"));
}

// A filter leaves packages out: rpmirror writes the mirror's own repomd.xml, with the whole
// seconds of upstream's timestamps, and dnf reads it.
TEST_F(SyncLegacyRepomd, FilteredMirrorOfAFractionalTimestampRepositoryIsReadByDnf) {
    const fs::path upstream = fractional_timestamp_upstream();
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced =
        sync({"--repofrompath", "old," + server.url("/"), "--repo", "old", "-p", mirror.string(),
              "--download-metadata", "-x", "rpmirror-sample-tiny"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const std::string repomd = read_file(mirror / "old" / "repodata" / "repomd.xml");
    EXPECT_EQ(repomd.find(".84</timestamp>"), std::string::npos) << repomd;
    std::vector<std::string> expected = kSamplePackages;
    std::erase(expected, "rpmirror-sample-tiny-1.0-1.noarch");
    EXPECT_EQ(repoquery("file://" + (mirror / "old").string()), expected);
}

}  // namespace
}  // namespace rpmirror::test
