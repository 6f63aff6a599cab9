// The reposync scenarios of dnf's own behaviour tests (rpm-software-management/ci-dnf-stack, branch
// dnf-4-stack, commit 2a79b28f93adb87364239e8cf086d92e9510b0ea,
// dnf-behave-tests/dnf/plugins-core/reposync*.feature), ported to GoogleTest. Every scenario runs
// twice, side by side: once with `dnf reposync` (dnf 4) and once with `rpmirror reposync`, with
// the same .repo files, against the same fixture repositories (scripts/make-dnf-ci-repos, built
// once per ctest run by fixture.dnf_ci_repos), and asserts what the scenario asserts.
//
// The fixture repositories are the project's own: tests/data/dnf-ci/repos.txt describes the
// packages (names, epochs, versions, releases, arches), dependencies, groups and module streams of
// the upstream repositories the scenarios use, and scripts/dnf-ci-sources writes specs from it.
//
// Differences from upstream, all forced by this machine, none by rpmirror:
//  - createrepo_c here writes gzip, not zstd: "primary.xml.zst" reads "primary.xml.gz", and a
//    comps record is stored twice (comps.xml and comps.xml.gz);
//  - nginx serves "as http" repositories on 127.0.0.1 (upstream: localhost);
//  - dnf runs with no plugin but reposync (the host's `local` and `versionlock` plugins would add a
//    repository and refuse `install`), its own installroot, cache and log directories under the
//    test's directory;
//  - the metadata-loading lines dnf prints ("<name>  1.9 MB/s | 1.9 kB  00:00") are what the
//    upstream steps call <REPOSYNC>: they are dropped before stdout is compared line by line.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <filesystem>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "integration/sync/sync_fixture.hpp"
#include "librepo_accel/librepo_accel.hpp"
#include "rpmirror/librepo_accel/librepo_accel.hpp"

