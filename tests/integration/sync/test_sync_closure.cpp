// --packages with --with-dependencies: a partial mirror of what a list of packages needs to
// install, drawn from several repositories, solved by libsolv; dnf installs from it what it would
// install from upstream, and the published metadata lists exactly the mirrored packages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "integration/dnfstack/dnfstack_fixture.hpp"
#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncClosure : public SyncFixture {
  protected:
    // Serves the fixture repositories `names` (tests/data/dnf-ci) and returns, per name, the
    // --repofrompath/--repo arguments that select it under its own id.
    std::vector<std::string> repositories(const std::vector<std::string>& names) {
        std::vector<std::string> args;
        for (const std::string& name : names) {
            NginxServer& server = serve(dnf_ci_fixtures() / "repos" / name);
            upstream_[name] = server.url("/");
            servers_by_name_[name] = &server;
            args.insert(args.end(),
                        {"--repofrompath", name + "," + server.url("/"), "--repo", name});
        }
        return args;
    }

    // The .rpm file names of `dir`, recursively.
    static std::set<std::string> rpms_under(const fs::path& dir) {
        std::set<std::string> names;
        std::error_code ignored;
        for (const auto& entry : fs::recursive_directory_iterator(dir, ignored)) {
            if (entry.path().extension() == ".rpm") {
                names.insert(entry.path().filename().string());
            }
        }
        return names;
    }

    // What `dnf install --downloadonly SPEC...` fetches into an empty root from the repositories
    // at `baseurls` (id -> URL), by file name: the transaction dnf would run.
    // With `root`, into that installroot (what it has installed is not fetched again); with
    // `downloadonly` false, installed there.
    std::set<std::string> dnf_downloads(
        const std::vector<std::pair<std::string, std::string>>& baseurls,
        const std::vector<std::string>& specs, bool weak = true, const fs::path& root = {},
        bool downloadonly = true) {
        const fs::path work = tmp_ / ("dnf-" + std::to_string(++dnf_runs_));
        std::vector<std::string> argv = isolated_dnf(work);
        fs::create_directories(work / "log");
        std::string repos;
        for (const auto& [id, url] : baseurls) {
            repos += "[" + id + "]\nname=" + id + "\nbaseurl=" + url + "\ngpgcheck=0\n";
        }
        TempDir::write_at(work / "reposd" / "all.repo", repos);
        argv.insert(argv.end(),
                    {"--disableplugin=*", "--forcearch=x86_64",
                     "--setopt=install_weak_deps=" + std::string(weak ? "1" : "0"), "install",
                     "--installroot", (root.empty() ? work / "root" : root).string(),
                     "--setopt=keepcache=1"});
        if (downloadonly) {
            argv.push_back("--downloadonly");
        }
        argv.insert(argv.end(), specs.begin(), specs.end());
        const CommandResult install = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(install.exit_code, 0) << install.out << install.err;
        // The cache is `work`'s, or that path inside the installroot (dnf prefixes it).
        std::set<std::string> fetched = rpms_under(work);
        if (!root.empty()) {
            const std::set<std::string> inside = rpms_under(root / work.relative_path());
            fetched.insert(inside.begin(), inside.end());
        }
        return fetched;
    }

    // The URL of each fixture repository repositories() serves. dnf fetches packages over HTTP
    // (a file:// repository's packages are used where they are, never downloaded).
    std::map<std::string, std::string> upstream_;
    std::map<std::string, NginxServer*> servers_by_name_;
    int dnf_runs_ = 0;
};

