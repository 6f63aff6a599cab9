// dnf's solver caches (resolve/dnf_solv_cache.hpp), following libdnf 0.6x's dnf-sack.cpp: per
// repository load_yum_repo (repo_add_repomdxml + repo_add_rpmmd of primary), write_main with the
// switch to the written file, load_ext of filelists ("FL", extending the solvables) and write_ext
// of that repodata alone; then dnf_sack_make_provides_ready: pool_addfileprovides_queue and
// rewrite_repos, which records the added file provides in each repository's main repodata and
// writes its main part again.
#include "resolve/dnf_solv_cache.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "resolve/solv_handles.hpp"

#include <solv/chksum.h>
#include <solv/queue.h>
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

struct WriterFree {
    void operator()(Repowriter* writer) const { repowriter_free(writer); }
};
struct QueueFree {
    void operator()(Queue* queue) const { queue_free(queue); }
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

// Reads `path` into the repo with `add` (a libsolv reader returning 0 on success).
template <typename Add>
Result<void> read_into(Pool* pool, const std::filesystem::path& path, Add add) {
    const File file(std::fopen(path.c_str(), "re"));
    if (!file) {
        return make_errno_error("cannot read", path.string(), errno);
    }
    if (add(file.get()) != 0) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("libsolv cannot read it: {}", pool_errstr(pool)),
                          path.string());
    }
    return {};
}

// What `writer` writes of its repo, stamped, in memory.
Result<std::string> write_solv(Repowriter* writer, const Stamp& stamp,
                               const std::filesystem::path& shown) {
    repowriter_set_userdata(writer, stamp.data(), static_cast<int>(stamp.size()));
    char* buffer = nullptr;
    std::size_t length = 0;
    FILE* memory = open_memstream(&buffer, &length);
    if (memory == nullptr) {
        return make_errno_error("cannot write", shown.string(), errno);
    }
    const int failed = repowriter_write(writer, memory);
    std::fclose(memory);
    const std::unique_ptr<char, decltype(&std::free)> owned(buffer, &std::free);
    if (failed != 0) {
        return make_error(ErrorCode::Io, "libsolv cannot write the solver cache", shown.string());
    }
    return std::string(buffer, length);
}

// One repository in the pool, and what libdnf notes of its main part.
struct Loaded {
    const DnfSolvCacheRepo* source = nullptr;
    Repo* repo = nullptr;
    Stamp stamp{};
    std::filesystem::path main_path;  // <cachedir>/<id>.solv
    std::string main;  // <id>.solv as it is to be written (iff the repository is to be written)
    int main_nrepodata = 0;
    int main_nsolvables = 0;
    int main_end = 0;
};

// libdnf's load_yum_repo, write_main(switchtosolv) and load_ext/write_ext of filelists. The main
// file is kept in `loaded.main`, written once the file provides are known (rewrite_main).
Result<void> load_repository(Pool* pool, const std::filesystem::path& cachedir, Loaded& loaded) {
    const DnfSolvCacheRepo& source = *loaded.source;
    auto stamp = stamp_for(source.repomd);
    if (!stamp) {
        return tl::unexpected(std::move(stamp.error()));
    }
    loaded.stamp = *stamp;
    loaded.main_path = cachedir / (source.id + ".solv");
    const std::filesystem::path& main = loaded.main_path;
    Repo* repo = loaded.repo = repo_create(pool, source.id.c_str());
    if (auto read = read_into(pool, source.repomd,
                              [repo](FILE* file) { return repo_add_repomdxml(repo, file, 0); });
        !read) {
        return read;
    }
    if (auto read =
            read_into(pool, source.plain_primary,
                      [repo](FILE* file) { return repo_add_rpmmd(repo, file, nullptr, 0); });
        !read) {
        return read;
    }
    std::string written;
    {
        const std::unique_ptr<Repowriter, WriterFree> writer(repowriter_create(repo));
        auto bytes = write_solv(writer.get(), loaded.stamp, main);
        if (!bytes) {
            return tl::unexpected(std::move(bytes.error()));
        }
        written = std::move(*bytes);
    }
    // The switch to the written file, which libdnf reads back.
    repo_empty(repo, 1);
    const File memory(fmemopen(written.data(), written.size(), "r"));
    if (!memory || repo_add_solv(repo, memory.get(), 0) != 0) {
        return make_error(
            ErrorCode::Io,
            fmt::format("libsolv cannot read back what it wrote: {}", pool_errstr(pool)),
            main.string());
    }
    if (source.write) {
        loaded.main = written;
    }
    loaded.main_nrepodata = repo->nrepodata;
    loaded.main_nsolvables = repo->nsolvables;
    loaded.main_end = repo->end;
    if (source.plain_filelists.empty()) {
        return {};
    }
    if (auto read = read_into(
            pool, source.plain_filelists,
            [repo](FILE* file) { return repo_add_rpmmd(repo, file, "FL", REPO_EXTEND_SOLVABLES); });
        !read) {
        return read;
    }
    if (!source.write) {
        return {};
    }
    const std::filesystem::path ext = cachedir / (source.id + "-filenames.solvx");
    const Repodata* filelists = repo_id2repodata(repo, repo->nrepodata - 1);
    const std::unique_ptr<Repowriter, WriterFree> writer(repowriter_create(repo));
    repowriter_set_repodatarange(writer.get(), filelists->repodataid, filelists->repodataid + 1);
    repowriter_set_flags(writer.get(), REPOWRITER_NO_STORAGE_SOLVABLE);
    auto bytes = write_solv(writer.get(), loaded.stamp, ext);
    if (!bytes) {
        return tl::unexpected(std::move(bytes.error()));
    }
    return fs::replace_file(ext, *bytes);
}

