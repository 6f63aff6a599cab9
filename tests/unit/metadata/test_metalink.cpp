#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "metadata/metadata.hpp"
#include "metadata_test_support.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

// A real repomd.xml (createrepo_c on an empty directory) and its digests from coreutils.
struct RealRepomd {
    std::string bytes;
    std::string md5;
    std::string sha256;
    std::string sha512;
};

RealRepomd make_real_repomd(const test::TempDir& dir) {
    const auto repo = dir / "repo";
    std::filesystem::create_directories(repo);
    const int status = test::run_command(
        {"createrepo_c", "--quiet", "--revision", "7", repo.string()}, dir / "createrepo.log");
    EXPECT_EQ(status, 0) << test::read_file(dir / "createrepo.log");
    const auto repomd = repo / "repodata" / "repomd.xml";
    RealRepomd real;
    real.bytes = test::read_file(repomd);
    real.md5 = test::tool_digest("md5sum", repomd, dir.path());
    real.sha256 = test::tool_digest("sha256sum", repomd, dir.path());
    real.sha512 = test::tool_digest("sha512sum", repomd, dir.path());
    EXPECT_EQ(real.sha256.size(), 64U);
    return real;
}

std::span<const std::byte> as_bytes(const std::string& text) {
    return std::as_bytes(std::span<const char>(text));
}

const std::string kOtherSha256(64, 'a');

// A MirrorManager-style metalink whose main entry is `main_hashes`/`main_size` and whose single
// alternate is `alternate_hashes`/`alternate_size`.
std::string metalink_document(const std::string& main_hashes, std::uint64_t main_size,
                              const std::string& alternate_hashes, std::uint64_t alternate_size) {
    return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
           "<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\" "
           "type=\"dynamic\" pubdate=\"Mon, 01 Jan 2024 00:00:00 GMT\" "
           "generator=\"mirrormanager\" xmlns:mm0=\"http://fedorahosted.org/mirrormanager\">\n"
           " <files>\n"
           "  <file name=\"repomd.xml\">\n"
           "   <mm0:timestamp>1704067200</mm0:timestamp>\n"
           "   <size>" +
           std::to_string(main_size) +
           "</size>\n"
           "   <verification>\n" +
           main_hashes +
           "   </verification>\n"
           "   <mm0:alternates>\n"
           "    <mm0:alternate>\n"
           "     <mm0:timestamp>1703980800</mm0:timestamp>\n"
           "     <size>" +
           std::to_string(alternate_size) +
           "</size>\n"
           "     <verification>\n" +
           alternate_hashes +
           "     </verification>\n"
           "    </mm0:alternate>\n"
           "   </mm0:alternates>\n"
           "   <resources maxconnections=\"1\">\n"
           "    <url protocol=\"https\" type=\"https\" location=\"US\" preference=\"90\">"
           "https://mirror-b.example/fedora/40/x86_64/os/repodata/repomd.xml</url>\n"
           "    <url protocol=\"rsync\" type=\"rsync\" location=\"DE\" preference=\"100\">"
           "rsync://mirror-r.example/fedora/40/x86_64/os/repodata/repomd.xml</url>\n"
           "    <url protocol=\"http\" type=\"http\" location=\"FR\" preference=\"100\">"
           "http://mirror-a.example/pub/fedora/repodata/repomd.xml</url>\n"
           "    <url type=\"https\" location=\"JP\">"
           "https://mirror-c.example/f/repodata/repomd.xml</url>\n"
           "    <url protocol=\"https\" preference=\"99\">https://no-suffix.example/f/</url>\n"
           "   </resources>\n"
           "  </file>\n"
           " </files>\n"
           "</metalink>\n";
}

std::string hash_line(const std::string& type, const std::string& hex) {
    return "    <hash type=\"" + type + "\">" + hex + "</hash>\n";
}