TEST_F(SyncClosure, EachRepositoryMirrorsItsShareOfTheClosureAndDnfInstallsFromTheMirror) {
    std::vector<std::string> args = repositories({"dnf-ci-fedora", "dnf-ci-thirdparty-updates"});
    const fs::path mirror = tmp_ / "mirror";
    args.insert(args.end(), {"-p", mirror.string(), "--download-metadata", "-a", "x86_64",
                             "--packages", "CQRlib-extension,abcde", "--with-dependencies"});

    const CommandResult synced = sync(args);

    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    // The records fetched to solve are the ones the sync publishes: each fetched once.
    for (const auto& [name, server] : servers_by_name_) {
        std::map<std::string, int> fetched;
        for (const std::string& uri : uris_since(*server, 0)) {
            if (uri.starts_with("/repodata/") && !uri.starts_with("/repodata/repomd.xml")) {
                ++fetched[uri];
            }
        }
        EXPECT_FALSE(fetched.empty()) << name;
        for (const auto& [uri, times] : fetched) {
            EXPECT_EQ(times, 1) << name << uri;
        }
    }
    // CQRlib-extension needs CQRlib (from the other repository) and SuperRipper, whose newest
    // version needs what nothing provides: 1.2 is the one that installs. abcde needs wget and
    // recommends flac (weak, installed as dnf does); it suggests lame (never installed).
    EXPECT_EQ(rpms_under(mirror / "dnf-ci-thirdparty-updates"),
              (std::set<std::string>{"CQRlib-extension-1.6-2.x86_64.rpm",
                                     "SuperRipper-1.2-1.x86_64.rpm"}));
    const std::set<std::string> fedora = rpms_under(mirror / "dnf-ci-fedora");
    for (const char* needed : {"CQRlib-1.1.1-4.fc29.x86_64.rpm", "abcde-2.9.2-1.fc29.noarch.rpm",
                               "wget-1.19.5-5.fc29.x86_64.rpm", "flac-1.3.2-8.fc29.x86_64.rpm"}) {
        EXPECT_TRUE(fedora.contains(needed)) << needed;
    }
    for (const std::string& name : fedora) {
        EXPECT_FALSE(name.starts_with("lame")) << name << ": a Suggests is never installed";
        EXPECT_FALSE(name.starts_with("glibc-devel")) << name << ": nothing needs it";
    }

    // dnf installs from the mirror exactly what it installs from upstream.
    const std::vector<std::string> specs{"CQRlib-extension", "abcde"};
    const std::set<std::string> from_upstream =
        dnf_downloads({{"fedora", upstream_["dnf-ci-fedora"]},
                       {"updates", upstream_["dnf-ci-thirdparty-updates"]}},
                      specs);
    NginxServer& served = serve(mirror);
    const std::set<std::string> from_mirror =
        dnf_downloads({{"fedora", served.url("/dnf-ci-fedora/")},
                       {"updates", served.url("/dnf-ci-thirdparty-updates/")}},
                      specs);
    EXPECT_FALSE(from_upstream.empty());
    EXPECT_EQ(from_mirror, from_upstream);
    std::set<std::string> mirrored = fedora;
    const std::set<std::string> updates = rpms_under(mirror / "dnf-ci-thirdparty-updates");
    mirrored.insert(updates.begin(), updates.end());
    EXPECT_EQ(mirrored, from_upstream) << "the mirror holds what dnf installs, nothing more";

    // The published metadata lists exactly the mirrored packages, and a second run is a no-op.
    const CommandResult query =
        run_to_end({"dnf", "-q", "repoquery", "--setopt=reposdir=/dev/null", "--releasever=1",
                    "--setopt=cachedir=" + (tmp_ / "query-cache").string(),
                    "--repofrompath=m," + (mirror / "dnf-ci-thirdparty-updates").string(),
                    "--repo=m", "--qf=%{name}-%{version}-%{release}.%{arch}.rpm"},
                   tmp_ / "logs");
    ASSERT_EQ(query.exit_code, 0) << query.err;
    const std::vector<std::string> listed = lines_of(query.out);
    EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()), updates);
    const CommandResult again = sync(args);
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("dnf-ci-fedora: up to date"), std::string::npos) << again.out;
}

