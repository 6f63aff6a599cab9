// The bundle's manifest: written and read back, and every inconsistency refused with an error
// naming the manifest and what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "checksum/hasher.hpp"
#include "export/manifest.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::bundle {
namespace {

std::string digest_of(const std::string& text) {
    return hash_bytes(ChecksumType::Sha256, text);
}

// Two files of one repository carried in two chunks: "Packages/a.rpm" (6 bytes) spans both.
Manifest sample() {
    Manifest manifest;
    manifest.tool_version = "test";
    manifest.name = "bundle-1";
    BundleRepository repository;
    repository.id = "base";
    repository.repomd_sha256 = digest_of("<repomd/>");
    repository.files.push_back(
        BundleFile{"Packages/a.rpm", 6, digest_of("abcdef"), Placement{0, 0}});
    repository.files.push_back(
        BundleFile{"repodata/repomd.xml", 9, repository.repomd_sha256, Placement{1, 2}});
    manifest.repositories.push_back(repository);
    manifest.chunks.push_back(Chunk{"chunk-000000", 4, digest_of("abcd")});
    manifest.chunks.push_back(Chunk{"chunk-000001", 11, digest_of("ef<repomd/>")});
    return manifest;
}

std::string parse_error(const Manifest& manifest) {
    auto parsed = parse_manifest(format_manifest(manifest), "/b/manifest.json");
    EXPECT_FALSE(parsed.has_value());
    return parsed ? std::string() : parsed.error().to_string();
}

TEST(BundleManifest, WrittenAndReadBack) {
    const Manifest manifest = sample();
    auto parsed = parse_manifest(format_manifest(manifest), "/b/manifest.json");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
    EXPECT_EQ(parsed->name, "bundle-1");
    ASSERT_EQ(parsed->repositories.size(), 1U);
    EXPECT_EQ(parsed->repositories[0].files[0].carried->chunk, 0U);
    EXPECT_EQ(parsed->repositories[0].files[1].carried->offset, 2U);
    EXPECT_FALSE(parsed->base.has_value());
    EXPECT_EQ(identity_after(*parsed).repositories.at("base"),
              manifest.repositories[0].repomd_sha256);
}

TEST(BundleManifest, AnIncrementalManifestNamesItsBase) {
    Manifest manifest = sample();
    manifest.base = BaseIdentity{"r1", {{"base", digest_of("old")}}};
    manifest.repositories[0].files.push_back(BundleFile{"Packages/b.rpm", 3, digest_of("xyz"), {}});
    manifest.repositories[0].removed.push_back("Packages/c.rpm");
    auto parsed = parse_manifest(format_manifest(manifest), "/b/manifest.json");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
    EXPECT_EQ(parsed->base->name, "r1");
    EXPECT_EQ(parsed->base->repositories.at("base"), digest_of("old"));
    EXPECT_EQ(parsed->repositories[0].removed, std::vector<std::string>{"Packages/c.rpm"});
}

// A syncable bundle: each carried file the whole of its own chunk, repos/<id>/<key>; the
// snapshot the exporting side kept is named.
TEST(BundleManifest, ATreesLayoutHoldsEachCarriedFileWholeUnderItsRepository) {
    Manifest manifest = sample();
    manifest.layout = Layout::Trees;
    manifest.snapshot = "export-bundle-1";
    manifest.repositories[0].files[0].carried = Placement{0, 0};
    manifest.repositories[0].files[1].carried = Placement{1, 0};
    manifest.chunks = {Chunk{"repos/base/Packages/a.rpm", 6, digest_of("abcdef")},
                       Chunk{"repos/base/repodata/repomd.xml", 9, digest_of("<repomd/>")}};
    auto parsed = parse_manifest(format_manifest(manifest), "/b/manifest.json");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string();
    EXPECT_EQ(parsed->layout, Layout::Trees);
    EXPECT_EQ(parsed->snapshot, "export-bundle-1");

    // A file under another repository's tree is refused, naming it.
    manifest.chunks[0].name = "repos/other/Packages/a.rpm";
    EXPECT_NE(parse_error(manifest).find("Packages/a.rpm is not the whole of "
                                         "repos/base/Packages/a.rpm (layout trees)"),
              std::string::npos);

    // Without "layout" and "snapshot" (an earlier version's bundle): chunks, no snapshot.
    std::string text = format_manifest(sample());
    text.replace(text.find(" \"layout\": \"chunks\",\n"), 21, "");
    parsed = parse_manifest(text, "/b/manifest.json");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().to_string() << text;
    EXPECT_EQ(parsed->layout, Layout::Chunks);
    EXPECT_FALSE(parsed->snapshot.has_value());
}

TEST(BundleManifest, NotJsonIsNamed) {
    auto parsed = parse_manifest("{\"format\": ", "/b/manifest.json");
    ASSERT_FALSE(parsed.has_value());
    EXPECT_EQ(parsed.error().to_string(), "/b/manifest.json: not JSON (truncated or damaged?)");
}

TEST(BundleManifest, AnotherVersionIsRefused) {
    std::string text = format_manifest(sample());
    text.replace(text.find("\"version\": 1"), 12, "\"version\": 7");
    auto parsed = parse_manifest(text, "/b/manifest.json");
    ASSERT_FALSE(parsed.has_value());
    EXPECT_NE(parsed.error().to_string().find("format version 7 is not 1"), std::string::npos);
}

TEST(BundleManifest, AChunkBeyondTheBundleIsRefused) {
    Manifest manifest = sample();
    manifest.repositories[0].files[1].carried = Placement{5, 0};
    EXPECT_NE(parse_error(manifest).find("chunk 5 of repodata/repomd.xml: the bundle has 2"),
              std::string::npos);
}

TEST(BundleManifest, ChunksThatDoNotHoldExactlyTheCarriedFilesAreRefused) {
    Manifest manifest = sample();
    manifest.chunks[1].size = 12;
    EXPECT_NE(parse_error(manifest).find("the chunks hold 16 bytes, the carried files 15"),
              std::string::npos);
    manifest = sample();
    manifest.repositories[0].files[1].carried = Placement{1, 3};
    EXPECT_NE(parse_error(manifest).find("starts at byte 7 of the chunks, where byte 6 was due"),
              std::string::npos);
}

TEST(BundleManifest, BadKeysDigestsAndRepeatsAreNamed) {
    Manifest manifest = sample();
    manifest.repositories[0].files[0].key = "../escape.rpm";
    EXPECT_NE(parse_error(manifest).find("\"../escape.rpm\" is not a relative path"),
              std::string::npos);
    manifest = sample();
    manifest.repositories[0].files[0].sha256 = "XYZ";
    EXPECT_NE(parse_error(manifest).find("repository base, a file: \"sha256\" is not a SHA-256"),
              std::string::npos);
    manifest = sample();
    manifest.repositories[0].files[1].sha256 = digest_of("other");
    EXPECT_NE(parse_error(manifest).find("repodata/repomd.xml has SHA-256"), std::string::npos);
    manifest = sample();
    manifest.repositories.push_back(manifest.repositories[0]);
    EXPECT_NE(parse_error(manifest).find("repository base is listed twice"), std::string::npos);
}

TEST(BundleManifest, ACompleteBundleCarriesEveryFile) {
    Manifest manifest = sample();
    manifest.repositories[0].files.push_back(BundleFile{"Packages/b.rpm", 3, digest_of("xyz"), {}});
    EXPECT_NE(parse_error(manifest).find("a complete bundle does not carry Packages/b.rpm"),
              std::string::npos);
}

}  // namespace
}  // namespace rpmirror::bundle
