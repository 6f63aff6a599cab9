// RepoSync with --upstream-layout: the repository at upstream's path beneath `-p`/<repoid>/, its
// packages anywhere beneath that root (Amazon Linux's shared blobstore), and --mirror-url's
// mirror list.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <set>
#include <system_error>

#include <unistd.h>

#include <fmt/core.h>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "fs/state.hpp"
#include "fs/tree.hpp"
#include "fs/walk.hpp"
#include "rpmirror/diff/diff.hpp"
#include "sync/catalogue.hpp"
#include "sync/repo_sync.hpp"

namespace rpmirror {

namespace {

// The path of `url` after its scheme and host, without query, fragment or the slashes around it
// ("https://h/al2023/core/guids/G/x86_64/" gives "al2023/core/guids/G/x86_64"); "" for the root.
std::string url_path(std::string_view url) {
    const std::size_t scheme = url.find("://");
    std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
    const std::size_t slash = rest.find('/');
    rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    rest = rest.substr(0, rest.find_first_of("?#"));
    while (!rest.empty() && rest.front() == '/') {
        rest.remove_prefix(1);
    }
    while (!rest.empty() && rest.back() == '/') {
        rest.remove_suffix(1);
    }
    return std::string(rest);
}

// `url_path(url)` as a relative directory beneath the layout root: Error{Unsafe} naming `url`
// iff it climbs, has empty segments or control bytes (safe_relative_path's rules).
Result<std::filesystem::path> layout_path(std::string_view url, std::string_view what) {
    const std::string path = url_path(url);
    if (path.empty()) {
        return std::filesystem::path{};
    }
    auto relative = safe_relative_path(path, url);
    if (!relative || relative->begin()->native() == "..") {
        return make_error(ErrorCode::Unsafe,
                          fmt::format("--upstream-layout: the path of {} cannot be a directory of "
                                      "the mirror{}",
                                      what, relative ? "" : ": " + relative.error().message),
                          std::string(url));
    }
    return relative;
}

}  // namespace

Result<void> RepoSync::place_in_upstream_layout(std::string_view base_url) {
    auto relative = layout_path(base_url, "the repository's URL");
    if (!relative) {
        return tl::unexpected(std::move(relative.error()));
    }
    layout_root_ = repo_dir_;
    // A repository at its host's root is the layout root itself (not "root/": another spelling).
    repo_dir_ = relative->empty() ? layout_root_ : layout_root_ / *relative;
    metadata_dir_ = repo_dir_;
    report_.repo_dir = repo_dir_;
    return {};
}

PathPolicy RepoSync::path_policy(const std::filesystem::path& root,
                                 const std::optional<std::filesystem::path>& outside) const {
    PathPolicy policy;
    policy.safe_write_path = outside;
    // Also makes an href that climbs out and back in a file of the repository like any other.
    policy.repo_root = std::filesystem::absolute(root);
    policy.flatten = options_.flatten_hrefs;
    return policy;
}

Result<std::optional<std::string>> RepoSync::publish_mirror_list() {
    if (layout_root_.empty() || options_.mirror_url.empty()) {
        return std::nullopt;
    }
    if (!repo_.mirrorlist) {
        report_.warnings.push_back(
            "--mirror-url: the repository has no mirrorlist, so there is none to rewrite (clients "
            "use baseurl=" +
            options_.mirror_url + ")");
        return std::nullopt;
    }
    auto list_path = layout_path(*repo_.mirrorlist, "the mirrorlist URL");
    if (!list_path || list_path->empty()) {
        report_.warnings.push_back(list_path
                                       ? "--mirror-url: the mirrorlist URL '" + *repo_.mirrorlist +
                                             "' has no path to write it at"
                                       : list_path.error().to_string());
        return std::nullopt;
    }
    std::string url = options_.mirror_url;
    if (!url.ends_with('/')) {
        url += '/';
    }
    const std::string repo_path = repo_dir_.lexically_relative(layout_root_).generic_string();
    if (repo_path != ".") {
        url += repo_path + "/";
    }
    const std::string contents = url + "\n";
    // Its key relative to the repository, as a blob's climbs out of it.
    std::string key =
        list_path->lexically_relative(repo_dir_.lexically_relative(layout_root_)).generic_string();
    if (s3_) {
        if (auto written = store_->write_document(key, contents); !written) {
            return tl::unexpected(std::move(written.error()));
        }
        return key;
    }
    const std::filesystem::path file = layout_root_ / *list_path;
    if (auto current = fs::read_file(file); current && *current == contents) {
        return key;
    }
    const UniqueFd root = fs::open_directory(layout_root_, true);
    if (!root) {
        return make_errno_error("cannot open directory", layout_root_.string(), errno);
    }
    if (auto made =
            fs::make_directories_beneath(root.get(), list_path->parent_path(), layout_root_);
        !made) {
        return tl::unexpected(std::move(made.error()));
    }
    if (auto replaced = fs::replace_file(file, contents); !replaced) {
        return tl::unexpected(std::move(replaced.error()));
    }
    return key;
}

namespace {

// The catalogue of the blobs rpmirror wrote beneath a layout root (sync/catalogue.hpp).
constexpr std::string_view kCatalogueName = ".upstream-layout-catalogue";

// A release being removed (--keep-releases) is first renamed to `<layout root>/<this><N>`, so
// that it stops being a repository at once; one a crash left there is removed by the next run.
constexpr std::string_view kRemovingPrefix = ".rpmirror-removing-release-";

// The record that rpmirror synced the release `tree`, beside its state entry: the time of its
// last successful sync, in nanoseconds since the epoch.
std::filesystem::path release_marker(const std::filesystem::path& state_dir,
                                     const std::filesystem::path& tree) {
    return fs::state_entry(state_dir, tree).string() + ".release";
}

// Removes the directories of `relative` (beneath `root`) that are empty, innermost first, up to
// `root`.
void remove_empty_parents(const std::filesystem::path& root,
                          const std::filesystem::path& relative) {
    for (std::filesystem::path parent = relative.parent_path(); !parent.empty();
         parent = parent.parent_path()) {
        if (!fs::remove_empty_directory_beneath(root, parent)) {
            break;
        }
    }
}

// When rpmirror last synced `tree` (release_marker), nullopt iff it has no readable record.
std::optional<std::int64_t> last_synced(const std::filesystem::path& state_dir,
                                        const std::filesystem::path& tree) {
    auto text = fs::read_file(release_marker(state_dir, tree));
    if (!text) {
        return std::nullopt;
    }
    std::int64_t when = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), when);
    if (error != std::errc() || end == text->data()) {
        return std::nullopt;
    }
    return when;
}

