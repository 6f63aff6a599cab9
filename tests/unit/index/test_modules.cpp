// modules.yaml parsing and dnf 4's modular --newest-only selection (reposync.py _get_latest),
// on the scenarios of ci-dnf-stack's reposync.feature (bz1775434, bz1833074).
#include <algorithm>
#include <array>
#include <cstdlib>

#include <gtest/gtest.h>

#include "index/index.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

using Names = std::vector<std::string>;

// "name-version-release" -> one x86_64 package with a digest of its own.
class IndexBuilder {
  public:
    IndexBuilder& add(const std::string& name, const std::string& version,
                      const std::string& release, const std::string& arch = "x86_64") {
        std::array<std::uint8_t, 32> digest{};
        const std::uint32_t serial = ++count_;
        std::copy_n(reinterpret_cast<const std::uint8_t*>(&serial), sizeof serial, digest.begin());
        const std::string href =
            "Packages/" + name + "-" + version + "-" + release + "." + arch + ".rpm";
        PackageView view;
        view.name = name;
        view.arch = arch;
        view.version = version;
        view.release = release;
        view.digest = digest;
        view.package_size = 100;
        view.location_href = href;
        EXPECT_TRUE(index_.add(view));
        return *this;
    }
    const PackageIndex& index() const { return index_; }

  private:
    PackageIndex index_;
    std::uint32_t count_ = 0;
};

std::string stream_document(const std::string& name, const std::string& stream,
                            std::uint64_t version, const std::string& context,
                            const std::vector<std::string>& artifacts) {
    std::string yaml = "---\ndocument: modulemd\nversion: 2\ndata:\n  name: " + name +
                       "\n  stream: \"" + stream + "\"\n  version: " + std::to_string(version) +
                       "\n  context: " + context +
                       "\n  arch: x86_64\n  summary: s\n  description: d\n  license:\n    module:\n"
                       "    - MIT\n  artifacts:\n    rpms:\n";
    for (const std::string& artifact : artifacts) {
        yaml += "    - " + artifact + "\n";
    }
    return yaml + "...\n";
}

Names selected(const PackageIndex& index, const SelectionOptions& options,
               const std::vector<ModuleStreamBuild>& modules) {
    Names names;
    for (const std::size_t position : select_packages(index, options, modules).positions) {
        names.push_back(index[position].nevra());
    }
    std::sort(names.begin(), names.end());
    return names;
}

class Modules : public ::testing::Test {
  protected:
    std::vector<ModuleStreamBuild> parse(const std::string& yaml) {
        const auto path = tmp_.write("modules.yaml", yaml);
        auto parsed = parse_modules_file(path, "https://example.test/repodata/modules.yaml");
        EXPECT_TRUE(parsed) << parsed.error().to_string();
        return parsed ? *parsed : std::vector<ModuleStreamBuild>{};
    }
    test::TempDir tmp_;
};

TEST_F(Modules, EveryStreamIsReadWithItsArtifacts) {
    const auto modules =
        parse(stream_document("badlatest", "stream", 2018, "aaaaaaaa",
                              {"labirinto-0:1.0-9.module.x86_64", "labirinto-0:1.0-9.module.src"}) +
              stream_document("nodejs", "5", 2, "bbbbbbbb", {"nodejs-1:5.4.1-2.x86_64"}) +
              "---\ndocument: modulemd-defaults\nversion: 1\ndata:\n  module: nodejs\n"
              "  stream: \"5\"\n...\n");
    ASSERT_EQ(modules.size(), 2U);
    const auto badlatest = std::find_if(modules.begin(), modules.end(), [](const auto& build) {
        return build.name == "badlatest";
    });
    ASSERT_NE(badlatest, modules.end());
    EXPECT_EQ(badlatest->stream, "stream");
    EXPECT_EQ(badlatest->version, 2018U);
    EXPECT_EQ(badlatest->context, "aaaaaaaa");
    Names artifacts = badlatest->artifacts;
    std::sort(artifacts.begin(), artifacts.end());
    EXPECT_EQ(artifacts,
              (Names{"labirinto-0:1.0-9.module.src", "labirinto-0:1.0-9.module.x86_64"}));
}

