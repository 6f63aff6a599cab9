#include <algorithm>

#include <gtest/gtest.h>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/temp_dir.hpp"
#include "unit/index/index_test_repo.hpp"

namespace rpmirror {
namespace {

using test::IndexTestRepo;

constexpr std::int64_t kJan = 1704067200;
constexpr std::int64_t kFeb = 1706745600;

// One line per package with every field the index keeps, for comparing whole indexes.
std::vector<std::string> describe(const PackageIndex& index) {
    std::vector<std::string> lines;
    for (std::size_t position = 0; position < index.size(); ++position) {
        const PackageView package = index[position];
        lines.push_back(
            package.nevra() + " " + std::string(checksum_type_name(package.checksum_type)) + ":" +
            package.checksum_hex() + " size=" + std::to_string(package.package_size) + " build=" +
            std::to_string(package.build_time) + " file=" + std::to_string(package.file_time) +
            " href=" + std::string(package.location_href) + " base=" +
            std::string(package.location_base) + " srpm=" + std::string(package.source_rpm));
    }
    return lines;
}

std::vector<std::string> nevras(const PackageIndex& index) {
    std::vector<std::string> result;
    for (std::size_t position = 0; position < index.size(); ++position) {
        result.push_back(index[position].nevra());
    }
    std::sort(result.begin(), result.end());
    return result;
}

// 1-based line of the first occurrence of `needle` in `text`.
long line_of(const std::string& text, std::string_view needle) {
    const std::size_t at = text.find(needle);
    EXPECT_NE(at, std::string::npos) << needle;
    return 1 +
           static_cast<long>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// Replaces the first occurrence of `from` in `text` (which must be there) with `to`.
std::string replace_first(std::string text, std::string_view from, std::string_view to) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) {
        text.replace(at, from.size(), to);
    }
    return text;
}

class Primary : public ::testing::Test {
  protected:
    static void SetUpTestSuite() { IndexTestRepo::get(); }
    const IndexTestRepo& repo() const { return IndexTestRepo::get(); }
    const std::string& xml() const { return repo().primary_xml(); }
    // The text of the first <package> element (createrepo_c sorts by name: rpmirror-idx-epoch
    // 1:1.0).
    std::string first_package() const {
        const std::size_t begin = xml().find("<package ");
        const std::size_t end =
            xml().find("</package>", begin) + std::string_view("</package>").size();
        return xml().substr(begin, end - begin);
    }

    Result<PackageIndex> parse_text(const std::string& text, bool strict = false) {
        const auto path = dir_.write("primary.xml", text);
        PrimaryParseOptions options;
        options.strict = strict;
        return parse_primary_file(path, options);
    }

    test::TempDir dir_;
};

TEST_F(Primary, EveryCompressionGivesTheSamePackages) {
    auto reference = parse_primary_file(repo().primary(".gz"));
    ASSERT_TRUE(reference) << reference.error().to_string();
    EXPECT_TRUE(reference->issues().empty());
    EXPECT_EQ(reference->declared_count(), 13U);
    EXPECT_EQ(nevras(*reference),
              (std::vector<std::string>{
                  "rpmirror-idx-epoch-1:1.0-1.x86_64", "rpmirror-idx-epoch-5.0-1.x86_64",
                  "rpmirror-idx-multi-1.0-1.aarch64", "rpmirror-idx-multi-1.0-1.i686",
                  "rpmirror-idx-multi-1.0-1.x86_64", "rpmirror-idx-multi-1.10-1.src",
                  "rpmirror-idx-multi-1.10-1.x86_64", "rpmirror-idx-multi-1.9-1.aarch64",
                  "rpmirror-idx-multi-1.9-1.x86_64", "rpmirror-idx-noarch-1.0-1.noarch",
                  "rpmirror-idx-noarch-1.0-1.src", "rpmirror-idx-noarch-1.0^git1-1.noarch",
                  "rpmirror-idx-noarch-1.0~rc1-1.noarch"}));
    for (const char* suffix : {"", ".xz", ".zst", ".bz2"}) {
        SCOPED_TRACE(suffix);
        auto index = parse_primary_file(repo().primary(suffix));
        ASSERT_TRUE(index) << index.error().to_string();
        EXPECT_EQ(describe(*index), describe(*reference));
    }
    // createrepo_c's own file, with its digest-prefixed name, parses the same.
    for (const auto& entry : std::filesystem::directory_iterator(repo().repo_dir() / "repodata")) {
        if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
            auto original = parse_primary_file(entry.path());
            ASSERT_TRUE(original) << original.error().to_string();
            EXPECT_EQ(describe(*original), describe(*reference));
        }
    }
}

