#include <gtest/gtest.h>

#include "config/repo_files.hpp"
#include "config_test_support.hpp"
#include "rpmirror/config/config.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

using test::repo_ids;

std::vector<RepoConfig> sample_repos(const test::TempDir& dir) {
    const auto file = dir.write("sample.repo",
                                "[fedora]\nbaseurl=http://127.0.0.1/f/\n"
                                "[fedora-debuginfo]\nbaseurl=http://127.0.0.1/fd/\nenabled=0\n"
                                "[fedora-source]\nmetalink=http://127.0.0.1/ml\nenabled=0\n"
                                "[updates]\nmirrorlist=http://127.0.0.1/mirrors\n"
                                "[epel]\nbaseurl=http://127.0.0.1/e/\nenabled=no\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, test::fedora_vars(), warnings);
    EXPECT_TRUE(repos) << repos.error().to_string();
    return repos ? *repos : std::vector<RepoConfig>{};
}

TEST(ConfigSelect, NoPatternsSelectsTheEnabledReposInOrder) {
    test::TempDir dir;
    auto selected = select_repos(sample_repos(dir), {});
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), (std::vector<std::string>{"fedora", "updates"}));
}

TEST(ConfigSelect, GlobPatternsSelectAndEnableMatchesOnly) {
    test::TempDir dir;
    const std::vector<std::string> patterns = {"fedora-*", "epel"};
    auto selected = select_repos(sample_repos(dir), patterns);
    ASSERT_TRUE(selected) << selected.error().to_string();
    // Config order, not pattern order; "fedora-*" does not match "fedora"; disabled ones enabled.
    EXPECT_EQ(repo_ids(*selected),
              (std::vector<std::string>{"fedora-debuginfo", "fedora-source", "epel"}));
    for (const RepoConfig& repo : *selected) {
        EXPECT_TRUE(repo.enabled) << repo.id;
    }
}

TEST(ConfigSelect, PatternsMatchWholeIdsWithFnmatchClasses) {
    test::TempDir dir;
    const std::vector<std::string> patterns = {"fedora", "upd?tes", "[e]pel"};
    auto selected = select_repos(sample_repos(dir), patterns);
    ASSERT_TRUE(selected) << selected.error().to_string();
    EXPECT_EQ(repo_ids(*selected), (std::vector<std::string>{"fedora", "updates", "epel"}));
}

TEST(ConfigSelect, UnmatchedPatternIsAnErrorNamingIt) {
    test::TempDir dir;
    const std::vector<std::string> patterns = {"fedora", "centos*"};
    auto selected = select_repos(sample_repos(dir), patterns);
    ASSERT_FALSE(selected);
    EXPECT_EQ(selected.error().code, ErrorCode::BadInput);
    EXPECT_EQ(selected.error().to_string(), "--repo: no repository matches 'centos*'");
}

TEST(ConfigSelect, SelectedRepoWithoutAnyUrlIsAnError) {
    test::TempDir dir;
    const auto file =
        dir.write("nourl.repo", "[ok]\nbaseurl=http://127.0.0.1/\n\n[empty]\nname=Nothing\n");
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(file, test::fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    auto selected = select_repos(*repos, {});
    ASSERT_FALSE(selected);
    EXPECT_EQ(selected.error().to_string(),
              file.string() + ": line 4: repo 'empty' has no baseurl, mirrorlist or metalink");
    const std::vector<std::string> only_ok = {"ok"};
    auto fine = select_repos(*repos, only_ok);
    ASSERT_TRUE(fine) << fine.error().to_string();
    EXPECT_EQ(repo_ids(*fine), std::vector<std::string>{"ok"});
}

}  // namespace
}  // namespace rpmirror