namespace rpmirror::test {

// The librepo accelerator built beside the rpmirror binary under test.
inline std::filesystem::path accel_library() {
    return std::filesystem::path(rpmirror_binary()).parent_path() /
           std::string(kLibrepoAccelLibraryName);
}

// The program a scenario runs as its "dnf reposync".
enum class Reposync { Dnf, Rpmirror };

// gtest prints a parameter as its name.
inline void PrintTo(Reposync reposync, std::ostream* stream) {
    *stream << (reposync == Reposync::Dnf ? "dnf reposync" : "rpmirror reposync");
}

// gtest names a parameter "dnf" or "rpmirror".
inline std::string reposync_name(const ::testing::TestParamInfo<Reposync>& info) {
    return info.param == Reposync::Dnf ? "dnf" : "rpmirror";
}

// The fixture repositories: OUTDIR of scripts/make-dnf-ci-repos (repos/<name>/, sources/<name>/,
// gpgkeys/). The
// ctest fixture's copy when there is one, else one built on first use for this process.
inline std::filesystem::path dnf_ci_fixtures() {
    if (auto prebuilt = prebuilt_test_repo("dnf-ci/repos/simple-base")) {
        return prebuilt->parent_path().parent_path();
    }
    static TempDir built_here;
    static bool built = false;
    if (!built) {
        run_checked({(source_root() / "scripts" / "make-dnf-ci-repos").string(),
                     (built_here / "dnf-ci").string()},
                    built_here / "logs");
        built = true;
    }
    return built_here / "dnf-ci";
}

// `text` without the lines dnf prints while it loads a repository's metadata ("name  1.9 MB/s |
// 1.9 kB  00:00", "Last metadata expiration check: ..."), which upstream's steps match as
// <REPOSYNC>, nor empty lines.
inline std::vector<std::string> without_metadata_lines(const std::string& text) {
    static const std::regex loading(R"(^.* [0-9.]+ +[kMG]?B/s \| +[0-9.]+ +[kMG]?B +[0-9:]+ *$)");
    std::vector<std::string> lines;
    for (const std::string& line : lines_of(text)) {
        if (!std::regex_match(line, loading) &&
            !line.starts_with("Last metadata expiration check:")) {
            lines.push_back(line);
        }
    }
    return lines;
}

// Returns true iff a line of `text` (or, with `multiline`, the text as a whole) contains a match of
// the ECMAScript regular expression `pattern` (behave's `stdout contains`: re.search).
inline bool contains_match(const std::string& text, const std::string& pattern) {
    return std::regex_search(text, std::regex(pattern));
}

// Returns true iff the files `a` and `b` have the same contents (both must exist).
inline bool same_contents(const std::filesystem::path& a, const std::filesystem::path& b) {
    return std::filesystem::is_regular_file(a) && std::filesystem::is_regular_file(b) &&
           read_file(a) == read_file(b);
}

// The names in directory `dir`, sorted (what `ls` prints), empty iff it does not exist.
inline std::vector<std::string> ls(const std::filesystem::path& dir) {
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Every path under `dir`, relative to it, sorted (what `find` prints, without "./").
inline std::vector<std::string> find_all(const std::filesystem::path& dir) {
    std::vector<std::string> paths;
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
        paths.push_back(std::filesystem::relative(entry.path(), dir).string());
    }
    std::sort(paths.begin(), paths.end());
    return paths;
}

// The modification time of `path` in nanoseconds (-1 iff it cannot be stat'ed).
inline long long mtime_ns(const std::filesystem::path& path) {
    struct stat status {};
    if (::stat(path.c_str(), &status) != 0) {
        return -1;
    }
    return static_cast<long long>(status.st_mtim.tv_sec) * 1000000000LL + status.st_mtim.tv_nsec;
}

// The extended attributes of `path` whose names start with `prefix`, with their values.
inline std::map<std::string, std::string> xattrs(const std::filesystem::path& path,
                                                 std::string_view prefix) {
    std::map<std::string, std::string> found;
    std::string names(4096, '\0');
    const ssize_t length = ::listxattr(path.c_str(), names.data(), names.size());
    for (ssize_t start = 0; length > 0 && start < length;) {
        const std::string name(names.c_str() + start);
        start += static_cast<ssize_t>(name.size()) + 1;
        if (!name.starts_with(prefix)) {
            continue;
        }
        std::string value(256, '\0');
        const ssize_t size = ::getxattr(path.c_str(), name.c_str(), value.data(), value.size());
        if (size >= 0) {
            value.resize(static_cast<std::size_t>(size));
            found[name] = value;
        }
    }
    return found;
}

// One scenario run: a .repo directory, an installroot, the repositories it serves, and the
// program under test (the test's parameter).
class DnfStackScenario : public SyncFixture, public ::testing::WithParamInterface<Reposync> {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        if (GetParam() == Reposync::Dnf) {
            static const bool dnf_reposync_runs =
                ::system("dnf reposync --help > /dev/null 2>&1") == 0;  // NOLINT(cert-env33-c)
            if (!dnf_reposync_runs) {
                GTEST_FAIL() << "`dnf reposync` does not run; scripts/deps installs it (Debian "
                                "packages dnf, dnf-plugins-core)";
            }
        }
        fixtures_ = dnf_ci_fixtures();
        std::filesystem::create_directories(reposd_);
        std::filesystem::create_directories(tempdir_);
        std::filesystem::create_directories(tmp_ / "dnf-log");
        TempDir::write_at(tmp_ / "dnf.conf", "[main]\n");
    }

    // The scenario's name: the test's name without "/dnf" or "/rpmirror".
    static std::string scenario_name() {
        const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        return name.substr(0, name.find('/'));
    }

    // The fixture repository `name` (read-only).
    std::filesystem::path fixture_repo(const std::string& name) const {
        return fixtures_ / "repos" / name;
    }

    // The sources (spec files, comps.xml, modules.yaml) fixture repository `name` was built from.
    std::filesystem::path fixture_sources(const std::string& name) const {
        return fixtures_ / "sources" / name;
    }

    // `I copy repository "name" for modification`: a copy under the test's directory.
    std::filesystem::path copy_for_modification(const std::string& name) {
        const auto copy = tmp_ / "repos" / name;
        copy_repo(fixture_repo(name), copy);
        return copy;
    }

    // `I use repository "id"` (as http iff `http`): writes <reposdir>/<id>.repo as upstream's
    // repo_config() does, with `baseurl` the repository at `path` (served by nginx iff `http`,
    // else file://), plus `extra` keys (which replace defaults of the same name).
    void use_repository(const std::string& id, const std::filesystem::path& path, bool http,
                        const std::vector<std::pair<std::string, std::string>>& extra = {}) {
        const std::string baseurl = http ? serve(path).url("/") : "file://" + path.string();
        configure_repository(id, baseurl, extra);
    }

