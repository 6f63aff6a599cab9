// Two repository revisions compared by name.arch and EVR, and their advisories by id.
#include "diff/diff.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "download/download.hpp"
#include "fs/durable.hpp"
#include "index/updateinfo.hpp"
#include "metadata/metadata.hpp"
#include "metadata/treeinfo.hpp"
#include "util/xml.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kRepomdPath = "repodata/repomd.xml";

// "<location>/<href>", how messages name a file of the repository at `location`.
std::string name_in(std::string_view location, std::string_view href) {
    std::string name(location);
    if (!name.empty() && !name.ends_with('/')) {
        name += '/';
    }
    return name + std::string(href);
}

// Feeds the decompressed content of `path` to `sink`; the decompressor's errors name `name`.
Result<void> stream_file(const std::filesystem::path& path, std::string_view name,
                         const DecompressOptions& options,
                         const std::function<Result<void>(std::span<const char>)>& sink) {
    auto streamed = decompress_file(path, options, sink);
    if (!streamed) {
        Error error = std::move(streamed.error());
        if (error.subject == path.string()) {
            error.subject = std::string(name);
        }
        return tl::unexpected(std::move(error));
    }
    return {};
}

// The metadata file `record` lists, checked against its size and checksum; errors name it
// "<location>/<href>".
Result<std::filesystem::path> verified_record(const std::filesystem::path& root,
                                              std::string_view location,
                                              const RepomdRecord& record) {
    const std::string name = name_in(location, record.location_href);
    auto relative = safe_relative_path(record.location_href, record.type + " metadata");
    if (!relative) {
        return tl::unexpected(std::move(relative.error()));
    }
    const std::filesystem::path path = root / *relative;
    if (auto verified = verify_metadata_file(path, record); !verified) {
        Error error = std::move(verified.error());
        error.subject = name;
        return tl::unexpected(std::move(error));
    }
    return path;
}

std::string evr_text(const Evr& evr) {
    return evr.epoch == 0 ? fmt::format("{}-{}", evr.version, evr.release)
                          : fmt::format("{}:{}-{}", evr.epoch, evr.version, evr.release);
}

// One EVR of a name.arch on one side, with the checksum of its first entry.
struct Version {
    Evr evr;
    std::string checksum;  // "<type>:<hex>"
};

using NameArch = std::pair<std::string_view, std::string_view>;

// name.arch -> its distinct EVRs, newest first. Views point into `index`.
std::map<NameArch, std::vector<Version>> versions_of(const PackageIndex& index) {
    std::map<NameArch, std::vector<Version>> versions;
    for (std::size_t position = 0; position < index.size(); ++position) {
        const PackageView package = index[position];
        versions[{package.name, package.arch}].push_back(
            {package.evr(), fmt::format("{}:{}", checksum_type_name(package.checksum_type),
                                        package.checksum_hex())});
    }
    for (auto& [name_arch, list] : versions) {
        std::stable_sort(list.begin(), list.end(), [](const Version& left, const Version& right) {
            return compare_evr(left.evr, right.evr) > 0;
        });
        list.erase(std::unique(list.begin(), list.end(),
                               [](const Version& left, const Version& right) {
                                   return compare_evr(left.evr, right.evr) == 0;
                               }),
                   list.end());
    }
    return versions;
}

PackageChange change_of(const NameArch& name_arch, const Version* old_version,
                        const Version* new_version) {
    PackageChange change;
    change.name = name_arch.first;
    change.arch = name_arch.second;
    if (old_version != nullptr) {
        change.old_evr = evr_text(old_version->evr);
    }
    if (new_version != nullptr) {
        change.new_evr = evr_text(new_version->evr);
    }
    return change;
}

