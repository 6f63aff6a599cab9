// dnf's solver caches (resolve/dnf_solv_cache.hpp). libdnf 0.6x's sequence for a repository it
// loads from new metadata: repo_add_repomdxml + repo_add_rpmmd(primary) into a new repo, written
// whole with its stamp as <id>.solv and read back from that file; then filelists added as a
// repodata extending those solvables ("FL"), written alone (that repodata, without the solvables
// themselves) as <id>-filenames.solvx with the same stamp.
#include "resolve/dnf_solv_cache.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

// `requires` is a C++20 keyword: libsolv then names the dependency members dep_requires, ...
#define LIBSOLV_SOLVABLE_PREPEND_DEP 1
#include <solv/chksum.h>
#include <solv/pool.h>
#include <solv/repo.h>
#include <solv/repo_solv.h>
#include <solv/repo_write.h>
#include <solv/solvversion.h>
// libsolvext's headers declare C functions without extern "C".
extern "C" {
#include <solv/repo_repomdxml.h>
#include <solv/repo_rpmmd.h>
}

#include "fs/durable.hpp"

namespace rpmirror {

namespace {

struct PoolFree {
    void operator()(Pool* pool) const { pool_free(pool); }
};
struct FileClose {
    void operator()(FILE* file) const { std::fclose(file); }
};
struct WriterFree {
    void operator()(Repowriter* writer) const { repowriter_free(writer); }
};

using File = std::unique_ptr<FILE, FileClose>;

// libdnf's stamp ("userdata" of a solv file): its magic, its cache-format version, libsolv's
// solv_toolversion right-aligned in 8 bytes, the checksum of repomd.xml.
constexpr std::size_t kToolVersionBytes = 8;
constexpr std::size_t kChecksumBytes = 32;
using Stamp = std::array<unsigned char, 4 + 4 + kToolVersionBytes + kChecksumBytes>;

Result<Stamp> stamp_for(const std::filesystem::path& repomd) {
    const std::size_t version_length = std::strlen(solv_toolversion);
    if (version_length > kToolVersionBytes) {
        return make_error(
            ErrorCode::Unsupported,
            fmt::format("libsolv's version '{}' does not fit dnf's cache stamp", solv_toolversion),
            repomd.string());
    }
    auto text = fs::read_file(repomd);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    Stamp stamp{};
    std::memcpy(stamp.data(), "\0dnf", 4);
    std::memcpy(stamp.data() + 4,
                "\0"
                "1.0",
                4);
    std::memcpy(stamp.data() + 8 + kToolVersionBytes - version_length, solv_toolversion,
                version_length);
    // libdnf's checksum_fp: SHA-256 over "H000" and then the file.
    Chksum* sum = solv_chksum_create(REPOKEY_TYPE_SHA256);
    solv_chksum_add(sum, "H000", 4);
    solv_chksum_add(sum, text->data(), static_cast<int>(text->size()));
    solv_chksum_free(sum, stamp.data() + 8 + kToolVersionBytes);
    return stamp;
}

File open_read(const std::filesystem::path& path) {
    return File(std::fopen(path.c_str(), "re"));
}

// Writes what `writer` writes of its repo to `path` (beside it first, then renamed).
Result<void> write_solv(Repowriter* writer, const Stamp& stamp, const std::filesystem::path& path) {
    repowriter_set_userdata(writer, stamp.data(), static_cast<int>(stamp.size()));
    char* buffer = nullptr;
    std::size_t length = 0;
    FILE* memory = open_memstream(&buffer, &length);
    if (memory == nullptr) {
        return make_errno_error("cannot write", path.string(), errno);
    }
    const int failed = repowriter_write(writer, memory);
    std::fclose(memory);
    const std::unique_ptr<char, decltype(&std::free)> owned(buffer, &std::free);
    if (failed != 0) {
        return make_error(ErrorCode::Io, "libsolv cannot write the solver cache", path.string());
    }
    return fs::replace_file(path, std::string_view(buffer, length));
}

}  // namespace

Result<void> write_dnf_solv_cache(const DnfSolvCache& cache) {
    auto stamp = stamp_for(cache.repomd);
    if (!stamp) {
        return tl::unexpected(std::move(stamp.error()));
    }
    const std::unique_ptr<Pool, PoolFree> pool(pool_create());
    Repo* repo = repo_create(pool.get(), cache.repo_id.c_str());
    const auto read_into = [&](const std::filesystem::path& path, auto add) -> Result<void> {
        const File file = open_read(path);
        if (!file) {
            return make_errno_error("cannot read", path.string(), errno);
        }
        if (add(file.get()) != 0) {
            return make_error(ErrorCode::BadInput,
                              fmt::format("libsolv cannot read it: {}", pool_errstr(pool.get())),
                              path.string());
        }
        return {};
    };
    if (auto read = read_into(cache.repomd,
                              [repo](FILE* file) { return repo_add_repomdxml(repo, file, 0); });
        !read) {
        return read;
    }
    if (auto read =
            read_into(cache.plain_primary,
                      [repo](FILE* file) { return repo_add_rpmmd(repo, file, nullptr, 0); });
        !read) {
        return read;
    }
    const std::filesystem::path main = cache.cachedir / (cache.repo_id + ".solv");
    {
        const std::unique_ptr<Repowriter, WriterFree> writer(repowriter_create(repo));
        if (auto written = write_solv(writer.get(), *stamp, main); !written) {
            return written;
        }
    }
    if (cache.plain_filelists.empty()) {
        return {};
    }
    // As libdnf goes on: the repo read back from the file just written, then filelists.
    repo_empty(repo, 1);
    if (auto read = read_into(main, [repo](FILE* file) { return repo_add_solv(repo, file, 0); });
        !read) {
        return read;
    }
    if (auto read = read_into(
            cache.plain_filelists,
            [repo](FILE* file) { return repo_add_rpmmd(repo, file, "FL", REPO_EXTEND_SOLVABLES); });
        !read) {
        return read;
    }
    const Repodata* filelists = repo_id2repodata(repo, repo->nrepodata - 1);
    const std::unique_ptr<Repowriter, WriterFree> writer(repowriter_create(repo));
    repowriter_set_repodatarange(writer.get(), filelists->repodataid, filelists->repodataid + 1);
    repowriter_set_flags(writer.get(), REPOWRITER_NO_STORAGE_SOLVABLE);
    return write_solv(writer.get(), *stamp, cache.cachedir / (cache.repo_id + "-filenames.solvx"));
}

}  // namespace rpmirror