// The directories beneath `root` (not following symlinks) that hold repodata/repomd.xml: the
// repositories of an upstream layout. Not descended into; nor are repodata/ and staging
// directories. Error{Io} iff a directory cannot be read.
Result<std::vector<std::filesystem::path>> find_trees(const std::filesystem::path& root) {
    std::vector<std::filesystem::path> trees;
    std::error_code error;
    std::filesystem::recursive_directory_iterator it(root, error);
    for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
        const auto status = it->symlink_status(error);
        if (error || !std::filesystem::is_directory(status)) {
            error.clear();
            continue;
        }
        const std::string name = it->path().filename().string();
        if (fs::is_metadata_dir_name(name) || name.starts_with(kRemovingPrefix)) {
            it.disable_recursion_pending();
            continue;
        }
        const auto repomd =
            std::filesystem::symlink_status(it->path() / "repodata" / "repomd.xml", error);
        if (!error && std::filesystem::is_regular_file(repomd)) {
            trees.push_back(it->path());
            it.disable_recursion_pending();
        }
        error.clear();
    }
    if (error) {
        return make_error(ErrorCode::Io, "cannot walk: " + error.message(), root.string());
    }
    return trees;
}

// Adds to `referenced` every package `tree` lists (its live metadata, read and verified as `diff`
// reads a repository: read_repo_contents), as paths relative to `root` lexically normal. Its
// errors, or Error{Unsafe} for an href outside `root`.
Result<void> add_references(const std::filesystem::path& root, const std::filesystem::path& tree,
                            std::set<std::string>& referenced) {
    auto contents = read_repo_contents(tree);
    if (!contents) {
        return tl::unexpected(std::move(contents.error()));
    }
    PathPolicy policy;
    policy.safe_write_path = std::filesystem::absolute(root);
    policy.repo_root = std::filesystem::absolute(tree);
    const std::filesystem::path tree_relative = tree.lexically_relative(root);
    for (std::size_t position = 0; position < contents->packages.size(); ++position) {
        const PackageView package = contents->packages[position];
        auto relative = safe_relative_path(package.location_href, package.nevra(), policy);
        if (!relative) {
            return tl::unexpected(std::move(relative.error()));
        }
        referenced.insert((tree_relative / *relative).lexically_normal().generic_string());
    }
    return {};
}

}  // namespace