// Compares one name.arch's EVRs (each newest first) into `diff`, each list oldest first.
void diff_versions(const NameArch& name_arch, const std::vector<Version>& old_versions,
                   const std::vector<Version>& new_versions, RepoDiff& diff) {
    std::vector<const Version*> old_only;
    std::vector<const Version*> new_only;
    std::vector<PackageChange> changed;
    for (const Version& old_version : old_versions) {
        const auto same =
            std::find_if(new_versions.begin(), new_versions.end(), [&](const Version& candidate) {
                return compare_evr(candidate.evr, old_version.evr) == 0;
            });
        if (same == new_versions.end()) {
            old_only.push_back(&old_version);
        } else if (same->checksum != old_version.checksum) {
            PackageChange change = change_of(name_arch, &old_version, &*same);
            change.old_checksum = old_version.checksum;
            change.new_checksum = same->checksum;
            changed.push_back(std::move(change));
        }
    }
    for (const Version& new_version : new_versions) {
        if (std::none_of(old_versions.begin(), old_versions.end(), [&](const Version& candidate) {
                return compare_evr(candidate.evr, new_version.evr) == 0;
            })) {
            new_only.push_back(&new_version);
        }
    }
    const std::size_t pairs = std::min(old_only.size(), new_only.size());
    std::vector<PackageChange> upgraded;
    std::vector<PackageChange> downgraded;
    for (std::size_t pair = 0; pair < pairs; ++pair) {
        PackageChange change = change_of(name_arch, old_only[pair], new_only[pair]);
        (compare_evr(new_only[pair]->evr, old_only[pair]->evr) > 0 ? upgraded : downgraded)
            .push_back(std::move(change));
    }
    // Newest first so far: appended oldest first, so every list stays in rpm order.
    const auto append_reversed = [](std::vector<PackageChange>& into,
                                    std::vector<PackageChange>&& from) {
        into.insert(into.end(), std::make_move_iterator(from.rbegin()),
                    std::make_move_iterator(from.rend()));
    };
    append_reversed(diff.upgraded, std::move(upgraded));
    append_reversed(diff.downgraded, std::move(downgraded));
    append_reversed(diff.changed, std::move(changed));
    for (std::size_t rest = old_only.size(); rest-- > pairs;) {
        diff.removed.push_back(change_of(name_arch, old_only[rest], nullptr));
    }
    for (std::size_t rest = new_only.size(); rest-- > pairs;) {
        diff.added.push_back(change_of(name_arch, nullptr, new_only[rest]));
    }
}

std::map<std::string, const Advisory*> advisories_by_id(const RepoContents& contents) {
    std::map<std::string, const Advisory*> by_id;
    if (contents.advisories) {
        for (const Advisory& advisory : *contents.advisories) {
            by_id.emplace(advisory.id, &advisory);
        }
    }
    return by_id;
}

std::string short_checksum(std::string_view checksum) {
    const std::size_t colon = checksum.find(':');
    constexpr std::size_t kShownHex = 12;
    if (colon == std::string_view::npos || checksum.size() <= colon + 1 + kShownHex) {
        return std::string(checksum);
    }
    return std::string(checksum.substr(0, colon + 1 + kShownHex)) + "…";
}

}  // namespace

Result<RepoContents> read_repo_contents(const std::filesystem::path& root,
                                        std::string_view location) {
    RepoContents contents;
    contents.location = location.empty() ? root.string() : std::string(location);
    const std::string repomd_name = name_in(contents.location, kRepomdPath);
    std::string repomd_text;
    DecompressOptions repomd_options;
    repomd_options.ceiling = kMaxDocumentBytes;
    auto read = stream_file(root / kRepomdPath, repomd_name, repomd_options,
                            [&repomd_text](std::span<const char> chunk) -> Result<void> {
                                repomd_text.append(chunk.data(), chunk.size());
                                return {};
                            });
    if (!read) {
        if (read.error().code == ErrorCode::NotFound) {
            return make_error(ErrorCode::NotFound, "no repository here (no repodata/repomd.xml)",
                              contents.location);
        }
        return tl::unexpected(std::move(read.error()));
    }
    auto repomd = parse_repomd(repomd_text, repomd_name);
    if (!repomd) {
        return tl::unexpected(std::move(repomd.error()));
    }
    const RepomdRecord* primary = repomd->find("primary");
    if (primary == nullptr) {
        return make_error(ErrorCode::BadInput, "lists no primary metadata", repomd_name);
    }
    auto primary_path = verified_record(root, contents.location, *primary);
    if (!primary_path) {
        return tl::unexpected(std::move(primary_path.error()));
    }
    PrimaryParseOptions parse_options;
    parse_options.decompress.expected_size = primary->open_size;
    parse_options.display_name = name_in(contents.location, primary->location_href);
    auto packages = parse_primary_file(*primary_path, parse_options);
    if (!packages) {
        return tl::unexpected(std::move(packages.error()));
    }
    contents.packages = std::move(*packages);
    if (const RepomdRecord* updateinfo = repomd->find("updateinfo"); updateinfo != nullptr) {
        auto updateinfo_path = verified_record(root, contents.location, *updateinfo);
        if (!updateinfo_path) {
            return tl::unexpected(std::move(updateinfo_path.error()));
        }
        auto advisories = parse_updateinfo_file(
            *updateinfo_path, name_in(contents.location, updateinfo->location_href));
        if (!advisories) {
            return tl::unexpected(std::move(advisories.error()));
        }
        contents.advisories = std::move(*advisories);
    }
    return contents;
}