TEST(Metalink, ParsesRepomdEntryAlternatesHashesAndUrls) {
    const std::string main_hashes = hash_line("md5", std::string(32, 'b')) +
                                    hash_line("sha256", std::string(64, 'C')) +
                                    hash_line("tiger", "ffff");
    const auto metalink = parse_metalink(
        metalink_document(main_hashes, 4321, hash_line("sha512", std::string(128, 'd')), 4000),
        "https://mirrors.example/metalink?repo=fedora-40");
    ASSERT_TRUE(metalink) << metalink.error().to_string();
    EXPECT_EQ(metalink->repomd.timestamp, 1704067200);
    EXPECT_EQ(metalink->repomd.size, 4321U);
    ASSERT_EQ(metalink->repomd.hashes.size(), 2U);  // "tiger" is ignored
    EXPECT_EQ(metalink->repomd.hashes[0].type, ChecksumType::Md5);
    EXPECT_EQ(metalink->repomd.hashes[1].type, ChecksumType::Sha256);
    EXPECT_EQ(metalink->repomd.hashes[1].hex, std::string(64, 'c'));  // lowercased
    ASSERT_EQ(metalink->alternates.size(), 1U);
    EXPECT_EQ(metalink->alternates[0].timestamp, 1703980800);
    EXPECT_EQ(metalink->alternates[0].size, 4000U);
    ASSERT_EQ(metalink->alternates[0].hashes.size(), 1U);
    EXPECT_EQ(metalink->alternates[0].hashes[0].type, ChecksumType::Sha512);

    // Highest preference first, ties in document order; the URL without the repomd suffix is
    // a base as it is (as librepo has it); a missing preference is 0; a missing protocol comes
    // from the scheme.
    ASSERT_EQ(metalink->urls.size(), 5U);
    EXPECT_EQ(metalink->urls[0].url,
              "rsync://mirror-r.example/fedora/40/x86_64/os/repodata/repomd.xml");
    EXPECT_EQ(metalink->urls[0].protocol, "rsync");
    EXPECT_EQ(metalink->urls[0].location, "DE");
    EXPECT_EQ(metalink->urls[0].preference, 100);
    EXPECT_EQ(metalink->urls[1].base_url, "http://mirror-a.example/pub/fedora/");
    EXPECT_EQ(metalink->urls[2].base_url, "https://no-suffix.example/f/");
    EXPECT_EQ(metalink->urls[2].preference, 99);
    EXPECT_EQ(metalink->urls[3].base_url, "https://mirror-b.example/fedora/40/x86_64/os/");
    EXPECT_EQ(metalink->urls[3].preference, 90);
    EXPECT_EQ(metalink->urls[4].base_url, "https://mirror-c.example/f/");
    EXPECT_EQ(metalink->urls[4].protocol, "https");
    EXPECT_EQ(metalink->urls[4].preference, 0);
    // base_urls() keeps only what the downloader can fetch (no rsync).
    EXPECT_EQ(metalink->base_urls(), (std::vector<std::string>{
                                         "http://mirror-a.example/pub/fedora/",
                                         "https://no-suffix.example/f/",
                                         "https://mirror-b.example/fedora/40/x86_64/os/",
                                         "https://mirror-c.example/f/",
                                     }));
}

TEST(Metalink, RealRepomdMatchingTheCurrentEntryIsAccepted) {
    test::TempDir dir;
    const RealRepomd real = make_real_repomd(dir);
    const auto metalink = parse_metalink(
        metalink_document(hash_line("md5", real.md5) + hash_line("sha256", real.sha256) +
                              hash_line("sha512", real.sha512),
                          real.bytes.size(), hash_line("sha256", kOtherSha256), 10),
        "metalink.xml");
    ASSERT_TRUE(metalink) << metalink.error().to_string();
    EXPECT_TRUE(verify_repomd_against_metalink(as_bytes(real.bytes), *metalink));
}

TEST(Metalink, RealRepomdMatchingOnlyAnAlternateIsAccepted) {
    // The mirror lags: the metalink's current entry is a newer repomd.xml.
    test::TempDir dir;
    const RealRepomd real = make_real_repomd(dir);
    const auto metalink = parse_metalink(
        metalink_document(hash_line("sha256", kOtherSha256), real.bytes.size() + 1,
                          hash_line("sha256", real.sha256) + hash_line("md5", real.md5),
                          real.bytes.size()),
        "metalink.xml");
    ASSERT_TRUE(metalink);
    EXPECT_TRUE(verify_repomd_against_metalink(as_bytes(real.bytes), *metalink));

    std::string tampered = real.bytes;
    tampered[tampered.size() / 2] ^= 0x01;
    const auto rejected = verify_repomd_against_metalink(as_bytes(tampered), *metalink);
    ASSERT_FALSE(rejected);
    EXPECT_EQ(rejected.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(rejected.error().subject, "repomd.xml");
    EXPECT_NE(rejected.error().message.find("size " + std::to_string(real.bytes.size())),
              std::string::npos)
        << rejected.error().message;
}

TEST(Metalink, EveryKnownHashMustMatchNotJustOne) {
    test::TempDir dir;
    const RealRepomd real = make_real_repomd(dir);
    const auto metalink = parse_metalink(
        metalink_document(hash_line("sha256", real.sha256) + hash_line("md5", std::string(32, '0')),
                          real.bytes.size(), hash_line("sha256", kOtherSha256), 1),
        "metalink.xml");
    ASSERT_TRUE(metalink);
    EXPECT_FALSE(verify_repomd_against_metalink(as_bytes(real.bytes), *metalink));
}

TEST(Metalink, SizeMismatchIsRejectedEvenWhenHashesMatch) {
    test::TempDir dir;
    const RealRepomd real = make_real_repomd(dir);
    const auto metalink =
        parse_metalink(metalink_document(hash_line("sha256", real.sha256), real.bytes.size() + 5,
                                         hash_line("sha256", kOtherSha256), 1),
                       "metalink.xml");
    ASSERT_TRUE(metalink);
    EXPECT_FALSE(verify_repomd_against_metalink(as_bytes(real.bytes), *metalink));
}

TEST(Metalink, TruncatedXmlIsAnErrorNamingTheMetalink) {
    const std::string document = metalink_document(hash_line("sha256", kOtherSha256), 1,
                                                   hash_line("sha256", kOtherSha256), 1);
    const auto metalink =
        parse_metalink(document.substr(0, document.size() / 2), "https://mirrors.example/metalink");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().code, ErrorCode::BadInput);
    EXPECT_EQ(metalink.error().subject, "https://mirrors.example/metalink");
    EXPECT_EQ(metalink.error().message.rfind("line ", 0), 0U) << metalink.error().message;
}

