// `rpmirror checksum`: sha256sum's interface over rpmirror's checksum engine (parallel, cached).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "output.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/checksum/checksum_list.hpp"
#include "rpmirror/plan/cache_trust.hpp"

namespace rpmirror::cli {

namespace {

struct ChecksumArgs {
    std::string type_name;
    unsigned threads = 0;
    bool check = false;
    bool no_cache = false;
    bool quiet = false;
    std::vector<std::string> files;
};

constexpr std::string_view kStdin = "-";

// Prints `<hex>  <path>` for each file, in the order given. Returns the exit code.
int print_digests(const ChecksumArgs& args, ChecksumType type, const VerifyOptions& options) {
    std::vector<std::filesystem::path> paths;
    for (const std::string& file : args.files) {
        if (file != kStdin) {
            paths.emplace_back(file);
        }
    }
    // Regular files are hashed in parallel up front; stdin, if named, is read when its turn comes.
    std::vector<Result<FileDigest>> digests = hash_files(paths, type, options);
    int exit_code = kExitOk;
    std::size_t next_digest = 0;
    for (const std::string& file : args.files) {
        Result<FileDigest> digest =
            file == kStdin ? hash_stream(STDIN_FILENO, type, "standard input", options.hash)
                           : std::move(digests[next_digest++]);
        if (!digest) {
            std::fflush(stdout);
            print_error(digest.error());
            exit_code = kExitFailure;
            continue;
        }
        const std::string line = format_checksum_line(digest->hex, file);
        std::fwrite(line.data(), 1, line.size(), stdout);
    }
    return exit_code;
}

std::optional<std::string> read_list(const std::string& list_name) {
    std::ostringstream contents;
    if (list_name == kStdin) {
        contents << std::cin.rdbuf();
        return contents.str();
    }
    std::ifstream list_stream(list_name, std::ios::binary);
    if (!list_stream) {
        fmt::print(stderr, "rpmirror: {}: cannot open checksum list: {}\n", list_name,
                   std::strerror(errno));
        return std::nullopt;
    }
    contents << list_stream.rdbuf();
    return contents.str();
}

std::string plural(std::size_t count, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

// Counts of a -c run, reported as sha256sum reports them.
struct CheckTally {
    std::size_t malformed = 0;
    std::size_t unreadable = 0;
    std::size_t mismatched = 0;
    bool any_valid_line = false;
};

void print_status(const std::string& path, std::string_view status) {
    bool escaped = false;
    const std::string shown = escape_list_path(path, escaped);
    fmt::print("{}{}: {}\n", escaped ? "\\" : "", shown, status);
}

void check_one_list(const std::string& list_name, std::optional<ChecksumType> forced_type,
                    const ChecksumArgs& args, const VerifyOptions& options, CheckTally& tally) {
    const std::optional<std::string> text = read_list(list_name);
    if (!text) {
        ++tally.unreadable;
        return;
    }
    const ChecksumList list = parse_checksum_list(*text, forced_type);
    tally.malformed += list.malformed_line_count;
    if (list.entries.empty()) {
        fmt::print(stderr, "rpmirror: {}: no properly formatted checksum lines found\n", list_name);
        ++tally.unreadable;
        return;
    }
    tally.any_valid_line = true;
    std::vector<VerifyRequest> requests;
    requests.reserve(list.entries.size());
    for (const ChecksumListEntry& entry : list.entries) {
        requests.push_back(VerifyRequest{entry.path, entry.type, entry.expected_hex, std::nullopt});
    }
    const std::vector<VerifyResult> results = verify_files(requests, options);
    for (std::size_t index = 0; index < results.size(); ++index) {
        const VerifyResult& result = results[index];
        const std::string& path = list.entries[index].path;
        if (result.status == VerifyStatus::Ok) {
            if (!args.quiet) {
                print_status(path, "OK");
            }
        } else if (result.status == VerifyStatus::DigestMismatch) {
            ++tally.mismatched;
            print_status(path, "FAILED");
        } else {
            ++tally.unreadable;
            std::fflush(stdout);
            print_error(*result.error);
            print_status(path, "FAILED open or read");
        }
    }
}

// Checks every list named on the command line. Returns the exit code.
int check_lists(const ChecksumArgs& args, std::optional<ChecksumType> forced_type,
                const VerifyOptions& options) {
    CheckTally tally;
    for (const std::string& list_name : args.files) {
        check_one_list(list_name, forced_type, args, options, tally);
    }
    std::fflush(stdout);
    if (tally.malformed > 0) {
        fmt::print(stderr, "rpmirror: WARNING: {} improperly formatted\n",
                   plural(tally.malformed, "line is", "lines are"));
    }
    if (tally.unreadable > 0 && tally.any_valid_line) {
        fmt::print(stderr, "rpmirror: WARNING: {} could not be read\n",
                   plural(tally.unreadable, "listed file", "listed files"));
    }
    if (tally.mismatched > 0) {
        fmt::print(stderr, "rpmirror: WARNING: {} did NOT match\n",
                   plural(tally.mismatched, "computed checksum", "computed checksums"));
    }
    const bool all_ok = tally.unreadable == 0 && tally.mismatched == 0 && tally.any_valid_line;
    return all_ok ? kExitOk : kExitFailure;
}

int run_checksum(const ChecksumArgs& args) {
    std::optional<ChecksumType> forced_type;
    if (!args.type_name.empty()) {
        auto type = parse_checksum_type(args.type_name);
        if (!type) {
            print_error(type.error());
            return kExitUsage;
        }
        forced_type = *type;
    }
    VerifyOptions options;
    options.threads = args.threads;
    options.hash.use_cache = !args.no_cache;
    if (options.hash.use_cache) {
        // A cached checksum is believed only for a file a mirror's sync state records as it is.
        options.hash.trust = cache_trust_of_state_dir({});
    }
    if (args.check) {
        return check_lists(args, forced_type, options);
    }
    return print_digests(args, forced_type.value_or(ChecksumType::Sha256), options);
}

}  // namespace

Command add_checksum_command(CLI::App& parent) {
    auto args = std::make_shared<ChecksumArgs>();
    CLI::App* app = parent.add_subcommand(
        "checksum",
        "Print or check checksums, like sha256sum, on all cores and with the xattr cache");
    app->add_option("-t,--type", args->type_name,
                    "md5, sha1, sha224, sha256 (default), sha384 or sha512; with -c, the default "
                    "is inferred from each digest's length");
    app->add_option("-j,--parallel", args->threads, "worker threads (default: all cores)")
        ->check(CLI::Range(1U, 1024U));
    app->add_flag("-c,--check", args->check,
                  "read checksums from the FILEs (sha256sum format) and check them");
    app->add_flag("--no-cache", args->no_cache,
                  "neither read nor write the checksum cache in extended attributes");
    app->add_flag("-q,--quiet", args->quiet, "with -c, don't print OK for each verified file");
    app->add_option("FILE", args->files, "files to hash, or lists to check with -c ('-' = stdin)")
        ->required();
    return Command{app, [args] { return run_checksum(*args); }};
}

}  // namespace rpmirror::cli
