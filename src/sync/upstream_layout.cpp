// RepoSync with --upstream-layout: the repository at upstream's path beneath `-p`/<repoid>/, its
// packages anywhere beneath that root (Amazon Linux's shared blobstore), and --mirror-url's
// mirror list.
#include <fmt/core.h>

#include "metadata/metadata.hpp"
#include "sync/layout_root.hpp"
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
    policy.file_name_only = options_.packages_by_file_name;
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
    // Through the sync's own store, whose record (a bucket's state) keeps it with the metadata;
    // the same content is not written again.
    if (auto written = store_->write_document(key, contents); !written) {
        return tl::unexpected(std::move(written.error()));
    }
    return key;
}

namespace {

// The blobs a sync stored are recorded as they are now: each asked for, or, beyond this many,
// their directory listed once.
constexpr std::size_t kStatEachUpTo = 4;

// The deepest directory holding every one of `keys` ("" = the root).
std::string common_directory(const std::vector<std::string>& keys) {
    std::string common = store::parent_of(keys.front());
    for (const std::string& key : keys) {
        while (!common.empty() && !key.starts_with(common + "/")) {
            common = store::parent_of(common);
        }
    }
    return common;
}

}  // namespace

Result<void> RepoSync::finish_upstream_layout(const std::vector<std::filesystem::path>& placed) {
    if (!mirror_list_published_) {
        if (auto listed = publish_mirror_list(); !listed) {
            return tl::unexpected(std::move(listed.error()));
        }
    }
    if (layout_root_.empty()) {
        return {};
    }
    // This release is rpmirror's, and current: what --keep-releases ranks by.
    auto layout = LayoutRoot::open(layout_root_, state_directory(options_), options_.s3);
    if (!layout) {
        return tl::unexpected(std::move(layout.error()));
    }
    if (auto marked = layout->clock().mark(layout_key()); !marked) {
        report_.warnings.push_back(marked.error().to_string());
    }
    return collect_blobs(placed);
}

std::string RepoSync::layout_key() const {
    const std::string mine = repo_dir_.lexically_relative(layout_root_).generic_string();
    return mine == "." ? std::string() : mine;
}

Result<void> RepoSync::collect_blobs(const std::vector<std::filesystem::path>& placed,
                                     bool may_delete) {
    if (layout_root_.empty()) {
        return {};
    }
    const bool collect = may_delete && options_.delete_unlisted;
    // The blobs this sync stored, by key below the root: its files beyond the repository's
    // directory (those inside it are its own --delete's).
    const std::string mine = layout_key();
    std::vector<std::string> stored;
    for (const std::filesystem::path& relative : placed) {
        if (relative.empty() || relative.begin()->native() != "..") {
            continue;
        }
        std::string key =
            (std::filesystem::path(mine) / relative).lexically_normal().generic_string();
        if (store::check_key(key)) {
            stored.push_back(std::move(key));
        }
    }
    if (!collect && stored.empty()) {
        return {};  // nothing to record: the catalogue is not read
    }
    auto layout = LayoutRoot::open(layout_root_, state_directory(options_), options_.s3);
    if (!layout) {
        return tl::unexpected(std::move(layout.error()));
    }
    store::ObjectStore& objects = layout->objects();
    auto catalogue = layout->catalogue();
    if (!catalogue) {
        return tl::unexpected(std::move(catalogue.error()));
    }
    bool changed = false;
    const auto record = [&](const std::string& key, const store::ObjectInfo& now) {
        catalogue->files()[key] = StoredEntry{now.size, now.version, ChecksumType::Sha256, {}};
        changed = true;
    };
    if (stored.size() > kStatEachUpTo) {
        // Many: their directory listed once (a bucket's pages of a thousand, not a request each).
        auto listed = objects.list(common_directory(stored));
        if (!listed) {
            return tl::unexpected(std::move(listed.error()));
        }
        for (const std::string& key : stored) {
            if (const auto found = listed->find(key); found != listed->end()) {
                record(key, found->second);
            }
        }
    } else {
        for (const std::string& key : stored) {
            if (auto now = objects.stat(key); now && *now) {
                record(key, **now);
            }
        }
    }
    if (collect) {
        std::string url = options_.mirror_url;
        if (!url.empty() && !url.ends_with('/')) {
            url += '/';
        }
        const std::size_t catalogued = catalogue->files().size();
        auto removed = collect_layout(objects, *catalogue, layout->clock(),
                                      {mine, options_.keep_releases, url}, layout->listed_by(),
                                      layout->release_locks(), report_.warnings);
        if (!removed) {
            return tl::unexpected(std::move(removed.error()));
        }
        changed = changed || catalogue->files().size() != catalogued;
        // Named relative to the repository's directory, as its own files are.
        const auto shown = [&](const std::string& key) {
            return mine.empty() ? std::filesystem::path(key)
                                : std::filesystem::path(key).lexically_relative(mine);
        };
        for (const std::string& tree : removed->releases) {
            report_.deleted.push_back(shown(tree) / "");
        }
        for (const std::string& key : removed->files) {
            report_.deleted.push_back(shown(key));
        }
    }
    if (changed) {
        if (auto written = catalogue->save(nullptr); !written) {
            report_.warnings.push_back(written.error().to_string());
        }
    }
    return {};
}

}  // namespace rpmirror
