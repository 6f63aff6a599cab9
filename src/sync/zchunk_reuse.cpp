// RepoSync's reuse of metadata records: copies of earlier runs' records, zchunk deltas, and the
// primary_zck kept for the next run's delta.
#include "sync/repo_sync.hpp"

#include <sys/stat.h>

#include <fmt/core.h>

#include "download/zck.hpp"
#include "fs/tree.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror {

namespace {

// Returns `name` without the digest prefix unique metadata file names carry
// ("<hex>-primary.xml.zck" -> "primary.xml.zck"), or `name` iff it has none.
std::string_view without_digest_prefix(std::string_view name) {
    constexpr std::size_t kShortestDigest = 32;  // md5
    const std::size_t dash = name.find('-');
    if (dash == std::string_view::npos || dash < kShortestDigest ||
        name.substr(0, dash).find_first_not_of("0123456789abcdef") != std::string_view::npos) {
        return name;
    }
    return name.substr(dash + 1);
}

}  // namespace

std::filesystem::path RepoSync::kept_primary_zck_path() const {
    auto path = sync_state_path(state_directory(options_), repo_dir_);
    path.replace_extension(".primary.xml.zck");
    return path;
}

void RepoSync::keep_primary_zck(const std::filesystem::path& parsed) {
    const std::filesystem::path kept = kept_primary_zck_path();
    if (auto placed = fs::place_copy(parsed, kept); !placed) {
        report_.warnings.push_back(
            fmt::format("zchunk: cannot keep primary_zck as {} for the next run's delta: {}",
                        kept.string(), placed.error().to_string()));
    }
}

const RepomdRecord* RepoSync::parse_record(
    const Repomd& repomd, const RepomdRecord& primary, const std::filesystem::path& stage_dir,
    const std::function<std::string(const RepomdRecord&)>& url_of,
    const RepomdRecord*& delta_record) {
    const RepomdRecord* zck = repomd.find("primary_zck");
    if (!options_.zchunk || zck == nullptr || !zck->size || !zck->header_size ||
        !zck->header_checksum || !zck->location_href.starts_with(kRepodataPrefix)) {
        return &primary;
    }
    auto relative =
        safe_relative_path(zck->location_href.substr(kRepodataPrefix.size()), zck->type);
    if (!relative || relative->has_parent_path()) {
        return &primary;  // the download loop says what is wrong with it
    }
    const std::filesystem::path kept = kept_primary_zck_path();
    struct stat st {};
    if (::lstat(kept.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return zck;  // the first run: primary_zck whole, kept for the next one
    }
    auto assembled = assemble_zck_delta(*zck, *relative, url_of(*zck), stage_dir, kept,
                                        "downloading '" + primary.type + "' instead");
    if (!assembled) {
        if (assembled.error().subject == kept.string()) {
            (void)fs::remove_file(kept);
        }
        return &primary;
    }
    delta_record = zck;
    return zck;
}

bool RepoSync::seed_from_local_copy(const std::filesystem::path& stage_dir,
                                    const std::filesystem::path& relative,
                                    std::uint64_t expected_size,
                                    const std::vector<std::filesystem::path>& sources) {
    if (relative.has_parent_path()) {
        return false;
    }
    for (const std::filesystem::path& source : sources) {
        struct stat st {};
        const std::filesystem::path candidate = source / relative;
        if (::lstat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
            static_cast<std::uint64_t>(st.st_size) != expected_size) {
            continue;
        }
        return fs::copy_file(candidate, stage_dir / part_file_name(relative.filename().string()))
            .has_value();
    }
    return false;
}

std::optional<std::filesystem::path> RepoSync::find_previous_revision(
    std::string_view name, const std::vector<std::filesystem::path>& sources) {
    const std::string_view wanted = without_digest_prefix(name);
    std::optional<std::filesystem::path> newest;
    std::filesystem::file_time_type newest_time;
    for (const std::filesystem::path& source : sources) {
        std::error_code error;
        for (std::filesystem::directory_iterator it(source, error), end; !error && it != end;
             it.increment(error)) {
            const std::string candidate = it->path().filename().string();
            if (candidate == name || without_digest_prefix(candidate) != wanted ||
                !it->is_regular_file(error) || it->is_symlink(error)) {
                continue;
            }
            const auto time = it->last_write_time(error);
            if (!error && (!newest || time > newest_time)) {
                newest = it->path();
                newest_time = time;
            }
        }
    }
    return newest;
}

Result<void> RepoSync::assemble_zck_delta(const RepomdRecord& record,
                                          const std::filesystem::path& relative,
                                          const std::string& url,
                                          const std::filesystem::path& stage_dir,
                                          const std::filesystem::path& previous,
                                          std::string_view instead) {
    if (!record.type.ends_with("_zck") || !record.size || !record.header_size ||
        !record.header_checksum || relative.has_parent_path()) {
        return make_error(ErrorCode::Unsupported, "not a zchunk record", record.type);
    }
    const std::string name = relative.filename().string();
    download::ZckDeltaRequest request;
    request.url = url;
    request.previous = previous;
    request.target = stage_dir / part_file_name(name);
    request.header_size = *record.header_size;
    request.header_checksum = *record.header_checksum;
    const auto fall_back = [&](Error error) {
        (void)fs::remove_file(request.target);
        report_.zck_fallbacks.push_back(
            fmt::format("zchunk: '{}': {}; {}", record.type, error.to_string(), instead));
        return tl::unexpected(std::move(error));
    };
    auto delta = download::fetch_zck_delta(request, downloader_.options(), stop_);
    if (!delta) {
        return fall_back(std::move(delta.error()));
    }
    auto digest = hash_file(request.target, record.checksum.type);
    if (!digest || digest->size != *record.size || digest->hex != record.checksum.hex) {
        return fall_back(Error{ErrorCode::Corrupt,
                               "the assembled file does not match the checksum in repomd.xml", url,
                               0});
    }
    ++report_.zck_records;
    report_.zck_bytes_fetched += delta->bytes_fetched;
    if (delta->bytes_fetched < *record.size) {
        report_.zck_bytes_saved += *record.size - delta->bytes_fetched;
    }
    return {};
}

}  // namespace rpmirror
