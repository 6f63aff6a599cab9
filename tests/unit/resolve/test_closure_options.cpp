// What --with-dependencies reads and refuses before it solves (rpmirror/resolve.hpp), and the
// selection a closure makes (SelectionOptions::only_nevras).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rpmirror/resolve.hpp"
#include "rpmirror/sync.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

TEST(PackageList, SpecsAreSeparatedByWhitespaceAndCommentsAreSkipped) {
    test::TempDir dir;
    const auto path = test::TempDir::write_at(dir / "list",
                                              "# the fleet\nnginx  postgresql-server\n\n"
                                              "\tfoo.x86_64 # and its arch\n#bar\n");
    const auto specs = read_package_list(path);
    ASSERT_TRUE(specs) << specs.error().to_string();
    EXPECT_EQ(*specs, (std::vector<std::string>{"nginx", "postgresql-server", "foo.x86_64"}));
}

TEST(PackageList, AnEmptyOrMissingFileIsAnErrorNamingIt) {
    test::TempDir dir;
    const auto empty = read_package_list(test::TempDir::write_at(dir / "empty", "# none\n  \n"));
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code, ErrorCode::BadInput);
    EXPECT_NE(empty.error().to_string().find("empty"), std::string::npos);
    const auto missing = read_package_list(dir / "absent");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().to_string().find("absent"), std::string::npos);
}

TEST(ClosureOptions, WhatTheClosureReplacesIsRefusedNamingTheOption) {
    EXPECT_TRUE(check_closure_options(SyncOptions{}));
    const auto refused = [](const SyncOptions& options, const std::string& option) {
        const auto checked = check_closure_options(options);
        ASSERT_FALSE(checked) << option;
        EXPECT_EQ(checked.error().code, ErrorCode::BadInput);
        EXPECT_NE(checked.error().to_string().find(option), std::string::npos)
            << checked.error().to_string();
    };
    SyncOptions newest;
    newest.selection.newest_only = true;
    refused(newest, "--newest-only");
    newest.selection.keep_versions = 3;
    refused(newest, "--keep-versions");
    SyncOptions source;
    source.selection.source_only = true;
    refused(source, "--source");
    SyncOptions built;
    built.selection.min_build_time = 0;
    refused(built, "--min-buildtime");
    SyncOptions tree;
    tree.treeinfo = true;
    refused(tree, "--treeinfo");
    SyncOptions layout;
    layout.upstream_layout = true;
    refused(layout, "--upstream-layout");
}

TEST(ClosureOptions, TheMachinesArchIsTheFirstThatRuns) {
    EXPECT_EQ(closure_arch({"noarch", "aarch64", "x86_64"}), "aarch64");
    EXPECT_EQ(closure_arch({"src", "i686"}), "i686");
    EXPECT_FALSE(closure_arch({"noarch"}).empty());  // this machine's
}

TEST(ClosureOptions, NevraAlwaysCarriesAnEpoch) {
    EXPECT_EQ(closure_nevra("wget", "", "1.19.5", "5.fc29", "x86_64"),
              "wget-0:1.19.5-5.fc29.x86_64");
    EXPECT_EQ(closure_nevra("foo", "2", "1.0", "1", "noarch"), "foo-2:1.0-1.noarch");
}

}  // namespace
}  // namespace rpmirror