TEST_F(Modules, InvalidYamlIsAnErrorNamingTheDisplayName) {
    for (const std::string& yaml :
         {std::string("---\ndocument: modulemd\nversion: 2\ndata: [\n"),
          stream_document("m", "s", 1, "c", {"labirinto-1.0-9.module.src"})}) {
        const auto path = tmp_.write("modules.yaml", yaml);
        auto parsed = parse_modules_file(path, "https://example.test/repodata/modules.yaml");
        ASSERT_FALSE(parsed) << yaml;
        EXPECT_EQ(parsed.error().code, ErrorCode::BadInput);
        EXPECT_EQ(parsed.error().subject, "https://example.test/repodata/modules.yaml");
    }
}

// bz1833074: the newest modular NEVRA is in an older stream version than the newest one.
TEST_F(Modules, NewestOnlyKeepsLatestStreamVersionAndTheVersionOfTheNewestPackage) {
    IndexBuilder builder;
    builder.add("labirinto", "0.8", "1")
        .add("labirinto", "0.9", "1")
        .add("labirinto", "1.0", "9.module")
        .add("labirinto", "1.0", "1.module")
        .add("labirinto", "1.0", "2.module");
    const auto modules = parse(stream_document("badlatest", "stream", 2018, "aaaaaaaa",
                                               {"labirinto-0:1.0-9.module.x86_64"}) +
                               stream_document("badlatest", "stream", 2019, "aaaaaaaa",
                                               {"labirinto-0:1.0-1.module.x86_64"}) +
                               stream_document("badlatest", "stream", 2020, "aaaaaaaa",
                                               {"labirinto-0:1.0-2.module.x86_64"}));
    SelectionOptions options;
    options.newest_only = true;
    EXPECT_EQ(selected(builder.index(), options, modules),
              (Names{"labirinto-0.9-1.x86_64", "labirinto-1.0-2.module.x86_64",
                     "labirinto-1.0-9.module.x86_64"}));
    // Without module metadata, plain newest-only.
    EXPECT_EQ(selected(builder.index(), options, {}), (Names{"labirinto-1.0-9.module.x86_64"}));
    // Without newest-only, modules change nothing.
    EXPECT_EQ(selected(builder.index(), {}, modules).size(), 5U);
}

// bz1775434: every stream, every context of the latest version, newest non-modular packages.
TEST_F(Modules, NewestOnlyKeepsEveryStreamAndEveryContextOfItsLatestVersion) {
    IndexBuilder builder;
    builder.add("nodejs", "5.12.1", "1")
        .add("nodejs", "5.12.2", "3")
        .add("nodejs", "5.3.1", "1.module_a")
        .add("nodejs", "5.3.1", "1.module_b")
        .add("nodejs", "5.4.1", "2.module_a")
        .add("nodejs", "5.4.1", "2.module_b")
        .add("nodejs", "8.0.0", "1.module_c")
        .add("plain", "1.0", "1")
        .add("plain", "2.0", "1");
    const auto modules =
        parse(stream_document("nodejs", "5", 1, "aaaaaaaa", {"nodejs-0:5.3.1-1.module_a.x86_64"}) +
              stream_document("nodejs", "5", 1, "bbbbbbbb", {"nodejs-0:5.3.1-1.module_b.x86_64"}) +
              stream_document("nodejs", "5", 2, "aaaaaaaa", {"nodejs-0:5.4.1-2.module_a.x86_64"}) +
              stream_document("nodejs", "5", 2, "bbbbbbbb", {"nodejs-0:5.4.1-2.module_b.x86_64"}) +
              stream_document("nodejs", "8", 1, "cccccccc", {"nodejs-0:8.0.0-1.module_c.x86_64"}));
    SelectionOptions options;
    options.newest_only = true;
    EXPECT_EQ(selected(builder.index(), options, modules),
              (Names{"nodejs-5.12.2-3.x86_64", "nodejs-5.4.1-2.module_a.x86_64",
                     "nodejs-5.4.1-2.module_b.x86_64", "nodejs-8.0.0-1.module_c.x86_64",
                     "plain-2.0-1.x86_64"}));
    // includepkgs/excludepkgs apply first: artifacts outside them are not brought back.
    options.exclude_globs = {"nodejs-5.4.1-2.module_b"};
    EXPECT_EQ(selected(builder.index(), options, modules),
              (Names{"nodejs-5.12.2-3.x86_64", "nodejs-5.4.1-2.module_a.x86_64",
                     "nodejs-8.0.0-1.module_c.x86_64", "plain-2.0-1.x86_64"}));
}

