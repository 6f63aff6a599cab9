// The fixture of the `rpmirror sync` end-to-end tests: a temporary directory, nginx servers on
// loopback, the real binary run with an isolated configuration, and what nginx saw.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "download/download.hpp"
#include "integration/sync/sync_harness.hpp"
#include "support/nginx.hpp"

namespace rpmirror::test {

class SyncFixture : public ::testing::Test {
  protected:
    // The one file of `dir` whose name ends with `suffix` (e.g. "-primary.xml.gz").
    static std::filesystem::path only_file_ending(const std::filesystem::path& dir,
                                                  const std::string& suffix) {
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            if (entry.path().filename().string().ends_with(suffix)) {
                return entry.path();
            }
        }
        throw std::runtime_error("no *" + suffix + " in " + dir.string());
    }

    // `file` decompressed with gzip (in tmp_).
    std::string gunzip(const std::filesystem::path& file) {
        const std::filesystem::path out = tmp_ / "gunzipped";
        run_checked({"sh", "-c", "gzip -dc < \"$0\" > \"$1\"", file.string(), out.string()},
                    tmp_ / "logs");
        return read_file(out);
    }

    // `text` compressed with gzip -n (in tmp_).
    std::string gzip(const std::string& text) {
        const std::filesystem::path in = TempDir::write_at(tmp_ / "to-gzip", text);
        const std::filesystem::path out = tmp_ / "gzipped";
        run_checked({"sh", "-c", "gzip -nc < \"$0\" > \"$1\"", in.string(), out.string()},
                    tmp_ / "logs");
        return read_file(out);
    }

    void SetUp() override {
        if (!nginx_available()) {
            GTEST_FAIL() << kNginxMissing;
        }
        std::filesystem::create_directories(tmp_ / "empty-reposdir");
        TempDir::write_at(tmp_ / "empty.conf", "[main]\n");
    }

    // Starts nginx serving `root` and returns it (it lives as long as the test).
    NginxServer& serve(const std::filesystem::path& root) {
        servers_.push_back(std::make_unique<NginxServer>(
            root, tmp_ / ("nginx-" + std::to_string(servers_.size()))));
        return *servers_.back();
    }

    // Runs `rpmirror sync` with `args`, isolated from the host's dnf configuration and repos.
    CommandResult sync(const std::vector<std::string>& args) {
        std::vector<std::string> full{"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        full.insert(full.end(), args.begin(), args.end());
        CommandResult result = run_to_end(rpmirror_sync_argv(full), tmp_ / "logs");
        expect_no_sanitizer_report(result.err);
        return result;
    }

    // Fails the test iff `stderr_text` holds an ASan/UBSan report (under -DRPMIRROR_SANITIZE the
    // binary is instrumented too, and ASan's exit code 1 could pass for a sync failure).
    static void expect_no_sanitizer_report(const std::string& stderr_text) {
        EXPECT_EQ(stderr_text.find("Sanitizer"), std::string::npos) << stderr_text;
        EXPECT_EQ(stderr_text.find("runtime error:"), std::string::npos) << stderr_text;
    }

    // Returns the request URIs nginx logged after its first `skip` entries, complete up to now:
    // a sentinel request is made and the log is read up to its entry (one nginx worker handles
    // requests in order, so every earlier request is logged by then).
    std::vector<std::string> uris_since(const NginxServer& server, std::size_t skip) {
        const std::string sentinel = "/.sentinel-" + std::to_string(++sentinels_);
        (void)fetch_document(server.url(sentinel), DownloadOptions{});
        std::vector<std::string> uris;
        for (std::size_t wanted = skip + 1;; ++wanted) {
            const auto entries = server.access_log(wanted);
            if (entries.size() < wanted) {
                ADD_FAILURE() << "nginx never logged " << sentinel;
                return uris;
            }
            bool seen = false;
            uris.clear();
            for (std::size_t index = skip; index < entries.size(); ++index) {
                const std::string uri = entries[index].value("uri", "");
                if (uri == sentinel) {
                    seen = true;
                    break;
                }
                uris.push_back(uri);
            }
            if (seen) {
                return uris;
            }
            wanted = entries.size();
        }
    }

    std::size_t log_size(const NginxServer& server) const { return server.access_log().size(); }

    // Returns the URIs of `uris` that start with "/Packages/" (or `prefix`), sorted.
    static std::vector<std::string> package_uris(std::vector<std::string> uris,
                                                 const std::string& prefix = "/Packages/") {
        std::vector<std::string> packages;
        for (std::string& uri : uris) {
            if (uri.starts_with(prefix)) {
                packages.push_back(std::move(uri));
            }
        }
        std::sort(packages.begin(), packages.end());
        return packages;
    }

    TempDir tmp_;
    std::vector<std::unique_ptr<NginxServer>> servers_;
    int sentinels_ = 0;
};

}  // namespace rpmirror::test
