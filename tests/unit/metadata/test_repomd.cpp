#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "metadata/metadata.hpp"
#include "metadata_test_support.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

TEST(Repomd, SampleRepositoryFromCreaterepoParsesAndEveryRecordVerifies) {
    test::TempDir dir;
    const auto repo = dir / "repo";
    const int status = test::run_command(
        {(test::source_root() / "scripts" / "make-sample-repo").string(), repo.string()},
        dir / "make-sample-repo.log");
    ASSERT_EQ(status, 0) << test::read_file(dir / "make-sample-repo.log");

    const auto repomd_path = repo / "repodata" / "repomd.xml";
    const auto repomd = parse_repomd(test::read_file(repomd_path), repomd_path.string());
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(repomd->revision, "1704067200");  // make-sample-repo's SOURCE_DATE_EPOCH
    std::set<std::string> types;
    for (const RepomdRecord& record : repomd->records) {
        SCOPED_TRACE(record.type);
        types.insert(record.type);
        EXPECT_EQ(record.checksum.type, ChecksumType::Sha256);
        EXPECT_EQ(record.location_href.rfind("repodata/" + record.checksum.hex + "-", 0), 0U);
        EXPECT_FALSE(record.location_base);
        ASSERT_TRUE(record.size);
        EXPECT_TRUE(record.timestamp);
        ASSERT_TRUE(record.open_checksum);
        EXPECT_TRUE(record.open_size);
        EXPECT_GT(record.line, 2);
        // Independent check: coreutils' digest and the file size agree with what was parsed.
        const auto file = repo / record.location_href;
        EXPECT_EQ(test::tool_digest("sha256sum", file, dir.path()), record.checksum.hex);
        EXPECT_EQ(std::filesystem::file_size(file), *record.size);
        const auto relative = safe_relative_path(record.location_href, record.type);
        ASSERT_TRUE(relative);
        EXPECT_TRUE(verify_metadata_file(repo / *relative, record));
    }
    EXPECT_TRUE(types.count("primary") && types.count("filelists") && types.count("other"));
    ASSERT_NE(repomd->find("primary"), nullptr);
    EXPECT_EQ(repomd->find("primary")->type, "primary");
    EXPECT_EQ(repomd->find("no-such-type"), nullptr);
}

TEST(Repomd, ZchunkSha512RepositoryWithTagsFromCreaterepoOnEmptyDirectory) {
    test::TempDir dir;
    const auto repo = dir / "repo";
    std::filesystem::create_directories(repo);
    const int status =
        test::run_command({"createrepo_c", "--quiet", "--zck", "--checksum", "sha512", "--revision",
                           "42", "--content", "binary-x86_64", "--repo", "fedora", "--distro",
                           "cpe:/o:fedoraproject:fedora:40,Fedora 40", repo.string()},
                          dir / "createrepo.log");
    ASSERT_EQ(status, 0) << test::read_file(dir / "createrepo.log");

    const auto repomd_path = repo / "repodata" / "repomd.xml";
    const auto repomd = parse_repomd(test::read_file(repomd_path), "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(repomd->revision, "42");
    EXPECT_EQ(repomd->content_tags, std::vector<std::string>{"binary-x86_64"});
    EXPECT_EQ(repomd->repo_tags, std::vector<std::string>{"fedora"});
    ASSERT_EQ(repomd->distro_tags.size(), 1U);
    EXPECT_EQ(repomd->distro_tags[0].cpeid, "cpe:/o:fedoraproject:fedora:40");
    EXPECT_EQ(repomd->distro_tags[0].name, "Fedora 40");

    const RepomdRecord* primary_zck = repomd->find("primary_zck");
    ASSERT_NE(primary_zck, nullptr);
    EXPECT_EQ(primary_zck->checksum.type, ChecksumType::Sha512);
    ASSERT_TRUE(primary_zck->header_checksum);
    EXPECT_EQ(primary_zck->header_checksum->hex.size(), 64U);  // zchunk headers use sha256
    EXPECT_TRUE(primary_zck->header_size);
    const RepomdRecord* primary_db = repomd->find("primary_db");
    ASSERT_NE(primary_db, nullptr);
    EXPECT_EQ(primary_db->database_version, 10);
    for (const RepomdRecord& record : repomd->records) {
        SCOPED_TRACE(record.type);
        EXPECT_EQ(test::tool_digest("sha512sum", repo / record.location_href, dir.path()),
                  record.checksum.hex);
        EXPECT_TRUE(verify_metadata_file(repo / record.location_href, record));
    }
}

const std::string kSha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

std::string repomd_with(const std::string& data_body) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" "
           "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n"
           "  <revision>1</revision>\n"
           "  <data type=\"primary\">\n" +
           data_body +
           "  </data>\n"
           "</repomd>\n";
}

