// The diff stage on hand-made package lists: pairing of EVRs per name.arch, changed checksums,
// epochs, advisories; and updateinfo.xml parsing.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "diff/diff.hpp"
#include "index/updateinfo.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

// A package "name epoch version release arch" whose digest starts with `digest_byte`.
struct Spec {
    std::string name;
    std::uint32_t epoch;
    std::string version;
    std::string release;
    std::string arch;
    std::uint8_t digest_byte = 1;
};

RepoContents contents_of(const std::vector<Spec>& specs, std::string location = "repo") {
    RepoContents contents;
    contents.location = std::move(location);
    for (const Spec& spec : specs) {
        std::array<std::uint8_t, 32> digest{};
        digest[0] = spec.digest_byte;
        const std::string href = "Packages/" + spec.name + "-" + spec.version + "-" + spec.release +
                                 "." + spec.arch + ".rpm";
        PackageView view;
        view.name = spec.name;
        view.arch = spec.arch;
        view.epoch = spec.epoch;
        view.version = spec.version;
        view.release = spec.release;
        view.digest = digest;
        view.package_size = 10;
        view.location_href = href;
        EXPECT_TRUE(contents.packages.add(view));
    }
    return contents;
}

std::vector<std::string> evrs(const std::vector<PackageChange>& changes) {
    std::vector<std::string> result;
    for (const PackageChange& change : changes) {
        result.push_back(change.name + "." + change.arch + " " + change.old_evr + ">" +
                         change.new_evr);
    }
    return result;
}

using Lines = std::vector<std::string>;

TEST(RepoDiff, SameEvrWithAnotherChecksumIsChanged) {
    const RepoDiff diff = diff_repositories(contents_of({{"a", 0, "1", "1", "noarch", 1}}),
                                            contents_of({{"a", 0, "1", "1", "noarch", 2}}));
    ASSERT_EQ(diff.changed.size(), 1U);
    EXPECT_EQ(diff.changed[0].old_checksum, "sha256:01" + std::string(62, '0'));
    EXPECT_EQ(diff.changed[0].new_checksum, "sha256:02" + std::string(62, '0'));
    EXPECT_EQ(format_diff_lines(diff),
              (Lines{"changed    a.noarch  1-1  (sha256:010000000000… -> sha256:020000000000…)"}));
    EXPECT_FALSE(diff.empty());
    EXPECT_EQ(format_diff_summary(diff), "0 added, 0 removed, 0 upgraded, 0 downgraded, 1 changed");
}

TEST(RepoDiff, OnlyOneSidesEvrsArePairedNewestWithNewest) {
    // a keeps 2 and 3, loses 1, gains 4 and 5: 1 -> 5 is the pair, 4 is added.
    const RepoDiff diff =
        diff_repositories(contents_of({{"a", 0, "1", "1", "x86_64"},
                                       {"a", 0, "3", "1", "x86_64"},
                                       {"a", 0, "2", "1", "x86_64"},
                                       {"b", 0, "9", "1", "x86_64"},
                                       {"b", 0, "8", "1", "x86_64"}}),
                          contents_of({{"a", 0, "5", "1", "x86_64"},
                                       {"a", 0, "4", "1", "x86_64"},
                                       {"a", 0, "3", "1", "x86_64"},
                                       {"a", 0, "2", "1", "x86_64"},
                                       {"b", 0, "7", "1", "x86_64"},
                                       {"b", 0, "7", "1", "x86_64"},  // listed twice: counts once
                                       {"b", 1, "1", "1", "i686"}}));
    EXPECT_EQ(evrs(diff.upgraded), (Lines{"a.x86_64 1-1>5-1"}));
    EXPECT_EQ(evrs(diff.added), (Lines{"a.x86_64 >4-1", "b.i686 >1:1-1"}));
    EXPECT_EQ(evrs(diff.downgraded), (Lines{"b.x86_64 9-1>7-1"}));
    EXPECT_EQ(evrs(diff.removed), (Lines{"b.x86_64 8-1>"}));
    EXPECT_TRUE(diff.changed.empty());
}

