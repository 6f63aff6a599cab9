#include <algorithm>

#include <gtest/gtest.h>

#include "index/index.hpp"
#include "support/temp_dir.hpp"
#include "unit/index/index_test_repo.hpp"

namespace rpmirror {
namespace {

using test::IndexTestRepo;

constexpr std::int64_t kFebruary2024 = 1706745600;

class Select : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        auto parsed = parse_primary_file(IndexTestRepo::get().primary(".gz"));
        ASSERT_TRUE(parsed) << parsed.error().to_string();
        index_ = std::make_unique<PackageIndex>(std::move(*parsed));
    }
    static void TearDownTestSuite() { index_.reset(); }

    // Sorted NEVRAs of what `options` selects from the test repository.
    static std::vector<std::string> selected(const SelectionOptions& options,
                                             const PackageIndex& index = *index_) {
        const Selection selection = select_packages(index, options);
        std::vector<std::string> result;
        for (const std::size_t position : selection.positions) {
            result.push_back(index[position].nevra());
        }
        std::sort(result.begin(), result.end());
        return result;
    }

    static std::unique_ptr<PackageIndex> index_;
};
std::unique_ptr<PackageIndex> Select::index_;

using Names = std::vector<std::string>;

TEST_F(Select, NoFilterKeepsEveryPackageIncludingSource) {
    EXPECT_EQ(selected({}).size(), 13U);
}

TEST_F(Select, ArchIsExactAndDoesNotImplyNoarch) {
    SelectionOptions options;
    options.arches = {"x86_64"};
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-epoch-1:1.0-1.x86_64", "rpmirror-idx-epoch-5.0-1.x86_64",
                     "rpmirror-idx-multi-1.0-1.x86_64", "rpmirror-idx-multi-1.10-1.x86_64",
                     "rpmirror-idx-multi-1.9-1.x86_64"}));
    options.arches = {"x86_64", "noarch"};
    EXPECT_EQ(selected(options).size(), 8U);
    options.arches = {"aarch64", "i686"};
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-multi-1.0-1.aarch64", "rpmirror-idx-multi-1.0-1.i686",
                     "rpmirror-idx-multi-1.9-1.aarch64"}));
    options.arches = {"x86"};  // no prefix or compatibility matching
    EXPECT_TRUE(selected(options).empty());
}

TEST_F(Select, SourceOnlyKeepsSrcAndOverridesArch) {
    SelectionOptions options;
    options.source_only = true;
    const Names sources{"rpmirror-idx-multi-1.10-1.src", "rpmirror-idx-noarch-1.0-1.src"};
    EXPECT_EQ(selected(options), sources);
    options.arches = {"x86_64"};
    EXPECT_EQ(selected(options), sources) << "--source overrides --arch, as in dnf";
}

TEST_F(Select, NewestOnlyIsPerNameAndArch) {
    SelectionOptions options;
    options.newest_only = true;
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-epoch-1:1.0-1.x86_64",  // epoch beats 5.0
                     "rpmirror-idx-multi-1.0-1.i686",      // per arch: i686 has only 1.0
                     "rpmirror-idx-multi-1.10-1.src", "rpmirror-idx-multi-1.10-1.x86_64",
                     "rpmirror-idx-multi-1.9-1.aarch64", "rpmirror-idx-noarch-1.0-1.src",
                     "rpmirror-idx-noarch-1.0^git1-1.noarch"}));  // caret > base > tilde
    options.arches = {"x86_64"};
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-epoch-1:1.0-1.x86_64", "rpmirror-idx-multi-1.10-1.x86_64"}));
}

