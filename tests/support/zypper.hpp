// zypper for the tests (a second client of the mirrors): Debian's package unpacked by
// scripts/fetch-zypper, which the ctest fixture fixture.zypper runs once per ctest run.
#pragma once

#include <cstdlib>
#include <filesystem>

#include "integration/sync/sync_harness.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

// The zypper binary: the ctest fixture's ($RPMIRROR_TEST_REPOS/zypper), else one fetched for this
// process (scripts/fetch-zypper fails the test, naming why, when it cannot).
inline std::filesystem::path zypper_binary() {
    if (const char* repos = std::getenv("RPMIRROR_TEST_REPOS")) {
        const auto prebuilt = std::filesystem::path(repos) / "zypper" / "usr" / "bin" / "zypper";
        if (std::filesystem::exists(prebuilt)) {
            return prebuilt;
        }
    }
    static TempDir fetched_here;
    static const std::filesystem::path binary = [] {
        run_checked({(source_root() / "scripts" / "fetch-zypper").string(),
                     (fetched_here / "zypper").string()},
                    fetched_here / "logs");
        return fetched_here / "zypper" / "usr" / "bin" / "zypper";
    }();
    return binary;
}

}  // namespace rpmirror::test