bool RepoDiff::empty() const {
    return added.empty() && removed.empty() && upgraded.empty() && downgraded.empty() &&
           changed.empty() && advisories_added.empty() && advisories_removed.empty();
}

RepoDiff diff_repositories(const RepoContents& old_side, const RepoContents& new_side) {
    RepoDiff diff;
    diff.old_location = old_side.location;
    diff.new_location = new_side.location;
    const auto old_versions = versions_of(old_side.packages);
    const auto new_versions = versions_of(new_side.packages);
    const std::vector<Version> none;
    auto old_cursor = old_versions.begin();
    auto new_cursor = new_versions.begin();
    // Both maps are sorted by name.arch: walk them side by side.
    while (old_cursor != old_versions.end() || new_cursor != new_versions.end()) {
        if (new_cursor == new_versions.end() ||
            (old_cursor != old_versions.end() && old_cursor->first < new_cursor->first)) {
            diff_versions(old_cursor->first, old_cursor->second, none, diff);
            ++old_cursor;
        } else if (old_cursor == old_versions.end() || new_cursor->first < old_cursor->first) {
            diff_versions(new_cursor->first, none, new_cursor->second, diff);
            ++new_cursor;
        } else {
            diff_versions(old_cursor->first, old_cursor->second, new_cursor->second, diff);
            ++old_cursor;
            ++new_cursor;
        }
    }

    diff.advisories_compared = old_side.advisories.has_value() || new_side.advisories.has_value();
    const auto old_advisories = advisories_by_id(old_side);
    const auto new_advisories = advisories_by_id(new_side);
    for (const auto& [id, advisory] : new_advisories) {
        if (!old_advisories.contains(id)) {
            diff.advisories_added.push_back(*advisory);
        }
    }
    for (const auto& [id, advisory] : old_advisories) {
        if (!new_advisories.contains(id)) {
            diff.advisories_removed.push_back(*advisory);
        }
    }
    return diff;
}

std::vector<std::string> format_diff_lines(const RepoDiff& diff) {
    std::vector<std::string> lines;
    const auto add = [&lines](std::string_view kind, const std::vector<PackageChange>& changes) {
        for (const PackageChange& change : changes) {
            const std::string name_arch = change.name + "." + change.arch;
            if (kind == "added") {
                lines.push_back(fmt::format("{:<11}{}  {}", kind, name_arch, change.new_evr));
            } else if (kind == "removed") {
                lines.push_back(fmt::format("{:<11}{}  {}", kind, name_arch, change.old_evr));
            } else if (kind == "changed") {
                lines.push_back(fmt::format("{:<11}{}  {}  ({} -> {})", kind, name_arch,
                                            change.new_evr, short_checksum(change.old_checksum),
                                            short_checksum(change.new_checksum)));
            } else {
                lines.push_back(fmt::format("{:<11}{}  {} -> {}", kind, name_arch, change.old_evr,
                                            change.new_evr));
            }
        }
    };
    add("added", diff.added);
    add("removed", diff.removed);
    add("upgraded", diff.upgraded);
    add("downgraded", diff.downgraded);
    add("changed", diff.changed);
    const auto add_advisories = [&lines](std::string_view kind,
                                         const std::vector<Advisory>& advisories) {
        for (const Advisory& advisory : advisories) {
            std::string line = fmt::format("advisory {:<9}{}", kind, advisory.id);
            if (!advisory.type.empty()) {
                line += fmt::format("  ({})", advisory.type);
            }
            if (!advisory.title.empty()) {
                line += "  " + advisory.title;
            }
            lines.push_back(std::move(line));
        }
    };
    add_advisories("added", diff.advisories_added);
    add_advisories("removed", diff.advisories_removed);
    return lines;
}