TEST_F(Select, IncludeAndExcludeGlobsMatchDnfSpecForms) {
    SelectionOptions options;
    options.include_globs = {"rpmirror-idx-multi"};
    EXPECT_EQ(selected(options).size(), 7U);
    options.include_globs = {"rpmirror-idx-multi.aarch64"};  // name.arch
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-multi-1.0-1.aarch64", "rpmirror-idx-multi-1.9-1.aarch64"}));
    options.include_globs = {"*-epoch", "*noarch-1.0-1"};  // name, name-version-release
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-epoch-1:1.0-1.x86_64", "rpmirror-idx-epoch-5.0-1.x86_64",
                     "rpmirror-idx-noarch-1.0-1.noarch", "rpmirror-idx-noarch-1.0-1.src"}));
    options.include_globs.clear();
    options.exclude_globs = {"rpmirror-idx-noarch-1.0~rc1*", "rpmirror-idx-epoch-1:*"};
    const Names kept = selected(options);
    EXPECT_EQ(kept.size(), 11U);
    EXPECT_EQ(std::count(kept.begin(), kept.end(), "rpmirror-idx-noarch-1.0~rc1-1.noarch"), 0);
    EXPECT_EQ(std::count(kept.begin(), kept.end(), "rpmirror-idx-epoch-1:1.0-1.x86_64"), 0);
    options.include_globs = {"rpmirror-idx-*"};
    options.exclude_globs = {"rpmirror-idx-*"};
    EXPECT_TRUE(selected(options).empty()) << "exclude wins over include";
}

TEST_F(Select, ExcludesApplyBeforeNewestOnly) {
    SelectionOptions options;
    options.newest_only = true;
    options.exclude_globs = {"rpmirror-idx-multi-1.10*", "rpmirror-idx-epoch-1:*"};
    options.arches = {"x86_64"};
    EXPECT_EQ(selected(options),
              (Names{"rpmirror-idx-epoch-5.0-1.x86_64", "rpmirror-idx-multi-1.9-1.x86_64"}));
}

TEST_F(Select, MinBuildTimeKeepsPackagesBuiltAtOrAfterIt) {
    SelectionOptions options;
    options.min_build_time = kFebruary2024;
    const Names kept = selected(options);
    EXPECT_EQ(kept,
              (Names{"rpmirror-idx-epoch-1:1.0-1.x86_64", "rpmirror-idx-multi-1.10-1.src",
                     "rpmirror-idx-multi-1.10-1.x86_64", "rpmirror-idx-multi-1.9-1.aarch64",
                     "rpmirror-idx-multi-1.9-1.x86_64", "rpmirror-idx-noarch-1.0-1.noarch",
                     "rpmirror-idx-noarch-1.0-1.src", "rpmirror-idx-noarch-1.0^git1-1.noarch"}));
    options.min_build_time = kFebruary2024 + 1;
    EXPECT_EQ(selected(options).size(), 3U);
}

// --as-of: the repository as it stood then, newest-only taken among what existed.
TEST_F(Select, AsOfKeepsWhatWasBuiltByThenBeforeNewestOnly) {
    SelectionOptions options;
    options.as_of = kFebruary2024 - 1;
    const Names then = selected(options);
    EXPECT_EQ(then.size(), 5U);
    options.newest_only = true;
    const Names newest_then = selected(options);
    for (const std::string& nevra : newest_then) {
        EXPECT_NE(std::find(then.begin(), then.end(), nevra), then.end()) << nevra;
    }
    EXPECT_FALSE(newest_then.empty());
    options.as_of.reset();
    EXPECT_NE(selected(options), newest_then) << "newer builds exist after the date";
}

