// `rpmirror diff --repo ID [OLD]`'s sides (rpmirror/run/diff_run.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "rpmirror/run/diff_run.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

class UpstreamDiffSidesTest : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_.write("dnf.conf", "[main]\n");
        dir_.write("repos/test.repo",
                   "[alpha]\nbaseurl=http://127.0.0.1/alpha/\n"
                   "[alpha2]\nbaseurl=http://127.0.0.1/alpha2/\nenabled=0\n");
        sources_.config_file = (dir_ / "dnf.conf").string();
        sources_.reposdirs = {(dir_ / "repos").string()};
        sources_.releasevers = {"40"};
    }

    test::TempDir dir_;
    RepoSourceRequest sources_;
    std::vector<ConfigWarning> warnings_;
};

TEST_F(UpstreamDiffSidesTest, TheMirrorAgainstTheConfiguredRepositorysUpstream) {
    auto sides = upstream_diff_sides(sources_, "alpha2", std::nullopt, dir_ / "mirror", warnings_);
    ASSERT_TRUE(sides) << sides.error().to_string();
    EXPECT_EQ(sides->first.argument, (dir_ / "mirror" / "alpha2").string());
    EXPECT_FALSE(sides->first.upstream);
    EXPECT_TRUE(sides->second.argument.empty());
    ASSERT_TRUE(sides->second.upstream);
    EXPECT_EQ(sides->second.upstream->id, "alpha2");  // disabled, yet named
    EXPECT_EQ(sides->second.upstream->baseurls,
              std::vector<std::string>{"http://127.0.0.1/alpha2/"});

    sides = upstream_diff_sides(sources_, "alpha", std::string("/srv/old"), dir_.path(), warnings_);
    ASSERT_TRUE(sides) << sides.error().to_string();
    EXPECT_EQ(sides->first.argument, "/srv/old");
    EXPECT_TRUE(warnings_.empty());
}

TEST_F(UpstreamDiffSidesTest, ARepoMatchingSeveralOrNoneIsAnError) {
    auto sides = upstream_diff_sides(sources_, "alpha*", std::nullopt, dir_.path(), warnings_);
    ASSERT_FALSE(sides);
    EXPECT_EQ(sides.error().to_string(), "--repo 'alpha*' matches 2 repositories; name one");
    sides = upstream_diff_sides(sources_, "beta", std::nullopt, dir_.path(), warnings_);
    ASSERT_FALSE(sides);
    EXPECT_EQ(sides.error().to_string(), "--repo: no repository matches 'beta'");
}

TEST_F(UpstreamDiffSidesTest, TheConfigurationsWarningsAreKeptEvenOnAnError) {
    dir_.write("repos/test.repo", "[alpha]\nbaseurl=http://127.0.0.1/alpha/\nbogus_key=1\n");
    auto sides = upstream_diff_sides(sources_, "beta", std::nullopt, dir_.path(), warnings_);
    ASSERT_FALSE(sides);
    ASSERT_EQ(warnings_.size(), 1U);
    EXPECT_EQ(warnings_.front().key, "bogus_key");
}

}  // namespace
}  // namespace rpmirror
