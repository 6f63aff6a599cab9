// `rpmirror exec --prefetch -- dnf install ...`: before dnf runs, the metadata of its
// repositories and the packages its transaction needs are fetched into dnf's own cache. Stock dnf
// 4.14 then installs; the tests compare it with dnf alone on the same repositories (nginx,
// fault_server.py), by what each installed (`rpm -qa --root`) and what the servers saw.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "integration/dnfstack/dnfstack_fixture.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "support/signing.hpp"
#include "support/source_tree.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class ExecPrefetch : public SyncFixture {
  protected:
    // `dnf install -y --installroot ROOT SPECS` with its own config, cache and `repos` (the
    // content of its one .repo file) under `work`; through `rpmirror exec --prefetch` iff
    // `prefetch`.
    // `program`: what runs as dnf (a script named dnf that runs it), when not dnf itself.
    CommandResult install(bool prefetch, const fs::path& work, const fs::path& root,
                          const std::string& repos, const std::vector<std::string>& specs,
                          const std::vector<std::string>& extra = {},
                          const std::string& program = {}) {
        std::vector<std::string> argv;
        if (prefetch) {
            argv = {rpmirror_binary(), "exec", "--prefetch", "--"};
        }
        std::vector<std::string> dnf = isolated_dnf(work);
        std::erase(dnf, "-q");
        if (!program.empty()) {
            dnf.front() = program;
        }
        argv.insert(argv.end(), dnf.begin(), dnf.end());
        // Rewritten only when it changes: dnf counts metadata older than its .repo file as expired.
        if (!fs::exists(work / "reposd" / "test.repo") ||
            read_file(work / "reposd" / "test.repo") != repos) {
            TempDir::write_at(work / "reposd" / "test.repo", repos);
        }
        fs::create_directories(root);
        fs::create_directories(work / "log");
        argv.insert(argv.end(), {"--disableplugin=*", "--forcearch=x86_64", "install",
                                 "--installroot", root.string()});
        argv.insert(argv.end(), extra.begin(), extra.end());
        argv.insert(argv.end(), specs.begin(), specs.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // The packages installed in `root`, as `rpm -qa` names them.
    std::set<std::string> installed(const fs::path& root) {
        const CommandResult listed =
            run_to_end({"rpm", "-qa", "--root", root.string()}, tmp_ / "logs");
        EXPECT_EQ(listed.exit_code, 0) << listed.err;
        const std::vector<std::string> lines = lines_of(listed.out);
        return {lines.begin(), lines.end()};
    }

    // dnf's cache of `work` (isolated_dnf's --setopt=cachedir, which dnf does not move into the
    // installroot).
    static fs::path cache_of(const fs::path& work) { return work / "cache"; }

    // The names of the repository directories in a dnf cache ("<id>-<hash>").
    static std::set<std::string> repo_directories(const fs::path& cache) {
        std::set<std::string> names;
        for (const auto& entry : fs::directory_iterator(cache)) {
            if (entry.is_directory() && fs::exists(entry.path() / "repodata" / "repomd.xml")) {
                names.insert(entry.path().filename().string());
            }
        }
        return names;
    }

    // How many of `uris` end with ".rpm", and whether any was asked for twice.
    static std::pair<std::size_t, bool> package_requests(const std::vector<std::string>& uris) {
        std::map<std::string, int> seen;
        bool twice = false;
        for (const std::string& uri : uris) {
            if (uri.ends_with(".rpm")) {
                twice = twice || ++seen[uri] > 1;
            }
        }
        return {seen.size(), twice};
    }

    // The URIs `server` was asked for after its first `skip` requests by a client whose
    // User-Agent starts with `agent` ("rpmirror/", "libdnf").
    std::vector<std::string> uris_by(const NginxServer& server, std::size_t skip,
                                     const std::string& agent) {
        (void)uris_since(server, skip);  // waits until the log holds every request
        std::vector<std::string> uris;
        const auto entries = server.access_log();
        for (std::size_t index = skip; index < entries.size(); ++index) {
            if (entries[index].value("agent", "").starts_with(agent)) {
                uris.push_back(entries[index].value("uri", ""));
            }
        }
        return uris;
    }

    static std::string repo_section(const std::string& id, const std::string& baseurls,
                                    const std::string& extra = "gpgcheck=0\n") {
        return "[" + id + "]\nname=" + id + "\nbaseurl=" + baseurls + "\n" + extra;
    }
};

// Rich and weak dependencies over two repositories (the dnf-ci fixtures: CQRlib-extension needs
// CQRlib from the other one, abcde recommends flac and suggests lame). dnf's solver caches
// (<id>.solv, <id>-filenames.solvx) are in its cache when dnf starts, the same bytes dnf writes
// itself on the run without the prefetch, and dnf loads the repositories from them: it does not
// write them again (a script run as dnf copies them and notes their inodes before it runs dnf).
TEST_F(ExecPrefetch, DnfInstallsWhatItInstallsAloneAndDownloadsNothingItself) {
    NginxServer& fedora = serve(dnf_ci_fixtures() / "repos" / "dnf-ci-fedora");
    NginxServer& updates = serve(dnf_ci_fixtures() / "repos" / "dnf-ci-thirdparty-updates");
    const std::string repos =
        repo_section("fedora", fedora.url("/")) + repo_section("updates", updates.url("/"));
    const std::vector<std::string> specs{"CQRlib-extension", "abcde"};

    const CommandResult alone = install(false, tmp_ / "alone", tmp_ / "root-alone", repos, specs);
    ASSERT_EQ(alone.exit_code, 0) << alone.out << alone.err;
    // dnf's requests are told from the prefetch's by their User-Agent.
    EXPECT_FALSE(uris_by(fedora, 0, "libdnf").empty());
    const std::size_t fedora_mark = log_size(fedora);
    const std::size_t updates_mark = log_size(updates);
    const fs::path cache = cache_of(tmp_ / "prefetched");
    const fs::path seen = tmp_ / "seen-by-dnf";
    const fs::path program = tmp_ / "wrap" / "dnf";
    fs::create_directories(seen);
    TempDir::write_at(program, "#!/bin/sh\nfor f in '" + cache.string() +
                                   "'/*.solv*; do stat -c '%n %i' \"$f\"; cp \"$f\" '" +
                                   seen.string() + "'; done > '" + (seen / "inodes").string() +
                                   "'\nexec dnf \"$@\"\n");
    fs::permissions(program, fs::perms::owner_all);
    const CommandResult prefetched = install(true, tmp_ / "prefetched", tmp_ / "root-prefetched",
                                             repos, specs, {}, program.string());
    ASSERT_EQ(prefetched.exit_code, 0) << prefetched.out << prefetched.err;
    EXPECT_EQ(prefetched.err.find("solver caches not written"), std::string::npos)
        << prefetched.err;

    const std::set<std::string> packages = installed(tmp_ / "root-alone");
    EXPECT_TRUE(packages.contains("flac-1.3.2-8.fc29.x86_64")) << "a Recommends is installed";
    EXPECT_EQ(installed(tmp_ / "root-prefetched"), packages);
    // Every package fetched once, by the prefetch: dnf found them all in its cache.
    std::vector<std::string> uris = uris_since(fedora, fedora_mark);
    const std::vector<std::string> more = uris_since(updates, updates_mark);
    uris.insert(uris.end(), more.begin(), more.end());
    const auto [fetched, twice] = package_requests(uris);
    EXPECT_EQ(fetched, packages.size());
    EXPECT_FALSE(twice);
    EXPECT_EQ(package_requests(uris_by(fedora, fedora_mark, "rpmirror/")).first +
                  package_requests(uris_by(updates, updates_mark, "rpmirror/")).first,
              packages.size());
    EXPECT_NE(prefetched.err.find("rpmirror exec: prefetched " + std::to_string(packages.size()) +
                                  " package(s)"),
              std::string::npos)
        << prefetched.err;
    // Where dnf keeps each repository is where the prefetch put it.
    EXPECT_EQ(repo_directories(cache_of(tmp_ / "prefetched")),
              repo_directories(cache_of(tmp_ / "alone")));
    // The prefetch's documents come over one connection (each request reuses the one before's),
    // and it asks for no .treeinfo: a dnf cache is no mirror.
    (void)uris_since(fedora, fedora_mark);
    const auto log = fedora.access_log();
    std::set<long> connections;
    std::size_t documents = 0;
    for (std::size_t index = fedora_mark; index < log.size(); ++index) {
        const std::string uri = log[index].value("uri", "");
        EXPECT_FALSE(uri.ends_with(".treeinfo")) << uri;
        if (log[index].value("agent", "").starts_with("rpmirror/") &&
            (uri.ends_with("/repomd.xml") || uri.ends_with("/repomd.xml.asc"))) {
            ++documents;
            connections.insert(log[index]["connection"].get<long>());
        }
    }
    // Once: the package step works from the revision the metadata step fetched. No signature:
    // without repo_gpgcheck librepo never reads one from its cache.
    EXPECT_EQ(documents, 1U) << "repomd.xml alone";
    EXPECT_EQ(connections.size(), 1U);
    std::vector<std::string> expected;
    for (const std::string repo : {"fedora", "updates"}) {
        for (const std::string suffix : {".solv", "-filenames.solvx"}) {
            const fs::path ours = seen / (repo + suffix);
            const fs::path dnfs = cache_of(tmp_ / "alone") / (repo + suffix);
            ASSERT_TRUE(fs::exists(ours)) << ours;
            ASSERT_TRUE(fs::exists(dnfs)) << dnfs;
            EXPECT_TRUE(read_file(ours) == read_file(dnfs)) << ours << " differs from dnf's own";
            struct stat st {};
            ASSERT_EQ(::stat((cache / (repo + suffix)).c_str(), &st), 0);
            expected.push_back((cache / (repo + suffix)).string() + " " +
                               std::to_string(st.st_ino));
        }
    }
    // Still the files the prefetch wrote: dnf took them as they were.
    std::vector<std::string> before = lines_of(read_file(seen / "inodes"));
    std::sort(before.begin(), before.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(before, expected);
    // Nothing of the prefetch's is left beside the packages.
    for (const auto& entry : fs::recursive_directory_iterator(cache_of(tmp_ / "prefetched"))) {
        EXPECT_FALSE(entry.path().filename().string().starts_with(".rpmirror")) << entry.path();
        EXPECT_FALSE(entry.path().filename().string().ends_with(".part")) << entry.path();
    }
}

// Upstream signs its repomd.xml and lists sqlite databases and other.xml beside primary and
// filelists, the repository has repo_gpgcheck=0: the prefetch asks for neither repomd.xml.asc
// (one round trip less before the records) nor the records dnf never reads, and dnf finds
// everything it needs in its cache and asks the server for nothing.
TEST_F(ExecPrefetch, OnlyWhatDnfReadsIsFetched) {
    const fs::path upstream = tmp_ / "signed-repomd";
    fs::copy(test_repo("sample-repo"), upstream, fs::copy_options::recursive);
    TempDir::write_at(upstream / "repodata" / "repomd.xml.asc",
                      "-----BEGIN PGP SIGNATURE-----\nnot read by anyone\n"
                      "-----END PGP SIGNATURE-----\n");
    NginxServer& server = serve(upstream);
    const CommandResult prefetched = install(
        true, tmp_ / "prefetched", tmp_ / "root-prefetched",
        repo_section("s", server.url("/"), "gpgcheck=0\nrepo_gpgcheck=0\n"), {"rpmirror-sample-*"});
    ASSERT_EQ(prefetched.exit_code, 0) << prefetched.out << prefetched.err;
    const std::vector<std::string> asked = uris_by(server, 0, "rpmirror/");
    EXPECT_NE(std::find_if(asked.begin(), asked.end(),
                           [](const std::string& uri) { return uri.ends_with("/repomd.xml"); }),
              asked.end());
    EXPECT_EQ(std::find_if(asked.begin(), asked.end(),
                           [](const std::string& uri) { return uri.ends_with(".asc"); }),
              asked.end());
    std::set<std::string> records;
    for (const std::string& uri : asked) {
        if (uri.find("/repodata/") != std::string::npos && !uri.ends_with("/repomd.xml")) {
            records.insert(uri.substr(uri.find('-', uri.rfind('/')) + 1));
        }
    }
    EXPECT_EQ(records, (std::set<std::string>{"filelists.xml.gz", "primary.xml.gz"}))
        << "upstream also lists other.xml.gz and three .sqlite.bz2";
    EXPECT_GE(package_requests(asked).first, 1U);
    EXPECT_EQ(uris_by(server, 0, "libdnf"), std::vector<std::string>());
    EXPECT_FALSE(installed(tmp_ / "root-prefetched").empty());
}

// A mirror that fails part of the packages: the prefetch takes them from the next mirror; with no
// next mirror, dnf downloads what the prefetch could not get, and installs the same. A record that
// fails after the primary came (the solve and the packages have started from it): no metadata of
// that repository is prefetched, dnf fetches it itself and takes the prefetched packages.
TEST_F(ExecPrefetch, AFailingMirrorCostsTimeNeverTheInstall) {
    const fs::path upstream = dnf_ci_fixtures() / "repos" / "dnf-ci-fedora";
    NginxServer& good = serve(upstream);
    const std::vector<std::string> specs{"abcde"};
    const CommandResult alone = install(false, tmp_ / "alone", tmp_ / "root-alone",
                                        repo_section("f", good.url("/")), specs);
    ASSERT_EQ(alone.exit_code, 0) << alone.out << alone.err;
    const std::set<std::string> packages = installed(tmp_ / "root-alone");

    // The first request of each of these packages fails (404: no retry on that mirror).
    nlohmann::json script = {{"paths", nlohmann::json::object()}};
    for (const char* failing :
         {"/x86_64/wget-1.19.5-5.fc29.x86_64.rpm", "/x86_64/flac-1.3.2-8.fc29.x86_64.rpm"}) {
        script["paths"][failing] =
            nlohmann::json::array({{{"status", 404}}, nlohmann::json::object()});
    }
    ASSERT_TRUE(fs::exists(upstream / "x86_64" / "wget-1.19.5-5.fc29.x86_64.rpm"));
    // dnf through the prefetch, with `repos`, under `name`: installs what dnf alone installed;
    // returns stderr.
    const auto through = [&](const std::string& name, const std::string& repos) {
        const CommandResult result =
            install(true, tmp_ / name, tmp_ / ("root-" + name), repo_section("f", repos), specs);
        EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
        EXPECT_EQ(installed(tmp_ / ("root-" + name)), packages) << name;
        return result.err;
    };
    const auto fault_server = [&](const nlohmann::json& faults, const std::string& name) {
        fs::create_directories(tmp_ / name);
        return std::make_unique<FaultServer>(upstream, faults, tmp_ / name);
    };
    const auto flaky = fault_server(script, "fault-1");
    (void)through("failover", flaky->url("/") + " " + good.url("/"));

    const auto only = fault_server(script, "fault-2");
    const std::string fallback = through("fallback", only->url("/"));
    EXPECT_NE(fallback.find("rpmirror exec: prefetch: repository f: 2 package(s) not prefetched"),
              std::string::npos)
        << fallback;
    // Asked twice: the prefetch's 404, then dnf's own download.
    EXPECT_EQ(only->requests_for("/x86_64/wget-1.19.5-5.fc29.x86_64.rpm").size(), 2U);

    const std::string filelists =
        "/repodata/" +
        only_file_ending(upstream / "repodata", "filelists.xml.gz").filename().string();
    nlohmann::json late = {{"paths", nlohmann::json::object()}};
    late["paths"][filelists] = nlohmann::json::array({{{"status", 404}}, nlohmann::json::object()});
    const auto no_filelists = fault_server(late, "fault-3");
    const std::string unpublished = through("unpublished", no_filelists->url("/"));
    EXPECT_NE(unpublished.find("rpmirror exec: prefetch: repository f: metadata not prefetched"),
              std::string::npos)
        << unpublished;
    EXPECT_EQ(no_filelists->requests_for(filelists).size(), 2U);
    const std::vector<LoggedRequest> wget =
        no_filelists->requests_for("/x86_64/wget-1.19.5-5.fc29.x86_64.rpm");
    ASSERT_EQ(wget.size(), 1U);
    EXPECT_TRUE(wget[0].headers.value("user-agent", std::string()).starts_with("rpmirror/"))
        << wget[0].headers.dump() << ": the prefetch's, dnf checked it and asked for none";
}

// gpgcheck=1: dnf checks the prefetched packages' signatures as it checks its own downloads.
TEST_F(ExecPrefetch, DnfChecksTheSignaturesOfPrefetchedPackages) {
    if (!signing_tools_available()) {
        GTEST_FAIL() << "gpg and rpmsign are needed (scripts/deps installs them)";
    }
    const TestKeys& keys = test_keys();
    std::map<Signer, fs::path> repos;
    for (const Signer signer : {Signer::Good, Signer::Other}) {
        const fs::path repo = tmp_ / (signer == Signer::Good ? "signed-good" : "signed-other");
        fs::create_directories(repo / "Packages");
        for (const auto& entry : fs::directory_iterator(test_repo("sample-repo") / "Packages")) {
            fs::copy_file(entry.path(), repo / "Packages" / entry.path().filename());
            keys.sign_rpm(signer, repo / "Packages" / entry.path().filename());
        }
        run_checked({"createrepo_c", "--quiet", repo.string()}, tmp_ / "logs");
        repos[signer] = repo;
    }
    const std::string check =
        "gpgcheck=1\ngpgkey=file://" + keys.key_file(Signer::Good).string() + "\n";
    const std::vector<std::string> specs{"rpmirror-sample-*"};
    for (const Signer signer : {Signer::Good, Signer::Other}) {
        const std::string name = signer == Signer::Good ? "good" : "other";
        NginxServer& server = serve(repos[signer]);
        const std::string repo = repo_section("s", server.url("/"), check);
        const CommandResult alone =
            install(false, tmp_ / ("alone-" + name), tmp_ / ("root-alone-" + name), repo, specs);
        const CommandResult prefetched = install(true, tmp_ / ("prefetched-" + name),
                                                 tmp_ / ("root-prefetched-" + name), repo, specs);
        EXPECT_EQ(prefetched.exit_code, alone.exit_code) << name << prefetched.err;
        EXPECT_EQ(alone.exit_code, signer == Signer::Good ? 0 : 1) << name << alone.err;
        EXPECT_EQ(installed(tmp_ / ("root-prefetched-" + name)),
                  installed(tmp_ / ("root-alone-" + name)))
            << name;
        const std::set<std::string> packages = installed(tmp_ / ("root-prefetched-" + name));
        EXPECT_EQ(std::count_if(packages.begin(), packages.end(),
                                [](const std::string& nevra) {
                                    return nevra.starts_with("rpmirror-sample-");
                                }),
                  signer == Signer::Good ? 5 : 0)
            << name;
    }
}

// Metadata dnf would use as it is (fresh) is used as it is; metadata it would refresh (older than
// metadata_expire) is fetched again by the prefetch, and dnf then asks the server for nothing.
TEST_F(ExecPrefetch, AFreshCacheIsKeptAndAStaleOneRefreshed) {
    NginxServer& server = serve(dnf_ci_fixtures() / "repos" / "dnf-ci-fedora");
    const std::string repos = repo_section("f", server.url("/"));
    const fs::path root = tmp_ / "root";
    const CommandResult first = install(true, tmp_ / "work", root, repos, {"wget"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;

    std::size_t mark = log_size(server);
    const CommandResult fresh = install(true, tmp_ / "work", root, repos, {"flac"});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.out << fresh.err;
    EXPECT_NE(fresh.err.find("(0 fetched)"), std::string::npos) << fresh.err;
    std::vector<std::string> by_dnf = uris_by(server, mark, "libdnf");
    EXPECT_TRUE(by_dnf.empty()) << by_dnf.front();
    EXPECT_EQ(package_requests(uris_by(server, mark, "rpmirror/")).first, 1U);
    EXPECT_TRUE(installed(root).contains("flac-1.3.2-8.fc29.x86_64"));

    // Three days old: past dnf's default metadata_expire (48 hours).
    const fs::path repodata =
        cache_of(tmp_ / "work") / *repo_directories(cache_of(tmp_ / "work")).begin() / "repodata";
    for (const auto& entry : fs::directory_iterator(repodata)) {
        const struct timespec old[2] = {{::time(nullptr) - 3 * 86400, 0},
                                        {::time(nullptr) - 3 * 86400, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, entry.path().c_str(), old, 0), 0);
    }
    mark = log_size(server);
    const CommandResult stale = install(true, tmp_ / "work", root, repos, {"abcde"});
    ASSERT_EQ(stale.exit_code, 0) << stale.out << stale.err;
    EXPECT_NE(stale.err.find("(1 fetched)"), std::string::npos) << stale.err;
    by_dnf = uris_by(server, mark, "libdnf");
    EXPECT_TRUE(by_dnf.empty()) << by_dnf.front();  // it found fresh metadata and every package
    const std::vector<std::string> by_prefetch = uris_by(server, mark, "rpmirror/");
    EXPECT_GE(std::count(by_prefetch.begin(), by_prefetch.end(), "/repodata/repomd.xml"), 1);
    EXPECT_TRUE(installed(root).contains("abcde-2.9.2-1.fc29.noarch"));
}

// What the prefetch cannot model runs dnf as it is, and says why.
// `dnf install @GROUP` (dnf-ci-thirdparty-updates' dnf-ci-testgroup: mandatory filesystem and
// libzstd from the other repository, default lame, optional flac, conditional wget): the
// prefetch takes the group's mandatory and default packages with their dependencies, by the
// group's id or its name, and dnf installs the same as alone and downloads nothing itself.
TEST_F(ExecPrefetch, AGroupIsPrefetchedAsDnfInstallsIt) {
    NginxServer& fedora = serve(dnf_ci_fixtures() / "repos" / "dnf-ci-fedora");
    NginxServer& updates = serve(dnf_ci_fixtures() / "repos" / "dnf-ci-thirdparty-updates");
    const std::string repos =
        repo_section("fedora", fedora.url("/")) + repo_section("updates", updates.url("/"));
    const CommandResult alone =
        install(false, tmp_ / "alone", tmp_ / "root-alone", repos, {"@dnf-ci-testgroup"});
    ASSERT_EQ(alone.exit_code, 0) << alone.out << alone.err;
    const std::set<std::string> packages = installed(tmp_ / "root-alone");
    EXPECT_TRUE(std::any_of(packages.begin(), packages.end(), [](const std::string& nevra) {
        return nevra.starts_with("lame-");
    })) << "a default package is installed";
    int runs = 0;
    for (const std::string spec : {"@dnf-ci-testgroup", "@DNF-CI-Testgroup"}) {
        const fs::path work = tmp_ / ("prefetched-" + std::to_string(++runs));
        const fs::path root = work / "root";
        const std::size_t fedora_mark = log_size(fedora);
        const std::size_t updates_mark = log_size(updates);
        const CommandResult prefetched = install(true, work, root, repos, {spec});
        ASSERT_EQ(prefetched.exit_code, 0) << prefetched.out << prefetched.err;
        EXPECT_EQ(installed(root), packages) << spec;
        std::vector<std::string> uris = uris_since(fedora, fedora_mark);
        const std::vector<std::string> more = uris_since(updates, updates_mark);
        uris.insert(uris.end(), more.begin(), more.end());
        EXPECT_EQ(package_requests(uris).first, packages.size()) << spec;
        EXPECT_EQ(package_requests(uris_by(fedora, fedora_mark, "rpmirror/")).first +
                      package_requests(uris_by(updates, updates_mark, "rpmirror/")).first,
                  packages.size())
            << spec << ": dnf downloaded some itself";
    }
}

// A modular repository (scripts/make-modular-test-repo): nodejs has non-modular builds, a default
// stream 5 (two contexts) and a stream 8. The prefetch takes what dnf installs, the default
// stream's nodejs, and after `dnf module enable nodejs:8` in the installroot, stream 8's: dnf
// downloads no package itself.
TEST_F(ExecPrefetch, ModularPackagesArePrefetchedAsDnfFiltersThem) {
    const fs::path upstream = tmp_ / "modular";
    run_checked(
        {(source_root() / "scripts" / "make-modular-test-repo").string(), upstream.string()},
        tmp_ / "logs");
    NginxServer& server = serve(upstream);
    const std::string repos = repo_section("modular", server.url("/"));
    // The machines' platform, which the streams require (an empty installroot has none).
    const std::vector<std::string> platform{"--setopt=module_platform_id=platform:f29"};
    for (const std::string stream : {"", "nodejs:8"}) {
        const fs::path work = tmp_ / ("work" + std::to_string(stream.size()));
        const fs::path root = tmp_ / ("root" + std::to_string(stream.size()));
        if (!stream.empty()) {
            TempDir::write_at(work / "reposd" / "test.repo", repos);
            fs::create_directories(work / "log");
            std::vector<std::string> enable = isolated_dnf(work);
            enable.insert(enable.end(), {"--disableplugin=*", "--forcearch=x86_64", "--installroot",
                                         root.string(), platform[0], "module", "enable", stream});
            const CommandResult enabled = run_to_end(enable, tmp_ / "logs");
            ASSERT_EQ(enabled.exit_code, 0) << enabled.out << enabled.err;
        }
        const std::size_t mark = log_size(server);
        const CommandResult result = install(true, work, root, repos, {"nodejs"}, platform);
        ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
        const std::set<std::string> packages = installed(root);
        ASSERT_EQ(packages.size(), 1U) << result.out;
        EXPECT_TRUE(packages.begin()->starts_with(stream.empty() ? "nodejs-5.4.1-2.module_"
                                                                 : "nodejs-8.0.0-1.module_c"))
            << *packages.begin();
        const std::vector<std::string> uris = uris_since(server, mark);
        EXPECT_EQ(package_requests(uris).first, 1U) << testing::PrintToString(uris);
        EXPECT_EQ(package_requests(uris_by(server, mark, "rpmirror/")).first, 1U)
            << "dnf downloaded the package itself: " << testing::PrintToString(uris);
    }
}

TEST_F(ExecPrefetch, ACommandItCannotModelRunsWithoutPrefetch) {
    NginxServer& server = serve(dnf_ci_fixtures() / "repos" / "dnf-ci-fedora");
    const std::string repos = repo_section("f", server.url("/"));
    const CommandResult module = install(true, tmp_ / "work", tmp_ / "root", repos, {"@dwm:6.0"});
    EXPECT_NE(module.err.find("rpmirror exec: no prefetch: @dwm:6.0: module specs are not "
                              "prefetched"),
              std::string::npos)
        << module.err;
    // A group no repository has: dnf says so itself.
    const CommandResult group = install(true, tmp_ / "work", tmp_ / "root", repos, {"@core"});
    EXPECT_NE(group.exit_code, 0);
    EXPECT_NE(group.err.find("rpmirror exec: prefetch: cannot work out what dnf will install "
                             "(@core: group 'core' is in no repository's comps)"),
              std::string::npos)
        << group.err;
    const CommandResult missing =
        install(true, tmp_ / "work", tmp_ / "root", repos, {"no-such-package"});
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_NE(missing.err.find("rpmirror exec: prefetch: cannot work out what dnf will install"),
              std::string::npos)
        << missing.err;
    EXPECT_NE(missing.out.find("No match for argument: no-such-package"), std::string::npos)
        << missing.out << missing.err;
}

}  // namespace
}  // namespace rpmirror::test
