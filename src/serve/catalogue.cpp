// See catalogue.hpp.
#include "serve/catalogue.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <ctime>
#include <span>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::serve {

namespace {

constexpr std::string_view kRepomdKey = "repodata/repomd.xml";
constexpr std::string_view kSignatureKey = "repodata/repomd.xml.asc";

std::string entity_tag(std::string_view hex) {
    return "\"" + std::string(hex) + "\"";
}

bool beneath(const std::filesystem::path& path, const std::filesystem::path& directory) {
    return path.native().starts_with(directory.native() + "/");
}

std::shared_ptr<const HeldFile> bytes_held(std::string bytes) {
    auto held = std::make_shared<HeldFile>();
    held->size = bytes.size();
    held->bytes = std::move(bytes);
    return held;
}

}  // namespace

Result<HeldFile> hold_file(store::ObjectStore& store, const std::string& key,
                           const std::filesystem::path& scratch) {
    auto path = store.local_copy(key, scratch);
    if (!path) {
        return tl::unexpected(std::move(path.error()));
    }
    HeldFile held;
    if (beneath(*path, scratch)) {  // a copy fetched for us: its bytes, the copy dropped
        auto bytes = store.read(key);
        if (!bytes) {
            return tl::unexpected(std::move(bytes.error()));
        }
        held.size = bytes->size();
        held.bytes = std::move(*bytes);
        (void)store::disk_object_store(scratch)->remove(std::span<const std::string>(&key, 1));
        return held;
    }
    held.fd.reset(::open(path->c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!held.fd) {
        return make_errno_error("cannot open", path->string(), errno);
    }
    struct stat st {};
    if (::fstat(held.fd.get(), &st) != 0) {
        return make_errno_error("cannot stat", path->string(), errno);
    }
    if (!S_ISREG(st.st_mode)) {
        return make_error(ErrorCode::Unsafe, "not a regular file", path->string());
    }
    held.size = static_cast<std::uint64_t>(st.st_size);
    return held;
}

Result<std::shared_ptr<const Revision>> load_revision(store::ObjectStore& store,
                                                      const std::string& shown,
                                                      const std::filesystem::path& scratch) {
    const std::string repomd_key(kRepomdKey);
    auto before = store.stat(repomd_key);
    if (!before) {
        return tl::unexpected(std::move(before.error()));
    }
    if (!*before) {
        return make_error(ErrorCode::NotFound, "no published repository (no repodata/repomd.xml)",
                          shown);
    }
    auto text = store.read(repomd_key);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    auto repomd = parse_repomd(*text, shown + "/" + repomd_key);
    if (!repomd) {
        return tl::unexpected(std::move(repomd.error()));
    }
    auto revision = std::make_shared<Revision>();
    revision->version = (*before)->version;
    std::int64_t newest = 0;
    std::optional<std::filesystem::path> primary;
    for (const RepomdRecord& record : repomd->records) {
        auto relative = record_destination(record, shown, shown + "/" + repomd_key);
        if (!relative) {
            return tl::unexpected(std::move(relative.error()));
        }
        const std::string key = "repodata/" + relative->generic_string();
        auto held = hold_file(store, key, scratch);
        if (!held) {
            return tl::unexpected(std::move(held.error()));
        }
        if (record.type == "primary") {
            auto local = store.local_copy(key, scratch);
            if (!local) {
                return tl::unexpected(std::move(local.error()));
            }
            primary = *local;
        }
        ListedFile& file = revision->files[key];
        file.size = held->size;
        file.etag = entity_tag(record.checksum.hex);
        file.last_modified = record.timestamp.value_or(0);
        file.held = std::make_shared<const HeldFile>(std::move(*held));
        newest = std::max(newest, file.last_modified);
    }
    if (primary) {
        PrimaryParseOptions options;
        options.display_name = shown + "/" + primary->filename().string();
        auto packages = parse_primary_file(*primary, options);
        if (!packages) {
            return tl::unexpected(std::move(packages.error()));
        }
        for (std::size_t i = 0; i < packages->size(); ++i) {
            const PackageView package = (*packages)[i];
            auto relative = safe_relative_path(package.location_href, package.nevra());
            if (!package.location_base.empty() || !relative ||
                relative->generic_string().starts_with("..")) {
                continue;  // not beneath this repository: not ours to serve
            }
            ListedFile& file = revision->files[relative->generic_string()];
            file.size = package.package_size == kUnknownSize ? 0 : package.package_size;
            file.etag = entity_tag(package.checksum_hex());
            file.checksum_type = package.checksum_type;
            file.last_modified = package.file_time > 0 ? package.file_time : package.build_time;
        }
    }
    const std::string signature_key(kSignatureKey);
    if (auto signature = store.read(signature_key)) {
        ListedFile& file = revision->files[signature_key];
        file.etag = entity_tag(hash_bytes(ChecksumType::Sha256, *signature));
        file.last_modified = newest;
        file.held = bytes_held(std::move(*signature));
    } else if (signature.error().code != ErrorCode::NotFound) {
        return tl::unexpected(std::move(signature.error()));
    }
    ListedFile& index = revision->files[repomd_key];
    index.etag = entity_tag(hash_bytes(ChecksumType::Sha256, *text));
    index.last_modified = newest > 0 ? newest : static_cast<std::int64_t>(std::time(nullptr));
    index.held = bytes_held(std::move(*text));
    index.size = index.held->size;
    return std::shared_ptr<const Revision>(std::move(revision));
}

JobCatalogue::JobCatalogue(std::string name, std::unique_ptr<store::ObjectStore> store,
                           std::chrono::seconds grace)
    : name_(std::move(name)), store_(std::move(store)), grace_(grace) {}

Result<std::filesystem::path> JobCatalogue::scratch_locked() {
    if (!scratch_) {
        auto made = ScratchDir::create("rpmirror-serve");
        if (!made) {
            return tl::unexpected(std::move(made.error()));
        }
        scratch_.emplace(std::move(*made));
    }
    return scratch_->path();
}

Result<void> JobCatalogue::reload_locked() {
    const auto now = std::chrono::steady_clock::now();
    checked_ = now;
    auto info = store_->stat(std::string(kRepomdKey));
    if (!info) {
        return tl::unexpected(std::move(info.error()));
    }
    if (current_ && *info && (*info)->version == current_->version) {
        return {};
    }
    auto scratch = scratch_locked();
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    auto loaded = load_revision(*store_, store_->describe(""), *scratch);
    if (!loaded) {
        return tl::unexpected(std::move(loaded.error()));
    }
    if (current_) {
        retired_.emplace_back(now, std::move(current_));
    }
    current_ = std::move(*loaded);
    std::erase_if(retired_, [&](const auto& entry) { return now - entry.first > grace_; });
    return {};
}

Result<void> JobCatalogue::refresh(bool check) {
    std::lock_guard lock(mutex_);
    if (!check && checked_ &&
        std::chrono::steady_clock::now() - *checked_ < std::chrono::seconds(1)) {
        return {};
    }
    return reload_locked();
}

std::optional<Found> JobCatalogue::find(const std::string& key) {
    std::lock_guard lock(mutex_);
    if (current_) {
        if (auto it = current_->files.find(key); it != current_->files.end()) {
            return Found{it->second, current_};
        }
    }
    const auto now = std::chrono::steady_clock::now();
    for (auto entry = retired_.rbegin(); entry != retired_.rend(); ++entry) {
        if (now - entry->first > grace_) {
            continue;
        }
        if (auto it = entry->second->files.find(key); it != entry->second->files.end()) {
            return Found{it->second, entry->second};
        }
    }
    return std::nullopt;
}

Result<HeldFile> JobCatalogue::open(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto scratch = scratch_locked();
    if (!scratch) {
        return tl::unexpected(std::move(scratch.error()));
    }
    return hold_file(*store_, key, *scratch);
}

Result<bool> JobCatalogue::holds(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto info = store_->stat(key);
    if (!info) {
        return tl::unexpected(std::move(info.error()));
    }
    return info->has_value();
}

Result<std::optional<store::ObjectInfo>> JobCatalogue::stat(const std::string& key) {
    std::lock_guard lock(mutex_);
    return store_->stat(key);
}

Result<void> JobCatalogue::remove(const std::string& key) {
    std::lock_guard lock(mutex_);
    if (auto removed = store_->remove(std::span<const std::string>(&key, 1)); !removed) {
        return removed;
    }
    store_->remove_empty_dirs(key);
    return {};
}

std::shared_ptr<const Revision> JobCatalogue::current() {
    std::lock_guard lock(mutex_);
    return current_;
}

Result<std::unique_ptr<store::Staging>> JobCatalogue::stage(const store::StageOptions& options) {
    std::lock_guard lock(mutex_);
    return store_->stage(options);
}

Result<void> JobCatalogue::keep(store::Staging& staging, store::StagedFile file) {
    // Under the lock: a commit uses the store (on disk its stat), one thread at a time.
    std::lock_guard lock(mutex_);
    staging.commit(0, std::move(file));
    for (store::Committed& committed : staging.wait()) {
        if (committed.error) {
            return tl::unexpected(std::move(*committed.error));
        }
    }
    return {};
}

}  // namespace rpmirror::serve
