// The fixture of the `rpmirror export` / `rpmirror import` tests: three real repositories
// (rpmbuild + createrepo_c) served by nginx, synced by the real binary into a near mirror, and the
// real binary exporting bundles from it and importing them into a far destination with its own
// state directory.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/sync/sync_fixture.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {

inline const std::vector<std::string> kExportIds{"alpha", "beta", "gamma"};

class ExportFixture : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        for (const std::string& id : kExportIds) {
            upstreams_[id] = copy_repo(test_repo("sample-repo"), tmp_ / "upstream" / id);
        }
    }

    // `rpmirror sync` of every upstream into near_ (metadata, --delete), with `extra` arguments.
    CommandResult sync_near(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args{"-p", near_.string(), "--download-metadata", "--delete"};
        args.insert(args.end(), extra.begin(), extra.end());
        for (const std::string& id : kExportIds) {
            if (servers_.find(id) == servers_.end()) {
                servers_[id] = &serve(upstreams_[id]);
            }
            args.insert(args.end(),
                        {"--repofrompath", id + "," + servers_[id]->url("/"), "--repo", id});
        }
        return sync(args);
    }

    CommandResult rpmirror(std::vector<std::string> args,
                           const std::vector<std::string>& env = {}) {
        std::vector<std::string> argv{"env"};
        argv.insert(argv.end(), env.begin(), env.end());
        argv.push_back(rpmirror_binary());
        argv.insert(argv.end(), args.begin(), args.end());
        CommandResult result = run_to_end(argv, tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    CommandResult export_bundle(const std::string& name, std::vector<std::string> extra = {}) {
        std::vector<std::string> args{
            "export", "-p", near_.string(), "-o", (tmp_ / name).string(), "--chunk-size", "100k"};
        args.insert(args.end(), extra.begin(), extra.end());
        return rpmirror(args, {"GNUPGHOME=" + test_keys().home().string()});
    }

    CommandResult import_bundle(const std::string& name, const std::filesystem::path& into,
                                std::vector<std::string> extra = {},
                                const std::vector<std::string>& env = {}) {
        std::vector<std::string> args{"import",      (tmp_ / name).string(),    "-p", into.string(),
                                      "--state-dir", (into.string() + "-state")};
        args.insert(args.end(), extra.begin(), extra.end());
        return rpmirror(args, env);
    }

    // `rpmirror verify` of every repository of the mirror `root` (state in <root>-state).
    CommandResult verify(const std::filesystem::path& root) {
        return rpmirror({"verify", "-p", root.string(), "-c", (tmp_ / "empty.conf").string(),
                         "--reposdir", (tmp_ / "empty-reposdir").string(), "--state-dir",
                         root.string() + "-state"});
    }

    nlohmann::json manifest(const std::string& name) {
        return nlohmann::json::parse(read_file(tmp_ / name / "manifest.json"));
    }

    // The names dnf lists in the repository at `dir` (dnf must read it).
    std::vector<std::string> dnf_names(const std::filesystem::path& dir) {
        auto [exit_code, names] =
            dnf_repoquery(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)), dir, "%{name}");
        EXPECT_EQ(exit_code, 0) << dir;
        EXPECT_FALSE(names.empty()) << dir;
        return names;
    }

    // The published files of a repository (packages and repodata/), with their digests.
    static std::map<std::string, std::string> published(const std::filesystem::path& repo) {
        auto digests = package_digests(repo);
        for (const auto& [path, digest] : prefixed(tree_digests(repo / "repodata"), "repodata/")) {
            digests[path] = digest;
        }
        return digests;
    }

    // The files outside repodata/ the first repository of `written` carries; adds every carried
    // file's size to `bytes`.
    static std::vector<std::string> carried_packages(const nlohmann::json& written,
                                                     std::uint64_t& bytes) {
        std::vector<std::string> packages;
        for (const auto& file : written["repositories"][0]["files"]) {
            if (!file.contains("chunk")) {
                continue;
            }
            const std::string key = file["key"];
            bytes += file["size"].get<std::uint64_t>();
            if (!key.starts_with("repodata/")) {
                packages.push_back(key);
            }
        }
        return packages;
    }

    // The files outside repodata/ the first repository of `written` lists as gone (the old
    // metadata's records are gone too).
    static std::vector<std::string> removed_packages(const nlohmann::json& written) {
        std::vector<std::string> packages;
        for (const auto& key : written["repositories"][0]["removed"]) {
            if (!key.get<std::string>().starts_with("repodata/")) {
                packages.push_back(key);
            }
        }
        return packages;
    }

    // Checks that the bundle `name` is incremental on `base` and carries what second_revision
    // changed in alpha (medium added, data gone), and that it imports onto far_, which then holds
    // near_'s alpha.
    void expect_second_revision_imports(const std::string& name, const std::string& base) {
        const nlohmann::json written = manifest(name);
        EXPECT_EQ(written["kind"], "incremental");
        EXPECT_EQ(written["base"]["name"], base);
        std::uint64_t carried_bytes = 0;
        EXPECT_EQ(carried_packages(written, carried_bytes), std::vector<std::string>{kMediumHref});
        EXPECT_EQ(removed_packages(written), std::vector<std::string>{kDataHref});
        const CommandResult imported = import_bundle(name, far_);
        ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
        EXPECT_EQ(published(far_ / "alpha"), published(near_ / "alpha"));
    }

    // A bundle's copy with one change, for the refusals (the bundle itself stays good).
    std::filesystem::path damaged_copy(const std::string& name, const std::string& as) {
        std::filesystem::copy(tmp_ / name, tmp_ / as, std::filesystem::copy_options::recursive);
        return tmp_ / as;
    }

    // Changes upstream `id`: medium added back, data removed (a second revision).
    void second_revision(const std::string& id) {
        std::filesystem::rename(tmp_ / ("aside-" + id), upstreams_[id] / "Packages" / kMedium);
        std::filesystem::remove(upstreams_[id] / "Packages" / kData);
        recreate_repo(upstreams_[id], "1704240000", tmp_ / "logs");
    }
    void first_revision(const std::string& id) {
        std::filesystem::rename(upstreams_[id] / "Packages" / kMedium, tmp_ / ("aside-" + id));
        recreate_repo(upstreams_[id], "1704153600", tmp_ / "logs");
    }

    std::map<std::string, std::filesystem::path> upstreams_;
    std::map<std::string, NginxServer*> servers_;
    std::filesystem::path near_ = tmp_ / "near";
    std::filesystem::path far_ = tmp_ / "far";
    int dnf_runs_ = 0;
};

}  // namespace rpmirror::test
