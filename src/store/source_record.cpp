// A repository's source record, written and read over the store (store/source_record.hpp).
#include "store/source_record.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "config/repo_files.hpp"
#include "index/index.hpp"
#include "store/mirror_root.hpp"

namespace rpmirror::store {

namespace {

// The comments a record's reader takes its selection and left-out secrets from.
constexpr std::string_view kSelectionComment = "# selection: ";
constexpr std::string_view kLeftOutComment = "# secrets left out: ";

// The text after `prefix` on the comment line of `text` that starts with it; nullopt iff none.
std::optional<std::string> comment(std::string_view text, std::string_view prefix) {
    for (std::size_t start = 0; start < text.size();) {
        const std::size_t end = std::min(text.find('\n', start), text.size());
        const std::string_view line = text.substr(start, end - start);
        if (line.starts_with(prefix)) {
            return std::string(line.substr(prefix.size()));
        }
        start = end + 1;
    }
    return std::nullopt;
}

}  // namespace

std::string source_record_text(const RepoConfig& repo, const RecordedSelection& selection) {
    std::vector<std::string> left_out;
    const std::string section = write_repo_section(repo, left_out);
    std::string text = fmt::format(
        "# The source of the mirror of repository '{}', recorded by rpmirror at its last sync\n"
        "# that published it. `rpmirror verify --repair`, `verify --remote` and `rpmirror sync\n"
        "# --repo {}` read it when no .repo file or --repofrompath defines the repository.\n",
        repo.id, repo.id);
    text += fmt::format("{}{}\n", kSelectionComment, describe_selection(selection.options));
    if (!left_out.empty()) {
        std::string names;
        for (const std::string& name : left_out) {
            names += (names.empty() ? "" : ", ") + name;
        }
        text += fmt::format("{}{}\n", kLeftOutComment, names);
    }
    return text + section;
}

RecordPlace source_record_place(MirrorStore& store) {
    return store.record_of("", name_of(kSourceRecordKey));
}

Result<void> write_source_record(ObjectStore& objects, std::string_view key, const RepoConfig& repo,
                                 const RecordedSelection& selection) {
    return objects.put(key, source_record_text(repo, selection));
}

Result<void> write_source_record(MirrorStore& store, const RepoConfig& repo,
                                 const RecordedSelection& selection) {
    const RecordPlace place = source_record_place(store);
    return write_source_record(*place.objects, place.key, repo, selection);
}

Result<SourceRecordRead> read_source_record(MirrorStore& store, std::string_view id) {
    const RecordPlace place = source_record_place(store);
    return read_source_record(*place.objects, place.key, id);
}

Result<SourceRecordRead> read_source_record(ObjectStore& objects, std::string_view key,
                                            std::string_view id) {
    const std::string shown = objects.describe(key);
    SourceRecordRead read;
    read.record = shown;
    auto text = objects.read(key);
    if (!text) {
        if (text.error().code == ErrorCode::NotFound) {
            return read;
        }
        return tl::unexpected(std::move(text.error()));
    }
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_text(*text, shown, warnings);
    if (!repos) {
        return tl::unexpected(std::move(repos.error()));
    }
    // rpmirror wrote it: a key it does not know, or one given twice, is damage, not a typo.
    for (const ConfigWarning& warning : warnings) {
        if (warning.kind != ConfigWarningKind::IgnoredKey) {
            return make_error(
                ErrorCode::BadInput,
                fmt::format(
                    "line {}: key '{}' {}: not a source record as rpmirror writes one",
                    warning.where.line, warning.key,
                    warning.kind == ConfigWarningKind::DuplicateKey ? "given twice" : "is unknown"),
                shown);
        }
    }
    if (repos->size() != 1) {
        return make_error(
            ErrorCode::BadInput,
            fmt::format("holds {} repositories; a source record holds the one it is beside",
                        repos->size()),
            shown);
    }
    if (repos->front().id != id) {
        read.ignored = fmt::format("{} records repository '{}', not '{}': ignored", shown,
                                   repos->front().id, id);
        return read;
    }
    RecordedSource& source = read.source.emplace();
    source.config = std::move(repos->front());
    source.record = shown;
    source.selection = comment(*text, kSelectionComment).value_or("");
    if (auto left_out = comment(*text, kLeftOutComment)) {
        for (std::string_view rest = *left_out; !rest.empty();) {
            const std::size_t comma = std::min(rest.find(", "), rest.size());
            source.left_out.emplace_back(rest.substr(0, comma));
            rest.remove_prefix(std::min(comma + 2, rest.size()));
        }
    }
    return read;
}

std::string no_recorded_source(std::string_view record) {
    return fmt::format(
        "nor does its mirror record one (a sync by this version of rpmirror records it in {})",
        record);
}

Result<void> add_recorded_sources(std::vector<RepoConfig>& repos,
                                  std::span<const std::string> patterns, const SourceLookup& where,
                                  std::vector<std::string>& notes) {
    std::vector<RepoConfig> found;
    std::vector<std::string> said;
    std::optional<MirrorRoot> root;
    for (const std::string& pattern : patterns) {
        const bool configured = std::any_of(
            repos.begin(), repos.end(), [&](const RepoConfig& repo) { return repo.id == pattern; });
        if (configured || !is_valid_repo_id(pattern) ||
            std::any_of(found.begin(), found.end(),
                        [&](const RepoConfig& repo) { return repo.id == pattern; })) {
            continue;  // a glob ('*', '?', '[' are no id's), configured, or read already
        }
        if (!root) {
            auto opened = MirrorRoot::open(where.download_path, {where.state_dir, where.s3});
            if (!opened) {
                return tl::unexpected(std::move(opened.error()));
            }
            root.emplace(std::move(*opened));
        }
        const std::unique_ptr<MirrorStore> mirror =
            root->repository(where.norepopath ? std::string() : pattern);
        auto read = read_source_record(*mirror, pattern);
        if (!read) {
            return tl::unexpected(std::move(read.error()));
        }
        if (!read->ignored.empty()) {
            said.push_back(std::move(read->ignored));
        }
        if (!read->source) {
            continue;
        }
        const RecordedSource& source = *read->source;
        std::string note = fmt::format(
            "repository '{}' from its mirror's record {} (no .repo file or --repofrompath "
            "defines it)",
            pattern, source.record);
        if (!source.selection.empty()) {
            note += fmt::format("; its last sync selected {}", source.selection);
        }
        if (!source.left_out.empty()) {
            note += "; the record holds no ";
            for (std::size_t i = 0; i < source.left_out.size(); ++i) {
                note += (i == 0 ? "" : ", ") + source.left_out[i];
            }
            note += " (secrets are not recorded: give the repository with -c or --reposdir)";
        }
        said.push_back(std::move(note));
        found.push_back(source.config);
    }
    for (RepoConfig& repo : found) {
        repos.push_back(std::move(repo));
    }
    notes.insert(notes.end(), std::make_move_iterator(said.begin()),
                 std::make_move_iterator(said.end()));
    return {};
}

}  // namespace rpmirror::store