TEST_F(Primary, ChecksumsAndSizesMatchTheRealPackages) {
    auto index = parse_primary_file(repo().primary(".zst"));
    ASSERT_TRUE(index) << index.error().to_string();
    ASSERT_EQ(index->size(), 13U);
    for (std::size_t position = 0; position < index->size(); ++position) {
        const PackageView package = (*index)[position];
        SCOPED_TRACE(package.nevra());
        const auto file = repo().repo_dir() / std::string(package.location_href);
        EXPECT_EQ(package.checksum_type, ChecksumType::Sha256);
        EXPECT_EQ(package.digest.size(), 32U);
        EXPECT_EQ(package.package_size, std::filesystem::file_size(file));
        HashOptions no_cache;
        no_cache.use_cache = false;
        const auto digest = hash_file(file, ChecksumType::Sha256, no_cache);
        ASSERT_TRUE(digest);
        EXPECT_EQ(package.checksum_hex(), digest->hex);
    }
}

TEST_F(Primary, KeepsEpochTimesAndSourceRpm) {
    auto index = parse_primary_file(repo().primary(".xz"));
    ASSERT_TRUE(index) << index.error().to_string();
    bool saw_epoch = false;
    bool saw_source = false;
    for (std::size_t position = 0; position < index->size(); ++position) {
        const PackageView package = (*index)[position];
        if (package.nevra() == "rpmirror-idx-epoch-1:1.0-1.x86_64") {
            saw_epoch = true;
            EXPECT_EQ(package.epoch, 1U);
            EXPECT_EQ(package.build_time, kFeb);
            EXPECT_EQ(package.file_time, kJan);
            EXPECT_EQ(package.source_rpm, "rpmirror-idx-epoch-1.0-1.src.rpm");
            EXPECT_EQ(package.location_href, "Packages/rpmirror-idx-epoch-1.0-1.x86_64.rpm");
            EXPECT_EQ(package.location_base, "");
        }
        if (package.nevra() == "rpmirror-idx-multi-1.10-1.src") {
            saw_source = true;
            EXPECT_EQ(package.arch, "src");
            EXPECT_EQ(package.source_rpm, "") << "source packages have no sourcerpm";
        }
    }
    EXPECT_TRUE(saw_epoch);
    EXPECT_TRUE(saw_source);
}

TEST_F(Primary, ReadsXmlBaseAndEscapedHrefs) {
    const std::string text =
        replace_first(xml(), "<location href=\"Packages/rpmirror-idx-epoch-1.0-1.x86_64.rpm\"/>",
                      "<location xml:base=\"https://mirror.example/a&amp;b/\" "
                      "href=\"../blobstore/c++/p&amp;q.rpm\"/>");
    auto index = parse_text(text);
    ASSERT_TRUE(index) << index.error().to_string();
    ASSERT_EQ(index->size(), 13U);
    const PackageView package = (*index)[0];
    EXPECT_EQ(package.location_base, "https://mirror.example/a&b/");
    EXPECT_EQ(package.location_href, "../blobstore/c++/p&q.rpm");
    EXPECT_EQ((*index)[1].location_base, "") << "interned base must not leak to other packages";
}