// --keep-versions N: the N newest EVRs per name.arch, the N newest versions of a stream.
TEST_F(Modules, KeepVersionsKeepsTheNNewestStreamVersionsAndEvrs) {
    IndexBuilder builder;
    builder.add("mod", "1.0", "1.m")
        .add("mod", "1.0", "3.m")
        .add("mod", "1.0", "2.m")
        .add("plain", "1.10", "1")
        .add("plain", "1.9", "1")
        .add("plain", "1.2", "1")
        .add("plain", "1.9", "1", "noarch");
    const auto modules = parse(stream_document("x", "s", 1, "aaaaaaaa", {"mod-0:1.0-1.m.x86_64"}) +
                               stream_document("x", "s", 3, "aaaaaaaa", {"mod-0:1.0-3.m.x86_64"}) +
                               stream_document("x", "s", 2, "aaaaaaaa", {"mod-0:1.0-2.m.x86_64"}));
    SelectionOptions options;
    options.newest_only = true;
    options.keep_versions = 2;
    const Names two{"mod-1.0-2.m.x86_64", "mod-1.0-3.m.x86_64", "plain-1.10-1.x86_64",
                    "plain-1.9-1.noarch", "plain-1.9-1.x86_64"};
    EXPECT_EQ(selected(builder.index(), options, modules), two);
    EXPECT_EQ(selected(builder.index(), options, {}), two);
    options.keep_versions = 1;
    EXPECT_EQ(selected(builder.index(), options, modules),
              (Names{"mod-1.0-3.m.x86_64", "plain-1.10-1.x86_64", "plain-1.9-1.noarch"}));
    options.keep_versions = 3;
    EXPECT_EQ(selected(builder.index(), options, modules).size(), 7U);
    options.newest_only = false;  // keep_versions alone selects nothing away
    options.keep_versions = 1;
    EXPECT_EQ(selected(builder.index(), options, modules).size(), 7U);
}

TEST(KeepVersionsOption, AcceptsOnlyAPositiveWholeNumber) {
    EXPECT_EQ(parse_keep_versions("1").value_or(0), 1U);
    EXPECT_EQ(parse_keep_versions("12").value_or(0), 12U);
    for (const char* bad : {"0", "-1", "+2", "", "2x", " 2", "two", "1000001", "99999999999"}) {
        const auto parsed = parse_keep_versions(bad);
        ASSERT_FALSE(parsed) << bad;
        EXPECT_EQ(parsed.error().code, ErrorCode::BadInput);
        EXPECT_EQ(parsed.error().subject, std::string("--keep-versions ") + bad);
    }
}

TEST(MinBuildTime, AcceptsPaddedAndUnpaddedDatesAndSeconds) {
    EXPECT_EQ(parse_min_build_time("2008-01-01").value_or(-1), 1199145600);
    EXPECT_EQ(parse_min_build_time("2008-1-1").value_or(-1), 1199145600);
    EXPECT_EQ(parse_min_build_time("1199145600").value_or(-1), 1199145600);
    EXPECT_FALSE(parse_min_build_time("yesterday"));
    EXPECT_FALSE(parse_min_build_time(""));
}

}  // namespace
}  // namespace rpmirror