// libdnf's rewrite_repos for one repository: the file provides the pool added, recorded in its
// main repodata, and its main part (`loaded.main`) made again.
Result<void> rewrite_main(Loaded& loaded, Queue* added) {
    Repo* repo = loaded.repo;
    if (loaded.main_nrepodata < 2 || added->count == 0) {
        return {};
    }
    Repodata* data = repo_id2repodata(repo, 1);
    repodata_set_idarray(data, SOLVID_META, REPOSITORY_ADDEDFILEPROVIDES, added);
    repodata_internalize(data);
    if (!loaded.source->write) {
        return {};
    }
    const int nrepodata = repo->nrepodata;
    const int nsolvables = repo->nsolvables;
    const int end = repo->end;
    repo->nrepodata = loaded.main_nrepodata;
    repo->nsolvables = loaded.main_nsolvables;
    repo->end = loaded.main_end;
    Result<std::string> bytes = [&] {
        const std::unique_ptr<Repowriter, WriterFree> writer(repowriter_create(repo));
        return write_solv(writer.get(), loaded.stamp, loaded.main_path);
    }();
    repo->nrepodata = nrepodata;
    repo->nsolvables = nsolvables;
    repo->end = end;
    if (!bytes) {
        return tl::unexpected(std::move(bytes.error()));
    }
    loaded.main = std::move(*bytes);
    return {};
}

}  // namespace

Result<void> write_dnf_solv_caches(const DnfSolvCaches& caches) {
    const std::unique_ptr<Pool, PoolFree> pool(pool_create());
    std::vector<Loaded> loaded(caches.repos.size());
    for (std::size_t index = 0; index < caches.repos.size(); ++index) {
        loaded[index].source = &caches.repos[index];
        if (auto done = load_repository(pool.get(), caches.cachedir, loaded[index]); !done) {
            return done;
        }
    }
    for (int id = 1; id < pool->nrepos; ++id) {  // libdnf's repo_internalize_all_trigger
        if (Repo* repo = pool->repos[id]) {
            repo_internalize(repo);
        }
    }
    Queue added;
    Queue added_installed;
    queue_init(&added);
    queue_init(&added_installed);
    const std::unique_ptr<Queue, QueueFree> free_added(&added);
    const std::unique_ptr<Queue, QueueFree> free_added_installed(&added_installed);
    pool_addfileprovides_queue(pool.get(), &added, &added_installed);
    for (Loaded& repository : loaded) {
        if (auto rewritten = rewrite_main(repository, &added); !rewritten) {
            return rewritten;
        }
        if (repository.source->write) {
            if (auto replaced = fs::replace_file(repository.main_path, repository.main);
                !replaced) {
                return replaced;
            }
        }
    }
    return {};
}

}  // namespace rpmirror