TEST_F(Primary, FeedingOneByteAtATimeGivesTheSameIndex) {
    PrimaryParser parser("primary.xml", false);
    for (const char byte : xml()) {
        ASSERT_TRUE(parser.feed(std::span<const char>(&byte, 1)));
    }
    auto bytewise = parser.finish();
    ASSERT_TRUE(bytewise) << bytewise.error().to_string();
    auto whole = parse_primary_file(repo().primary(""));
    ASSERT_TRUE(whole);
    EXPECT_EQ(describe(*bytewise), describe(*whole));
}

struct BadPackageCase {
    const char* label;
    const char* from;  // text in the first package, replaced by `to`
    const char* to;
    const char* reason;           // expected in the issue / error message
    const char* from2 = nullptr;  // optional second replacement
    const char* to2 = nullptr;
};

// Each edit keeps the XML well-formed; a displaced value stays behind as an unknown attribute.
const BadPackageCase kBadPackages[] = {
    {"missing checksum", "<checksum type=\"sha256\" pkgid=\"YES\">", "<nochecksum>",
     "without <checksum>", "</checksum>", "</nochecksum>"},
    {"unknown checksum type", "type=\"sha256\" pkgid", "type=\"crc32\" pkgid",
     "unknown checksum type 'crc32'"},
    {"digest too long", "pkgid=\"YES\">", "pkgid=\"YES\">abc", "not 64 hex digits"},
    {"absurd size", "<size package=\"", "<size package=\"18014398509481984\" was=\"",
     "absurd size"},
    {"overflowing size", "<size package=\"", "<size package=\"99999999999999999999999\" was=\"",
     "absurd size"},
    {"negative size", "<size package=\"", "<size package=\"-1\" was=\"", "negative size"},
    {"missing location", "<location href", "<location hraf", "without <location href=...>"},
    {"bad epoch", "epoch=\"1\" ver=\"1.0\"", "epoch=\"one\" ver=\"1.0\"", "non-numeric epoch"},
    {"build time not a number", "build=\"", "build=\"1.5\" was=\"", "non-numeric <time build"},
    // As libsolv reads them: an element inside a text field leaves it no text; of two
    // <checksum> elements the last counts, and an invalid earlier one fails the package.
    {"element inside arch", "<arch>", "<arch><b/>", "without <arch>"},
    {"invalid checksum before the last", "<checksum type=\"sha256\" pkgid=\"YES\">",
     "<checksum type=\"crc32\">0</checksum><checksum type=\"sha256\" pkgid=\"YES\">",
     "unknown checksum type 'crc32'"},
};

TEST_F(Primary, BadPackageIsReportedAndSkipped) {
    const long package_line = line_of(xml(), "<package ");
    for (const BadPackageCase& each : kBadPackages) {
        SCOPED_TRACE(each.label);
        std::string bad_package = replace_first(first_package(), each.from, each.to);
        if (each.from2 != nullptr) {
            bad_package = replace_first(bad_package, each.from2, each.to2);
        }
        const std::string text = replace_first(xml(), first_package(), bad_package);
        auto index = parse_text(text);
        ASSERT_TRUE(index) << index.error().to_string();
        EXPECT_EQ(index->size(), 12U) << "only the bad package is skipped";
        for (std::size_t position = 0; position < index->size(); ++position) {
            EXPECT_NE((*index)[position].nevra(), "rpmirror-idx-epoch-1:1.0-1.x86_64");
        }
        ASSERT_EQ(index->issues().size(), 1U);
        const IndexIssue& issue = index->issues()[0];
        EXPECT_EQ(issue.line, package_line);
        EXPECT_NE(
            issue.message.find((dir_ / "primary.xml").string() + ": line " +
                               std::to_string(package_line) + ": <package> 'rpmirror-idx-epoch"),
            std::string::npos)
            << issue.message;
        EXPECT_NE(issue.message.find(each.reason), std::string::npos) << issue.message;
        EXPECT_NE(issue.message.find("skipped"), std::string::npos) << issue.message;

        auto strict = parse_text(text, true);
        ASSERT_FALSE(strict) << "strict mode fails the repository";
        EXPECT_EQ(strict.error().code, ErrorCode::BadInput);
        EXPECT_NE(strict.error().message.find("line " + std::to_string(package_line)),
                  std::string::npos);
        EXPECT_NE(strict.error().message.find(each.reason), std::string::npos)
            << strict.error().message;
    }
}