TEST(Repomd, XmlBaseAndUppercaseDigestAreKept) {
    const auto repomd =
        parse_repomd(repomd_with("    <checksum type=\"SHA256\">" + std::string(64, 'A') +
                                 "</checksum>\n"
                                 "    <location xml:base=\"https://cdn.example/base/\" "
                                 "href=\"repodata/p.xml.gz\"/>\n"
                                 "    <size> 12 </size>\n"),
                     "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    ASSERT_EQ(repomd->records.size(), 1U);
    const RepomdRecord& record = repomd->records[0];
    EXPECT_EQ(record.checksum.hex, std::string(64, 'a'));
    EXPECT_EQ(record.location_base, "https://cdn.example/base/");
    EXPECT_EQ(record.size, 12U);
    EXPECT_EQ(record.line, 4);
    EXPECT_FALSE(record.open_checksum);
}

TEST(Repomd, UnknownChecksumTypeIsUnsupportedNotSkipped) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"blake2b\">" + kSha256 +
                                                 "</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\"/>\n"),
                                     "https://mirror.example/repodata/repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().code, ErrorCode::Unsupported);
    EXPECT_EQ(repomd.error().subject, "https://mirror.example/repodata/repomd.xml");
    EXPECT_EQ(repomd.error().message,
              "line 5: <data type=\"primary\"> <checksum> has unknown checksum type \"blake2b\"");
}

TEST(Repomd, MissingLocationIsAnErrorNamingRecordAndLine) {
    const auto repomd = parse_repomd(
        repomd_with("    <checksum type=\"sha256\">" + kSha256 + "</checksum>\n"), "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().code, ErrorCode::BadInput);
    EXPECT_EQ(repomd.error().subject, "repomd.xml");
    EXPECT_EQ(repomd.error().message, "line 4: <data type=\"primary\"> without <location href>");
}

TEST(Repomd, MissingChecksumIsAnErrorNamingRecordAndLine) {
    const auto repomd =
        parse_repomd(repomd_with("    <location href=\"repodata/p.xml.gz\"/>\n"), "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().message, "line 4: <data type=\"primary\"> without <checksum>");
}

TEST(Repomd, LocationWithoutHrefIsAnError) {
    const auto repomd = parse_repomd(
        repomd_with("    <checksum type=\"sha256\">" + kSha256 + "</checksum>\n    <location/>\n"),
        "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().message,
              "line 6: <data type=\"primary\"> has <location> without href");
}

TEST(Repomd, DigestOfWrongLengthIsAnError) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"sha256\">abc</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\"/>\n"),
                                     "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().message,
              "line 5: <data type=\"primary\"> <checksum> \"abc\" is not a sha256 digest");
}

// The yum-era Python createrepo wrote fractional timestamps; librepo reads them with strtoll and
// keeps the whole seconds, and dnf mirrors such a repository.
TEST(Repomd, FractionalTimestampKeepsTheWholeSeconds) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                                 "</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\"/>\n"
                                                 "    <timestamp>1355315696.84</timestamp>\n"),
                                     "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(repomd->records[0].timestamp, 1355315696);
}

