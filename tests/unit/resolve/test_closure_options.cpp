// What --with-dependencies reads and refuses before it solves (resolve/resolve.hpp), and
// the selection a closure makes (SelectionOptions::only_nevras).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/repo_files.hpp"
#include "resolve/resolve.hpp"
#include "support/temp_dir.hpp"
#include "sync/sync.hpp"
#include "sync/sync_options.hpp"

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

TEST(ClosureOptions, WhatTheClosureReplacesIsRefusedNamingTheOptionAndKeepNIsItsOwn) {
    EXPECT_TRUE(check_closure_options(SyncOptions{}));
    const auto refused = [](const SyncOptions& options, const std::string& option) {
        const auto checked = check_closure_options(options);
        ASSERT_FALSE(checked) << option;
        EXPECT_EQ(checked.error().code, ErrorCode::BadInput);
        EXPECT_NE(checked.error().to_string().find(option), std::string::npos)
            << checked.error().to_string();
    };
    // The closure's own: ClosureRequest::keep_versions.
    SyncOptions newest;
    newest.selection.newest_only = true;
    EXPECT_TRUE(check_closure_options(newest));
    EXPECT_EQ(closure_keep_versions(newest.selection), 1U);
    newest.selection.keep_versions = 3;
    EXPECT_TRUE(check_closure_options(newest));
    EXPECT_EQ(closure_keep_versions(newest.selection), 3U);
    newest.selection.newest_only = false;
    EXPECT_EQ(closure_keep_versions(newest.selection), 1U) << "without -n, the best version";
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
    // Advisories and a date are the closure's own (ClosureRequest::advisories, ::built_by).
    SyncOptions advised;
    advised.selection.advisories.types = {"security"};
    EXPECT_TRUE(check_closure_options(advised));
    EXPECT_EQ(closure_request({}, advised.selection, true, {}).advisories.types,
              std::vector<std::string>{"security"});
    SyncOptions dated;
    dated.selection.as_of = 1700000000;
    EXPECT_TRUE(check_closure_options(dated));
    EXPECT_EQ(closure_request({"app"}, dated.selection, true, {}).built_by, 1700000000);
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

// A primary.xml of noarch packages: {name, version, requires (name [>= version]), what else it
// provides, what it conflicts with}, each at release 1, epoch 0.
struct Fake {
    std::string name;
    std::string version;
    std::vector<std::pair<std::string, std::string>> requires_;
    std::vector<std::string> provides_ = {};
    std::vector<std::string> conflicts_ = {};
    long built = 1;
};

std::filesystem::path write_primary(const std::filesystem::path& path,
                                    const std::vector<Fake>& packages) {
    std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<metadata "
        "xmlns=\"http://linux.duke.edu/metadata/common\" "
        "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\" packages=\"" +
        std::to_string(packages.size()) + "\">\n";
    for (const Fake& package : packages) {
        const std::string nvr = package.name + "-" + package.version + "-1";
        xml += "<package type=\"rpm\"><name>" + package.name +
               "</name><arch>noarch</arch><version epoch=\"0\" ver=\"" + package.version +
               "\" rel=\"1\"/><checksum type=\"sha256\" pkgid=\"YES\">" + std::string(64, 'a') +
               "</checksum><summary>s</summary><description>d</description>" +
               "<time file=\"1\" build=\"" + std::to_string(package.built) +
               "\"/><size package=\"1\" installed=\"1\" " + "archive=\"1\"/><location href=\"" +
               nvr + ".noarch.rpm\"/><format>" + "<rpm:provides><rpm:entry name=\"" + package.name +
               "\" flags=\"EQ\" epoch=\"0\" ver=\"" + package.version + "\" rel=\"1\"/>";
        for (const std::string& provide : package.provides_) {
            xml += "<rpm:entry name=\"" + provide + "\"/>";
        }
        xml += "</rpm:provides><rpm:conflicts>";
        for (const std::string& conflict : package.conflicts_) {
            xml += "<rpm:entry name=\"" + conflict + "\"/>";
        }
        xml += "</rpm:conflicts><rpm:requires>";
        for (const auto& [name, at_least] : package.requires_) {
            xml += "<rpm:entry name=\"" + name + "\"" +
                   (at_least.empty() ? std::string()
                                     : " flags=\"GE\" epoch=\"0\" ver=\"" + at_least + "\"") +
                   "/>";
        }
        xml += "</rpm:requires></format></package>\n";
    }
    return test::TempDir::write_at(path, xml + "</metadata>\n");
}

// app 1.0 needs libold; app 2.0 and 3.0 need libnew >= 2; libnew 2.0 needs helper; app 0.9
// needs what nothing provides. Kept versions each bring their own closure.
TEST(ClosureKeepVersions, EachKeptVersionBringsItsOwnClosure) {
    test::TempDir dir;
    const auto primary =
        write_primary(dir / "primary.xml", {{"app", "0.9", {{"missing-thing", ""}}},
                                            {"app", "1.0", {{"libold", ""}}},
                                            {"app", "2.0", {{"libnew", "2"}}},
                                            {"app", "3.0", {{"libnew", "2"}}},
                                            {"libold", "1.0", {}},
                                            {"libnew", "1.0", {}},
                                            {"libnew", "2.0", {{"helper", ""}}},
                                            {"libnew", "3.0", {}},
                                            {"helper", "1.0", {}},
                                            {"unrelated", "1.0", {}}});
    const std::vector<ClosureRepo> repos{{"r", primary}};
    const auto solved = [&](std::uint32_t keep) {
        ClosureRequest request;
        request.packages = {"app"};
        request.arch = "x86_64";
        request.keep_versions = keep;
        auto closure = resolve_closure(repos, request);
        EXPECT_TRUE(closure) << closure.error().to_string();
        return closure ? *closure : Closure{};
    };
    using Set = std::set<std::string>;
    const Closure one = solved(1);
    EXPECT_EQ(one.shares.at("r"), (Set{"app-0:3.0-1.noarch", "libnew-0:3.0-1.noarch"}));
    EXPECT_TRUE(one.left_out.empty());
    const Closure two = solved(2);
    EXPECT_EQ(two.shares.at("r"),
              (Set{"app-0:2.0-1.noarch", "app-0:3.0-1.noarch", "helper-0:1.0-1.noarch",
                   "libnew-0:2.0-1.noarch", "libnew-0:3.0-1.noarch"}));
    EXPECT_TRUE(two.left_out.empty());
    const Closure three = solved(3);
    EXPECT_EQ(three.shares.at("r"),
              (Set{"app-0:1.0-1.noarch", "app-0:2.0-1.noarch", "app-0:3.0-1.noarch",
                   "helper-0:1.0-1.noarch", "libnew-0:1.0-1.noarch", "libnew-0:2.0-1.noarch",
                   "libnew-0:3.0-1.noarch", "libold-0:1.0-1.noarch"}));
    EXPECT_TRUE(three.left_out.empty());
    // The fourth version of app cannot be installed: left out, and said why.
    const Closure four = solved(4);
    EXPECT_EQ(four.shares.at("r"), three.shares.at("r"));
    ASSERT_EQ(four.left_out.size(), 1U);
    EXPECT_NE(four.left_out[0].find("app-0:0.9-1.noarch"), std::string::npos) << four.left_out[0];
    EXPECT_NE(four.left_out[0].find("missing-thing"), std::string::npos) << four.left_out[0];
}

// --as-of: the closure as the repository stood then, built from what had been built by then.
TEST(ClosureAsOf, OnlyWhatWasBuiltByThenIsACandidate) {
    test::TempDir dir;
    const auto primary =
        write_primary(dir / "primary.xml", {{"app", "1.0", {{"libold", ""}}, {}, {}, 100},
                                            {"app", "2.0", {{"libnew", "2"}}, {}, {}, 300},
                                            {"libold", "1.0", {}, {}, {}, 50},
                                            {"libnew", "1.0", {}, {}, {}, 60},
                                            {"libnew", "2.0", {}, {}, {}, 250}});
    const std::vector<ClosureRepo> repos{{"r", primary}};
    const auto solve = [&](std::optional<std::int64_t> built_by) {
        ClosureRequest request;
        request.packages = {"app"};
        request.arch = "x86_64";
        request.built_by = built_by;
        return resolve_closure(repos, request);
    };
    using Set = std::set<std::string>;
    const auto now = solve(std::nullopt);
    ASSERT_TRUE(now) << now.error().to_string();
    EXPECT_EQ(now->shares.at("r"), (Set{"app-0:2.0-1.noarch", "libnew-0:2.0-1.noarch"}));
    const auto then = solve(200);
    ASSERT_TRUE(then) << then.error().to_string();
    EXPECT_EQ(then->shares.at("r"), (Set{"app-0:1.0-1.noarch", "libold-0:1.0-1.noarch"}));
    // Before app was built: an error naming it, as for a name nothing matches.
    const auto before = solve(20);
    ASSERT_FALSE(before);
    EXPECT_EQ(before.error().code, ErrorCode::BadInput);
    EXPECT_NE(before.error().to_string().find("'app'"), std::string::npos)
        << before.error().to_string();
}

// --advisories: each package the advisories list is installed alone, with what it needs; one
// that cannot be installed is left out with a warning; one the repositories lack is skipped.
TEST(ClosureAdvisories, EachAdvisedPackageBringsItsOwnClosure) {
    test::TempDir dir;
    const auto primary =
        write_primary(dir / "primary.xml", {{"app", "1.0", {{"libold", ""}}},
                                            {"app", "2.0", {{"libnew", "2"}}},
                                            {"app", "3.0", {{"libnew", "2"}}},
                                            {"libold", "1.0", {}},
                                            {"libnew", "2.0", {}},
                                            {"broken", "1.0", {{"missing-thing", ""}}},
                                            {"other", "1.0", {}}});
    const std::vector<ClosureRepo> repos{{"r", primary}};
    const auto solve = [&](std::vector<std::string> packages, std::vector<std::string> advised) {
        ClosureRequest request;
        request.packages = std::move(packages);
        request.arch = "x86_64";
        request.advisories.types = {"security"};
        request.advised_nevras = std::move(advised);
        return resolve_closure(repos, request);
    };
    using Set = std::set<std::string>;
    const std::vector<std::string> advised{"app-0:1.0-1.noarch", "app-0:2.0-1.noarch",
                                           "broken-0:1.0-1.noarch", "gone-0:1.0-1.noarch",
                                           "app-0:2.0-1.aarch64"};
    const auto closure = solve({}, advised);
    ASSERT_TRUE(closure) << closure.error().to_string();
    EXPECT_EQ(closure->shares.at("r"), (Set{"app-0:1.0-1.noarch", "libold-0:1.0-1.noarch",
                                            "app-0:2.0-1.noarch", "libnew-0:2.0-1.noarch"}))
        << "not app 3.0, which no advisory lists";
    ASSERT_EQ(closure->left_out.size(), 1U);
    EXPECT_NE(closure->left_out[0].find("broken-0:1.0-1.noarch"), std::string::npos)
        << closure->left_out[0];
    EXPECT_NE(closure->left_out[0].find("missing-thing"), std::string::npos);
    // With package specs: only the advised packages they select.
    const auto narrowed = solve({"libold", "app"}, advised);
    ASSERT_TRUE(narrowed) << narrowed.error().to_string();
    EXPECT_EQ(narrowed->shares.at("r"), closure->shares.at("r"));
    const auto none = solve({"other"}, advised);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ErrorCode::BadInput);
    EXPECT_NE(none.error().to_string().find("the advisories selected list no package"),
              std::string::npos)
        << none.error().to_string();
    EXPECT_FALSE(solve({}, {"gone-0:1.0-1.noarch"}));
}

