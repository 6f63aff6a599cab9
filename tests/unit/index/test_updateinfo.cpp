// Advisories: reading updateinfo.xml, the --advisories/--advisory-severity/--as-of values, and
// updateinfo trimmed for a filtered mirror.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "index/updateinfo.hpp"
#include "rpmirror/index/updateinfo.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

// Two collections, three advisories of three types and dates, one package of each epoch form.
constexpr std::string_view kUpdateinfo = R"(<?xml version="1.0" encoding="UTF-8"?>
<updates>
  <update from="security@example.org" status="final" type="security" version="2">
    <id>EX-2026-1</id>
    <title>openssl: a fix</title>
    <issued date="2026-03-01 10:00:00"/>
    <severity>Important</severity>
    <pkglist>
      <collection short="ex">
        <name>Example</name>
        <package name="openssl" version="3.0.1" release="2" epoch="1" arch="x86_64" src="openssl-3.0.1-2.src.rpm">
          <filename>openssl-3.0.1-2.x86_64.rpm</filename>
        </package>
        <package name="openssl" version="3.0.1" release="2" epoch="1" arch="aarch64" src="openssl-3.0.1-2.src.rpm">
          <filename>openssl-3.0.1-2.aarch64.rpm</filename>
        </package>
      </collection>
      <collection short="other">
        <package name="openssl-libs" version="3.0.1" release="2" arch="i686">
          <filename>openssl-libs-3.0.1-2.i686.rpm</filename>
        </package>
      </collection>
    </pkglist>
  </update>
  <update type="bugfix">
    <id>EX-2026-2</id>
    <issued date="1780000000"/>
    <pkglist>
      <collection>
        <package name="bash" version="5.2" release="1" epoch="0" arch="x86_64"/>
      </collection>
    </pkglist>
  </update>
  <update type="enhancement">
    <id>EX-2026-3</id>
    <issued date="2026-05-01"/>
    <severity>Low</severity>
    <pkglist>
      <collection>
        <package name="zsh" version="5.9" release="1" arch="noarch"/>
      </collection>
    </pkglist>
  </update>
</updates>
)";

std::vector<Advisory> parsed(std::string_view xml) {
    test::TempDir dir;
    std::ofstream(dir / "updateinfo.xml") << xml;
    auto advisories = parse_updateinfo_file(dir / "updateinfo.xml", "repodata/updateinfo.xml");
    EXPECT_TRUE(advisories) << advisories.error().to_string();
    return advisories ? *advisories : std::vector<Advisory>{};
}

TEST(Advisories, ReadsTypeSeverityIssuedDateAndEveryCollectionsPackagesAsStrictNevras) {
    const auto advisories = parsed(kUpdateinfo);
    ASSERT_EQ(advisories.size(), 3U);
    EXPECT_EQ(advisories[0].id, "EX-2026-1");
    EXPECT_EQ(advisories[0].type, "security");
    EXPECT_EQ(advisories[0].title, "openssl: a fix");
    EXPECT_EQ(advisories[0].severity, "Important");
    EXPECT_EQ(advisories[0].issued, 1772359200);  // 2026-03-01 10:00:00 UTC
    EXPECT_EQ(advisories[0].nevras,
              (std::vector<std::string>{"openssl-1:3.0.1-2.x86_64", "openssl-1:3.0.1-2.aarch64",
                                        "openssl-libs-0:3.0.1-2.i686"}));
    EXPECT_EQ(advisories[1].issued, 1780000000) << "seconds since the epoch";
    EXPECT_EQ(advisories[1].severity, "");
    EXPECT_EQ(advisories[2].issued, 1777593600) << "a date alone is its midnight";
}

TEST(Advisories, AnUpdateWithoutIdOrBrokenXmlIsAnErrorNamingTheFileAndLine) {
    test::TempDir dir;
    std::ofstream(dir / "a.xml") << "<updates>\n<update type=\"bugfix\"><title>t</title></update>"
                                    "</updates>";
    auto missing = parse_updateinfo_file(dir / "a.xml", "https://example.org/updateinfo.xml");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().to_string(),
              "https://example.org/updateinfo.xml: line 2: <update> without <id>");
    std::ofstream(dir / "b.xml") << "<updates><update>";
    EXPECT_FALSE(parse_updateinfo_file(dir / "b.xml", "b"));
}