std::string format_diff_summary(const RepoDiff& diff) {
    std::string summary = fmt::format(
        "{} added, {} removed, {} upgraded, {} downgraded, {} changed", diff.added.size(),
        diff.removed.size(), diff.upgraded.size(), diff.downgraded.size(), diff.changed.size());
    if (diff.advisories_compared) {
        summary += fmt::format("; advisories: {} added, {} removed", diff.advisories_added.size(),
                               diff.advisories_removed.size());
    }
    return summary;
}

namespace {

nlohmann::json diff_json(const RepoDiff& diff) {
    const auto packages = [](const std::vector<PackageChange>& changes, bool has_old, bool has_new,
                             bool has_checksums) {
        nlohmann::json list = nlohmann::json::array();
        for (const PackageChange& change : changes) {
            nlohmann::json entry = {{"name", change.name}, {"arch", change.arch}};
            if (has_old && has_new && !has_checksums) {
                entry["old_evr"] = change.old_evr;
                entry["new_evr"] = change.new_evr;
            } else {
                entry["evr"] = has_new ? change.new_evr : change.old_evr;
            }
            if (has_checksums) {
                entry["old_checksum"] = change.old_checksum;
                entry["new_checksum"] = change.new_checksum;
            }
            list.push_back(std::move(entry));
        }
        return list;
    };
    const auto advisories = [](const std::vector<Advisory>& list) {
        nlohmann::json entries = nlohmann::json::array();
        for (const Advisory& advisory : list) {
            entries.push_back(
                {{"id", advisory.id}, {"type", advisory.type}, {"title", advisory.title}});
        }
        return entries;
    };
    nlohmann::json document = {
        {"version", 1},
        {"old", diff.old_location},
        {"new", diff.new_location},
        {"packages",
         {{"added", packages(diff.added, false, true, false)},
          {"removed", packages(diff.removed, true, false, false)},
          {"upgraded", packages(diff.upgraded, true, true, false)},
          {"downgraded", packages(diff.downgraded, true, true, false)},
          {"changed", packages(diff.changed, true, true, true)}}},
        {"advisories", diff.advisories_compared
                           ? nlohmann::json{{"added", advisories(diff.advisories_added)},
                                            {"removed", advisories(diff.advisories_removed)}}
                           : nlohmann::json(nullptr)},
        {"summary",
         {{"added", diff.added.size()},
          {"removed", diff.removed.size()},
          {"upgraded", diff.upgraded.size()},
          {"downgraded", diff.downgraded.size()},
          {"changed", diff.changed.size()},
          {"advisories_added", diff.advisories_added.size()},
          {"advisories_removed", diff.advisories_removed.size()}}},
        {"empty", diff.empty()}};
    return document;
}

// "<path>: " for a line of the tree's repository at `path` ("/: " for its root).
std::string repository_label(const std::string& path) {
    return (path.empty() ? std::string("/") : path) + ": ";
}

}  // namespace

std::string format_diff_json(const RepoDiff& diff) {
    return diff_json(diff).dump(2) + "\n";
}

Result<TreeContents> read_tree_contents(std::string_view treeinfo, std::string_view location,
                                        const TreeRepositoryReader& read_repository) {
    auto tree = parse_treeinfo(treeinfo, name_in(location, kTreeinfoName));
    if (!tree) {
        return tl::unexpected(std::move(tree.error()));
    }
    TreeContents contents;
    contents.location = std::string(location);
    for (const TreeInfo::File& file : tree->files) {
        contents.images[file.path] = std::string(checksum_type_name(file.type)) + ":" + file.digest;
    }
    for (const std::string& path : tree->repositories) {
        auto repository = read_repository(path);
        if (!repository) {
            return tl::unexpected(std::move(repository.error()));
        }
        contents.repositories.emplace(path, std::move(*repository));
    }
    return contents;
}

bool TreeDiff::empty() const {
    return images_added.empty() && images_removed.empty() && images_changed.empty() &&
           repositories_added.empty() && repositories_removed.empty() &&
           std::all_of(repositories.begin(), repositories.end(),
                       [](const auto& repository) { return repository.second.empty(); });
}

