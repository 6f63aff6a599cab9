// The bundle's manifest: written and parsed with every consistency check (manifest.hpp).
#include "export/manifest.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/snapshot/snapshot.hpp"
#include "snapshot/snapshot.hpp"
#include "store/object_store.hpp"

namespace rpmirror::bundle {

namespace {

using Json = nlohmann::json;

constexpr std::string_view kFormat = "rpmirror-bundle";
constexpr std::string_view kChunks = "chunks";
constexpr std::string_view kTrees = "trees";

Json file_json(const BundleFile& file) {
    Json out{{"key", file.key}, {"size", file.size}, {"sha256", file.sha256}};
    if (file.carried) {
        out["chunk"] = file.carried->chunk;
        out["offset"] = file.carried->offset;
    }
    return out;
}

// Reads the fields of one JSON object, naming the object in every error.
class Fields {
  public:
    Fields(const Json& object, std::string what, std::string_view shown)
        : object_(object), what_(std::move(what)), shown_(shown) {}

    tl::unexpected<Error> fail(const std::string& why) const {
        return make_error(ErrorCode::BadInput, fmt::format("{}: {}", what_, why),
                          std::string(shown_));
    }

    Result<const Json*> member(const char* name) const {
        if (!object_.is_object()) {
            return fail("not a JSON object");
        }
        const auto found = object_.find(name);
        if (found == object_.end()) {
            return fail(fmt::format("no \"{}\"", name));
        }
        return &*found;
    }

    Result<std::string> text(const char* name) const {
        auto value = member(name);
        if (!value) {
            return tl::unexpected(std::move(value.error()));
        }
        if (!(*value)->is_string()) {
            return fail(fmt::format("\"{}\" is not a string", name));
        }
        return (*value)->get<std::string>();
    }

    Result<std::uint64_t> number(const char* name) const {
        auto value = member(name);
        if (!value) {
            return tl::unexpected(std::move(value.error()));
        }
        if (!(*value)->is_number_unsigned()) {
            return fail(fmt::format("\"{}\" is not a non-negative integer", name));
        }
        return (*value)->get<std::uint64_t>();
    }

    Result<std::string> digest(const char* name) const {
        auto value = text(name);
        if (value && !is_valid_hex_digest(ChecksumType::Sha256, *value)) {
            return fail(
                fmt::format("\"{}\" is not a SHA-256 digest (64 lowercase hex digits)", name));
        }
        return value;
    }

    Result<const Json*> array(const char* name) const {
        auto value = member(name);
        if (value && !(*value)->is_array()) {
            return fail(fmt::format("\"{}\" is not an array", name));
        }
        return value;
    }

    const Json& object() const { return object_; }
    const std::string& what() const { return what_; }