TEST(Advisories, OptionValuesAreCheckedAndNamedInErrors) {
    AdvisoryFilter filter;
    ASSERT_TRUE(parse_advisories("security, EX-2026-2 bugfix", filter));
    EXPECT_EQ(filter.types, (std::vector<std::string>{"security", "bugfix"}));
    EXPECT_EQ(filter.ids, (std::vector<std::string>{"EX-2026-2"}));
    EXPECT_EQ(parse_advisories(" , ", filter).error().to_string().rfind("--advisories: ", 0), 0U);
    ASSERT_TRUE(parse_advisory_severities("important,CRITICAL", filter));
    EXPECT_EQ(filter.severities, (std::vector<std::string>{"Important", "Critical"}));
    auto bad = parse_advisory_severities("Important,urgent", filter);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().to_string(),
              "--advisory-severity urgent: expected Low, Moderate, Important or Critical");
    EXPECT_EQ(parse_as_of("2026-03-01").value(), 1772409599) << "the whole day, UTC";
    EXPECT_EQ(parse_as_of("1772409599").value(), 1772409599);
    auto date = parse_as_of("March 1st");
    ASSERT_FALSE(date);
    EXPECT_EQ(date.error().to_string(),
              "--as-of March 1st: expected YYYY-MM-DD or seconds since the epoch");
}

TEST(Advisories, AdvisorySelectionIsATypeOrAnIdAndASeverityIssuedByTheDate) {
    const auto advisories = parsed(kUpdateinfo);
    ASSERT_EQ(advisories.size(), 3U);
    AdvisoryFilter filter;
    EXPECT_TRUE(advisory_selected(advisories[1], filter, std::nullopt)) << "no filter";
    filter.types = {"security"};
    EXPECT_TRUE(advisory_selected(advisories[0], filter, std::nullopt));
    EXPECT_FALSE(advisory_selected(advisories[1], filter, std::nullopt));
    filter.ids = {"EX-2026-2"};
    EXPECT_TRUE(advisory_selected(advisories[1], filter, std::nullopt));
    filter = {};
    filter.severities = {"Important", "Critical"};
    EXPECT_TRUE(advisory_selected(advisories[0], filter, std::nullopt));
    EXPECT_FALSE(advisory_selected(advisories[1], filter, std::nullopt)) << "no severity";
    EXPECT_FALSE(advisory_selected(advisories[2], filter, std::nullopt));
    EXPECT_TRUE(advisory_selected(advisories[0], {}, 1772409599));
    EXPECT_FALSE(advisory_selected(advisories[2], {}, 1772409599)) << "issued in May";
    Advisory undated = advisories[0];
    undated.issued.reset();
    EXPECT_FALSE(advisory_selected(undated, {}, 1772409599)) << "no date: not known to be then";
}

TEST(Advisories, TrimKeepsTheFileWhenEveryAdvisoryHasAllItsPackages) {
    const std::unordered_set<std::string> all = {
        "openssl-1:3.0.1-2.x86_64", "openssl-1:3.0.1-2.aarch64", "openssl-libs-0:3.0.1-2.i686",
        "bash-0:5.2-1.x86_64", "zsh-0:5.9-1.noarch"};
    auto trimmed = trim_updateinfo_xml(kUpdateinfo, all, {}, std::nullopt, "u");
    ASSERT_TRUE(trimmed) << trimmed.error().to_string();
    EXPECT_FALSE(*trimmed) << "nothing changes: upstream's bytes stay";
}