// --keep-versions N with --with-dependencies: the N newest versions of every package of the
// closure, each with its own dependencies, so every kept version installs from the mirror alone.
// Upstream is built here (rpmbuild + createrepo_c): app 1.0 needs libold, app 2.0 and 3.0 need
// libnew >= 2, libnew 2.0 needs helper, app 0.9 needs what nothing provides.
TEST_F(SyncClosure, EveryKeptVersionInstallsFromTheMirrorAsFromUpstream) {
    const fs::path upstream = tmp_ / "upstream";
    const std::vector<std::tuple<std::string, std::string, std::string>> packages{
        {"app", "0.9", "missing-thing"}, {"app", "1.0", "libold"}, {"app", "2.0", "libnew >= 2"},
        {"app", "3.0", "libnew >= 2"},   {"libold", "1.0", ""},    {"libnew", "1.0", ""},
        {"libnew", "2.0", "helper"},     {"libnew", "3.0", ""},    {"helper", "1.0", ""},
        {"unrelated", "1.0", ""}};
    for (const auto& [name, version, needs] : packages) {
        const fs::path spec = TempDir::write_at(
            tmp_ / "specs" / (name + "-" + version + ".spec"),
            "Name: " + name + "\nVersion: " + version +
                "\nRelease: 1\nSummary: keep-versions closure fixture\nLicense: MIT\n"
                "BuildArch: noarch\n" +
                (needs.empty() ? "" : "Requires: " + needs + "\n") +
                "%description\nA package of the keep-versions closure test.\n%files\n");
        run_checked({"rpmbuild", "--quiet", "-bb", "--define", "_rpmdir " + upstream.string(),
                     "--define", "_topdir " + (tmp_ / "rpmbuild").string(), spec.string()},
                    tmp_ / "logs");
    }
    recreate_repo(upstream, "1700000000", tmp_ / "logs");
    NginxServer& server = serve(upstream);
    const fs::path mirror = tmp_ / "mirror";
    const CommandResult synced =
        sync({"--repofrompath", "up," + server.url("/"), "--repo", "up", "-p", mirror.string(),
              "--download-metadata", "-a", "x86_64", "--packages", "app", "--with-dependencies",
              "--keep-versions", "4"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(rpms_under(mirror / "up"),
              (std::set<std::string>{"app-1.0-1.noarch.rpm", "app-2.0-1.noarch.rpm",
                                     "app-3.0-1.noarch.rpm", "libold-1.0-1.noarch.rpm",
                                     "libnew-1.0-1.noarch.rpm", "libnew-2.0-1.noarch.rpm",
                                     "libnew-3.0-1.noarch.rpm", "helper-1.0-1.noarch.rpm"}));
    // The fourth version cannot be installed anywhere: left out, with a warning saying why.
    EXPECT_NE(synced.err.find("warning: --with-dependencies: app-0:0.9-1.noarch (a kept older "
                              "version) cannot be installed: "),
              std::string::npos)
        << synced.err;
    EXPECT_NE(synced.err.find("missing-thing"), std::string::npos) << synced.err;

    // Every kept version installs from the mirror alone, fetching what it fetches upstream.
    NginxServer& served = serve(mirror);
    for (const std::string spec : {"app-1.0", "app-2.0", "app-3.0", "libnew-1.0", "libnew-2.0"}) {
        const std::set<std::string> from_upstream =
            dnf_downloads({{"up", server.url("/")}}, {spec});
        const std::set<std::string> from_mirror =
            dnf_downloads({{"up", served.url("/up/")}}, {spec});
        EXPECT_FALSE(from_upstream.empty()) << spec;
        EXPECT_EQ(from_mirror, from_upstream) << spec;
    }
}

// --installed-base: what the machines already have is left out, as dnf leaves it out of an
// installation there; given as the machine's installroot (its rpmdb) or as `rpm -qa`'s list.
TEST_F(SyncClosure, AnInstalledBaseIsLeftOutAsDnfLeavesItOut) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root: dnf installs the base into an installroot";
    }
    std::vector<std::string> args = repositories({"dnf-ci-fedora", "dnf-ci-thirdparty-updates"});
    const std::vector<std::pair<std::string, std::string>> upstream = {
        {"fedora", upstream_["dnf-ci-fedora"]},
        {"updates", upstream_["dnf-ci-thirdparty-updates"]}};
    // The machines: wget and CQRlib (and what they need) installed by dnf.
    const fs::path root = tmp_ / "machine";
    const std::set<std::string> base =
        dnf_downloads(upstream, {"wget", "CQRlib"}, true, root, false);
    ASSERT_TRUE(base.contains("wget-1.19.5-5.fc29.x86_64.rpm")) << testing::PrintToString(base);
    const CommandResult listed = run_to_end({"rpm", "--root", root.string(), "-qa"}, tmp_ / "logs");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    TempDir::write_at(tmp_ / "base.txt", "# rpm -qa on the machines\n" + listed.out +
                                             "\nnot-in-any-repository-1.0-1.x86_64\n");

    const std::vector<std::string> specs{"CQRlib-extension", "abcde"};
    const std::set<std::string> from_dnf = dnf_downloads(upstream, specs, true, root);
    EXPECT_FALSE(from_dnf.empty());
    for (const auto& [name, installed_base] :
         std::map<std::string, fs::path>{{"rpmdb", root}, {"list", tmp_ / "base.txt"}}) {
        const fs::path mirror = tmp_ / ("mirror-" + name);
        std::vector<std::string> run = args;
        run.insert(run.end(),
                   {"-p", mirror.string(), "-a", "x86_64", "--packages", "CQRlib-extension,abcde",
                    "--with-dependencies", "--installed-base", installed_base.string()});
        const CommandResult synced = sync(run);
        ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
        std::set<std::string> mirrored = rpms_under(mirror / "dnf-ci-fedora");
        const std::set<std::string> updates = rpms_under(mirror / "dnf-ci-thirdparty-updates");
        mirrored.insert(updates.begin(), updates.end());
        EXPECT_EQ(mirrored, from_dnf) << name;
        for (const std::string& file : mirrored) {
            EXPECT_FALSE(base.contains(file)) << name << ": " << file << " is installed already";
        }
    }

    // What is no base: clear errors, nothing written.
    const fs::path mirror = tmp_ / "mirror-bad";
    const auto bad = [&](const fs::path& installed_base) {
        std::vector<std::string> run = args;
        run.insert(run.end(), {"-p", mirror.string(), "--packages", "abcde", "--with-dependencies",
                               "--installed-base", installed_base.string()});
        return sync(run);
    };
    const CommandResult absent = bad(tmp_ / "no-such-base");
    EXPECT_EQ(absent.exit_code, 1);
    EXPECT_NE(absent.err.find((tmp_ / "no-such-base").string()), std::string::npos) << absent.err;
    EXPECT_NE(absent.err.find("neither an installroot"), std::string::npos) << absent.err;
    TempDir::write_at(tmp_ / "garbled.txt", "wget-1.19.5-5.fc29.x86_64\nwget\n");
    const CommandResult garbled = bad(tmp_ / "garbled.txt");
    EXPECT_EQ(garbled.exit_code, 1);
    EXPECT_NE(garbled.err.find("line 2: \"wget\" is not a NEVRA"), std::string::npos)
        << garbled.err;
    fs::create_directories(tmp_ / "empty-root");
    const CommandResult no_rpmdb = bad(tmp_ / "empty-root");
    EXPECT_EQ(no_rpmdb.exit_code, 0) << no_rpmdb.err << "an installroot with nothing installed";
    fs::remove_all(mirror);
    const CommandResult alone = sync({"--installed-base", root.string(), "-p", mirror.string()});
    EXPECT_EQ(alone.exit_code, 2);
    EXPECT_NE(alone.err.find("--with-dependencies"), std::string::npos) << alone.err;
    EXPECT_FALSE(fs::exists(mirror));
}

