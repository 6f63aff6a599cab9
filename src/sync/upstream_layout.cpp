// RepoSync with --upstream-layout: the repository at upstream's path beneath `-p`/<repoid>/, its
// packages anywhere beneath that root (Amazon Linux's shared blobstore), and --mirror-url's
// mirror list.
#include <fmt/core.h>

#include "fs/durable.hpp"
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
    repo_dir_ = layout_root_ / *relative;
    metadata_dir_ = repo_dir_;
    report_.repo_dir = repo_dir_;
    return {};
}

PathPolicy RepoSync::path_policy() const {
    PathPolicy policy;
    if (!layout_root_.empty()) {
        policy.safe_write_path = std::filesystem::absolute(layout_root_);
        policy.repo_root = std::filesystem::absolute(repo_dir_);
    } else {
        policy.safe_write_path = options_.safe_write_path;
    }
    return policy;
}

Result<void> RepoSync::publish_mirror_list() {
    if (layout_root_.empty() || options_.mirror_url.empty()) {
        return {};
    }
    if (!repo_.mirrorlist) {
        report_.warnings.push_back(
            "--mirror-url: the repository has no mirrorlist, so there is none to rewrite (clients "
            "use baseurl=" +
            options_.mirror_url + ")");
        return {};
    }
    auto list_path = layout_path(*repo_.mirrorlist, "the mirrorlist URL");
    if (!list_path || list_path->empty()) {
        report_.warnings.push_back(
            list_path ? "--mirror-url: the mirrorlist URL '" + *repo_.mirrorlist +
                            "' has no path to write it at"
                      : list_path.error().to_string());
        return {};
    }
    std::string url = options_.mirror_url;
    if (!url.ends_with('/')) {
        url += '/';
    }
    const std::string repo_path = std::filesystem::relative(repo_dir_, layout_root_).generic_string();
    if (repo_path != ".") {
        url += repo_path + "/";
    }
    const std::filesystem::path file = layout_root_ / *list_path;
    const std::string contents = url + "\n";
    if (auto current = fs::read_file(file); current && *current == contents) {
        return {};
    }
    std::error_code error;
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) {
        return make_error(ErrorCode::Io, "cannot create directory: " + error.message(),
                          file.parent_path().string());
    }
    return fs::replace_file(file, contents);
}

}  // namespace rpmirror
