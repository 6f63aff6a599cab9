// What `rpmirror import` checks before the destination changes (bundle_check.hpp).
#include "export/bundle_check.hpp"

#include <sys/stat.h>

#include <span>
#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "export/chunks.hpp"
#include "fs/durable.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "signature/signature.hpp"
#include "store/mirror_store.hpp"
#include "store/object_store.hpp"

namespace rpmirror::bundle {

namespace {

using Json = nlohmann::json;

// The key of the bundle `dir`'s resume record in resume_records.
std::string resume_key(const std::filesystem::path& dir, const Manifest& manifest) {
    const std::string who = std::filesystem::absolute(dir).lexically_normal().string() + "\n" +
                            format_manifest(manifest);
    return manifest.name + "-" + hash_bytes(ChecksumType::Sha256, who).substr(0, 16) + ".json";
}

// "SIZE MTIME_NS" of a chunk as it is now; "" iff it cannot be told.
std::string chunk_stamp(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        return {};
    }
    return fmt::format(
        "{} {}", st.st_size,
        static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec);
}

std::string shown_identity(const std::optional<std::string>& digest) {
    return digest ? "repomd.xml SHA-256 " + *digest : std::string("no repository");
}

}  // namespace

std::unique_ptr<store::ObjectStore> resume_records(const std::filesystem::path& state_dir) {
    return store::disk_object_store(state_dir / "imports");
}

Result<Manifest> read_manifest(const std::filesystem::path& dir,
                               const std::optional<std::filesystem::path>& keyring) {
    const std::filesystem::path path = dir / kManifestName;
    auto text = fs::read_file(path);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    if (keyring) {
        const std::filesystem::path signature_path = dir / kSignatureName;
        auto signature = fs::read_file(signature_path);
        if (!signature) {
            return make_error(ErrorCode::Unsafe,
                              "missing: --keyring requires a signed manifest, and this bundle "
                              "is not signed",
                              signature_path.string());
        }
        auto keys = fs::read_file(*keyring);
        if (!keys) {
            return tl::unexpected(std::move(keys.error()));
        }
        Keyring trusted("the keyring " + keyring->string());
        if (auto added = trusted.add_armored(*keys, keyring->string()); !added) {
            return tl::unexpected(std::move(added.error()));
        }
        if (auto good = trusted.verify_detached(*text, *signature, signature_path.string());
            !good) {
            return tl::unexpected(std::move(good.error()));
        }
    }
    return parse_manifest(*text, path.string());
}

Result<void> check_chunks(const std::filesystem::path& dir, const Manifest& manifest,
                          store::ObjectStore& records, ImportReport& report) {
    const std::string record_key = resume_key(dir, manifest);
    Json record = Json::object();
    if (auto text = records.read(record_key)) {
        record = Json::parse(*text, nullptr, false);
        if (!record.is_object()) {
            record = Json::object();  // damaged: every chunk is checked again
        }
    }
    for (const Chunk& chunk : manifest.chunks) {
        const std::filesystem::path path = dir / chunk.name;
        const std::string stamp = chunk_stamp(path);
        const auto found = record.find(chunk.name);
        if (!stamp.empty() && found != record.end() && found->is_object() &&
            found->value("sha256", "") == chunk.sha256 && found->value("stamp", "") == stamp) {
            ++report.chunks_resumed;
            continue;
        }
        if (auto good = check_chunk(dir, chunk); !good) {
            return good;
        }
        ++report.chunks_checked;
        record[chunk.name] = Json{{"sha256", chunk.sha256}, {"stamp", stamp}};
        // Best effort: without the record, a resumed import only checks this chunk again.
        (void)records.put(record_key, record.dump(1) + "\n");
    }
    return {};
}

void forget_checked_chunks(const std::filesystem::path& dir, const Manifest& manifest,
                           store::ObjectStore& records) {
    const std::string key = resume_key(dir, manifest);
    (void)records.remove(std::span(&key, 1));
}

Result<std::map<std::string, std::optional<std::string>>> current_indexes(
    store::MirrorRoot& root, const Manifest& manifest) {
    std::map<std::string, std::optional<std::string>> current;
    for (const BundleRepository& repository : manifest.repositories) {
        const std::string key = store::join_key(repository.id, store::kIndexKey);
        auto text = root.objects().read(key);
        if (!text && text.error().code == ErrorCode::NotFound) {
            current[repository.id] = std::nullopt;
            continue;
        }
        if (!text) {
            return tl::unexpected(std::move(text.error()));
        }
        current[repository.id] = hash_bytes(ChecksumType::Sha256, *text);
    }
    return current;
}

Result<void> check_base(const Manifest& manifest, store::MirrorRoot& root,
                        const std::map<std::string, std::optional<std::string>>& current) {
    if (!manifest.base) {
        return {};
    }
    for (const BundleRepository& repository : manifest.repositories) {
        const std::optional<std::string>& now = current.at(repository.id);
        const std::optional<std::string>& base = manifest.base->repositories.at(repository.id);
        if (now == repository.repomd_sha256 || now == base) {
            continue;
        }
        return make_error(
            ErrorCode::BadInput,
            fmt::format("the destination holds {}, but bundle {} applies to its base {}, which "
                        "holds {}; import the base first (or a complete bundle); nothing was "
                        "changed",
                        shown_identity(now), manifest.name, manifest.base->name,
                        shown_identity(base)),
            root.repository_path(repository.id).string());
    }
    return {};
}

}  // namespace rpmirror::bundle