// An installroot's rpm database is read whole: a package installed there that no repository has
// provides all it provides (as dnf sees it), where a NEVRA list can only name it.
TEST_F(SyncClosure, AnInstalledPackageNoRepositoryHasProvidesWhatItProvides) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root: rpm installs the base into an installroot";
    }
    const auto build = [&](const std::string& name, const std::string& tags, const fs::path& into) {
        const fs::path spec = TempDir::write_at(
            tmp_ / "specs" / (name + ".spec"),
            "Name: " + name +
                "\nVersion: 1.0\nRelease: 1\nSummary: installed-base fixture\n"
                "License: MIT\nBuildArch: noarch\n" +
                tags + "%description\nA package of the installed-base test.\n%files\n");
        run_checked({"rpmbuild", "--quiet", "-bb", "--define", "_rpmdir " + into.string(),
                     "--define", "_topdir " + (tmp_ / "rpmbuild").string(), spec.string()},
                    tmp_ / "logs");
    };
    const fs::path upstream = tmp_ / "upstream";
    build("app", "Requires: libthing.so.1\n", upstream);
    build("other", "", upstream);
    recreate_repo(upstream, "1700000000", tmp_ / "logs");
    build("local-thing", "Provides: libthing.so.1\n", tmp_ / "local");
    const fs::path root = tmp_ / "machine";
    run_checked({"rpm", "--root", root.string(), "--initdb"}, tmp_ / "logs");
    run_checked({"rpm", "--root", root.string(), "--nodeps", "-i",
                 (tmp_ / "local" / "noarch" / "local-thing-1.0-1.noarch.rpm").string()},
                tmp_ / "logs");
    NginxServer& server = serve(upstream);
    const auto mirror = [&](const std::string& name, const std::string& base) {
        std::vector<std::string> args{"--repofrompath",
                                      "up," + server.url("/"),
                                      "--repo",
                                      "up",
                                      "-p",
                                      (tmp_ / name).string(),
                                      "-a",
                                      "x86_64",
                                      "--packages",
                                      "app",
                                      "--with-dependencies"};
        if (!base.empty()) {
            args.insert(args.end(), {"--installed-base", base});
        }
        return sync(args);
    };
    const CommandResult from_rpmdb = mirror("rpmdb", root.string());
    ASSERT_EQ(from_rpmdb.exit_code, 0) << from_rpmdb.out << from_rpmdb.err;
    EXPECT_EQ(rpms_under(tmp_ / "rpmdb" / "up"), std::set<std::string>{"app-1.0-1.noarch.rpm"});
    // The same machine as `rpm -qa` prints it: local-thing provides only itself.
    const fs::path list = TempDir::write_at(tmp_ / "base.txt", "local-thing-1.0-1.noarch\n");
    for (const auto& [name, base] :
         std::vector<std::pair<std::string, std::string>>{{"list", list.string()}, {"empty", ""}}) {
        const CommandResult unsolved = mirror(name, base);
        EXPECT_EQ(unsolved.exit_code, 1) << name << unsolved.out << unsolved.err;
        EXPECT_NE(unsolved.err.find("libthing.so.1"), std::string::npos) << name << unsolved.err;
        EXPECT_FALSE(fs::exists(tmp_ / name / "up" / "repodata")) << name;
    }
}

