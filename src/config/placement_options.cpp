// The options that decide where a repository and its packages go (--upstream-layout,
// --mirror-url, --flatten-hrefs, --treeinfo), checked once for the command line and for jobs.
#include <string>

#include "rpmirror/sync_options.hpp"

namespace rpmirror {

Result<void> check_placement_options(const SyncOptions& options) {
    const std::string destination = options.download_path.string();
    if (!options.mirror_url.empty()) {
        if (!options.upstream_layout) {
            return make_error(ErrorCode::BadInput,
                              "--mirror-url needs --upstream-layout (it names where clients reach "
                              "the upstream layout this mirror keeps)",
                              options.mirror_url);
        }
        const std::string& url = options.mirror_url;
        const bool web = url.starts_with("http://") || url.starts_with("https://");
        if ((!web && !url.starts_with("file:///")) ||
            url.find_first_of(" \t\r\n") != std::string::npos ||
            (web && url.find('/', url.find("//") + 2) == url.find("//") + 2)) {
            return make_error(ErrorCode::BadInput,
                              "--mirror-url: not an http://, https:// or file:/// URL with a host",
                              url);
        }
    }
    if (options.skip_bad_images && !options.treeinfo) {
        return make_error(ErrorCode::BadInput, "--skip-bad-images needs --treeinfo", destination);
    }
    if (options.treeinfo) {
        if (s3::is_s3_url(destination)) {
            return make_error(ErrorCode::Unsupported,
                              "--treeinfo is not implemented for s3:// destinations yet",
                              destination);
        }
        if (options.metadata_path || options.upstream_layout || options.flatten_hrefs) {
            return make_error(ErrorCode::BadInput,
                              "--treeinfo mirrors the tree's repositories where the tree has them: "
                              "not with --metadata-path, --upstream-layout or --flatten-hrefs",
                              destination);
        }
    }
    if (options.flatten_hrefs && options.upstream_layout) {
        return make_error(ErrorCode::BadInput,
                          "--flatten-hrefs with --upstream-layout: one keeps upstream's hrefs, the "
                          "other rewrites them (choose one)",
                          destination);
    }
    if (options.flatten_hrefs && options.upstream_metadata) {
        return make_error(ErrorCode::BadInput,
                          "--flatten-hrefs with --upstream-metadata: upstream's metadata names the "
                          "packages outside the mirror (leave --upstream-metadata out)",
                          destination);
    }
    if (!options.upstream_layout) {
        return {};
    }
    if (s3::is_s3_url(destination)) {
        return make_error(ErrorCode::Unsupported,
                          "--upstream-layout is not implemented for s3:// destinations yet",
                          destination);
    }
    if (options.metadata_path) {
        return make_error(ErrorCode::BadInput,
                          "--upstream-layout with --metadata-path: the metadata must stay where "
                          "its package hrefs resolve from (leave --metadata-path out)",
                          options.metadata_path->string());
    }
    if (options.safe_write_path) {
        return make_error(ErrorCode::BadInput,
                          "--upstream-layout with --safe-write-path: the layout decides where "
                          "packages may live (leave --safe-write-path out)",
                          options.safe_write_path->string());
    }
    return {};
}

}  // namespace rpmirror
