// The per-repository state file behind the fast no-op sync.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "checksum/hasher.hpp"
#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "fs/tree.hpp"
#include "plan/plan.hpp"
#include "plan/selection_json.hpp"

namespace rpmirror {

namespace {

constexpr int kStateVersion = 2;

}  // namespace

nlohmann::json selection_to_json(const RecordedSelection& selection) {
    const SelectionOptions& options = selection.options;
    nlohmann::json recorded = {
        {"arches", options.arches},
        {"source", options.source_only},
        {"newest_only", options.newest_only},
        {"keep_versions", options.keep_versions},
        {"include", options.include_globs},
        {"exclude", options.exclude_globs},
        {"min_build_time", options.min_build_time ? nlohmann::json(*options.min_build_time)
                                                  : nlohmann::json(nullptr)},
        {"modular", selection.modular}};
    if (options.only_nevras) {
        recorded["only"] = *options.only_nevras;  // --with-dependencies: the closure's share
    }
    return recorded;
}

RecordedSelection selection_from_json(const nlohmann::json& recorded) {
    RecordedSelection selection;
    selection.options.arches = recorded.at("arches").get<std::vector<std::string>>();
    selection.options.source_only = recorded.at("source").get<bool>();
    selection.options.newest_only = recorded.at("newest_only").get<bool>();
    // Absent in states written before --keep-versions: -n kept one.
    selection.options.keep_versions = recorded.value("keep_versions", std::uint32_t{1});
    selection.options.include_globs = recorded.at("include").get<std::vector<std::string>>();
    selection.options.exclude_globs = recorded.at("exclude").get<std::vector<std::string>>();
    if (!recorded.at("min_build_time").is_null()) {
        selection.options.min_build_time = recorded.at("min_build_time").get<std::int64_t>();
    }
    selection.modular = recorded.at("modular").get<bool>();
    // Absent in states written before --with-dependencies: no closure.
    if (const auto only = recorded.find("only"); only != recorded.end() && !only->is_null()) {
        selection.options.only_nevras = only->get<std::vector<std::string>>();
    }
    return selection;
}

nlohmann::json publishing_to_json(const RecordedPublishing& publishing) {
    nlohmann::json json = {{"sign_key", publishing.sign_key},
                           {"upstream_metadata", publishing.upstream_metadata}};
    if (!publishing.advisories_left_out_sha256.empty()) {
        json["advisories_left_out_sha256"] = publishing.advisories_left_out_sha256;
    }
    return json;
}

RecordedPublishing publishing_from_json(const nlohmann::json& recorded) {
    return {recorded.at("sign_key").get<std::string>(),
            recorded.at("upstream_metadata").get<bool>(),
            recorded.value("advisories_left_out_sha256", std::string())};
}

namespace {

template <typename Recorded>
std::optional<Recorded> from_text(std::string_view text,
                                  Recorded (*from_json)(const nlohmann::json&)) {
    const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        return std::nullopt;
    }
    try {
        return from_json(document);
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

}  // namespace

std::string publishing_to_text(const RecordedPublishing& publishing) {
    return publishing_to_json(publishing).dump();
}

std::optional<RecordedPublishing> publishing_from_text(std::string_view text) {
    return from_text(text, &publishing_from_json);
}

std::string selection_to_text(const RecordedSelection& selection) {
    return selection_to_json(selection).dump();
}

std::optional<RecordedSelection> selection_from_text(std::string_view text) {
    return from_text(text, &selection_from_json);
}

std::filesystem::path sync_state_path(const std::filesystem::path& state_dir,
                                      const std::filesystem::path& repo_dir) {
    return fs::state_entry(state_dir, repo_dir).string() + ".json";
}

std::optional<SyncState> read_sync_state(const std::filesystem::path& path) {
    std::ifstream stream(path, std::ios::binary);
    if (!stream) {
        return std::nullopt;
    }
    const std::string text((std::istreambuf_iterator<char>(stream)),
                           std::istreambuf_iterator<char>());
    if (stream.bad()) {
        return std::nullopt;
    }
    return parse_sync_state(text);
}

std::optional<SyncState> parse_sync_state(std::string_view text) {
    const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
    if (document.is_discarded() || !document.is_object() ||
        document.value("version", 0) != kStateVersion) {
        return std::nullopt;
    }
    try {
        SyncState state;
        state.repomd_sha256 = document.at("repomd_sha256").get<std::string>();
        state.options_fingerprint = document.at("options").get<std::string>();
        state.published_repomd_sha256 = document.value("published_repomd_sha256", std::string());
        if (const auto found = document.find("selection"); found != document.end()) {
            state.selection = selection_from_json(*found);
        }
        if (const auto found = document.find("publishing"); found != document.end()) {
            state.publishing = publishing_from_json(*found);
        }
        const auto read_files = [](const nlohmann::json& files) {
            std::vector<SyncStateFile> read;
            for (const auto& file : files) {
                read.push_back({file.at(0).get<std::string>(), file.at(1).get<std::uint64_t>(),
                                file.at(2).get<std::int64_t>(), file.at(3).get<std::uint64_t>(),
                                file.at(4).get<std::int64_t>()});
            }
            return read;
        };
        state.files = read_files(document.at("files"));
        if (const auto found = document.find("metadata"); found != document.end()) {
            state.metadata_files = read_files(*found);
        }
        return state;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

std::string sync_state_text(const SyncState& state) {
    const auto write_files = [](const std::vector<SyncStateFile>& recorded) {
        nlohmann::json files = nlohmann::json::array();
        for (const SyncStateFile& file : recorded) {
            files.push_back(
                {file.relative_path.string(), file.size, file.mtime_ns, file.inode, file.ctime_ns});
        }
        return files;
    };
    nlohmann::json document = {{"version", kStateVersion},
                               {"repomd_sha256", state.repomd_sha256},
                               {"options", state.options_fingerprint},
                               {"files", write_files(state.files)}};
    if (!state.metadata_files.empty()) {
        document["metadata"] = write_files(state.metadata_files);
    }
    if (!state.published_repomd_sha256.empty()) {
        document["published_repomd_sha256"] = state.published_repomd_sha256;
    }
    if (state.selection) {
        document["selection"] = selection_to_json(*state.selection);
    }
    if (state.publishing) {
        document["publishing"] = publishing_to_json(*state.publishing);
    }
    return document.dump();
}

Result<void> write_sync_state(const std::filesystem::path& path, const SyncState& state) {
    if (auto made = fs::make_directories(path.parent_path(), "the state directory"); !made) {
        return made;
    }
    if (auto written = fs::replace_file(path, sync_state_text(state)); !written) {
        Error failure = std::move(written.error());
        failure.message = "cannot write sync state: " + failure.message;
        return tl::unexpected(std::move(failure));
    }
    return {};
}

std::optional<SyncStateFile> stat_for_state(const std::filesystem::path& repo_dir,
                                            const std::filesystem::path& relative_path) {
    struct stat st {};
    if (::lstat((repo_dir / relative_path).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return std::nullopt;
    }
    return state_file_of(relative_path, st);
}

SyncStateFile state_file_of(std::filesystem::path relative_path, const struct ::stat& st) {
    return SyncStateFile{std::move(relative_path), static_cast<std::uint64_t>(st.st_size),
                         fs::timespec_ns(st.st_mtim), static_cast<std::uint64_t>(st.st_ino),
                         fs::timespec_ns(st.st_ctim)};
}

Result<void> follow_own_links(const std::filesystem::path& state_path,
                              std::span<const RelinkedFile> linked) {
    std::optional<SyncState> state = read_sync_state(state_path);
    if (!state || linked.empty()) {
        return {};
    }
    using Key = std::tuple<std::uint64_t, std::uint64_t, std::int64_t, std::int64_t>;
    std::map<Key, const SyncStateFile*> after;
    for (const RelinkedFile& file : linked) {
        if (file.after.inode == file.before.inode && file.after.size == file.before.size &&
            file.after.mtime_ns == file.before.mtime_ns) {
            after.emplace(Key{file.before.inode, file.before.size, file.before.mtime_ns,
                              file.before.ctime_ns},
                          &file.after);
        }
    }
    bool moved = false;
    for (auto* files : {&state->files, &state->metadata_files}) {
        for (SyncStateFile& file : *files) {
            const auto found = after.find(Key{file.inode, file.size, file.mtime_ns, file.ctime_ns});
            if (found != after.end()) {
                file.ctime_ns = found->second->ctime_ns;
                moved = true;
            }
        }
    }
    return moved ? write_sync_state(state_path, *state) : Result<void>{};
}

void vouch_for_state(CacheTrust& trust, const SyncState& state) {
    for (const auto* files : {&state.files, &state.metadata_files}) {
        for (const SyncStateFile& file : *files) {
            if (file.ctime_ns != 0) {  // a record without a ctime vouches for nothing
                trust.vouch(file.inode, file.size, file.mtime_ns, file.ctime_ns);
            }
        }
    }
}

std::shared_ptr<const CacheTrust> cache_trust_of(const std::filesystem::path& state_dir,
                                                 const std::filesystem::path& repo_dir) {
    auto trust = std::make_shared<CacheTrust>();
    const std::filesystem::path dir = state_dir.empty() ? fs::default_state_dir() : state_dir;
    for (const std::filesystem::path& recorded :
         {repo_dir, repo_dir / std::string(kTreeImagesCatalogue)}) {
        if (const std::optional<SyncState> state =
                read_sync_state(sync_state_path(dir, recorded))) {
            vouch_for_state(*trust, *state);
        }
    }
    return trust;
}

std::shared_ptr<const CacheTrust> cache_trust_of_state_dir(const std::filesystem::path& state_dir) {
    auto trust = std::make_shared<CacheTrust>();
    std::error_code error;
    const std::filesystem::path dir = state_dir.empty() ? fs::default_state_dir() : state_dir;
    for (std::filesystem::directory_iterator entry(dir / "repos", error), end;
         !error && entry != end; entry.increment(error)) {
        if (entry->path().extension() == ".json") {
            if (const std::optional<SyncState> state = read_sync_state(entry->path())) {
                vouch_for_state(*trust, *state);
            }
        }
    }
    return trust;
}

}  // namespace rpmirror