  private:
    const Json& object_;
    std::string what_;
    std::string_view shown_;
};

Result<void> check_id(const Fields& fields, const std::string& id) {
    if (!store::check_key(id) || id.find('/') != std::string::npos) {
        return fields.fail(fmt::format("\"{}\" is not a repository id", id));
    }
    return {};
}

Result<BundleFile> parse_file(const Fields& fields, std::size_t chunks) {
    BundleFile file;
    auto key = fields.text("key");
    auto size = fields.number("size");
    auto digest = fields.digest("sha256");
    for (const Error* error : {key ? nullptr : &key.error(), size ? nullptr : &size.error(),
                               digest ? nullptr : &digest.error()}) {
        if (error != nullptr) {
            return tl::unexpected(*error);
        }
    }
    if (!store::check_key(*key)) {
        return fields.fail(
            fmt::format("\"{}\" is not a relative path without . or .. segments", *key));
    }
    file.key = std::move(*key);
    file.size = *size;
    file.sha256 = std::move(*digest);
    const bool placed = fields.object().contains("chunk") || fields.object().contains("offset");
    if (placed) {
        auto chunk = fields.number("chunk");
        auto offset = fields.number("offset");
        if (!chunk || !offset) {
            return tl::unexpected(chunk ? offset.error() : chunk.error());
        }
        if (*chunk >= chunks) {
            return fields.fail(fmt::format("chunk {} of {}: the bundle has {} chunk(s)", *chunk,
                                           file.key, chunks));
        }
        file.carried = Placement{*chunk, *offset};
    }
    return file;
}

Result<BundleRepository> parse_repository(const Fields& fields, std::size_t chunks,
                                          std::string_view shown) {
    BundleRepository repository;
    auto id = fields.text("id");
    if (!id) {
        return tl::unexpected(std::move(id.error()));
    }
    if (auto valid = check_id(fields, *id); !valid) {
        return tl::unexpected(std::move(valid.error()));
    }
    repository.id = std::move(*id);
    const std::string what = "repository " + repository.id;
    const Fields named(fields.object(), what, shown);
    auto repomd = named.digest("repomd_sha256");
    auto files = named.array("files");
    auto removed = named.array("removed");
    if (!repomd || !files || !removed) {
        return tl::unexpected(!repomd ? repomd.error() : !files ? files.error() : removed.error());
    }
    repository.repomd_sha256 = std::move(*repomd);
    std::set<std::string> keys;
    for (const Json& entry : **files) {
        auto file = parse_file(Fields(entry, what + ", a file", shown), chunks);
        if (!file) {
            return tl::unexpected(std::move(file.error()));
        }
        if (!keys.insert(file->key).second) {
            return named.fail(fmt::format("{} is listed twice", file->key));
        }
        repository.files.push_back(std::move(*file));
    }
    for (const Json& entry : **removed) {
        if (!entry.is_string() || !store::check_key(entry.get<std::string>())) {
            return named.fail("\"removed\" holds something that is not a relative path");
        }
        repository.removed.push_back(entry.get<std::string>());
    }
    const auto index =
        std::find_if(repository.files.begin(), repository.files.end(),
                     [](const BundleFile& file) { return file.key == "repodata/repomd.xml"; });
    if (index == repository.files.end()) {
        return named.fail("its files lack repodata/repomd.xml");
    }
    if (index->sha256 != repository.repomd_sha256) {
        return named.fail(fmt::format("repodata/repomd.xml has SHA-256 {}, repomd_sha256 says {}",
                                      index->sha256, repository.repomd_sha256));
    }
    std::sort(repository.files.begin(), repository.files.end(),
              [](const BundleFile& a, const BundleFile& b) { return a.key < b.key; });
    return repository;
}

Result<std::optional<BaseIdentity>> parse_base(const Fields& top, std::string_view shown) {
    auto base = top.member("base");
    if (!base) {
        return tl::unexpected(std::move(base.error()));
    }
    if ((*base)->is_null()) {
        return std::nullopt;
    }
    const Fields fields(**base, "base", shown);
    BaseIdentity identity;
    auto name = fields.text("name");
    auto repositories = fields.member("repositories");
    if (!name || !repositories) {
        return tl::unexpected(!name ? name.error() : repositories.error());
    }
    if (!(*repositories)->is_object()) {
        return fields.fail("\"repositories\" is not an object");
    }
    identity.name = std::move(*name);
    for (const auto& [id, digest] : (*repositories)->items()) {
        if (auto valid = check_id(fields, id); !valid) {
            return tl::unexpected(std::move(valid.error()));
        }
        if (digest.is_null()) {
            identity.repositories[id] = std::nullopt;
        } else if (digest.is_string() &&
                   is_valid_hex_digest(ChecksumType::Sha256, digest.get<std::string>())) {
            identity.repositories[id] = digest.get<std::string>();
        } else {
            return fields.fail(fmt::format("repository {}: not a SHA-256 digest or null", id));
        }
    }
    return identity;
}

// "layout" and "snapshot" into `manifest` (either may be absent).
Result<void> parse_layout_and_snapshot(const Fields& top, Manifest& manifest) {
    if (top.object().contains("layout")) {
        auto layout = top.text("layout");
        if (!layout) {
            return tl::unexpected(std::move(layout.error()));
        }
        if (*layout != kChunks && *layout != kTrees) {
            return top.fail(fmt::format("layout \"{}\" is neither \"{}\" nor \"{}\"", *layout,
                                        kChunks, kTrees));
        }
        manifest.layout = *layout == kTrees ? Layout::Trees : Layout::Chunks;
    }
    if (top.object().contains("snapshot") && !top.object().at("snapshot").is_null()) {
        auto snapshot = top.text("snapshot");
        if (!snapshot) {
            return tl::unexpected(std::move(snapshot.error()));
        }
        if (snapshot->empty() || snapshot->find('/') != std::string::npos ||
            snapshot->front() == '.') {
            return top.fail(fmt::format("\"{}\" cannot name a snapshot", *snapshot));
        }
        manifest.snapshot = std::move(*snapshot);
    }
    return {};
}

// In layout Trees, each carried file is the whole of its own chunk, repos/<id>/<key>.
Result<void> check_trees(const Manifest& manifest, const Fields& top) {
    for (const BundleRepository& repository : manifest.repositories) {
        for (const BundleFile& file : repository.files) {
            if (!file.carried) {
                continue;
            }
            const Chunk& chunk = manifest.chunks[file.carried->chunk];
            const std::string tree_name =
                fmt::format("{}/{}/{}", kTreesDir, repository.id, file.key);
            if (chunk.name != tree_name || file.carried->offset != 0 || chunk.size != file.size) {
                return top.fail(fmt::format("repository {}: {} is not the whole of {} (layout {})",
                                            repository.id, file.key, tree_name, kTrees));
            }
        }
    }
    return {};
}

// The chunks hold exactly the carried bytes, end to end in manifest order.
Result<void> check_layout(const Manifest& manifest, const Fields& top) {
    if (manifest.layout == Layout::Trees) {
        if (auto trees = check_trees(manifest, top); !trees) {
            return trees;
        }
    }
    std::vector<std::uint64_t> starts;
    std::uint64_t total = 0;
    for (const Chunk& chunk : manifest.chunks) {
        starts.push_back(total);
        total += chunk.size;
    }
    std::uint64_t next = 0;
    const auto in_order = [&](const BundleRepository& repository) {
        std::vector<const BundleFile*> carried;
        for (const BundleFile& file : repository.files) {
            if (file.carried) {
                carried.push_back(&file);
            }
        }
        std::sort(carried.begin(), carried.end(), [&](const BundleFile* a, const BundleFile* b) {
            return starts[a->carried->chunk] + a->carried->offset <
                   starts[b->carried->chunk] + b->carried->offset;
        });
        return carried;
    };
    for (const BundleRepository& repository : manifest.repositories) {
        for (const BundleFile* file : in_order(repository)) {
            const Chunk& chunk = manifest.chunks[file->carried->chunk];
            const std::uint64_t start = starts[file->carried->chunk] + file->carried->offset;
            if (file->carried->offset >= chunk.size && file->size > 0) {
                return top.fail(fmt::format(
                    "repository {}: {} starts at offset {} of {} ({} bytes)", repository.id,
                    file->key, file->carried->offset, chunk.name, chunk.size));
            }
            if (start != next) {
                return top.fail(fmt::format(
                    "repository {}: {} starts at byte {} of the chunks, where byte {} was due",
                    repository.id, file->key, start, next));
            }
            next += file->size;
        }
    }
    if (next != total) {
        return top.fail(fmt::format("the chunks hold {} bytes, the carried files {}", total, next));
    }
    return {};
}

}  // namespace

std::string format_manifest(const Manifest& manifest) {
    Json base = nullptr;
    if (manifest.base) {
        Json repositories = Json::object();
        for (const auto& [id, digest] : manifest.base->repositories) {
            repositories[id] = digest ? Json(*digest) : Json(nullptr);
        }
        base = Json{{"name", manifest.base->name}, {"repositories", std::move(repositories)}};
    }
    Json repositories = Json::array();
    for (const BundleRepository& repository : manifest.repositories) {
        Json files = Json::array();
        for (const BundleFile& file : repository.files) {
            files.push_back(file_json(file));
        }
        repositories.push_back({{"id", repository.id},
                                {"repomd_sha256", repository.repomd_sha256},
                                {"files", std::move(files)},
                                {"removed", repository.removed}});
    }
    Json chunks = Json::array();
    for (const Chunk& chunk : manifest.chunks) {
        chunks.push_back({{"name", chunk.name}, {"size", chunk.size}, {"sha256", chunk.sha256}});
    }
    const Json out{{"format", kFormat},
                   {"version", kFormatVersion},
                   {"tool_version", manifest.tool_version},
                   {"name", manifest.name},
                   {"kind", manifest.base ? "incremental" : "complete"},
                   {"layout", manifest.layout == Layout::Trees ? kTrees : kChunks},
                   {"snapshot", manifest.snapshot ? Json(*manifest.snapshot) : Json(nullptr)},
                   {"base", std::move(base)},
                   {"repositories", std::move(repositories)},
                   {"chunks", std::move(chunks)}};
    return out.dump(1) + "\n";
}

Result<Manifest> parse_manifest(std::string_view text, std::string_view shown) {
    const Json json = Json::parse(text, nullptr, false);
    if (json.is_discarded()) {
        return make_error(ErrorCode::BadInput, "not JSON (truncated or damaged?)",
                          std::string(shown));
    }
    const Fields top(json, "the manifest", shown);
    auto format = top.text("format");
    if (!format) {
        return tl::unexpected(std::move(format.error()));
    }
    if (*format != kFormat) {
        return top.fail(fmt::format("format \"{}\" is not \"{}\"", *format, kFormat));
    }
    auto version = top.number("version");
    if (!version) {
        return tl::unexpected(std::move(version.error()));
    }
    if (*version != static_cast<std::uint64_t>(kFormatVersion)) {
        return top.fail(fmt::format("format version {} is not {}, the one this rpmirror reads",
                                    *version, kFormatVersion));
    }
    Manifest manifest;
    auto tool = top.text("tool_version");
    auto name = top.text("name");
    auto kind = top.text("kind");
    auto repositories = top.array("repositories");
    auto chunks = top.array("chunks");
    for (const Error* error :
         {tool ? nullptr : &tool.error(), name ? nullptr : &name.error(),
          kind ? nullptr : &kind.error(), repositories ? nullptr : &repositories.error(),
          chunks ? nullptr : &chunks.error()}) {
        if (error != nullptr) {
            return tl::unexpected(*error);
        }
    }
    manifest.tool_version = std::move(*tool);
    manifest.name = std::move(*name);
    if (manifest.name.empty() || manifest.name.find('/') != std::string::npos ||
        manifest.name.front() == '.') {
        return top.fail(fmt::format("\"{}\" cannot name a bundle", manifest.name));
    }
    std::set<std::string> chunk_names;
    for (const Json& entry : **chunks) {
        const Fields fields(entry, "a chunk", shown);
        auto chunk_name = fields.text("name");
        auto size = fields.number("size");
        auto digest = fields.digest("sha256");
        if (!chunk_name || !size || !digest) {
            return tl::unexpected(!chunk_name ? chunk_name.error()
                                  : !size     ? size.error()
                                              : digest.error());
        }
        if (!store::check_key(*chunk_name) || chunk_name->front() == '.' ||
            *chunk_name == kManifestName || *chunk_name == kSignatureName ||
            !chunk_names.insert(*chunk_name).second) {
            return fields.fail(fmt::format("\"{}\" cannot name a chunk", *chunk_name));
        }
        manifest.chunks.push_back(Chunk{std::move(*chunk_name), *size, std::move(*digest)});
    }
    if (auto extras = parse_layout_and_snapshot(top, manifest); !extras) {
        return tl::unexpected(std::move(extras.error()));
    }
    auto base = parse_base(top, shown);
    if (!base) {
        return tl::unexpected(std::move(base.error()));
    }
    manifest.base = std::move(*base);
    if (*kind != (manifest.base ? "incremental" : "complete")) {
        return top.fail(
            fmt::format("kind \"{}\" with {}", *kind, manifest.base ? "a base" : "no base"));
    }
    std::set<std::string> ids;
    for (const Json& entry : **repositories) {
        auto repository =
            parse_repository(Fields(entry, "a repository", shown), manifest.chunks.size(), shown);
        if (!repository) {
            return tl::unexpected(std::move(repository.error()));
        }
        if (!ids.insert(repository->id).second) {
            return top.fail(fmt::format("repository {} is listed twice", repository->id));
        }
        if (!manifest.base) {
            for (const BundleFile& file : repository->files) {
                if (!file.carried) {
                    return top.fail(
                        fmt::format("repository {}: a complete bundle does not carry {}",
                                    repository->id, file.key));
                }
            }
        } else if (!manifest.base->repositories.contains(repository->id)) {
            return top.fail(
                fmt::format("repository {}: the base does not say what it was", repository->id));
        }
        manifest.repositories.push_back(std::move(*repository));
    }
    if (auto laid = check_layout(manifest, top); !laid) {
        return tl::unexpected(std::move(laid.error()));
    }
    return manifest;
}

std::string export_snapshot_name(std::string_view bundle_name) {
    return fmt::format("{}{}", kExportSnapshotPrefix, bundle_name);
}

BaseIdentity identity_after(const Manifest& manifest) {
    BaseIdentity identity;
    identity.name = manifest.name;
    for (const BundleRepository& repository : manifest.repositories) {
        identity.repositories[repository.id] = repository.repomd_sha256;
    }
    return identity;
}

}  // namespace rpmirror::bundle