TEST(Metalink, MissingRepomdEntryIsAnError) {
    std::string document = metalink_document(hash_line("sha256", kOtherSha256), 1,
                                             hash_line("sha256", kOtherSha256), 1);
    document.replace(document.find("name=\"repomd.xml\""), 17, "name=\"other.xml\"");
    const auto metalink = parse_metalink(document, "metalink.xml");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().message, "metalink has no <file name=\"repomd.xml\">");
    EXPECT_EQ(metalink.error().subject, "metalink.xml");
}

TEST(Metalink, OnlyUnknownHashTypesIsAnError) {
    const auto metalink =
        parse_metalink(metalink_document(hash_line("tiger", "0123") + hash_line("crc32", "abcd"), 1,
                                         hash_line("sha256", kOtherSha256), 1),
                       "metalink.xml");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().code, ErrorCode::BadInput);
    EXPECT_EQ(metalink.error().message,
              "line 4: <file name=\"repomd.xml\"> has no hash of a known type (md5, sha1, sha224, "
              "sha256, sha384, sha512)");
}

TEST(Metalink, AlternateWithoutKnownHashIsDropped) {
    const auto metalink = parse_metalink(
        metalink_document(hash_line("sha256", kOtherSha256), 1, hash_line("tiger", "0123"), 1),
        "metalink.xml");
    ASSERT_TRUE(metalink);
    EXPECT_TRUE(metalink->alternates.empty());
}

// What the random differential test found librepo does: an alternate's hash that is no digest
// is dropped (an alternate is only a fallback), an element where a metalink has none is skipped
// with its contents (a <verification> straight inside <alternates> vouches for nothing), and
// the text of a <url> around such an element is the URL.
TEST(Metalink, MisplacedElementsAndAnAlternatesBadHashAreSkipped) {
    const auto bad_alternate = parse_metalink(
        metalink_document(hash_line("sha256", kOtherSha256), 1, hash_line("sha256", "abc"), 1),
        "metalink.xml");
    ASSERT_TRUE(bad_alternate) << bad_alternate.error().to_string();
    EXPECT_TRUE(bad_alternate->alternates.empty());

    std::string document =
        metalink_document(hash_line("sha256", kOtherSha256), 1, hash_line("md5", "x"), 1);
    document = std::regex_replace(document, std::regex("    <mm0:alternate>\n"), "");
    document = std::regex_replace(document, std::regex("    </mm0:alternate>\n"), "");
    document = std::regex_replace(document, std::regex("https://mirror-b\\.example"),
                                  "https://mirror-b<x>ignored</x>.example");
    const auto misplaced = parse_metalink(document, "metalink.xml");
    ASSERT_TRUE(misplaced) << misplaced.error().to_string();
    ASSERT_EQ(misplaced->repomd.hashes.size(), 1U);
    EXPECT_EQ(misplaced->repomd.hashes[0].hex, kOtherSha256);
    EXPECT_EQ(misplaced->repomd.timestamp, 1704067200);
    EXPECT_TRUE(misplaced->alternates.empty());
    const auto us = std::find_if(misplaced->urls.begin(), misplaced->urls.end(),
                                 [](const MetalinkUrl& url) { return url.location == "US"; });
    ASSERT_NE(us, misplaced->urls.end());
    EXPECT_EQ(us->url, "https://mirror-b.example/fedora/40/x86_64/os/repodata/repomd.xml");
}

