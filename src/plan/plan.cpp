// Planning a sync: safe local paths for the selected packages and what to do with each.
#include <sys/stat.h>

#include <map>
#include <set>

#include "plan/plan.hpp"

#include "fs/walk.hpp"

namespace rpmirror {

namespace {

// Returns `path` relative to `base` iff it lies inside it (component-wise), else nullopt.
std::optional<std::filesystem::path> relative_inside(const std::filesystem::path& path,
                                                     const std::filesystem::path& base) {
    auto path_part = path.begin();
    for (auto base_part = base.begin(); base_part != base.end(); ++base_part, ++path_part) {
        if (base_part->empty()) {
            continue;  // a trailing separator
        }
        if (path_part == path.end() || *path_part != *base_part) {
            return std::nullopt;
        }
    }
    std::filesystem::path relative;
    for (; path_part != path.end(); ++path_part) {
        relative /= *path_part;
    }
    if (relative.empty()) {
        return std::nullopt;
    }
    return relative;
}

// Returns why `relative` (a package's path in the repository directory) is reserved for the
// mirror's own files, or nullptr iff it is not: a package written there would overwrite
// metadata, a staging directory or a download in progress.
const char* reserved_reason(const std::filesystem::path& relative) {
    const std::string top = relative.begin()->string();
    if (top == fs::kLiveMetadataDirName) {
        return "is inside repodata/";
    }
    if (top.starts_with(fs::kStagingDirPrefix)) {
        return "is inside a staging directory";
    }
    const std::string name = relative.filename().string();
    if (name.size() > 5 && name.front() == '.' && name.ends_with(".part")) {
        return "has the name of a download in progress (.part)";
    }
    return nullptr;
}

}  // namespace

Result<SyncPlan> plan_sync(const PackageIndex& index, const Selection& selection,
                           const std::filesystem::path& repo_dir, const PathPolicy& policy,
                           std::string_view repo_id) {
    SyncPlan plan;
    plan.roots.push_back(repo_dir);
    const std::filesystem::path absolute_repo =
        std::filesystem::absolute(repo_dir).lexically_normal();
    std::optional<std::filesystem::path> safe_root;
    if (policy.safe_write_path) {
        safe_root = policy.safe_write_path->is_absolute()
                        ? policy.safe_write_path->lexically_normal()
                        : (absolute_repo / *policy.safe_write_path).lexically_normal();
    }
    PathPolicy resolved_policy = policy;
    if (!resolved_policy.repo_root) {
        resolved_policy.repo_root = absolute_repo;
    }
    plan.targets.reserve(selection.positions.size());
    std::map<std::filesystem::path, std::string> planned;  // path -> where its href points
    for (const std::size_t position : selection.positions) {
        const PackageView package = index[position];
        auto relative = safe_relative_path(package.location_href, package.nevra(), resolved_policy);
        if (!relative) {
            Error error = std::move(relative.error());
            error.message = "repository '" + std::string(repo_id) + "': " + error.message;
            return tl::unexpected(std::move(error));
        }
        if (!package.location_base.empty() && !is_http_url(package.location_base)) {
            return make_error(ErrorCode::Unsafe,
                              "repository '" + std::string(repo_id) + "': xml:base '" +
                                  std::string(package.location_base) +
                                  "': only http and https URLs are accepted from upstream "
                                  "metadata; refused",
                              package.nevra());
        }
        if (const char* reason = relative->empty() ? nullptr : reserved_reason(*relative)) {
            return make_error(ErrorCode::Unsafe,
                              "repository '" + std::string(repo_id) + "': href '" +
                                  std::string(package.location_href) + "' " + reason +
                                  ", which the mirror reserves for its own files",
                              package.nevra());
        }
        // With PathPolicy::flatten or file_name_only, where the href really points (climbing out
        // or not): two hrefs placed at one path are one file only if they point at one.
        std::string points_to = relative->generic_string();
        bool flattened = false;
        if (policy.flatten || policy.file_name_only) {
            PathPolicy unflattened;
            unflattened.safe_write_path = absolute_repo.root_path();
            unflattened.repo_root = absolute_repo;
            // It fails only for an href that climbs above the filesystem's root (the checks it
            // shares with the flattened call passed).
            auto real = safe_relative_path(package.location_href, package.nevra(), unflattened);
            flattened = policy.flatten &&
                        (!real || (real->begin() != real->end() && *real->begin() == ".."));
            points_to = real ? real->generic_string() : std::string(package.location_href);
        }
        if (const auto [found, inserted] = planned.emplace(*relative, points_to); !inserted) {
            if (found->second != points_to) {
                return make_error(ErrorCode::Unsafe,
                                  "repository '" + std::string(repo_id) + "': href '" +
                                      std::string(package.location_href) + "' flattened is '" +
                                      relative->generic_string() + "', which '" + found->second +
                                      "' already names (" +
                                      (policy.flatten ? "--flatten-hrefs cannot place both"
                                                      : "one file name cannot hold both") +
                                      ")",
                                  package.nevra());
            }
            // "./Packages/a.rpm" and "Packages/a.rpm" are one file: one transfer.
            ++plan.duplicate_paths;
            continue;
        }
        PackageTarget target{position, *relative, 0, *relative, flattened};
        plan.flattened += flattened ? 1 : 0;
        if (relative->begin() != relative->end() && *relative->begin() == "..") {
            const auto absolute = (absolute_repo / *relative).lexically_normal();
            const auto inside = safe_root ? relative_inside(absolute, *safe_root) : std::nullopt;
            if (!inside) {
                return make_error(ErrorCode::Unsafe,
                                  "repository '" + std::string(repo_id) + "': href '" +
                                      std::string(package.location_href) +
                                      "' is outside of the safe write path",
                                  package.nevra());
            }
            if (plan.roots.size() == 1) {
                plan.roots.push_back(*safe_root);
            }
            target.root_index = 1;
            target.destination = *inside;
        }
        struct stat st {};
        const bool exists = ::lstat((repo_dir / target.relative_path).c_str(), &st) == 0;
        (exists && S_ISREG(st.st_mode) ? plan.to_verify : plan.to_download)
            .push_back(plan.targets.size());
        plan.targets.push_back(std::move(target));
    }
    return plan;
}

}  // namespace rpmirror
