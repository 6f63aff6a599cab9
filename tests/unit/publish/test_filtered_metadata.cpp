// MetadataFilter: whole <package> spans kept or dropped, everything else copied, whatever the
// chunking; packages="N" rewritten.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "publish/filtered_metadata.hpp"

namespace rpmirror {
namespace {

const std::string kPrimary =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<!-- a comment with <package> in it -->\n"
    "<metadata xmlns=\"http://linux.duke.edu/metadata/common\" "
    "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\" packages=\"3\">\n"
    "<package type=\"rpm\">\n  <name>a</name>\n  <checksum type=\"sha256\" "
    "pkgid=\"YES\">AA</checksum>\n  <packager>x &lt;/package&gt;</packager>\n"
    "  <location href=\"Packages/a&amp;b.rpm\"/>\n</package>\n"
    "<package type=\"rpm\">\n  <name>b</name>\n  <checksum type=\"sha256\" "
    "pkgid=\"YES\">bb</checksum>\n  <location href='Packages/b.rpm'/>\n"
    "  <format><rpm:provides><rpm:entry name=\"b\"/></rpm:provides></format>\n</package>\n"
    "<package type=\"rpm\">\n  <name>c</name>\n  <checksum type=\"sha256\" "
    "pkgid=\"YES\">cc</checksum>\n  <location href=\"Packages/c.rpm\"/>\n</package>\n"
    "</metadata>\n";

std::string filter(MetadataFilter::Kind kind, const std::string& input,
                   const std::vector<KeptPackage>& kept, std::size_t chunk,
                   std::uint64_t* count = nullptr) {
    MetadataFilter filter(kind, kept, "test.xml");
    std::string out;
    for (std::size_t at = 0; at < input.size(); at += chunk) {
        EXPECT_TRUE(filter.feed(std::string_view(input).substr(at, chunk), out));
    }
    auto kept_count = filter.finish(out);
    EXPECT_TRUE(kept_count) << kept_count.error().to_string();
    if (count != nullptr && kept_count) {
        *count = *kept_count;
    }
    return out;
}

TEST(MetadataFilter, KeepsWholePackagesByPkgidAndHrefWhateverTheChunking) {
    const std::vector<KeptPackage> kept{{"aa", "Packages/a&b.rpm", ""},
                                        {"cc", "Packages/c.rpm", ""}};
    const std::string expected =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<!-- a comment with <package> in it -->\n"
        "<metadata xmlns=\"http://linux.duke.edu/metadata/common\" "
        "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\" packages=\"2\">\n"
        "<package type=\"rpm\">\n  <name>a</name>\n  <checksum type=\"sha256\" "
        "pkgid=\"YES\">AA</checksum>\n  <packager>x &lt;/package&gt;</packager>\n"
        "  <location href=\"Packages/a&amp;b.rpm\"/>\n</package>\n"
        "<package type=\"rpm\">\n  <name>c</name>\n  <checksum type=\"sha256\" "
        "pkgid=\"YES\">cc</checksum>\n  <location href=\"Packages/c.rpm\"/>\n</package>\n"
        "</metadata>\n";
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, kPrimary.size()}) {
        std::uint64_t count = 0;
        EXPECT_EQ(filter(MetadataFilter::Kind::Primary, kPrimary, kept, chunk, &count), expected)
            << "chunk " << chunk;
        EXPECT_EQ(count, 2U);
    }
}

TEST(MetadataFilter, AnHrefThatDiffersDropsThePackage) {
    std::uint64_t count = 9;
    const std::string out = filter(MetadataFilter::Kind::Primary, kPrimary,
                                   {{"bb", "Packages/elsewhere/b.rpm", ""}}, 5, &count);
    EXPECT_EQ(count, 0U);
    EXPECT_EQ(out.find("<package type"), std::string::npos);
    EXPECT_NE(out.find("packages=\"1\""), std::string::npos);
}

TEST(MetadataFilter, FilelistsMatchByThePkgidAttribute) {
    const std::string filelists =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<filelists xmlns=\"http://linux.duke.edu/metadata/filelists\" packages=\"2\">\n"
        "<package pkgid=\"aa\" name=\"a\" arch=\"x86_64\">\n  <file>/a</file>\n</package>\n"
        "<package pkgid=\"bb\" name=\"b\" arch=\"x86_64\">\n  <file>/b</file>\n</package>\n"
        "</filelists>\n";
    EXPECT_EQ(filter(MetadataFilter::Kind::Filelists, filelists, {{"bb", "Packages/b.rpm", ""}}, 3),
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
              "<filelists xmlns=\"http://linux.duke.edu/metadata/filelists\" packages=\"1\">\n"
              "<package pkgid=\"bb\" name=\"b\" arch=\"x86_64\">\n  <file>/b</file>\n</package>\n"
              "</filelists>\n");
}

TEST(MetadataFilter, ADocumentCutShortIsAnError) {
    MetadataFilter filter(MetadataFilter::Kind::Primary, {}, "cut.xml");
    std::string out;
    ASSERT_TRUE(filter.feed(kPrimary.substr(0, kPrimary.size() / 2), out));
    const auto finished = filter.finish(out);
    ASSERT_FALSE(finished);
    EXPECT_NE(finished.error().to_string().find("cut.xml"), std::string::npos);
}

}  // namespace
}  // namespace rpmirror
