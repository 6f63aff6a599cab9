// DownloaderTest: a scratch directory served by tests/integration/fault_server.py and a
// Downloader run into it, with hashing in the write callback (param 0) or on io threads.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "download_test_support.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {

class DownloaderTest : public ::testing::TestWithParam<unsigned> {
  protected:
    void SetUp() override {
        std::filesystem::create_directories(served());
        std::filesystem::create_directories(dir_.path() / "work");
    }

    std::filesystem::path served() const { return dir_.path() / "srv"; }
    std::filesystem::path dest() const { return dir_.path() / "dest"; }

    // Puts `content` at srv/<path> (creating directories) and returns it.
    const std::string& serve(const std::string& path, const std::string& content) {
        const auto file = served() / path;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream(file, std::ios::binary) << content;
        contents_[path] = content;
        return contents_[path];
    }

    void start_server(const nlohmann::json& script = nlohmann::json::object()) {
        server_ = std::make_unique<test::FaultServer>(served(), script, dir_.path() / "work");
    }

    std::shared_ptr<MirrorList> mirrors(std::initializer_list<std::string> prefixes) {
        std::vector<std::string> bases;
        for (const auto& prefix : prefixes) {
            bases.push_back(server_->url(prefix));
        }
        return std::make_shared<MirrorList>(bases);
    }

    DownloadReport run(std::vector<DownloadRequest> requests, DownloadOptions options,
                       ProgressSink* progress = nullptr, std::stop_token stop = {}) {
        Downloader downloader(options);
        auto report = downloader.run(dest(), requests, progress, stop);
        EXPECT_TRUE(report.has_value()) << (report ? "" : report.error().to_string());
        return report ? *report : DownloadReport{};
    }

    DownloadOptions options() const { return fast_options(GetParam()); }

    bool exists(const std::string& relative) const {
        return std::filesystem::exists(std::filesystem::symlink_status(dest() / relative));
    }

    test::TempDir dir_;
    std::map<std::string, std::string> contents_;
    std::unique_ptr<test::FaultServer> server_;
};

}  // namespace rpmirror::test