// Two mail servers provide MTA and conflict; cron needs an MTA. Each listed package brings what it
// would install alone (as dnf download --resolve takes it), so a machine installing only cron
// finds the MTA dnf would choose for it, and conflicting packages can share a mirror.
TEST(ClosurePerPackage, EachListedPackageBringsItsOwnChoicesAndConflictingOnesShareAMirror) {
    test::TempDir dir;
    const auto primary =
        write_primary(dir / "primary.xml", {{"cron", "1.0", {{"MTA", ""}}},
                                            {"postfix", "3.0", {}, {"MTA"}, {"sendmail"}},
                                            {"sendmail", "8.0", {}, {"MTA"}, {"postfix"}},
                                            {"broken", "1.0", {{"missing-thing", ""}}}});
    const std::vector<ClosureRepo> repos{{"r", primary}};
    const auto solve = [&](std::vector<std::string> packages) {
        ClosureRequest request;
        request.packages = std::move(packages);
        request.arch = "x86_64";
        return resolve_closure(repos, request);
    };
    const auto cron = solve({"cron"});
    ASSERT_TRUE(cron) << cron.error().to_string();
    ASSERT_EQ(cron->shares.at("r").size(), 2U);
    const bool postfix = cron->shares.at("r").contains("postfix-0:3.0-1.noarch");
    const std::string chosen = postfix ? "postfix-0:3.0-1.noarch" : "sendmail-0:8.0-1.noarch";
    const std::string other = postfix ? "sendmail" : "postfix";
    const std::string other_nevra = postfix ? "sendmail-0:8.0-1.noarch" : "postfix-0:3.0-1.noarch";

    // Together, cron would take the other listed MTA; alone, the one it chose: both are there.
    const auto both = solve({"cron", other});
    ASSERT_TRUE(both) << both.error().to_string();
    EXPECT_EQ(both->shares.at("r"),
              (std::set<std::string>{"cron-0:1.0-1.noarch", chosen, other_nevra}));
    EXPECT_TRUE(both->left_out.empty());

    // Conflicting packages: each installs alone, so both are mirrored, and a warning says they
    // cannot be installed together.
    const auto servers = solve({"postfix", "sendmail"});
    ASSERT_TRUE(servers) << servers.error().to_string();
    EXPECT_EQ(servers->shares.at("r"),
              (std::set<std::string>{"postfix-0:3.0-1.noarch", "sendmail-0:8.0-1.noarch"}));
    ASSERT_EQ(servers->left_out.size(), 1U);
    EXPECT_NE(servers->left_out[0].find("cannot all be installed"), std::string::npos)
        << servers->left_out[0];

    // A package that cannot be installed alone is an error naming it and what it lacks.
    for (const auto& list :
         {std::vector<std::string>{"cron", "broken"}, std::vector<std::string>{"broken"}}) {
        const auto broken = solve(list);
        ASSERT_FALSE(broken);
        EXPECT_EQ(broken.error().code, ErrorCode::BadInput);
        EXPECT_NE(broken.error().to_string().find("'broken' cannot be installed"),
                  std::string::npos)
            << broken.error().to_string();
        EXPECT_NE(broken.error().to_string().find("missing-thing"), std::string::npos)
            << broken.error().to_string();
    }
}

}  // namespace
}  // namespace rpmirror
