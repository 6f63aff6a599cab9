// trim_comps_xml: a filtered mirror's comps lists the groups it can install, and no package it
// filtered out; packages of other repositories are not missing.
#include <gtest/gtest.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "publish/filtered_metadata.hpp"

namespace rpmirror {
namespace {

// web: mandatory httpd (filtered out), so left out. tools: mandatory wget (kept) and bash (of
// another repository), default lame (filtered out), optional flac (kept). The server
// environment needs web; the workstation one needs tools and offers web.
const std::string kComps = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE comps PUBLIC "-//Red Hat, Inc.//DTD Comps info//EN" "comps.dtd">
<comps>
  <group>
    <id>web</id>
    <name>Web</name>
    <packagelist>
      <packagereq>httpd</packagereq>
      <packagereq type="optional">wget</packagereq>
    </packagelist>
  </group>
  <group>
    <id>tools</id>
    <name>Tools &amp; more</name>
    <name xml:lang="de">Werkzeuge</name>
    <packagelist>
      <packagereq type="mandatory">wget</packagereq>
      <packagereq type="mandatory">bash</packagereq>
      <packagereq type="default">lame</packagereq>
      <packagereq type="optional">flac</packagereq>
      <packagereq type="conditional" requires="httpd">mod_wget</packagereq>
    </packagelist>
  </group>
  <category>
    <id>servers</id>
    <grouplist>
      <groupid>web</groupid>
    </grouplist>
  </category>
  <category>
    <id>everything</id>
    <grouplist>
      <groupid>web</groupid>
      <groupid>tools</groupid>
    </grouplist>
  </category>
  <environment>
    <id>server</id>
    <grouplist>
      <groupid>web</groupid>
    </grouplist>
  </environment>
  <environment>
    <id>workstation</id>
    <grouplist>
      <groupid>tools</groupid>
    </grouplist>
    <optionlist>
      <groupid>web</groupid>
    </optionlist>
  </environment>
</comps>
)";

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(CompsTrim, GroupsWithAFilteredOutMandatoryPackageGoAndTheRestLoseWhatIsNotMirrored) {
    const auto trimmed = trim_comps_xml(kComps, {"httpd", "lame", "mod_wget"}, "comps.xml");
    ASSERT_TRUE(trimmed) << trimmed.error().to_string();
    ASSERT_TRUE(*trimmed);
    const std::string& xml = (*trimmed)->xml;
    EXPECT_FALSE(contains(xml, "<id>web</id>")) << xml;
    EXPECT_FALSE(contains(xml, "httpd</packagereq>")) << xml;
    EXPECT_TRUE(contains(xml, "<id>tools</id>")) << xml;
    EXPECT_TRUE(contains(xml, "<name>Tools &amp; more</name>")) << xml;
    EXPECT_TRUE(contains(xml, "<name xml:lang=\"de\">Werkzeuge</name>")) << xml;
    EXPECT_TRUE(contains(xml, "<packagereq type=\"mandatory\">wget</packagereq>")) << xml;
    EXPECT_TRUE(contains(xml, "<packagereq type=\"mandatory\">bash</packagereq>"))
        << "another repository's package is not missing: " << xml;
    EXPECT_TRUE(contains(xml, "<packagereq type=\"optional\">flac</packagereq>")) << xml;
    EXPECT_FALSE(contains(xml, "lame")) << xml;
    EXPECT_FALSE(contains(xml, "mod_wget")) << xml;
    // Categories keep what is left (and go when nothing is); environments need their groups.
    EXPECT_FALSE(contains(xml, "<id>servers</id>")) << xml;
    EXPECT_TRUE(contains(xml, "<id>everything</id>")) << xml;
    EXPECT_FALSE(contains(xml, "<groupid>web</groupid>")) << xml;
    EXPECT_FALSE(contains(xml, "<id>server</id>")) << xml;
    EXPECT_TRUE(contains(xml, "<id>workstation</id>")) << xml;
    EXPECT_TRUE(contains(xml, "<!DOCTYPE comps")) << xml;
    EXPECT_FALSE(contains(xml, "\n    \n")) << "no blank lines where elements were: " << xml;
    EXPECT_EQ((*trimmed)->left_out,
              (std::vector<std::string>{"group web: its mandatory package httpd is not mirrored",
                                        "environment server: one of its groups is left out"}));
    // What stays reads as comps again, and trimming it once more changes nothing.
    const auto again = trim_comps_xml(xml, {"httpd", "lame", "mod_wget"}, "comps.xml");
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_FALSE(*again);
}

TEST(CompsTrim, NothingFilteredOutLeavesUpstreamsFile) {
    const auto trimmed = trim_comps_xml(kComps, {"unrelated"}, "comps.xml");
    ASSERT_TRUE(trimmed) << trimmed.error().to_string();
    EXPECT_FALSE(*trimmed);
}

TEST(CompsTrim, EntitiesAndOtherDocumentsAreRefusedNamingTheFile) {
    const auto entity = trim_comps_xml(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE comps [<!ENTITY a \"aaaa\">]>\n<comps>&a;</comps>\n",
        {"x"}, "repodata/comps.xml");
    ASSERT_FALSE(entity);
    EXPECT_EQ(entity.error().code, ErrorCode::Unsafe);
    EXPECT_TRUE(contains(entity.error().to_string(), "repodata/comps.xml"));
    for (const std::string bad : {"<metadata/>", "<comps><group>", "not xml", ""}) {
        const auto refused = trim_comps_xml(bad, {"x"}, "repodata/comps.xml");
        ASSERT_FALSE(refused) << bad;
        EXPECT_EQ(refused.error().code, ErrorCode::BadInput) << bad;
        EXPECT_TRUE(contains(refused.error().to_string(), "repodata/comps.xml")) << bad;
    }
}

}  // namespace
}  // namespace rpmirror