    // Writes <reposdir>/<id>.repo with `baseurl` (as upstream's write_repo_config).
    void configure_repository(const std::string& id, const std::string& baseurl,
                              const std::vector<std::pair<std::string, std::string>>& extra = {}) {
        std::vector<std::pair<std::string, std::string>> keys{{"name", id + " test repository"},
                                                              {"enabled", "1"},
                                                              {"gpgcheck", "1"},
                                                              {"localpkg_gpgcheck", "1"},
                                                              {"baseurl", baseurl}};
        for (const auto& [key, value] : extra) {
            auto same = std::find_if(keys.begin(), keys.end(),
                                     [&](const auto& pair) { return pair.first == key; });
            if (same != keys.end()) {
                same->second = value;
            } else {
                keys.emplace_back(key, value);
            }
        }
        std::string text = "[" + id + "]\n";
        for (const auto& [key, value] : keys) {
            text += key + "=" + value + "\n";
        }
        TempDir::write_at(reposd_ / (id + ".repo"), text);
    }

    // `I drop repository "id"`.
    void drop_repository(const std::string& id) {
        std::filesystem::remove(reposd_ / (id + ".repo"));
    }

    // `I execute dnf with args "reposync <args>"`, with the program under test.
    CommandResult reposync(const std::vector<std::string>& args) {
        if (GetParam() == Reposync::Dnf) {
            std::vector<std::string> full{"reposync"};
            full.insert(full.end(), args.begin(), args.end());
            return dnf(full);
        }
        std::vector<std::string> argv{
            rpmirror_binary(), "reposync",       "-c", (tmp_ / "dnf.conf").string(), "--reposdir",
            reposd_.string(),  "--releasever=29"};
        if (uses_installroot_) {
            argv.push_back("--installroot=" + installroot_.string());
        }
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs", tempdir_);
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // `I execute dnf with args "<args>"` for anything but reposync: always dnf itself, with
    // the scenario's repositories and installroot.
    CommandResult dnf(const std::vector<std::string>& args) {
        std::vector<std::string> argv{"dnf",
                                      "-y",
                                      "-c",
                                      (tmp_ / "dnf.conf").string(),
                                      "--setopt=reposdir=" + reposd_.string(),
                                      "--setopt=cachedir=" + (tmp_ / "dnf-cache").string(),
                                      "--setopt=persistdir=" + (tmp_ / "dnf-persist").string(),
                                      "--setopt=logdir=" + (tmp_ / "dnf-log").string(),
                                      "--disableplugin=*",
                                      "--enableplugin=reposync",
                                      "--installroot=" + installroot_.string(),
                                      "--releasever=29"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_to_end(argv, tmp_ / "logs", tempdir_);
    }

    // Runs a helper command (createrepo_c, modifyrepo_c, rpmbuild ...) that must succeed.
    void execute(const std::vector<std::string>& argv, const std::filesystem::path& cwd = {}) {
        const CommandResult result = run_to_end(argv, tmp_ / "logs", cwd);
        ASSERT_EQ(result.exit_code, 0) << argv[0] << ": " << result.out << result.err;
    }

    // Asserts that stdout, without the metadata-loading lines, matches `patterns` line by line
    // (upstream's `stdout matches line by line` after <REPOSYNC>).
    static void expect_lines_match(const std::string& text,
                                   const std::vector<std::string>& patterns) {
        const std::vector<std::string> lines = without_metadata_lines(text);
        ASSERT_EQ(lines.size(), patterns.size()) << text;
        for (std::size_t index = 0; index < lines.size(); ++index) {
            EXPECT_TRUE(std::regex_match(lines[index], std::regex(patterns[index])))
                << "line " << index + 1 << ": \"" << lines[index] << "\" does not match \""
                << patterns[index] << "\"";
        }
    }

    std::filesystem::path fixtures_;
    std::filesystem::path reposd_ = tmp_ / "yum.repos.d";
    std::filesystem::path installroot_ = tmp_ / "installroot";
    bool uses_installroot_ = false;  // pass --installroot to rpmirror too (the gpg scenarios)
    // {context.dnf.tempdir}: where scenarios download to, and the working directory of commands.
    std::filesystem::path tempdir_ = tmp_ / "t";
};

}  // namespace rpmirror::test
