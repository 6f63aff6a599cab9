// --with-dependencies over repositories: their metadata fetched, the closure solved, each given
// its share (rpmirror/resolve.hpp).
#include <sys/utsname.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "fs/durable.hpp"
#include "rpmirror/audit.hpp"
#include "rpmirror/index.hpp"
#include "rpmirror/metadata.hpp"
#include "rpmirror/resolve.hpp"

namespace rpmirror {

namespace {

// Writes the content of the compressed file `in` to `out` (`expected` bytes, when known).
Result<void> decompress_to(const std::filesystem::path& in, std::optional<std::uint64_t> expected,
                           const std::filesystem::path& out) {
    DecompressOptions options;
    options.expected_size = expected;
    auto reader = Decompressor::open(in, options);
    if (!reader) {
        return tl::unexpected(std::move(reader.error()));
    }
    std::ofstream stream(out, std::ios::binary | std::ios::trunc);
    for (;;) {
        auto chunk = reader->read();
        if (!chunk) {
            return tl::unexpected(std::move(chunk.error()));
        }
        if (chunk->empty()) {
            break;
        }
        stream.write(chunk->data(), static_cast<std::streamsize>(chunk->size()));
    }
    stream.close();
    if (!stream) {
        return make_errno_error("cannot write", out.string(), errno);
    }
    return {};
}

}  // namespace

Result<ClosureMetadata> assign_closure(Syncer& syncer, std::vector<RepoConfig>& repos,
                                       const ClosureRequest& request, std::stop_token stop) {
    std::vector<RemoteMetadata> fetched;
    std::vector<ClosureRepo> sources;
    for (const RepoConfig& repo : repos) {
        auto metadata = RemoteMetadata::fetch(syncer, repo, stop);
        if (!metadata) {
            Error error = std::move(metadata.error());
            error.message = "--with-dependencies: the metadata of " + repo.id +
                            " cannot be fetched: " + error.message;
            return tl::unexpected(std::move(error));
        }
        const std::filesystem::path index = metadata->root() / "repodata" / "repomd.xml";
        auto text = fs::read_file(index);
        if (!text) {
            return tl::unexpected(std::move(text.error()));
        }
        auto repomd = parse_repomd(*text, index.string());
        if (!repomd) {
            return tl::unexpected(std::move(repomd.error()));
        }
        const RepomdRecord* primary = repomd->find("primary");
        if (primary == nullptr) {
            return make_error(ErrorCode::BadInput,
                              "--with-dependencies: the repository lists no primary metadata",
                              repo.id);
        }
        // The sync verified and placed it there (record_destination's checks); libsolv reads it
        // decompressed by rpmirror's own readers (every codec a repository may use, bounded).
        const std::filesystem::path plain = metadata->root() / "primary.xml";
        if (auto written =
                decompress_to(metadata->root() / primary->location_href, primary->open_size, plain);
            !written) {
            return tl::unexpected(std::move(written.error()));
        }
        sources.push_back({repo.id, plain});
        fetched.push_back(std::move(*metadata));
    }
    auto closure = resolve_closure(sources, request);
    if (!closure) {
        return tl::unexpected(std::move(closure.error()));
    }
    for (std::size_t index = 0; index < repos.size(); ++index) {
        const std::set<std::string>& share = (*closure)[repos[index].id];
        repos[index].closure = std::vector<std::string>(share.begin(), share.end());
        repos[index].record_sources.push_back(fetched[index].root() / "repodata");
    }
    return ClosureMetadata(std::move(fetched));
}

Result<std::vector<std::string>> read_package_list(const std::filesystem::path& path) {
    auto text = fs::read_file(path);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    std::vector<std::string> specs;
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        for (std::string word; words >> word;) {
            specs.push_back(std::move(word));
        }
    }
    if (specs.empty()) {
        return make_error(ErrorCode::BadInput, "--packages-file names no package", path.string());
    }
    return specs;
}

Result<void> check_closure_options(const SyncOptions& options) {
    const auto refused = [](std::string_view option, std::string_view why) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("cannot be combined with --with-dependencies: {}", why),
                          std::string(option));
    };
    const SelectionOptions& selection = options.selection;
    if (selection.newest_only) {
        return refused(selection.keep_versions > 1 ? "--keep-versions" : "-n/--newest-only",
                       "the closure picks each package's version (a closure per kept version is "
                       "not built yet)");
    }
    if (selection.source_only) {
        return refused("--source", "source packages are not installed, so have no closure");
    }
    if (selection.min_build_time) {
        return refused("--min-buildtime", "the closure picks each package's version");
    }
    if (options.treeinfo) {
        return refused("--treeinfo", "an installation tree is mirrored whole");
    }
    if (options.upstream_layout) {
        return refused("--upstream-layout",
                       "a closure over several releases of one repository is not built yet");
    }
    return {};
}

std::string closure_arch(const std::vector<std::string>& arches) {
    for (const std::string& arch : arches) {
        if (arch != "noarch" && arch != "src" && arch != "nosrc") {
            return arch;
        }
    }
    struct utsname names {};
    return ::uname(&names) == 0 ? std::string(names.machine) : std::string("x86_64");
}

}  // namespace rpmirror