Result<void> RepoSync::finish_upstream_layout(const std::vector<std::filesystem::path>& placed) {
    if (!mirror_list_published_) {
        if (auto listed = publish_mirror_list(); !listed) {
            return tl::unexpected(std::move(listed.error()));
        }
    }
    if (!layout_root_.empty() && s3_) {
        if (auto marked = s3_->mark_release(); !marked) {
            report_.warnings.push_back(marked.error().to_string());
        }
    } else if (!layout_root_.empty()) {
        // This release is rpmirror's, and current: what --keep-releases ranks by.
        const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::system_clock::now().time_since_epoch());
        if (auto marked = fs::replace_file(release_marker(state_directory(options_), repo_dir_),
                                           std::to_string(now.count()) + "\n");
            !marked) {
            report_.warnings.push_back(marked.error().to_string());
        }
    }
    return collect_blobs(placed);
}

void RepoSync::prune_releases(std::vector<std::filesystem::path>& trees) {
    const std::filesystem::path state_dir = state_directory(options_);
    // What an earlier run was killed while removing.
    std::error_code error;
    for (std::filesystem::directory_iterator entry(layout_root_, error), end;
         !error && entry != end; entry.increment(error)) {
        if (entry->path().filename().string().starts_with(kRemovingPrefix)) {
            (void)fs::remove_tree(entry->path());
        }
    }
    const std::filesystem::path mine = repo_dir_.lexically_relative(layout_root_);
    std::vector<std::pair<std::int64_t, std::filesystem::path>> releases;
    for (const std::filesystem::path& tree : trees) {
        if (!is_release_of(mine, tree.lexically_relative(layout_root_))) {
            continue;
        }
        if (const auto synced = last_synced(state_dir, tree)) {
            releases.emplace_back(*synced, tree);
        } else {
            report_.warnings.push_back(fmt::format(
                "--keep-releases: {} was not synced by rpmirror with this state directory: left "
                "in place (and not counted)",
                tree.string()));
        }
    }
    std::sort(releases.begin(), releases.end(), std::greater<>());
    for (std::size_t position = options_.keep_releases - 1; position < releases.size();
         ++position) {
        const std::filesystem::path& tree = releases[position].second;
        if (remove_release(tree)) {
            trees.erase(std::find(trees.begin(), trees.end(), tree));
        }
    }
}