TEST(Metalink, MalformedDigestIsAnErrorWithLine) {
    const auto metalink = parse_metalink(
        metalink_document(hash_line("sha256", "abc"), 1, hash_line("sha256", kOtherSha256), 1),
        "metalink.xml");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().message,
              "line 8: <hash type=\"sha256\"> \"abc\" is not a sha256 digest");
}

TEST(Metalink, NoUrlIsAnError) {
    const auto metalink = parse_metalink(
        "<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\"><files>"
        "<file name=\"repomd.xml\"><verification><hash type=\"sha256\">" +
            kOtherSha256 +
            "</hash></verification><resources><url protocol=\"https\"></url></resources>"
            "</file></files></metalink>",
        "metalink.xml");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().message, "metalink lists no mirrors (no <url>)");
}

// As librepo (lr_lrmirrorlist_append_metalink): a trailing "repodata/repomd.xml" is cut off,
// wherever it starts, and a URL without one is a base URL as it is. Whatever is fetched from
// such a base is checked against the metalink's hashes like anything else. (fuzz_metalink found
// the first case; it used to be skipped, which dnf does not do.)
TEST(Metalink, RepomdSuffixIsCutOffAsLibrepoCutsIt) {
    const auto document = test::read_file(test::source_root() / "tests/data/fuzz/fuzz_metalink" /
                                          "repomd-suffix-inside-segment.xml");
    ASSERT_FALSE(document.empty());
    const auto metalink = parse_metalink(document, "metalink.xml");
    ASSERT_TRUE(metalink) << metalink.error().to_string();
    ASSERT_EQ(metalink->urls.size(), 4U);
    EXPECT_EQ(metalink->base_urls(), (std::vector<std::string>{
                                         "https://mirror-b.example/fedora/40/x86_64/os/",
                                         "http://mirror-a.example/pub/fedora)",
                                         "https://mirror-c.example/f/",
                                     }));

    const auto bare = parse_metalink(
        "<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\"><files>"
        "<file name=\"repomd.xml\"><verification><hash type=\"sha256\">" +
            kOtherSha256 +
            "</hash></verification><resources><url>https://x.example/arepodata/repomd.xml</url>"
            "<url>https://y.example/pub/</url></resources></file></files></metalink>",
        "metalink.xml");
    ASSERT_TRUE(bare) << bare.error().to_string();
    EXPECT_EQ(bare->base_urls(),
              (std::vector<std::string>{"https://x.example/a", "https://y.example/pub/"}));
}

TEST(Metalink, NamelessFileIsAnErrorAsInLibrepo) {
    const auto metalink = parse_metalink(
        "<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\"><files>\n"
        "<file><size>1</size></file>\n"
        "<file name=\"repomd.xml\"><verification><hash type=\"sha256\">" +
            kOtherSha256 +
            "</hash></verification><resources><url>https://x.example/repodata/repomd.xml</url>"
            "</resources></file></files></metalink>",
        "metalink.xml");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().message, "line 2: <file> without a name attribute");
}

TEST(Metalink, WrongRootElementIsAnError) {
    const auto metalink = parse_metalink("<repomd/>", "metalink.xml");
    ASSERT_FALSE(metalink);
    EXPECT_EQ(metalink.error().message, "line 1: root element is <repomd>, not <metalink>");
}

TEST(Metalink, NumbersAreReadAsLibrepoReadsThem) {
    std::string document = metalink_document(hash_line("sha256", std::string(64, 'c')), 4096,
                                             hash_line("sha256", std::string(64, 'd')), 4000);
    const auto replace = [&document](std::string_view from, std::string_view to) {
        const std::size_t at = document.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        document.replace(at, from.size(), to);
    };
    replace("<mm0:timestamp>1704067200<", "<mm0:timestamp>1704067200.75<");
    replace("<size>4000<", "<size>n/a<");
    replace("preference=\"90\"", "preference=\"150\"");
    const auto metalink = parse_metalink(document, "metalink.xml");
    ASSERT_TRUE(metalink) << metalink.error().to_string();
    EXPECT_EQ(metalink->repomd.timestamp, 1704067200);  // the whole seconds
    ASSERT_EQ(metalink->alternates.size(), 1U);
    EXPECT_FALSE(metalink->alternates[0].size);  // no digits: no size
    // A preference outside 0..100 is ignored, as librepo ignores it (with a warning).
    const auto mirror_b = std::find_if(
        metalink->urls.begin(), metalink->urls.end(),
        [](const MetalinkUrl& url) { return url.url.find("mirror-b") != std::string::npos; });
    ASSERT_NE(mirror_b, metalink->urls.end());
    EXPECT_EQ(mirror_b->preference, 0);
}

}  // namespace
}  // namespace rpmirror
