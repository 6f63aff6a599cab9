// A real S3 endpoint for tests: a single-node Ceph cluster with the RADOS Gateway started by
// scripts/ceph-s3. Under ctest, one cluster serves the whole run: the fixture tests
// fixture.ceph_s3_start/stop (tests/CMakeLists.txt) start it in RPMIRROR_CEPH_DIR and stop it,
// and every S3 test requires them. Run on its own (no cluster there), the binary starts one in a
// temporary directory with its first S3 test and stops it by pid when its tests end.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "support/child_process.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

class CephS3 {
  public:
    // Uses the cluster started in `shared` (its env file written, its monitor's pid file there)
    // iff there is one; it is left running. Otherwise starts one in a temporary directory,
    // stopped by the destructor; throws (failing the test) with the script's output iff it
    // cannot.
    explicit CephS3(const std::filesystem::path& shared) {
        if (!shared.empty() && std::filesystem::exists(shared / "env") &&
            std::filesystem::exists(shared / "run" / "mon.pid")) {
            owned_ = false;
            read_env(shared / "env");
            return;
        }
        const auto script = source_root() / "scripts" / "ceph-s3";
        const auto log = dir_ / "start.log";
        if (run_command({script.string(), "start", (dir_ / "ceph").string()}, log) != 0) {
            const std::string output = read_file(log);
            run_command({script.string(), "stop", (dir_ / "ceph").string()}, dir_ / "stop.log");
            throw std::runtime_error("scripts/ceph-s3 start failed:\n" + output);
        }
        read_env(dir_ / "ceph" / "env");
    }
    CephS3(const CephS3&) = delete;
    CephS3& operator=(const CephS3&) = delete;
    ~CephS3() {
        if (!owned_) {
            return;
        }
        run_command(
            {(source_root() / "scripts" / "ceph-s3").string(), "stop", (dir_ / "ceph").string()},
            dir_ / "stop.log");
    }

    // The variables scripts/ceph-s3 wrote (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...).
    const std::map<std::string, std::string>& env() const { return env_; }
    std::string endpoint() const { return env_.at("AWS_ENDPOINT_URL"); }

    // A configuration for this cluster (as resolve_config makes it from env()).
    s3::S3Config config() const {
        auto resolved =
            s3::resolve_config({}, [this](std::string_view name) -> std::optional<std::string> {
                const auto found = env_.find(std::string(name));
                if (found == env_.end()) {
                    return std::nullopt;
                }
                return found->second;
            });
        if (!resolved) {
            throw std::runtime_error(resolved.error().to_string());
        }
        resolved->retry_base_delay = std::chrono::milliseconds(50);
        return *resolved;
    }

    const std::filesystem::path& dir() const { return dir_.path(); }

  private:
    void read_env(const std::filesystem::path& path) {
        std::ifstream env(path);
        std::string line;
        while (std::getline(env, line)) {
            const auto equals = line.find('=');
            if (equals != std::string::npos) {
                env_[line.substr(0, equals)] = line.substr(equals + 1);
            }
        }
    }

    TempDir dir_;
    bool owned_ = true;
    std::map<std::string, std::string> env_;
};

// Test suites against the cluster derive from this: the cluster starts with the first such test
// of the process and stops when the process's tests end. Each test gets its own bucket.
class CephS3Test : public ::testing::Test {
  protected:
    static CephS3& cluster() {
        if (!cluster_) {
            // Stopped (by pid) when cluster_ is destroyed at the process's exit.
#ifdef RPMIRROR_CEPH_DIR
            cluster_ = std::make_unique<CephS3>(RPMIRROR_CEPH_DIR);
#else
            cluster_ = std::make_unique<CephS3>(std::filesystem::path());
#endif
        }
        return *cluster_;
    }

    void SetUp() override {
        client_ = std::make_unique<s3::S3Client>(cluster().config());
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        bucket_ = bucket_name(info->name());
        auto created = client_->create_bucket(bucket_);
        ASSERT_TRUE(created) << created.error().to_string();
    }

    // Returns a valid bucket name made from `test_name` (lowercase, '-' for other characters).
    static std::string bucket_name(std::string_view test_name) {
        std::string name = "t-";
        for (const char c : test_name) {
            name += std::isalnum(static_cast<unsigned char>(c)) != 0
                        ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                        : '-';
        }
        return name.substr(0, 63);
    }

    s3::S3Client& client() {
        return *client_;
    }
    const std::string& bucket() const {
        return bucket_;
    }

  private:
    static inline std::unique_ptr<CephS3> cluster_;
    std::unique_ptr<s3::S3Client> client_;
    std::string bucket_;
};

}  // namespace rpmirror::test