bool RepoSync::remove_release(const std::filesystem::path& tree) {
    const std::filesystem::path state_dir = state_directory(options_);
    const std::filesystem::path relative = tree.lexically_relative(layout_root_);
    const auto refuse = [&](const std::string& why) {
        report_.warnings.push_back(
            fmt::format("--keep-releases: {} not removed: {}", tree.string(), why));
        return false;
    };
    // Not while another run repairs it (verify --repair of the release takes only its lock).
    auto lock = fs::RunLock::acquire(state_dir, tree, std::nullopt, {},
                                     fs::MissingDirectory::LockOnlyIfPresent);
    if (!lock) {
        return refuse(lock.error().to_string());
    }
    // First the mirror lists naming it (no client is sent to it any more), then the repository
    // itself, renamed out of the layout at once, then its files.
    if (!options_.mirror_url.empty()) {
        std::string url = options_.mirror_url;
        if (!url.ends_with('/')) {
            url += '/';
        }
        const std::string names_it = url + relative.generic_string() + "/\n";
        std::error_code error;
        for (std::filesystem::recursive_directory_iterator it(layout_root_, error), end;
             !error && it != end; it.increment(error)) {
            if (it->path() == tree) {
                it.disable_recursion_pending();
                continue;
            }
            if (it->path().filename() != "mirror.list" ||
                !std::filesystem::is_regular_file(it->symlink_status())) {
                continue;
            }
            if (auto text = fs::read_file(it->path()); text && *text == names_it) {
                const std::filesystem::path list = it->path().lexically_relative(layout_root_);
                auto removed = fs::remove_beneath(layout_root_, list, false);
                if (!removed) {
                    return refuse(removed.error().to_string());
                }
                report_.deleted.push_back(it->path().lexically_relative(repo_dir_));
                remove_empty_parents(layout_root_, list);
            }
        }
    }
    const std::filesystem::path removing =
        layout_root_ / fmt::format("{}{}", kRemovingPrefix, ::getpid());
    if (auto renamed = fs::rename_file(tree, removing); !renamed) {
        return refuse(renamed.error().message + ": " +
                      std::generic_category().message(renamed.error().sys_errno));
    }
    if (auto removed = fs::remove_tree(removing); !removed) {
        report_.warnings.push_back(
            fmt::format("--keep-releases: {} (was {}): {}; the next run removes the rest",
                        removing.string(), tree.string(), removed.error().to_string()));
    }
    remove_empty_parents(layout_root_, relative);  // guids/<GUID>/
    (void)fs::remove_file(release_marker(state_dir, tree));
    report_.deleted.push_back(tree.lexically_relative(repo_dir_) / "");
    return true;
}

Result<void> RepoSync::collect_blobs(const std::vector<std::filesystem::path>& placed,
                                     bool may_delete) {
    if (layout_root_.empty()) {
        return {};
    }
    if (s3_) {
        auto removed =
            s3_->collect_layout_blobs(may_delete && options_.delete_unlisted, report_.warnings);
        if (!removed) {
            return tl::unexpected(std::move(removed.error()));
        }
        report_.deleted.insert(report_.deleted.end(), removed->begin(), removed->end());
        return {};
    }
    Catalogue catalogue = Catalogue::load(state_directory(options_), layout_root_, kCatalogueName);
    // The blobs this sync wrote; those inside the repository's directory are its own --delete's.
    std::vector<std::filesystem::path> blobs;
    for (const std::filesystem::path& relative : placed) {
        if (!relative.empty() && relative.begin()->native() == "..") {
            blobs.push_back(
                (repo_dir_ / relative).lexically_normal().lexically_relative(layout_root_));
        }
    }
    catalogue.record(blobs);
    if (may_delete && options_.delete_unlisted) {
        auto trees = find_trees(layout_root_);
        if (trees && options_.keep_releases > 0) {
            prune_releases(*trees);
        }
        std::set<std::string> referenced;
        std::optional<Error> doubt;
        if (!trees) {
            doubt = std::move(trees.error());
        } else {
            for (const std::filesystem::path& tree : *trees) {
                if (auto added = add_references(layout_root_, tree, referenced); !added) {
                    doubt = std::move(added.error());
                    break;
                }
            }
        }
        if (doubt) {
            report_.warnings.push_back("no blob deleted: the repositories beneath " +
                                       layout_root_.string() +
                                       " cannot all be read: " + doubt->to_string());
        } else {
            auto removed = catalogue.collect(referenced, report_.warnings);
            if (!removed) {
                return tl::unexpected(std::move(removed.error()));
            }
            for (const std::string& blob : *removed) {
                report_.deleted.push_back((layout_root_ / blob).lexically_relative(repo_dir_));
            }
        }
    }
    if (auto written = catalogue.save(); !written) {
        report_.warnings.push_back(written.error().to_string());
    }
    return {};
}

}  // namespace rpmirror
