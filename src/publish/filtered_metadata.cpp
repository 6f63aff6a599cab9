// Metadata for a filtered mirror: upstream's records streamed, only whole <package> spans of
// packages the mirror lacks dropped, recompressed as upstream compressed them. The pieces it
// builds on: the XML scanner (util/xml_scanner), the compressed writer (index/compress) and the
// repomd.xml writer (metadata/repomd_writer).
#include "publish/filtered_metadata.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "fs/beneath.hpp"
#include "index/compress.hpp"
#include "index/index.hpp"
#include "index/updateinfo.hpp"
#include "metadata/repomd_writer.hpp"
#include "metadata/text.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/text.hpp"
#include "util/unique_fd.hpp"
#include "util/xml_scanner.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kRepodataPrefix = "repodata/";

}  // namespace

namespace {

// The new description of one rewritten record.
struct Rewritten {
    RepomdRecord record;
    std::uint64_t kept = 0;
};

// Returns the file name of a record's href (the part after "repodata/").
std::string record_file(const RepomdRecord& record) {
    return record.location_href.substr(kRepodataPrefix.size());
}

// Returns `file` with a leading "<hex>-" of `old_hex` replaced by `new_hex`, or nullopt iff
// upstream did not name it by its checksum.
std::optional<std::string> renamed(const std::string& file, const std::string& old_hex,
                                   const std::string& new_hex) {
    if (file.size() > old_hex.size() && file.compare(0, old_hex.size(), old_hex) == 0 &&
        file[old_hex.size()] == '-') {
        return new_hex + file.substr(old_hex.size());
    }
    return std::nullopt;
}

// The decompressed bytes of a new record go to an Emit (which drains the string it is given).
using Emit = std::function<Result<void>(std::string&)>;

// Writes the new version of `upstream`'s record into the stage, compressed with `compression`:
// `produce` passes the decompressed bytes to the Emit it is given and returns the number of
// packages it kept. Replaces upstream's file by the new one, renamed by its new checksum when
// upstream named it by its checksum. Returns the new record, or the error `produce` returned,
// or Error{Io} naming the file.
Result<Rewritten> write_record(const std::filesystem::path& stage_dir, int dir_fd,
                               const RepomdRecord& upstream, Compression compression,
                               const std::function<Result<std::uint64_t>(const Emit&)>& produce) {
    const std::string file = record_file(upstream);
    const std::filesystem::path source = stage_dir / file;
    const std::string temporary = ".rewrite-" + file;
    const std::string shown = (stage_dir / temporary).string();
    UniqueFd fd(fs::create_file_at(dir_fd, temporary, shown));
    if (!fd || ::ftruncate(fd.get(), 0) != 0) {
        return make_errno_error("cannot create", shown, errno);
    }
    const ChecksumType open_type =
        upstream.open_checksum ? upstream.open_checksum->type : upstream.checksum.type;
    CompressedWriter writer(compression, std::move(fd), shown, upstream.checksum.type);
    if (auto started = writer.start(); !started) {
        return tl::unexpected(std::move(started.error()));
    }
    Hasher open_hasher(open_type);
    std::uint64_t open_size = 0;
    const Emit drain = [&](std::string& out) -> Result<void> {
        open_hasher.update(out.data(), out.size());
        open_size += out.size();
        auto written = writer.write(out);
        out.clear();
        return written;
    };
    auto count = produce(drain);
    if (!count) {
        return tl::unexpected(std::move(count.error()));
    }
    if (auto finished = writer.finish(); !finished) {
        return tl::unexpected(std::move(finished.error()));
    }
    Rewritten rewritten;
    rewritten.kept = *count;
    RepomdRecord& record = rewritten.record;
    record.type = upstream.type;
    record.checksum = {upstream.checksum.type, writer.checksum()};
    record.open_checksum = RecordChecksum{open_type, open_hasher.finish()};
    record.size = writer.size();
    record.open_size = open_size;
    const std::string name =
        renamed(file, upstream.checksum.hex, record.checksum.hex).value_or(file);
    record.location_href = std::string(kRepodataPrefix) + name;
    if (fs::unlink_at(dir_fd, file) != 0 && errno != ENOENT) {
        return make_errno_error("cannot remove", source.string(), errno);
    }
    if (fs::rename_at(dir_fd, temporary, name) != 0) {
        return make_errno_error("cannot rename to " + name, shown, errno);
    }
    // Its checksum cached as the downloader caches a record it fetched (rpmirror wrote every
    // byte): a later verify finds the entry instead of writing one, which would change the
    // file's ctime and make the next sync no no-op.
    const UniqueFd written(::openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    struct stat st {};
    if (written && ::fstat(written.get(), &st) == 0) {
        record.timestamp = st.st_mtim.tv_sec;
        (void)write_cached_digest(written.get(), st, record.checksum.type, record.checksum.hex,
                                  true);
    }
    return rewritten;
}

// Calls `consume` with every decompressed chunk of `reader`, in order, until the end of the
// data. Returns the first error of a read or of `consume`.
template <typename Consume>
Result<void> for_each_chunk(Decompressor& reader, Consume&& consume) {
    while (true) {
        auto chunk = reader.read();
        if (!chunk) {
            return tl::unexpected(std::move(chunk.error()));
        }
        if (chunk->empty()) {
            return {};
        }
        if (auto consumed = consume(std::string_view(chunk->data(), chunk->size())); !consumed) {
            return consumed;
        }
    }
}

Result<Rewritten> rewrite_record(const std::filesystem::path& stage_dir, int dir_fd,
                                 const RepomdRecord& upstream, MetadataFilter::Kind kind,
                                 std::span<const KeptPackage> kept) {
    DecompressOptions decompress;
    decompress.expected_size = upstream.open_size;
    auto reader = Decompressor::open(stage_dir / record_file(upstream), decompress);
    if (!reader) {
        return tl::unexpected(std::move(reader.error()));
    }
    auto rewritten = write_record(stage_dir, dir_fd, upstream, reader->compression(),
                                  [&](const Emit& emit) -> Result<std::uint64_t> {
                                      MetadataFilter filter(kind, kept, upstream.location_href);
                                      std::string out;
                                      auto fed = for_each_chunk(
                                          *reader, [&](std::string_view chunk) -> Result<void> {
                                              if (auto ok = filter.feed(chunk, out); !ok) {
                                                  return tl::unexpected(std::move(ok.error()));
                                              }
                                              return emit(out);
                                          });
                                      if (!fed) {
                                          return tl::unexpected(std::move(fed.error()));
                                      }
                                      auto count = filter.finish(out);
                                      if (!count) {
                                          return tl::unexpected(std::move(count.error()));
                                      }
                                      if (auto drained = emit(out); !drained) {
                                          return tl::unexpected(std::move(drained.error()));
                                      }
                                      return *count;
                                  });
    if (rewritten && kind == MetadataFilter::Kind::Primary && rewritten->kept != kept.size()) {
        return make_error(ErrorCode::BadInput,
                          fmt::format("lists {} of the {} mirrored packages: cannot write "
                                      "metadata that matches the mirror",
                                      rewritten->kept, kept.size()),
                          upstream.location_href);
    }
    return rewritten;
}

// The whole decompressed content of the record `upstream` in `stage_dir` (a small one: modules,
// comps), and how it was compressed.
Result<std::pair<std::string, Compression>> read_whole_record(
    const std::filesystem::path& stage_dir, const RepomdRecord& upstream) {
    DecompressOptions decompress;
    decompress.expected_size = upstream.open_size;
    auto reader = Decompressor::open(stage_dir / record_file(upstream), decompress);
    if (!reader) {
        return tl::unexpected(std::move(reader.error()));
    }
    std::string content;
    if (auto read = for_each_chunk(*reader,
                                   [&](std::string_view chunk) -> Result<void> {
                                       content.append(chunk);
                                       return {};
                                   });
        !read) {
        return tl::unexpected(std::move(read.error()));
    }
    return std::pair{std::move(content), reader->compression()};
}

// The strict NEVRAs of `kept`, as modules.yaml and updateinfo name packages.
std::unordered_set<std::string> nevras_of(std::span<const KeptPackage> kept) {
    std::unordered_set<std::string> nevras;
    for (const KeptPackage& package : kept) {
        nevras.insert(package.nevra);
    }
    return nevras;
}

// Trims the `modules` record to the module streams that have a kept package (see
// trim_modules_yaml). Returns nullopt iff nothing was dropped (upstream's file stays as it is),
// a Rewritten with an empty record type iff no module is left (the file is removed).
Result<std::optional<Rewritten>> rewrite_modules(const std::filesystem::path& stage_dir, int dir_fd,
                                                 const RepomdRecord& upstream,
                                                 std::span<const KeptPackage> kept) {
    auto whole = read_whole_record(stage_dir, upstream);
    if (!whole) {
        return tl::unexpected(std::move(whole.error()));
    }
    const std::string& yaml = whole->first;
    const std::unordered_set<std::string> nevras = nevras_of(kept);
    auto trimmed = trim_modules_yaml(yaml, nevras, upstream.location_href);
    if (!trimmed) {
        return tl::unexpected(std::move(trimmed.error()));
    }
    if (!*trimmed) {
        return std::optional<Rewritten>();
    }
    if ((*trimmed)->empty()) {  // no module left: the record is left out
        if (fs::unlink_at(dir_fd, record_file(upstream)) != 0 && errno != ENOENT) {
            return make_errno_error("cannot remove", (stage_dir / record_file(upstream)).string(),
                                    errno);
        }
        Rewritten none;  // an empty type: left out
        return std::optional<Rewritten>(std::move(none));
    }
    auto rewritten = write_record(stage_dir, dir_fd, upstream, whole->second,
                                  [&](const Emit& emit) -> Result<std::uint64_t> {
                                      if (auto drained = emit(**trimmed); !drained) {
                                          return tl::unexpected(std::move(drained.error()));
                                      }
                                      return std::uint64_t{0};
                                  });
    if (!rewritten) {
        return tl::unexpected(std::move(rewritten.error()));
    }
    return std::optional<Rewritten>(std::move(*rewritten));
}

// A comps record: `group`, or a compressed copy of it (`group_gz`, `group_xz`; `group_zck` is
// dropped as every zchunk record).
bool comps_type(std::string_view type) {
    return type == "group" || (type.starts_with("group_") && !type.ends_with("_zck"));
}

// A small record trimmed whole: `trim` gets its decompressed text and returns the new text and
// what it left out, or nullopt iff nothing changes. Returns nullopt then (upstream's file stays
// as it is); `left_out` receives what was left out.
template <typename Trim>
Result<std::optional<Rewritten>> rewrite_whole_record(const std::filesystem::path& stage_dir,
                                                      int dir_fd, const RepomdRecord& upstream,
                                                      const Trim& trim,
                                                      std::vector<std::string>& left_out) {
    auto whole = read_whole_record(stage_dir, upstream);
    if (!whole) {
        return tl::unexpected(std::move(whole.error()));
    }
    auto trimmed = trim(whole->first);
    if (!trimmed) {
        return tl::unexpected(std::move(trimmed.error()));
    }
    if (!*trimmed) {
        return std::optional<Rewritten>();
    }
    left_out = std::move((*trimmed)->left_out);
    auto rewritten = write_record(stage_dir, dir_fd, upstream, whole->second,
                                  [&](const Emit& emit) -> Result<std::uint64_t> {
                                      if (auto drained = emit((*trimmed)->xml); !drained) {
                                          return tl::unexpected(std::move(drained.error()));
                                      }
                                      return std::uint64_t{0};
                                  });
    if (!rewritten) {
        return tl::unexpected(std::move(rewritten.error()));
    }
    return std::optional<Rewritten>(std::move(*rewritten));
}

// Trims a comps record (trim_comps_xml).
Result<std::optional<Rewritten>> rewrite_comps(const std::filesystem::path& stage_dir, int dir_fd,
                                               const RepomdRecord& upstream,
                                               const std::unordered_set<std::string>& filtered_out,
                                               std::vector<std::string>& left_out) {
    return rewrite_whole_record(
        stage_dir, dir_fd, upstream,
        [&](std::string_view xml) {
            return trim_comps_xml(xml, filtered_out, upstream.location_href);
        },
        left_out);
}

// Trims the updateinfo record (trim_updateinfo_xml) to the kept packages' NEVRAs.
Result<std::optional<Rewritten>> rewrite_updateinfo(const std::filesystem::path& stage_dir,
                                                    int dir_fd, const RepomdRecord& upstream,
                                                    std::span<const KeptPackage> kept,
                                                    const AdvisoryFilter& advisories,
                                                    std::optional<std::int64_t> as_of,
                                                    std::vector<std::string>& left_out) {
    const std::unordered_set<std::string> nevras = nevras_of(kept);
    return rewrite_whole_record(
        stage_dir, dir_fd, upstream,
        [&](std::string_view xml) {
            return trim_updateinfo_xml(xml, nevras, advisories, as_of, upstream.location_href);
        },
        left_out);
}

std::optional<MetadataFilter::Kind> rewritten_kind(std::string_view type) {
    if (type == "primary") {
        return MetadataFilter::Kind::Primary;
    }
    // createrepo_c >= 1.0's --filelists-ext: filelists with a digest per file, its packages
    // identified by pkgid the same way.
    if (type == "filelists" || type == "filelists-ext") {
        return MetadataFilter::Kind::Filelists;
    }
    if (type == "other") {
        return MetadataFilter::Kind::Other;
    }
    return std::nullopt;
}

bool dropped_type(std::string_view type) {
    return type.ends_with("_db") || type.ends_with("_zck");
}

}  // namespace

Result<FilteredMetadata> write_filtered_metadata(
    const std::filesystem::path& stage_dir, const Repomd& upstream,
    std::span<const KeptPackage> kept, const std::unordered_set<std::string>& filtered_out,
    const AdvisoryFilter& advisories, std::optional<std::int64_t> as_of) {
    UniqueFd dir = fs::open_directory(stage_dir, true);
    if (!dir) {
        return make_errno_error("cannot open the staging directory", stage_dir.string(), errno);
    }
    for (const RepomdRecord& record : upstream.records) {
        if (!record.location_href.starts_with(kRepodataPrefix) ||
            record_file(record).find('/') != std::string::npos) {
            return make_error(ErrorCode::Unsupported,
                              "record '" + record.type +
                                  "' is not a file directly under "
                                  "repodata/: cannot rewrite the metadata",
                              record.location_href);
        }
    }
    // The three rewrites run concurrently, each streaming its own file.
    std::vector<std::pair<std::size_t, std::future<Result<Rewritten>>>> jobs;
    for (std::size_t index = 0; index < upstream.records.size(); ++index) {
        const RepomdRecord& record = upstream.records[index];
        if (const auto kind = rewritten_kind(record.type)) {
            jobs.emplace_back(index, std::async(std::launch::async, [&, kind = *kind] {
                                  return rewrite_record(stage_dir, dir.get(), record, kind, kept);
                              }));
        }
    }
    std::optional<std::size_t> modules_index;
    for (std::size_t index = 0; index < upstream.records.size(); ++index) {
        if (upstream.records[index].type == "modules") {
            modules_index = index;
        }
    }
    std::future<Result<std::optional<Rewritten>>> modules_job;
    if (modules_index) {
        modules_job = std::async(std::launch::async, [&] {
            return rewrite_modules(stage_dir, dir.get(), upstream.records[*modules_index], kept);
        });
    }
    std::map<std::size_t, Rewritten> done;
    std::optional<Error> first_error;
    // comps: small (Fedora's is about 20 MB decompressed), trimmed here meanwhile.
    FilteredMetadata metadata;
    for (std::size_t index = 0; index < upstream.records.size() && !filtered_out.empty(); ++index) {
        const RepomdRecord& record = upstream.records[index];
        if (!comps_type(record.type)) {
            continue;
        }
        std::vector<std::string> left_out;
        auto result = rewrite_comps(stage_dir, dir.get(), record, filtered_out, left_out);
        if (!result) {
            first_error = std::move(result.error());
            break;
        }
        if (*result) {
            done.emplace(index, std::move(**result));
            if (metadata.comps_left_out.empty()) {
                metadata.comps_left_out = std::move(left_out);  // each copy says the same
            }
        }
    }
    // updateinfo: Fedora's is tens of MB decompressed; trimmed here too.
    for (std::size_t index = 0; index < upstream.records.size() && !first_error; ++index) {
        const RepomdRecord& record = upstream.records[index];
        if (record.type != "updateinfo") {
            continue;
        }
        auto result = rewrite_updateinfo(stage_dir, dir.get(), record, kept, advisories, as_of,
                                         metadata.advisories_left_out);
        if (!result) {
            first_error = std::move(result.error());
        } else if (*result) {
            done.emplace(index, std::move(**result));
        }
    }
    for (auto& [index, job] : jobs) {
        auto result = job.get();
        if (!result) {
            if (!first_error) {
                first_error = std::move(result.error());
            }
            continue;
        }
        done.emplace(index, std::move(*result));
    }
    if (modules_job.valid()) {
        auto result = modules_job.get();
        if (!result) {
            if (!first_error) {
                first_error = std::move(result.error());
            }
        } else if (*result) {
            done.emplace(*modules_index, std::move(**result));
        }
    }
    if (first_error) {
        return tl::unexpected(std::move(*first_error));
    }
    std::vector<RepomdRecord> records;
    for (std::size_t index = 0; index < upstream.records.size(); ++index) {
        const RepomdRecord& record = upstream.records[index];
        if (const auto found = done.find(index);
            found != done.end() && found->second.record.type.empty()) {
            metadata.dropped_records.push_back(record.type);
        } else if (found != done.end()) {
            if (record.type != "primary" && record.type != "modules" && !comps_type(record.type) &&
                record.type != "updateinfo" && found->second.kept != kept.size()) {
                return make_error(ErrorCode::BadInput,
                                  fmt::format("lists {} of the {} mirrored packages: cannot "
                                              "write metadata that matches the mirror",
                                              found->second.kept, kept.size()),
                                  record.location_href);
            }
            records.push_back(found->second.record);
            metadata.rewritten_records.push_back(record.type);
        } else if (dropped_type(record.type)) {
            metadata.dropped_records.push_back(record.type);
            const std::string file = record_file(record);
            if (fs::unlink_at(dir.get(), file) != 0 && errno != ENOENT) {
                return make_errno_error("cannot remove", (stage_dir / file).string(), errno);
            }
        } else {
            records.push_back(record);
        }
    }
    metadata.repomd_xml = repomd_document(upstream, records);
    return metadata;
}

}  // namespace rpmirror