TEST_F(Primary, AFileTimeThatIsNoNumberIsNoneAndAValidSecondChecksumCounts) {
    // The file time decides nothing (libsolv ignores it); two valid digests: the last is used.
    std::string package =
        replace_first(first_package(), "time file=\"", "time file=\"soon\" was=\"");
    const std::size_t start = package.find("<checksum");
    const std::size_t end =
        package.find("</checksum>", start) + std::string_view("</checksum>").size();
    const std::string checksum = package.substr(start, end - start);
    const std::string other(64, 'a');
    const std::size_t digest_at = checksum.find('>') + 1;
    package.replace(start, end - start,
                    checksum.substr(0, digest_at) + other + "</checksum>" + checksum);
    auto index = parse_text(replace_first(xml(), first_package(), package));
    ASSERT_TRUE(index) << index.error().to_string();
    EXPECT_TRUE(index->issues().empty());
    ASSERT_EQ(index->size(), 13U);
    bool found = false;
    for (std::size_t position = 0; position < index->size(); ++position) {
        const PackageView view = (*index)[position];
        if (view.nevra() == "rpmirror-idx-epoch-1:1.0-1.x86_64") {
            found = true;
            EXPECT_EQ(view.file_time, 0);
            EXPECT_EQ(view.checksum_hex(),
                      checksum.substr(digest_at, checksum.find('<', digest_at) - digest_at));
        }
    }
    EXPECT_TRUE(found);
}

TEST_F(Primary, PackageWithoutSizeIsIndexedWithUnknownSize) {
    // Old createrepo wrote no <size>: the package is kept, to be verified by checksum alone.
    const std::string text = replace_first(
        xml(), first_package(), replace_first(first_package(), "<size package=\"", "<size was=\""));
    auto index = parse_text(text);
    ASSERT_TRUE(index) << index.error().to_string();
    EXPECT_EQ(index->size(), 13U);
    EXPECT_TRUE(index->issues().empty());
    bool found = false;
    for (std::size_t position = 0; position < index->size(); ++position) {
        if ((*index)[position].nevra() == "rpmirror-idx-epoch-1:1.0-1.x86_64") {
            found = true;
            EXPECT_EQ((*index)[position].package_size, kUnknownSize);
        } else {
            EXPECT_NE((*index)[position].package_size, kUnknownSize);
        }
    }
    EXPECT_TRUE(found);
}

TEST_F(Primary, NonHexDigestIsReportedAndSkipped) {
    const std::string marker = "pkgid=\"YES\">";
    std::string text = xml();
    const std::size_t digest_at = text.find(marker) + marker.size();
    text.replace(digest_at, 2, "zz");  // same length, two non-hex characters
    auto index = parse_text(text);
    ASSERT_TRUE(index) << index.error().to_string();
    EXPECT_EQ(index->size(), 12U);
    ASSERT_EQ(index->issues().size(), 1U);
    EXPECT_NE(index->issues()[0].message.find("not 64 hex digits: 'zz"), std::string::npos)
        << index->issues()[0].message;
}

TEST_F(Primary, PackageCountMismatchIsAnIssueOrStrictError) {
    const std::string text = replace_first(xml(), "packages=\"13\"", "packages=\"14\"");
    auto index = parse_text(text);
    ASSERT_TRUE(index) << index.error().to_string();
    EXPECT_EQ(index->size(), 13U);
    ASSERT_EQ(index->issues().size(), 1U);
    EXPECT_NE(index->issues()[0].message.find("packages=\"14\"> but the document has 13"),
              std::string::npos)
        << index->issues()[0].message;
    auto strict = parse_text(text, true);
    ASSERT_FALSE(strict);
    EXPECT_EQ(strict.error().code, ErrorCode::BadInput);
}