// --advisories and --advisory-severity: the packages the selected advisories list, by NEVRA.
TEST_F(Select, AdvisoriesSelectThePackagesTheyListByTypeIdSeverityAndIssueDate) {
    const std::vector<Advisory> advisories = {
        {"SEC-1",
         "security",
         "",
         "Important",
         kFebruary2024,
         {"rpmirror-idx-multi-0:1.9-1.x86_64", "rpmirror-idx-multi-0:1.9-1.aarch64",
          "not-in-this-repo-0:1-1.x86_64"}},
        {"BUG-2", "bugfix", "", "", kFebruary2024 + 86400, {"rpmirror-idx-noarch-0:1.0-1.noarch"}},
    };
    const auto pick = [&](const SelectionOptions& options) {
        const Selection selection = select_packages(*index_, options, {}, advisories);
        Names result;
        for (const std::size_t position : selection.positions) {
            result.push_back((*index_)[position].nevra());
        }
        std::sort(result.begin(), result.end());
        return result;
    };
    SelectionOptions options;
    options.advisories.types = {"security"};
    EXPECT_EQ(pick(options),
              (Names{"rpmirror-idx-multi-1.9-1.aarch64", "rpmirror-idx-multi-1.9-1.x86_64"}));
    options.arches = {"x86_64"};
    EXPECT_EQ(pick(options), (Names{"rpmirror-idx-multi-1.9-1.x86_64"}));
    options.arches.clear();
    options.advisories.severities = {"Critical"};
    EXPECT_TRUE(pick(options).empty()) << "a severity SEC-1 does not have";
    options.advisories.severities = {"Moderate", "Important"};
    EXPECT_EQ(pick(options).size(), 2U);
    options.advisories = {};
    options.advisories.ids = {"BUG-2"};
    EXPECT_EQ(pick(options), (Names{"rpmirror-idx-noarch-1.0-1.noarch"}));
    options.advisories.types = {"security"};
    EXPECT_EQ(pick(options).size(), 3U) << "a type or an ID";
    options.as_of = kFebruary2024 + 86400 - 1;
    EXPECT_EQ(pick(options).size(), 2U) << "BUG-2 was issued after the date";
}

class SelectDuplicates : public ::testing::Test {
  protected:
    // The test repository's primary.xml with its first <package> listed twice, the copy edited
    // by `edit` (applied to the copy only).
    PackageIndex with_duplicate(std::string_view from, std::string_view to) {
        const std::string& xml = IndexTestRepo::get().primary_xml();
        const std::size_t begin = xml.find("<package ");
        const std::size_t end = xml.find("</package>", begin) + 10;
        std::string copy = xml.substr(begin, end - begin);
        if (!from.empty()) {
            const std::size_t at = copy.find(from);
            EXPECT_NE(at, std::string::npos);
            copy.replace(at, from.size(), to);
        }
        std::string text = xml;
        text.insert(end, "\n" + copy);
        auto index = parse_primary_file(dir_.write("primary.xml", text));
        EXPECT_TRUE(index) << index.error().to_string();
        EXPECT_EQ(index->size(), 14U);
        return std::move(*index);
    }
    test::TempDir dir_;
};

TEST_F(SelectDuplicates, SameLocationIsOneDownload) {
    const PackageIndex index = with_duplicate("", "");
    const Selection selection = select_packages(index, {});
    EXPECT_EQ(selection.positions.size(), 13U);
    EXPECT_EQ(selection.duplicate_locations, 1U);
    EXPECT_TRUE(selection.conflicts.empty());
    EXPECT_EQ(selection.positions.front(), 0U) << "the first entry wins";
}

TEST_F(SelectDuplicates, ConflictingDuplicateIsReported) {
    const PackageIndex index = with_duplicate("<size package=\"", "<size package=\"1\" was=\"");
    const Selection selection = select_packages(index, {});
    EXPECT_EQ(selection.positions.size(), 13U);
    ASSERT_EQ(selection.conflicts.size(), 1U);
    EXPECT_NE(selection.conflicts[0].find("Packages/rpmirror-idx-epoch-1.0-1.x86_64.rpm"),
              std::string::npos)
        << selection.conflicts[0];
    EXPECT_NE(index[selection.positions.front()].package_size, 1U) << "the first entry wins";
}

TEST_F(SelectDuplicates, SameHrefUnderAnotherBaseIsAnotherDownload) {
    const PackageIndex index =
        with_duplicate("<location href", "<location xml:base=\"https://other.example/\" href");
    const Selection selection = select_packages(index, {});
    EXPECT_EQ(selection.positions.size(), 14U);
    EXPECT_EQ(selection.duplicate_locations, 0U);
}

}  // namespace
}  // namespace rpmirror
