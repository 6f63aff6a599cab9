// dnf-behave-tests/dnf/plugins-core/reposync-local.feature (ci-dnf-stack dnf-4-stack, 2a79b28f),
// run with `dnf reposync` and with `rpmirror reposync` (see dnfstack_fixture.hpp).
#include <gtest/gtest.h>

#include <string>

#include "integration/dnfstack/dnfstack_fixture.hpp"

namespace rpmirror::test {
namespace {

class DnfStackReposyncLocal : public DnfStackScenario {};

TEST_P(DnfStackReposyncLocal, BaseFunctionalityOnLocalRepository) {
    use_repository("dnf-ci-thirdparty-updates", fixture_repo("dnf-ci-thirdparty-updates"), false);
    const CommandResult result = reposync({"--download-path=" + tempdir_.string()});
    ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
    for (const char* package :
         {R"(CQRlib-extension-1\.6-2\.src\.rpm)", R"(CQRlib-extension-1\.6-2\.x86_64\.rpm)",
          R"(SuperRipper-1\.2-1\.src\.rpm)", R"(SuperRipper-1\.2-1\.x86_64\.rpm)",
          R"(SuperRipper-1\.3-1\.src\.rpm)", R"(SuperRipper-1\.3-1\.x86_64\.rpm)"}) {
        EXPECT_TRUE(
            contains_match(result.out, std::string(R"(\([1-6]/6\): )") + package + R"(\s.*)"))
            << package << "\n"
            << result.out;
    }
    const std::string package = "x86_64/CQRlib-extension-1.6-2.x86_64.rpm";
    EXPECT_TRUE(same_contents(tempdir_ / "dnf-ci-thirdparty-updates" / package,
                              fixture_repo("dnf-ci-thirdparty-updates") / package));
}

INSTANTIATE_TEST_SUITE_P(Both, DnfStackReposyncLocal,
                         ::testing::Values(Reposync::Dnf, Reposync::Rpmirror), reposync_name);

}  // namespace
}  // namespace rpmirror::test