// --closure-repos: dependencies may come from a repository the run does not mirror (the machines
// get it elsewhere); the mirrored one holds exactly its share, as when both are mirrored.
TEST_F(SyncClosure, ClosureReposGiveDependenciesWithoutBeingMirrored) {
    std::vector<std::string> args = repositories({"dnf-ci-fedora", "dnf-ci-thirdparty-updates"});
    const std::vector<std::string> closure{"--packages", "CQRlib-extension", "-a", "x86_64",
                                           "--with-dependencies"};
    std::vector<std::string> both = args;
    both.insert(both.end(), {"-p", (tmp_ / "both").string()});
    both.insert(both.end(), closure.begin(), closure.end());
    const CommandResult whole = sync(both);
    ASSERT_EQ(whole.exit_code, 0) << whole.out << whole.err;
    const std::set<std::string> fedora_share = rpms_under(tmp_ / "both" / "dnf-ci-fedora");
    const std::set<std::string> updates_share =
        rpms_under(tmp_ / "both" / "dnf-ci-thirdparty-updates");
    ASSERT_FALSE(fedora_share.empty());
    ASSERT_FALSE(updates_share.empty());

    // fedora defined (--repofrompath) but not mirrored: only a closure repository.
    const auto selected = std::find(args.begin(), args.end(), "dnf-ci-fedora");
    ASSERT_NE(selected, args.end());
    std::vector<std::string> only = args;
    only.erase(only.begin() + (selected - args.begin()) - 1,
               only.begin() + (selected - args.begin()) + 1);  // its "--repo dnf-ci-fedora"
    only.insert(only.end(), {"-p", (tmp_ / "only").string(), "--closure-repos", "dnf-ci-fedora"});
    only.insert(only.end(), closure.begin(), closure.end());
    const CommandResult partial = sync(only);
    ASSERT_EQ(partial.exit_code, 0) << partial.out << partial.err;
    EXPECT_EQ(rpms_under(tmp_ / "only" / "dnf-ci-thirdparty-updates"), updates_share);
    EXPECT_FALSE(fs::exists(tmp_ / "only" / "dnf-ci-fedora"));
    EXPECT_NE(partial.err.find(std::to_string(fedora_share.size()) +
                               " package(s) the closure needs come from dnf-ci-fedora"),
              std::string::npos)
        << partial.err;

    // An unknown repository, or without --with-dependencies: usage errors, nothing written.
    std::vector<std::string> unknown = args;
    unknown.insert(unknown.end(),
                   {"-p", (tmp_ / "unknown").string(), "--closure-repos", "no-such-repo"});
    unknown.insert(unknown.end(), closure.begin(), closure.end());
    const CommandResult refused = sync(unknown);
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("--closure-repos"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("'no-such-repo'"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(tmp_ / "unknown"));
    std::vector<std::string> alone = args;
    alone.insert(alone.end(),
                 {"-p", (tmp_ / "alone").string(), "--closure-repos", "dnf-ci-fedora"});
    const CommandResult needs = sync(alone);
    EXPECT_EQ(needs.exit_code, 2) << needs.out << needs.err;
    EXPECT_NE(needs.err.find("--with-dependencies"), std::string::npos) << needs.err;
    EXPECT_FALSE(fs::exists(tmp_ / "alone"));
}

TEST_F(SyncClosure, RichAndWeakDependenciesAsDnfSolvesThem) {
    std::vector<std::string> args = repositories({"dnf-ci-rich"});
    const fs::path mirror = tmp_ / "mirror";
    args.insert(args.end(), {"-p", mirror.string(), "--packages", "pancake,sauce,breakfast",
                             "--with-dependencies"});
    const CommandResult synced = sync(args);
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const std::set<std::string> from_upstream =
        dnf_downloads({{"rich", upstream_["dnf-ci-rich"]}}, {"pancake", "sauce", "breakfast"});
    EXPECT_EQ(rpms_under(mirror), from_upstream);
    // (milk or soymilk) with milk recommended: milk; (flour and ((milk or cream) if dill)):
    // flour. breakfast's conditional Recommends is resolved as dnf resolves it (equal above).
    for (const char* name : {"milk", "flour"}) {
        bool found = false;
        for (const std::string& file : rpms_under(mirror)) {
            found = found || file.starts_with(std::string(name) + "-1.0");
        }
        EXPECT_TRUE(found) << name;
    }

    // Without weak dependencies: pancake's Recommends (milk) no longer decides for it.
    const fs::path strict = tmp_ / "strict";
    std::vector<std::string> strict_args = args;
    strict_args[strict_args.size() - 4] = strict.string();  // -p
    strict_args.push_back("--no-weak-dependencies");
    const CommandResult without = sync(strict_args);
    ASSERT_EQ(without.exit_code, 0) << without.out << without.err;
    EXPECT_EQ(rpms_under(strict), dnf_downloads({{"rich", upstream_["dnf-ci-rich"]}},
                                                {"pancake", "sauce", "breakfast"}, false));
}

TEST_F(SyncClosure, WhatCannotBeSolvedIsAnErrorNamingItAndNothingIsWritten) {
    const std::vector<std::string> repos = repositories({"dnf-ci-thirdparty-updates"});
    const fs::path mirror = tmp_ / "mirror";
    const auto run = [&](const std::vector<std::string>& more) {
        std::vector<std::string> args = repos;
        args.insert(args.end(), {"-p", mirror.string()});
        args.insert(args.end(), more.begin(), more.end());
        return sync(args);
    };

    // A name that matches nothing: the name and the repositories searched.
    const CommandResult nothing = run({"--packages", "no-such-thing", "--with-dependencies"});
    EXPECT_EQ(nothing.exit_code, 1);
    EXPECT_NE(nothing.err.find("'no-such-thing' matches nothing"), std::string::npos)
        << nothing.err;
    EXPECT_NE(nothing.err.find("dnf-ci-thirdparty-updates"), std::string::npos) << nothing.err;

    // A dependency nothing provides (CQRlib lives in another repository): the package and the
    // dependency.
    const CommandResult missing = run({"--packages", "CQRlib-extension", "--with-dependencies"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("CQRlib"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("nothing provides"), std::string::npos) << missing.err;
    const CommandResult unsatisfiable =
        run({"--packages", "SuperRipper-1.3", "--with-dependencies"});
    EXPECT_EQ(unsatisfiable.exit_code, 1);
    EXPECT_NE(unsatisfiable.err.find("unsatisfiable"), std::string::npos) << unsatisfiable.err;

    // What the closure replaces, or needs, refused before anything is fetched.
    const CommandResult source =
        run({"--packages", "SuperRipper", "--with-dependencies", "--source"});
    EXPECT_EQ(source.exit_code, 2);
    EXPECT_NE(source.err.find("--source"), std::string::npos) << source.err;
    const CommandResult alone = run({"--with-dependencies"});
    EXPECT_EQ(alone.exit_code, 2);
    EXPECT_NE(alone.err.find("--with-dependencies"), std::string::npos) << alone.err;
    TempDir::write_at(tmp_ / "empty-list", "# nothing but a comment\n\n");
    const CommandResult empty = run({"--packages-file", (tmp_ / "empty-list").string()});
    EXPECT_EQ(empty.exit_code, 2);
    EXPECT_NE(empty.err.find("empty-list"), std::string::npos) << empty.err;
    const CommandResult unreadable = run({"--packages-file", (tmp_ / "absent").string()});
    EXPECT_EQ(unreadable.exit_code, 2);
    EXPECT_NE(unreadable.err.find("absent"), std::string::npos) << unreadable.err;
    EXPECT_FALSE(fs::exists(mirror)) << "nothing is written for a closure that fails";
}

TEST_F(SyncClosure, APackagesFileWithoutDependenciesIsANameFilter) {
    std::vector<std::string> args = repositories({"dnf-ci-thirdparty-updates"});
    const fs::path mirror = tmp_ / "mirror";
    TempDir::write_at(tmp_ / "list", "# what the machines run\nSuperRipper   # both versions\n");
    args.insert(args.end(), {"-p", mirror.string(), "--packages-file", (tmp_ / "list").string()});
    const CommandResult synced = sync(args);
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    // Every version and arch, source packages too, as includepkgs.
    EXPECT_EQ(rpms_under(mirror),
              (std::set<std::string>{"SuperRipper-1.2-1.x86_64.rpm", "SuperRipper-1.3-1.x86_64.rpm",
                                     "SuperRipper-1.2-1.src.rpm", "SuperRipper-1.3-1.src.rpm"}));
}

TEST_F(SyncClosure, JobsWithTheSamePackagesShareOneClosure) {
    repositories({"dnf-ci-fedora", "dnf-ci-thirdparty-updates", "dnf-ci-rich"});
    const fs::path mirror = tmp_ / "mirror";
    TempDir::write_at(tmp_ / "fleet.txt", "abcde\n");
    const fs::path config = TempDir::write_at(
        tmp_ / "rpmirror.conf",
        "[main]\ndestination = " + mirror.string() + "\nstate-dir = " + (tmp_ / "state").string() +
            "\narch = x86_64\npackages = CQRlib-extension\npackages-file = " +
            (tmp_ / "fleet.txt").string() +
            "\nwith-dependencies = 1\n"
            "[fedora]\nbaseurl = " +
            upstream_["dnf-ci-fedora"] +
            "\n[updates]\nbaseurl = " + upstream_["dnf-ci-thirdparty-updates"] +
            // Its own closure: other packages.
            "\n[rich]\nbaseurl = " + upstream_["dnf-ci-rich"] +
            "\npackages = pancake\n"
            "packages-file =\nweak-dependencies = 0\n");
    const CommandResult run =
        run_to_end(rpmirror_sync_argv({"--config-file", config.string()}), tmp_ / "logs");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(rpms_under(mirror / "updates"),
              (std::set<std::string>{"CQRlib-extension-1.6-2.x86_64.rpm",
                                     "SuperRipper-1.2-1.x86_64.rpm"}));
    const std::set<std::string> fedora = rpms_under(mirror / "fedora");
    EXPECT_TRUE(fedora.contains("CQRlib-1.1.1-4.fc29.x86_64.rpm"));
    EXPECT_TRUE(fedora.contains("abcde-2.9.2-1.fc29.noarch.rpm"));
    EXPECT_TRUE(fedora.contains("wget-1.19.5-5.fc29.x86_64.rpm"));
    EXPECT_EQ(rpms_under(mirror / "rich"),
              dnf_downloads({{"rich", upstream_["dnf-ci-rich"]}}, {"pancake"}, false));
}

// prefetch = closure (an on-demand job, rpmirror serve's hybrid): the closure of the job's
// packages is fetched by the sync, and the mirror lists everything upstream lists, the rest left
// to be fetched on demand.
TEST_F(SyncClosure, APrefetchedClosureIsHeldAndTheMirrorListsEverything) {
    repositories({"dnf-ci-fedora"});
    const fs::path mirror = tmp_ / "mirror";
    const fs::path config = TempDir::write_at(
        tmp_ / "rpmirror.conf",
        "[main]\ndestination = " + mirror.string() + "\nstate-dir = " + (tmp_ / "state").string() +
            "\n[fedora]\nbaseurl = " + upstream_["dnf-ci-fedora"] +
            "\ndownload-metadata = 1\ndownload-policy = on-demand\npackages = abcde\n"
            "with-dependencies = 1\nweak-dependencies = 0\nprefetch = closure\n");
    const CommandResult run =
        run_to_end(rpmirror_sync_argv({"--config-file", config.string()}), tmp_ / "logs");
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    const std::set<std::string> closure =
        dnf_downloads({{"fedora", upstream_["dnf-ci-fedora"]}}, {"abcde"}, false);
    EXPECT_TRUE(closure.contains("wget-1.19.5-5.fc29.x86_64.rpm"));
    EXPECT_EQ(rpms_under(mirror / "fedora"), closure);
    const auto listed = dnf_repoquery(tmp_ / "query-mirror", mirror / "fedora", "%{name}");
    const auto upstream = dnf_repoquery(tmp_ / "query-upstream",
                                        dnf_ci_fixtures() / "repos" / "dnf-ci-fedora", "%{name}");
    ASSERT_EQ(listed.first, 0);
    EXPECT_EQ(listed.second, upstream.second) << "the mirror lists every package";
    EXPECT_GT(listed.second.size(), closure.size());
}

TEST_F(SyncClosure, AJobsClosureKeysAreCheckedWhenTheFileIsRead) {
    repositories({"dnf-ci-thirdparty-updates"});
    const auto refused = [&](const std::string& keys, const std::string& named) {
        const fs::path config = TempDir::write_at(
            tmp_ / "bad.conf",
            "[main]\ndestination = " + (tmp_ / "mirror").string() +
                "\n[updates]\nbaseurl = " + upstream_["dnf-ci-thirdparty-updates"] + "\n" + keys);
        const CommandResult run =
            run_to_end(rpmirror_sync_argv({"--config-file", config.string()}), tmp_ / "logs");
        // As every job key: the job fails, naming the file, line and key (exit 1).
        EXPECT_EQ(run.exit_code, 1) << keys << run.out << run.err;
        EXPECT_NE(run.err.find(named), std::string::npos) << keys << run.err;
        EXPECT_FALSE(fs::exists(tmp_ / "mirror")) << keys;
    };
    refused("with-dependencies = 1\n", "needs packages");
    refused("download-metadata = 1\ndownload-policy = on-demand\nprefetch = closure\n",
            "closure needs with-dependencies = 1");
    refused("download-metadata = 1\ndownload-policy = on-demand\nprefetch = closure, abcde\n",
            "closure is not combined with anything");
    refused("packages = SuperRipper\nwith-dependencies = 1\nsource = 1\n", "--source");
    refused("packages-file = " + (tmp_ / "absent").string() + "\n", "absent");
    refused("packages = SuperRipper\ninstalled-base = /\n",
            "installed-base: needs with-dependencies = 1");
    refused("packages = SuperRipper\nmodules = nodejs:8\n", "modules: needs with-dependencies = 1");
    refused("packages = SuperRipper\nwith-dependencies = 1\nclosure-repos = no-such-repo\n",
            "closure-repos: ");
    refused("packages = SuperRipper\nclosure-repos = no-such-repo\n", "closure-repos: ");
    refused("packages = SuperRipper\nwith-dependencies = 1\ninstalled-base = " +
                (tmp_ / "no-base").string() + "\n",
            "neither an installroot");
}

}  // namespace
}  // namespace rpmirror::test
