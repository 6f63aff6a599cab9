// The fixture of the jobs-file tests (test_jobs_config.cpp, test_jobs_overlap.cpp): a main file
// (and conf.d files) written to a temporary directory and loaded with fixed variables.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "jobs/jobs_config.hpp"
#include "rpmirror/jobs/jobs.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

inline const JobConfig& job_named(const std::vector<JobConfig>& jobs, std::string_view name) {
    for (const JobConfig& job : jobs) {
        if (job.name == name) {
            return job;
        }
    }
    throw std::runtime_error("no job " + std::string(name));
}

class JobsConfigTest : public ::testing::Test {
  protected:
    // Writes the main file (and conf.d files) and loads them.
    Result<JobsConfig> load(const std::string& main_text,
                            const std::vector<std::pair<std::string, std::string>>& conf_d = {}) {
        main_file_ = dir_.write("etc/rpmirror.conf", main_text);
        for (const auto& [name, text] : conf_d) {
            dir_.write("etc/conf.d/" + name, text);
        }
        JobsLoadOptions options;
        options.config_file = main_file_;
        options.variables.varsdirs.clear();
        options.variables.environment = environment_;
        options.variables.machine = "x86_64";
        warnings_.clear();
        return load_jobs_config(options, warnings_);
    }

    std::string main_file() const { return main_file_.string(); }

    TempDir dir_;
    std::map<std::string, std::string> environment_;  // the loader's environment (none)
    std::filesystem::path main_file_;
    std::vector<ConfigWarning> warnings_;
};

}  // namespace rpmirror::test