TreeDiff diff_trees(const TreeContents& old_side, const TreeContents& new_side) {
    TreeDiff diff;
    diff.old_location = old_side.location;
    diff.new_location = new_side.location;
    for (const auto& [path, checksum] : new_side.images) {
        const auto old_image = old_side.images.find(path);
        if (old_image == old_side.images.end()) {
            diff.images_added.push_back({path, "", checksum});
        } else if (old_image->second != checksum) {
            diff.images_changed.push_back({path, old_image->second, checksum});
        }
    }
    for (const auto& [path, checksum] : old_side.images) {
        if (!new_side.images.contains(path)) {
            diff.images_removed.push_back({path, checksum, ""});
        }
    }
    for (const auto& [path, contents] : new_side.repositories) {
        const auto old_repository = old_side.repositories.find(path);
        if (old_repository == old_side.repositories.end()) {
            diff.repositories_added.push_back(path);
        } else {
            diff.repositories.emplace_back(path,
                                           diff_repositories(old_repository->second, contents));
        }
    }
    for (const auto& [path, contents] : old_side.repositories) {
        if (!new_side.repositories.contains(path)) {
            diff.repositories_removed.push_back(path);
        }
    }
    return diff;
}

std::vector<std::string> format_tree_diff_lines(const TreeDiff& diff) {
    std::vector<std::string> lines;
    for (const auto& [path, repository] : diff.repositories) {
        for (const std::string& line : format_diff_lines(repository)) {
            lines.push_back(repository_label(path) + line);
        }
    }
    for (const ImageChange& image : diff.images_added) {
        lines.push_back(fmt::format("image added      {}", image.path));
    }
    for (const ImageChange& image : diff.images_removed) {
        lines.push_back(fmt::format("image removed    {}", image.path));
    }
    for (const ImageChange& image : diff.images_changed) {
        lines.push_back(fmt::format("image changed    {}  ({} -> {})", image.path,
                                    short_checksum(image.old_checksum),
                                    short_checksum(image.new_checksum)));
    }
    for (const std::string& path : diff.repositories_added) {
        lines.push_back("repository added    " + (path.empty() ? std::string("/") : path));
    }
    for (const std::string& path : diff.repositories_removed) {
        lines.push_back("repository removed  " + (path.empty() ? std::string("/") : path));
    }
    return lines;
}

std::vector<std::string> format_tree_diff_summary(const TreeDiff& diff) {
    std::vector<std::string> lines;
    for (const auto& [path, repository] : diff.repositories) {
        lines.push_back(repository_label(path) + format_diff_summary(repository));
    }
    lines.push_back(fmt::format(
        "images: {} added, {} removed, {} changed; repositories: {} added, "
        "{} removed",
        diff.images_added.size(), diff.images_removed.size(), diff.images_changed.size(),
        diff.repositories_added.size(), diff.repositories_removed.size()));
    return lines;
}

std::string format_tree_diff_json(const TreeDiff& diff) {
    const auto images = [](const std::vector<ImageChange>& changes, bool changed) {
        nlohmann::json list = nlohmann::json::array();
        for (const ImageChange& change : changes) {
            if (changed) {
                list.push_back({{"path", change.path},
                                {"old_checksum", change.old_checksum},
                                {"new_checksum", change.new_checksum}});
            } else {
                list.push_back({{"path", change.path},
                                {"checksum", change.new_checksum.empty() ? change.old_checksum
                                                                         : change.new_checksum}});
            }
        }
        return list;
    };
    nlohmann::json repositories = nlohmann::json::object();
    for (const auto& [path, repository] : diff.repositories) {
        repositories[path] = diff_json(repository);
    }
    const nlohmann::json document = {
        {"version", 1},
        {"old", diff.old_location},
        {"new", diff.new_location},
        {"tree",
         {{"images",
           {{"added", images(diff.images_added, false)},
            {"removed", images(diff.images_removed, false)},
            {"changed", images(diff.images_changed, true)}}},
          {"repositories",
           {{"added", diff.repositories_added}, {"removed", diff.repositories_removed}}}}},
        {"repositories", std::move(repositories)},
        {"empty", diff.empty()}};
    return document.dump(2) + "\n";
}

}  // namespace rpmirror