// Two revisions of a tree read from their .treeinfo: images added, removed and changed by path,
// repositories only one side names, the root repository labelled "/", each shared repository
// compared; a .treeinfo that does not parse and a repository that cannot be read are errors.
TEST(TreeDiff, ImagesByPathRepositoriesByTheirPlaceInTheTree) {
    const std::string a(64, 'a');
    const std::string b(64, 'b');
    const std::string old_text =
        "[general]\nrepository = .\n[checksums]\nimages/kernel = sha256:" + a +
        "\nimages/gone.img = sha256:" + a + "\n";
    const std::string new_text =
        "[header]\ntype = productmd.treeinfo\nversion = 1.2\n"
        "[variant-Base]\nid = Base\nrepository = .\n[variant-Extra]\nid = Extra\nrepository = "
        "Extra\n[checksums]\nimages/kernel = sha256:" +
        b + "\nimages/new.img = sha256:" + a + "\n";
    std::vector<std::string> asked;
    const auto reader = [&](const std::vector<Spec>& specs) {
        return [&asked, specs](const std::string& path) -> Result<RepoContents> {
            asked.push_back(path);
            return contents_of(specs, path);
        };
    };
    auto old_tree = read_tree_contents(old_text, "old", reader({{"a", 0, "1", "1", "noarch"}}));
    auto new_tree = read_tree_contents(new_text, "new", reader({{"a", 0, "2", "1", "noarch"}}));
    ASSERT_TRUE(old_tree) << old_tree.error().to_string();
    ASSERT_TRUE(new_tree) << new_tree.error().to_string();
    EXPECT_EQ(asked, (Lines{"", "", "Extra"}));
    const TreeDiff diff = diff_trees(*old_tree, *new_tree);
    EXPECT_FALSE(diff.empty());
    EXPECT_EQ(
        format_tree_diff_lines(diff),
        (Lines{"/: upgraded   a.noarch  1-1 -> 2-1", "image added      images/new.img",
               "image removed    images/gone.img",
               "image changed    images/kernel  (sha256:aaaaaaaaaaaa… -> sha256:bbbbbbbbbbbb…)",
               "repository added    Extra"}));
    EXPECT_EQ(format_tree_diff_summary(diff),
              (Lines{"/: 0 added, 0 removed, 1 upgraded, 0 downgraded, 0 changed",
                     "images: 1 added, 1 removed, 1 changed; repositories: 1 added, 0 removed"}));
    EXPECT_TRUE(diff_trees(*old_tree, *old_tree).empty());

    auto broken = read_tree_contents("[checksums]\nimages/kernel = md9:00\n", "bad", reader({}));
    ASSERT_FALSE(broken);
    EXPECT_NE(broken.error().to_string().find("bad/.treeinfo"), std::string::npos)
        << broken.error().to_string();
    auto unreadable = read_tree_contents(old_text, "old", [](const std::string&) {
        return Result<RepoContents>(make_error(ErrorCode::NotFound, "gone", "old/x"));
    });
    ASSERT_FALSE(unreadable);
    EXPECT_EQ(unreadable.error().subject, "old/x");
}

TEST(RepoDiff, AdvisoriesAreComparedByIdWhenEitherSideHasThem) {
    RepoContents old_side = contents_of({});
    RepoContents new_side = contents_of({});
    EXPECT_TRUE(diff_repositories(old_side, new_side).empty());
    EXPECT_FALSE(diff_repositories(old_side, new_side).advisories_compared);
    new_side.advisories = std::vector<Advisory>{{"B-2", "security", "b"}, {"A-1", "bugfix", "a"}};
    const RepoDiff diff = diff_repositories(old_side, new_side);
    EXPECT_TRUE(diff.advisories_compared);
    ASSERT_EQ(diff.advisories_added.size(), 2U);
    EXPECT_EQ(diff.advisories_added[0].id, "A-1");  // sorted by id
    EXPECT_EQ(format_diff_summary(diff),
              "0 added, 0 removed, 0 upgraded, 0 downgraded, 0 changed; advisories: 2 added, 0 "
              "removed");
    old_side.advisories = std::vector<Advisory>{{"A-1", "bugfix", "a"}, {"C-3", "", ""}};
    const RepoDiff both = diff_repositories(old_side, new_side);
    EXPECT_EQ(format_diff_lines(both),
              (Lines{"advisory added    B-2  (security)  b", "advisory removed  C-3"}));
}

TEST(RepoDiff, JsonIsVersionedAndComplete) {
    const RepoDiff diff = diff_repositories(contents_of({{"a", 0, "1", "1", "noarch"}}, "old"),
                                            contents_of({{"a", 2, "1", "1", "noarch"}}, "new"));
    const std::string json = format_diff_json(diff);
    EXPECT_NE(json.find("\"version\": 1"), std::string::npos) << json;
    EXPECT_NE(json.find("\"new_evr\": \"2:1-1\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"advisories\": null"), std::string::npos) << json;
}

class Updateinfo : public ::testing::Test {
  protected:
    test::TempDir tmp_;
};

TEST_F(Updateinfo, ReadsIdTypeAndTitleOfEveryUpdate) {
    const auto path =
        tmp_.write("updateinfo.xml",
                   "<updates><update type=\"security\"><id>X-1</id><title>T &amp; 1</title>"
                   "<references><reference id=\"99\"/></references></update>"
                   "<update><id>X-2</id></update></updates>");
    auto parsed = parse_updateinfo_file(path, "https://r.invalid/updateinfo.xml");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    ASSERT_EQ(parsed->size(), 2U);
    EXPECT_EQ((*parsed)[0].id, "X-1");
    EXPECT_EQ((*parsed)[0].type, "security");
    EXPECT_EQ((*parsed)[0].title, "T & 1");
    EXPECT_EQ((*parsed)[1].id, "X-2");
    EXPECT_EQ((*parsed)[1].type, "");
}

TEST_F(Updateinfo, AnUpdateWithoutIdOrBrokenXmlIsAnErrorNamingTheFile) {
    for (const std::string xml :
         {"<updates><update type=\"bugfix\"></update></updates>", "<updates><update><id>X</id>"}) {
        const auto path = tmp_.write("updateinfo.xml", xml);
        auto parsed = parse_updateinfo_file(path, "https://r.invalid/updateinfo.xml");
        ASSERT_FALSE(parsed) << xml;
        EXPECT_EQ(parsed.error().code, ErrorCode::BadInput);
        EXPECT_EQ(parsed.error().subject, "https://r.invalid/updateinfo.xml");
    }
}

}  // namespace
}  // namespace rpmirror