TEST_F(Primary, MalformedXmlNamesFileAndLine) {
    // Break the third package's </name>.
    std::string text = xml();
    std::size_t at = 0;
    for (int occurrence = 0; occurrence < 3; ++occurrence) {
        at = text.find("</name>", at + 1);
    }
    const long broken_line =
        1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    text.replace(at, 7, "</nam>");
    auto index = parse_text(text);
    ASSERT_FALSE(index);
    EXPECT_EQ(index.error().code, ErrorCode::BadInput);
    EXPECT_EQ(index.error().subject, (dir_ / "primary.xml").string());
    EXPECT_NE(index.error().message.find("line " + std::to_string(broken_line) + ":"),
              std::string::npos)
        << index.error().to_string();
}

TEST_F(Primary, BillionLaughsIsRefusedQuickly) {
    std::string doctype = "<!DOCTYPE metadata [\n<!ENTITY lol \"lol\">\n";
    for (int level = 1; level <= 9; ++level) {
        doctype += "<!ENTITY lol" + std::to_string(level) + " \"";
        for (int copy = 0; copy < 10; ++copy) {
            doctype += level == 1 ? "&lol;" : "&lol" + std::to_string(level - 1) + ";";
        }
        doctype += "\">\n";
    }
    doctype += "]>\n";
    std::string text = replace_first(xml(), "<metadata ", doctype + "<metadata ");
    text = replace_first(text, "<name>rpmirror-idx-epoch</name>", "<name>&lol9;</name>");
    const auto path = dir_.write("laughs-primary.xml", text);
    test::run_or_throw("gzip -f " + test::quote(path));
    auto index = parse_primary_file(dir_ / "laughs-primary.xml.gz");
    ASSERT_FALSE(index);
    EXPECT_EQ(index.error().code, ErrorCode::BadInput);
    EXPECT_NE(index.error().message.find("entity"), std::string::npos) << index.error().to_string();
    EXPECT_NE(index.error().message.find("line 3"), std::string::npos) << index.error().to_string();
}

TEST_F(Primary, TruncatedDocumentIsAnErrorNotAShorterList) {
    const std::string text = xml().substr(0, xml().size() / 2);
    auto plain = parse_text(text);
    ASSERT_FALSE(plain);
    EXPECT_EQ(plain.error().code, ErrorCode::BadInput);

    const std::string gz = test::read_file(repo().primary(".gz"));
    const auto truncated = dir_.write("truncated-primary.xml.gz", gz.substr(0, gz.size() - 8));
    auto compressed = parse_primary_file(truncated);
    ASSERT_FALSE(compressed);
    EXPECT_EQ(compressed.error().code, ErrorCode::Corrupt);
    EXPECT_EQ(compressed.error().subject, truncated.string());
}

TEST_F(Primary, OtherDocumentsAreRefused) {
    auto repomd = parse_primary_file(repo().repo_dir() / "repodata/repomd.xml");
    ASSERT_FALSE(repomd);
    EXPECT_EQ(repomd.error().code, ErrorCode::BadInput);
    EXPECT_NE(repomd.error().message.find("<repomd>"), std::string::npos)
        << repomd.error().to_string();
}

TEST_F(Primary, IndexIsCompact) {
    auto index = parse_primary_file(repo().primary(".gz"));
    ASSERT_TRUE(index);
    // 13 packages: records + strings + digests, well under 8 KiB (a std::string-per-field
    // struct would need several times that).
    EXPECT_LT(index->memory_bytes(), 8U * 1024) << index->memory_bytes();
}

}  // namespace
}  // namespace rpmirror