TEST(Advisories, TrimLeavesOutUnselectedLateAndUnmirroredAdvisoriesAndForeignPackages) {
    const std::unordered_set<std::string> mirrored = {"openssl-1:3.0.1-2.x86_64",
                                                      "bash-0:5.2-1.x86_64", "zsh-0:5.9-1.noarch"};
    AdvisoryFilter filter;
    filter.types = {"security", "enhancement"};
    auto trimmed = trim_updateinfo_xml(kUpdateinfo, mirrored, filter, 1772409599, "u");
    ASSERT_TRUE(trimmed && *trimmed) << (trimmed ? "unchanged" : trimmed.error().to_string());
    EXPECT_EQ((*trimmed)->left_out,
              (std::vector<std::string>{"EX-2026-2: not selected (--advisories, "
                                        "--advisory-severity)",
                                        "EX-2026-3: issued after the --as-of date"}));
    test::TempDir dir;
    std::ofstream(dir / "t.xml") << (*trimmed)->xml;
    const auto kept = parse_updateinfo_file(dir / "t.xml", "t");
    ASSERT_TRUE(kept) << kept.error().to_string();
    ASSERT_EQ(kept->size(), 1U);
    EXPECT_EQ(kept->front().id, "EX-2026-1");
    EXPECT_EQ(kept->front().nevras, (std::vector<std::string>{"openssl-1:3.0.1-2.x86_64"}));
    EXPECT_EQ((*trimmed)->xml.find("collection short=\"other\""), std::string::npos)
        << "a collection left without a package goes";
    EXPECT_NE((*trimmed)->xml.find("<title>openssl: a fix</title>"), std::string::npos);
    EXPECT_NE((*trimmed)->xml.find("src=\"openssl-3.0.1-2.src.rpm\""), std::string::npos);
    // What stays is upstream's text, byte for byte: the head of the advisory and its kept package.
    const std::string_view original = kUpdateinfo;
    const std::size_t head = original.find("  <update from=\"security");
    const std::size_t kept_end =
        original.find("</package>", head) + std::string_view("</package>").size();
    EXPECT_EQ((*trimmed)->xml.substr(0, kept_end), original.substr(0, kept_end));

    auto none = trim_updateinfo_xml(kUpdateinfo, {"bash-0:5.2-1.x86_64"}, {}, std::nullopt, "u");
    ASSERT_TRUE(none && *none);
    EXPECT_EQ((*none)->left_out,
              (std::vector<std::string>{"EX-2026-1: no package of it is mirrored",
                                        "EX-2026-3: no package of it is mirrored"}));
}

// Fedora's updates repository has an updateinfo of tens of MB: libxml2 refuses one chunk over
// 10 MB ("Huge input lookup"), so the trim reads it as a file is read.
TEST(Advisories, TrimReadsADocumentOfTensOfMegabytes) {
    std::string xml = "<updates>\n";
    const std::string description(1000, 'x');
    for (int n = 0; n < 12000; ++n) {
        xml += "  <update type=\"" + std::string(n % 2 ? "bugfix" : "security") + "\"><id>U-" +
               std::to_string(n) + "</id><description>" + description +
               "</description><pkglist><collection><package name=\"p" + std::to_string(n) +
               "\" version=\"1\" release=\"1\" arch=\"noarch\"/></collection></pkglist>"
               "</update>\n";
    }
    xml += "</updates>\n";
    ASSERT_GT(xml.size(), 12'000'000U);
    AdvisoryFilter security;
    security.types = {"security"};
    auto trimmed = trim_updateinfo_xml(xml, {"p0-0:1-1.noarch"}, security, std::nullopt, "big");
    ASSERT_TRUE(trimmed) << trimmed.error().to_string();
    ASSERT_TRUE(*trimmed);
    EXPECT_EQ((*trimmed)->left_out.size(), 11999U);
    EXPECT_NE((*trimmed)->xml.find("<id>U-0</id>"), std::string::npos);
}

TEST(Advisories, TrimRefusesEntitiesAndOtherDocuments) {
    auto entity = trim_updateinfo_xml("<!DOCTYPE updates [<!ENTITY a \"b\">]><updates/>", {}, {},
                                      std::nullopt, "u.xml");
    ASSERT_FALSE(entity);
    EXPECT_EQ(entity.error().code, ErrorCode::Unsafe);
    auto other = trim_updateinfo_xml("<comps/>", {}, {}, std::nullopt, "u.xml");
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().to_string(), "u.xml: is not an updateinfo document (<updates>)");
}

}  // namespace
}  // namespace rpmirror
