// Shared pieces of the end-to-end tests of `rpmirror sync`: running the real binary (and dnf),
// real repositories built from the specs in the tree, and comparing directory trees.
// Header-only.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

// The exit status of a finished command: its exit code, or 128 + the signal that killed it.
inline int exit_status_of(int wait_status) {
    if (WIFEXITED(wait_status)) {
        return WEXITSTATUS(wait_status);
    }
    return WIFSIGNALED(wait_status) ? 128 + WTERMSIG(wait_status) : -1;
}

// A command running in the background with stdout and stderr captured to files in `log_dir`.
class RunningCommand {
  public:
    // Starts `argv` (argv[0] looked up in PATH) with its working directory `cwd` ("" = ours).
    // Throws std::runtime_error iff it cannot fork.
    RunningCommand(const std::vector<std::string>& argv, const std::filesystem::path& log_dir,
                   const std::filesystem::path& cwd = {})
        : out_path_(log_dir / "stdout.txt"), err_path_(log_dir / "stderr.txt") {
        std::filesystem::create_directories(log_dir);
        std::vector<char*> args;
        for (const std::string& arg : argv) {
            args.push_back(const_cast<char*>(arg.c_str()));
        }
        args.push_back(nullptr);
        pid_ = ::fork();
        if (pid_ < 0) {
            throw std::runtime_error("fork failed");
        }
        if (pid_ == 0) {
            const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int null = ::open("/dev/null", O_RDONLY);
            if (out < 0 || err < 0 || null < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0 ||
                ::dup2(null, 0) < 0) {
                ::_exit(126);
            }
            if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) {
                ::_exit(126);
            }
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
    }
    RunningCommand(const RunningCommand&) = delete;
    RunningCommand& operator=(const RunningCommand&) = delete;
    ~RunningCommand() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            int status = 0;
            ::waitpid(pid_, &status, 0);
        }
    }

    pid_t pid() const { return pid_; }
    void signal(int number) const { ::kill(pid_, number); }

    // Waits for the command to end; returns its exit status (see exit_status_of).
    int wait() {
        int status = 0;
        struct rusage usage {};
        if (pid_ <= 0 || ::wait4(pid_, &status, 0, &usage) != pid_) {
            return -1;
        }
        pid_ = -1;
        peak_rss_kib_ = usage.ru_maxrss;
        return exit_status_of(status);
    }

    // Returns the command's exit status iff it has ended (it is reaped then), else nullopt.
    std::optional<int> try_wait() {
        int status = 0;
        struct rusage usage {};
        if (pid_ <= 0 || ::wait4(pid_, &status, WNOHANG, &usage) != pid_) {
            return std::nullopt;
        }
        pid_ = -1;
        peak_rss_kib_ = usage.ru_maxrss;
        return exit_status_of(status);
    }

    // The peak resident set size of the command in KiB (wait4's ru_maxrss), once it has ended.
    long peak_rss_kib() const { return peak_rss_kib_; }

    std::string out() const { return read_file(out_path_); }
    std::string err() const { return read_file(err_path_); }

  private:
    std::filesystem::path out_path_;
    std::filesystem::path err_path_;
    pid_t pid_ = -1;
    long peak_rss_kib_ = 0;
};

struct CommandResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    long peak_rss_kib = 0;  // of the command itself (not of its children)
};

// Runs `argv` to the end; its output goes through files in a fresh directory under `log_root`.
inline CommandResult run_to_end(const std::vector<std::string>& argv,
                                const std::filesystem::path& log_root,
                                const std::filesystem::path& cwd = {}) {
    static int run_number = 0;
    const auto log_dir = log_root / ("run-" + std::to_string(++run_number));
    RunningCommand command(argv, log_dir, cwd);
    CommandResult result;
    result.exit_code = command.wait();
    result.out = command.out();
    result.err = command.err();
    result.peak_rss_kib = command.peak_rss_kib();
    return result;
}

// The rpmirror binary under test (set by tests/CMakeLists.txt).
inline std::string rpmirror_binary() {
    return RPMIRROR_BINARY;
}