TEST(Repomd, NumbersAreReadAsLibrepoReadsThemAndNeverRefuseTheDocument) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                                 "</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\"/>\n"
                                                 "    <size>12kB</size>\n"
                                                 "    <open-size>not known</open-size>\n"
                                                 "    <header-size>-5</header-size>\n"
                                                 "    <timestamp>  -7 </timestamp>\n"
                                                 "    <database_version>010</database_version>\n"),
                                     "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    const RepomdRecord& record = repomd->records[0];
    EXPECT_EQ(record.size, 12U);             // the leading integer, as strtoll reads it
    EXPECT_FALSE(record.open_size);          // no digits: no value (librepo stores 0 and warns)
    EXPECT_FALSE(record.header_size);        // a negative size is no size
    EXPECT_EQ(record.timestamp, -7);         // timestamps are signed, as librepo's gint64
    EXPECT_EQ(record.database_version, 10);  // decimal (librepo's base 0 reads octal 8)
}

TEST(Repomd, NumberBeyondInt64IsClampedAsStrtollClampsIt) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                                 "</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\"/>\n"
                                                 "    <timestamp>99999999999999999999</timestamp>\n"
                                                 "    <size>-99999999999999999999</size>\n"),
                                     "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(repomd->records[0].timestamp, std::numeric_limits<std::int64_t>::max());
    EXPECT_FALSE(repomd->records[0].size);
}

TEST(Repomd, DataWithoutTypeOrWithAnEmptyOneIsTheRecordUnknownAsInLibrepo) {
    // type="" was kept as an empty type, which every later step takes for "no record" (found
    // by fuzz_repomd).
    for (const std::string data : {"<data>", "<data type=\"\">"}) {
        SCOPED_TRACE(data);
        const auto repomd =
            parse_repomd("<repomd xmlns=\"http://linux.duke.edu/metadata/repo\">\n  " + data +
                             "\n"
                             "    <checksum type=\"sha256\">" +
                             kSha256 +
                             "</checksum>\n"
                             "    <location href=\"repodata/x.xml.gz\"/>\n"
                             "  </data>\n"
                             "</repomd>\n",
                         "repomd.xml");
        ASSERT_TRUE(repomd) << repomd.error().to_string();
        ASSERT_EQ(repomd->records.size(), 1U);
        EXPECT_EQ(repomd->records[0].type, "unknown");
    }
}

TEST(Repomd, EmptyRevisionIsNoRevision) {
    for (const std::string revision : {"<revision/>", "<revision></revision>", ""}) {
        const auto repomd = parse_repomd(
            "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\">" + revision + "</repomd>",
            "repomd.xml");
        ASSERT_TRUE(repomd) << repomd.error().to_string();
        EXPECT_FALSE(repomd->revision) << revision;
    }
}

TEST(Repomd, UnusableOpenAndHeaderChecksumsAreDroppedNotRefused) {
    const auto repomd =
        parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                 "</checksum>\n"
                                 "    <open-checksum type=\"blake2b\">" +
                                 kSha256 +
                                 "</open-checksum>\n"
                                 "    <header-checksum type=\"sha256\">zz</header-checksum>\n"
                                 "    <location href=\"repodata/p.xml.gz\"/>\n"),
                     "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(repomd->records[0].checksum.hex, kSha256);
    EXPECT_FALSE(repomd->records[0].open_checksum);
    EXPECT_FALSE(repomd->records[0].header_checksum);
}

// librepo's parser matches unprefixed names only: <rpm:data> is an unknown element to it, and
// what it contains is skipped.
TEST(Repomd, PrefixedElementsAreSkippedWithWhatTheyContain) {
    const auto repomd = parse_repomd(
        "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" "
        "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n"
        "  <rpm:revision>9</rpm:revision>\n"
        "  <rpm:data type=\"extension\"><location href=\"repodata/e.xml\"/></rpm:data>\n"
        "  <data type=\"primary\">\n"
        "    <checksum type=\"sha256\">" +
            kSha256 +
            "</checksum>\n"
            "    <rpm:checksum type=\"md5\">00</rpm:checksum>\n"
            "    <rpm:size>77</rpm:size>\n"
            "    <location href=\"repodata/p.xml.gz\"/>\n"
            "  </data>\n"
            "</repomd>\n",
        "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    ASSERT_EQ(repomd->records.size(), 1U);
    EXPECT_EQ(repomd->records[0].type, "primary");
    EXPECT_EQ(repomd->records[0].checksum.hex, kSha256);
    EXPECT_FALSE(repomd->records[0].size);
    EXPECT_FALSE(repomd->revision);
}

// What the random differential test found librepo does: an element where repomd.xml has none
// (a <data> inside a <data>) is skipped with all it contains, the text around such an element
// is the element's text, and of two <checksum>s of a record the last counts.
TEST(Repomd, MisplacedElementsAreSkippedWholeAndTheLastChecksumCounts) {
    const std::string half = kSha256.substr(0, 20);
    const auto repomd = parse_repomd(
        repomd_with("    <checksum type=\"sha256\">" + half + "<x/>" + kSha256.substr(20) +
                    "</checksum>\n"
                    "    <location href=\"repodata/p.xml.gz\"/>\n"
                    "    <data type=\"inner\">\n"
                    "      <location href=\"repodata/inner.xml\"/><size>5</size>\n"
                    "    </data>\n"),
        "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    ASSERT_EQ(repomd->records.size(), 1U);
    EXPECT_EQ(repomd->records[0].checksum.hex, kSha256);
    EXPECT_EQ(repomd->records[0].location_href, "repodata/p.xml.gz");
    EXPECT_FALSE(repomd->records[0].size);

    const auto last_counts =
        parse_repomd(repomd_with("    <checksum type=\"abc\">00</checksum>\n"
                                 "    <checksum type=\"sha256\">" +
                                 kSha256 +
                                 "</checksum>\n"
                                 "    <location href=\"repodata/p.xml.gz\"/>\n"),
                     "repomd.xml");
    ASSERT_TRUE(last_counts) << last_counts.error().to_string();
    EXPECT_EQ(last_counts->records[0].checksum.hex, kSha256);

    const auto last_is_bad =
        parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                 "</checksum>\n"
                                 "    <checksum type=\"sha256\">abc</checksum>\n"
                                 "    <location href=\"repodata/p.xml.gz\"/>\n"),
                     "repomd.xml");
    ASSERT_FALSE(last_is_bad);
    EXPECT_NE(last_is_bad.error().message.find("<checksum> \"abc\" is not a sha256 digest"),
              std::string::npos)
        << last_is_bad.error().message;
}

TEST(Repomd, UndeclaredPrefixIsNotAnError) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                                 "</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\"/>\n"
                                                 "    <suse:extra>1</suse:extra>\n"),
                                     "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    EXPECT_EQ(repomd->records.size(), 1U);
}

TEST(Repomd, PrefixedRootIsNotRepomd) {
    const auto repomd =
        parse_repomd("<r:repomd xmlns:r=\"http://linux.duke.edu/metadata/repo\"/>", "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().message, "line 1: root element is <r:...>, not <repomd>");
}

TEST(Repomd, MalformedXmlIsAnErrorWithLine) {
    const auto repomd = parse_repomd(repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                                 "</checksum>\n"
                                                 "    <location href=\"repodata/p.xml.gz\">\n"),
                                     "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().code, ErrorCode::BadInput);
    EXPECT_EQ(repomd.error().message.rfind("line 7: ", 0), 0U) << repomd.error().message;
}

TEST(Repomd, TruncatedDocumentIsAnError) {
    const std::string document = repomd_with("    <checksum type=\"sha256\">" + kSha256 +
                                             "</checksum>\n"
                                             "    <location href=\"repodata/p.xml.gz\"/>\n");
    const auto repomd = parse_repomd(document.substr(0, document.size() - 12), "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().subject, "repomd.xml");
}

TEST(Repomd, WrongRootIsAnError) {
    const auto repomd = parse_repomd("<metadata/>", "repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().message, "line 1: root element is <metadata>, not <repomd>");
}

}  // namespace
}  // namespace rpmirror