// Returns "rpmirror sync <args>" as an argv.
inline std::vector<std::string> rpmirror_sync_argv(const std::vector<std::string>& args) {
    std::vector<std::string> argv{rpmirror_binary(), "sync"};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

// The packages of the sample repository (scripts/make-sample-repo): file names, and their hrefs.
inline const std::string kTiny = "rpmirror-sample-tiny-1.0-1.noarch.rpm";
inline const std::string kSmall = "rpmirror-sample-small-1.0-1.noarch.rpm";
inline const std::string kMedium = "rpmirror-sample-medium-1.0-1.noarch.rpm";
inline const std::string kDocs = "rpmirror-sample-docs-1.0-1.noarch.rpm";
inline const std::string kData = "rpmirror-sample-data-1.0-1.noarch.rpm";
inline const std::string kTinyHref = "Packages/" + kTiny;
inline const std::string kSmallHref = "Packages/" + kSmall;
inline const std::string kMediumHref = "Packages/" + kMedium;
inline const std::string kDocsHref = "Packages/" + kDocs;
inline const std::string kDataHref = "Packages/" + kData;

// Nothing rpmirror keeps for itself is in the mirror tree (its state lives in --state-dir): the
// `ignored_names` of tree_digests() for a mirror.
inline const std::set<std::string> kStateFile{};

// The package file names of `repo` (Packages/*), sorted.
inline std::set<std::string> package_names(const std::filesystem::path& repo) {
    std::set<std::string> names;
    if (std::filesystem::exists(repo / "Packages")) {
        for (const auto& entry : std::filesystem::directory_iterator(repo / "Packages")) {
            names.insert(entry.path().filename().string());
        }
    }
    return names;
}

// Returns true iff dnf and its reposync plugin are installed.
inline bool dnf_reposync_available() {
    return ::system("dnf reposync --help > /dev/null 2>&1") == 0;  // NOLINT(cert-env33-c)
}

// Every regular file and symlink under `root`, by path relative to it, with the sha256 of its
// contents (a symlink maps to "symlink -> <target>"), except the names in `ignored_names`.
inline std::map<std::string, std::string> tree_digests(
    const std::filesystem::path& root, const std::set<std::string>& ignored_names = {}) {
    std::map<std::string, std::string> digests;
    if (!std::filesystem::exists(root)) {
        return digests;
    }
    for (auto it = std::filesystem::recursive_directory_iterator(root);
         it != std::filesystem::recursive_directory_iterator(); ++it) {
        const auto relative = std::filesystem::relative(it->path(), root).string();
        if (ignored_names.contains(it->path().filename().string())) {
            if (it->is_directory()) {
                it.disable_recursion_pending();
            }
            continue;
        }
        if (it->is_symlink()) {
            digests[relative] = "symlink -> " + std::filesystem::read_symlink(it->path()).string();
        } else if (it->is_regular_file()) {
            digests[relative] = hash_bytes(ChecksumType::Sha256, read_file(it->path()));
        }
    }
    return digests;
}

// Returns `digests` with `prefix` put before every path.
inline std::map<std::string, std::string> prefixed(
    const std::map<std::string, std::string>& digests, const std::string& prefix) {
    std::map<std::string, std::string> result;
    for (const auto& [path, digest] : digests) {
        result[prefix + path] = digest;
    }
    return result;
}

// The packages of a repository directory as tree_digests() reports them, under `prefix`
// ("Packages/x.rpm" -> "<prefix>Packages/x.rpm").
inline std::map<std::string, std::string> package_digests(const std::filesystem::path& repo,
                                                          const std::string& prefix = "") {
    return prefixed(tree_digests(repo / "Packages"), prefix + "Packages/");
}

// Runs `argv`; throws std::runtime_error with its output iff it does not exit 0.
inline void run_checked(const std::vector<std::string>& argv,
                        const std::filesystem::path& log_root) {
    const CommandResult result = run_to_end(argv, log_root);
    if (result.exit_code != 0) {
        throw std::runtime_error(argv[0] + " failed (" + std::to_string(result.exit_code) +
                                 "): " + result.out + result.err);
    }
}

// A repository built from the specs in the tree: the ctest fixture's copy when there is one,
// else one built on first use into a directory that lives as long as the test process.
// `name` is "sample-repo" (scripts/make-sample-repo), "versions-repo"
// (scripts/make-versions-test-repo) or "index-repo" (scripts/make-index-test-repo). Read-only: copy
// it (copy_repo) to change it.
inline std::filesystem::path test_repo(const std::string& name) {
    if (auto prebuilt = prebuilt_test_repo(name)) {
        return *prebuilt;
    }
    static TempDir built_here;
    static std::map<std::string, std::filesystem::path> built;
    if (auto found = built.find(name); found != built.end()) {
        return found->second;
    }
    const std::string script = name == "sample-repo"     ? "make-sample-repo"
                               : name == "versions-repo" ? "make-versions-test-repo"
                                                         : "make-index-test-repo";
    const auto repo = built_here / name;
    run_checked({(source_root() / "scripts" / script).string(), repo.string()},
                built_here / "logs");
    built[name] = repo;
    return repo;
}

// Copies the repository `source` to `destination` (which must not exist) and returns it.
inline std::filesystem::path copy_repo(const std::filesystem::path& source,
                                       const std::filesystem::path& destination) {
    std::filesystem::create_directories(destination.parent_path());
    std::filesystem::copy(source, destination, std::filesystem::copy_options::recursive);
    return destination;
}

// Regenerates repodata/ of `repo` from the packages now in it (a new revision upstream).
inline void recreate_repo(const std::filesystem::path& repo, const std::string& revision,
                          const std::filesystem::path& log_root) {
    run_checked({"createrepo_c", "--quiet", "--checksum", "sha256", "--revision", revision,
                 "--set-timestamp-to-revision", repo.string()},
                log_root);
}

// dnf isolated from the host's configuration, repositories and cache: every run gets an empty
// config file, an empty reposdir and its own cache directory under `work`.
inline std::vector<std::string> isolated_dnf(const std::filesystem::path& work) {
    std::filesystem::create_directories(work / "reposd");
    std::filesystem::create_directories(work / "cache");
    TempDir::write_at(work / "dnf.conf", "[main]\n");
    return {"dnf",
            "-q",
            "-y",
            "-c",
            (work / "dnf.conf").string(),
            "--setopt=reposdir=" + (work / "reposd").string(),
            "--setopt=cachedir=" + (work / "cache").string(),
            "--setopt=persistdir=" + (work / "persist").string(),
            "--setopt=logdir=" + (work / "log").string(),
            "--releasever=1"};
}

// Returns `text` split into non-empty lines.
inline std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) {
            end = text.size();
        }
        if (end > start) {
            lines.push_back(text.substr(start, end - start));
        }
        start = end + 1;
    }
    return lines;
}

// `dnf repoquery -a --qf FORMAT` of the repository at `repo` (file://), dnf isolated in `work`
// (isolated_dnf): its non-empty output lines, sorted, and its exit status.
inline std::pair<int, std::vector<std::string>> dnf_repoquery(const std::filesystem::path& work,
                                                              const std::filesystem::path& repo,
                                                              const std::string& format) {
    std::vector<std::string> argv = isolated_dnf(work);
    argv.insert(argv.end(), {"--repofrompath=m,file://" + repo.string(), "--repo=m", "repoquery",
                             "-a", "--qf", format});
    const CommandResult query = run_to_end(argv, work / "logs");
    std::vector<std::string> lines = lines_of(query.out);
    std::sort(lines.begin(), lines.end());
    return {query.exit_code, std::move(lines)};
}

// Returns how many lines of `text` contain `needle`.
inline std::size_t count_lines_with(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    for (const std::string& line : lines_of(text)) {
        count += line.find(needle) != std::string::npos ? 1 : 0;
    }
    return count;
}

// Polls `condition` until it holds or `timeout` passes; returns whether it held. This waits
// for an event another process causes (a request seen, a file created), never for time itself.
inline bool wait_until(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

}  // namespace rpmirror::test
