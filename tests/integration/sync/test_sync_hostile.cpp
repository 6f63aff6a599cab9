// `rpmirror sync` against hostile or broken upstreams: each case is a real repository (the
// sample RPMs and createrepo_c's metadata) with one flaw crafted in, the checksums in repomd.xml
// recomputed so that only the intended flaw remains. Every case must fail with exit code 1 and
// a message naming the repository and the offending item, stay within a memory bound, write
// nothing outside the destination and leave the files of an earlier good sync intact.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/http_server.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kRepoId = "hostile";
constexpr std::string_view kTinyName = "rpmirror-sample-tiny";
// Generous: a sync of the sample repository peaks at a few tens of MB; a bomb or an entity
// expansion that were not stopped would go far beyond. AddressSanitizer's shadow memory and
// quarantine multiply the resident size (a duplicate-heavy primary: 23 MB plain, 205 MB under
// ASan), so its builds get four times the bound.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kPeakRssBoundKib = 4 * 200 * 1024;
#else
constexpr long kPeakRssBoundKib = 200 * 1024;
#endif

std::string repomd_with_primary(const std::string& compressed, const std::string& open,
                                std::uint64_t open_size, const std::string& header = {}) {
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}"
        "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\">\n"
        "  <revision>1</revision>\n"
        "  <data type=\"primary\">\n"
        "    <checksum type=\"sha256\">{}</checksum>\n"
        "    <open-checksum type=\"sha256\">{}</open-checksum>\n"
        "    <location href=\"repodata/primary.xml.gz\"/>\n"
        "    <size>{}</size>\n"
        "    <open-size>{}</open-size>\n"
        "  </data>\n"
        "</repomd>\n",
        header, hash_bytes(ChecksumType::Sha256, compressed),
        hash_bytes(ChecksumType::Sha256, open), compressed.size(), open_size);
}

// The billion-laughs DTD (ten levels of ten references: 10^9 copies of "lol") for `root`.
std::string billion_laughs_doctype(const std::string& root) {
    std::string dtd = "<!DOCTYPE " + root + " [\n<!ENTITY lol0 \"lol\">\n";
    for (int level = 1; level <= 9; ++level) {
        dtd += fmt::format("<!ENTITY lol{} \"", level);
        for (int copy = 0; copy < 10; ++copy) {
            dtd += fmt::format("&lol{};", level - 1);
        }
        dtd += "\">\n";
    }
    return dtd + "]>\n";
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    if (at == std::string::npos) {
        throw std::runtime_error("'" + from + "' not found");
    }
    return text.replace(at, from.size(), to);
}

class SyncHostile : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (IsSkipped()) {
            return;
        }
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
        original_primary_ = gunzip(only_file_ending(upstream_ / "repodata", "-primary.xml.gz"));
        fs::create_directories(outside_);
        TempDir::write_at(outside_ / "sentinel", "untouched");
        TempDir::write_at(secret_, "TOP-SECRET-c0ffee-do-not-leak\n");
    }

    // Replaces upstream's repodata/ by a repomd.xml whose only record is `compressed` as
    // primary (decompressing to `open`, of `open_size` bytes unless told otherwise).
    void publish_compressed_primary(const std::string& compressed, const std::string& open,
                                    std::optional<std::uint64_t> open_size = std::nullopt) {
        fs::remove_all(upstream_ / "repodata");
        TempDir::write_at(upstream_ / "repodata" / "primary.xml.gz", compressed);
        TempDir::write_at(upstream_ / "repodata" / "repomd.xml",
                          repomd_with_primary(compressed, open, open_size.value_or(open.size())));
    }

    // Publishes `xml` as upstream's primary.xml (gzip), with every checksum in repomd.xml right.
    void publish_primary(const std::string& xml) { publish_compressed_primary(gzip(xml), xml); }

    // The original primary.xml with the tiny package's href replaced by `href` (already
    // escaped for XML).
    std::string primary_with_tiny_href(const std::string& href) const {
        return replace_once(original_primary_, "href=\"" + kTinyHref + "\"",
                            "href=\"" + href + "\"");
    }

    std::vector<std::string> args_for(const std::string& url,
                                      std::vector<std::string> extra = {}) const {
        std::vector<std::string> args{"--repofrompath",
                                      std::string(kRepoId) + "," + url,
                                      "--repo",
                                      std::string(kRepoId),
                                      "-p",
                                      mirror_.string()};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }

    // Mirrors the untouched upstream with `extra` options (the "previous good sync") and
    // remembers what it wrote.
    void mirror_good_copy(const std::string& url, const std::vector<std::string>& extra = {}) {
        const CommandResult good = sync(args_for(url, extra));
        ASSERT_EQ(good.exit_code, 0) << good.out << good.err;
        good_files_ = tree_digests(mirror_ / std::string(kRepoId), kStateFile);
        ASSERT_FALSE(good_files_.empty());
    }

    // Checks the common contract of a refused sync: exit 1, every one of `needles` in stderr
    // along with the repository id, memory bounded, the secret nowhere, nothing outside the
    // destination, and the earlier good files (if any) intact.
    void expect_refused(const CommandResult& result, const std::vector<std::string>& needles) {
        EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
        EXPECT_NE(result.err.find(std::string(kRepoId)), std::string::npos)
            << "names the repository:\n"
            << result.err;
        for (const std::string& needle : needles) {
            EXPECT_NE(result.err.find(needle), std::string::npos) << "names '" << needle << "':\n"
                                                                  << result.err;
        }
        EXPECT_GT(result.peak_rss_kib, 0);
        EXPECT_EQ(result.err.find(".repodata.staging-"), std::string::npos)
            << "documents are named by URL, not by where they were staged:\n"
            << result.err;
        if (std::getenv("RPMIRROR_TEST_SHOW_ERRORS") != nullptr) {
            std::cout << result.err << "peak RSS " << result.peak_rss_kib << " KiB\n";
        }
        EXPECT_LT(result.peak_rss_kib, kPeakRssBoundKib);
        expect_nothing_leaked_or_lost(result);
    }

    void expect_nothing_leaked_or_lost(const CommandResult& result) {
        const std::string secret = "TOP-SECRET-c0ffee";
        EXPECT_EQ(result.out.find(secret), std::string::npos) << result.out;
        EXPECT_EQ(result.err.find(secret), std::string::npos) << result.err;
        for (const auto& entry :
             fs::recursive_directory_iterator(fs::exists(mirror_) ? mirror_ : outside_)) {
            if (entry.is_regular_file()) {
                EXPECT_EQ(read_file(entry.path()).find(secret), std::string::npos) << entry.path();
            }
        }
        const auto outside = tree_digests(outside_);
        EXPECT_EQ(outside.size(), 1U) << "nothing written beside the destination";
        EXPECT_EQ(read_file(outside_ / "sentinel"), "untouched");
        if (!good_files_.empty()) {
            const auto now = tree_digests(mirror_ / std::string(kRepoId), kStateFile);
            for (const auto& [path, digest] : good_files_) {
                const auto found = now.find(path);
                EXPECT_TRUE(found != now.end() && found->second == digest)
                    << path << " of the earlier good sync is intact";
            }
        }
    }

    // Configures the repository `hostile` in a .repo file with `source_line` (e.g.
    // "mirrorlist=URL") instead of --repofrompath.
    void write_repo_file(const std::string& source_line) {
        TempDir::write_at(tmp_ / "empty-reposdir" / "hostile.repo",
                          "[hostile]\nname=hostile\n" + source_line + "\ngpgcheck=0\n");
    }

    // Runs the good sync, publishes `xml` as primary.xml and syncs again; checks the refusal.
    CommandResult expect_primary_refused(const std::string& xml,
                                         const std::vector<std::string>& needles) {
        NginxServer& server = serve(upstream_);
        mirror_good_copy(server.url("/"));
        publish_primary(xml);
        CommandResult result = sync(args_for(server.url("/")));
        expect_refused(result, needles);
        return result;
    }

    fs::path upstream_;
    std::string original_primary_;
    fs::path mirror_ = tmp_ / "mirror";
    fs::path outside_ = tmp_ / "outside";
    fs::path secret_ = tmp_ / "secret";
    std::map<std::string, std::string> good_files_;
};

// --- hrefs in primary.xml ---------------------------------------------------------------------

TEST_F(SyncHostile, HrefClimbingOutOfTheDestinationIsRefused) {
    expect_primary_refused(primary_with_tiny_href("../../outside/evil.rpm"),
                           {"../../outside/evil.rpm", std::string(kTinyName)});
    EXPECT_FALSE(fs::exists(outside_ / "evil.rpm"));
}

TEST_F(SyncHostile, AbsoluteHrefIsRefused) {
    const std::string target = (outside_ / "evil.rpm").string();
    expect_primary_refused(primary_with_tiny_href(target), {target, std::string(kTinyName)});
    EXPECT_FALSE(fs::exists(outside_ / "evil.rpm"));
}

TEST_F(SyncHostile, PercentEncodedDotsAreRefused) {
    expect_primary_refused(primary_with_tiny_href("Packages/%2e%2e/%2E%2E/%2e%2e/outside/e.rpm"),
                           {"%2e%2e", std::string(kTinyName)});
}

TEST_F(SyncHostile, ControlCharacterReferenceInHrefIsRefused) {
    // XML 1.0 allows no reference to a control character: the parse fails, naming the
    // document, the line and the character.
    expect_primary_refused(primary_with_tiny_href("Packages/a&#1;b.rpm"),
                           {"primary.xml.gz: line 116", "invalid xmlChar value 1"});
}

TEST_F(SyncHostile, NewlineReferenceInHrefIsRefused) {
    expect_primary_refused(primary_with_tiny_href("Packages/a&#10;b.rpm"),
                           {"\\x0a", std::string(kTinyName)});
}

TEST_F(SyncHostile, LiteralControlByteInHrefIsRefusedByTheParser) {
    // A raw 0x01 is not well-formed XML 1.0: the parse fails, naming the document and line.
    expect_primary_refused(primary_with_tiny_href(std::string("Packages/a\x01"
                                                              "b.rpm")),
                           {"primary.xml.gz", "line"});
}

TEST_F(SyncHostile, LiteralNulInHrefIsRefusedByTheParser) {
    expect_primary_refused(primary_with_tiny_href(std::string("Packages/a\0b.rpm", 15)),
                           {"primary.xml.gz", "line"});
}

TEST_F(SyncHostile, OverLongPathComponentIsRefused) {
    const std::string component(300, 'n');
    expect_primary_refused(primary_with_tiny_href("Packages/" + component + ".rpm"),
                           {std::string(kTinyName), "long"});
}

TEST_F(SyncHostile, OverLongHrefIsRefused) {
    std::string href = "Packages";
    while (href.size() < 5000) {
        href += "/dir";
    }
    expect_primary_refused(primary_with_tiny_href(href + "/x.rpm"),
                           {std::string(kTinyName), "long"});
}

// --- sizes and duplicates in primary.xml --------------------------------------------------------

class SyncHostileSize : public SyncHostile, public ::testing::WithParamInterface<std::string> {};

TEST_P(SyncHostileSize, AbsurdPackageSizeIsRefused) {
    expect_primary_refused(replace_once(original_primary_, "<size package=\"6581\"",
                                        "<size package=\"" + GetParam() + "\""),
                           {std::string(kTinyName), "size"});
}

INSTANTIATE_TEST_SUITE_P(Sizes, SyncHostileSize,
                         ::testing::Values("9223372036854775808", "18446744073709551615",
                                           "18446744073709551616", "-1", "abc", ""));

TEST_F(SyncHostile, ThousandsOfDuplicateEntriesDownloadOnceAndAreReported) {
    const auto start =
        original_primary_.find("<package type=\"rpm\">\n  <name>rpmirror-sample-tiny");
    ASSERT_NE(start, std::string::npos);
    const auto end = original_primary_.find("</package>\n", start) + 11;
    const std::string tiny_entry = original_primary_.substr(start, end - start);
    std::string copies;
    for (int copy = 0; copy < 5000; ++copy) {
        copies += tiny_entry;
    }
    std::string xml = original_primary_;
    xml.insert(end, copies);
    NginxServer& server = serve(upstream_);
    publish_primary(xml);

    const CommandResult result = sync(args_for(server.url("/")));

    EXPECT_EQ(result.exit_code, 0) << "identical duplicates are harmless:\n" << result.err;
    EXPECT_LT(result.peak_rss_kib, kPeakRssBoundKib);
    EXPECT_NE(result.err.find(std::string(kRepoId)), std::string::npos) << result.err;
    if (std::getenv("RPMIRROR_TEST_SHOW_ERRORS") != nullptr) {
        std::cout << result.err << "peak RSS " << result.peak_rss_kib << " KiB\n";
    }
    EXPECT_NE(result.err.find("duplicate"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find(kTinyHref), std::string::npos) << result.err;
    EXPECT_EQ(package_uris(uris_since(server, 0), "/" + kTinyHref).size(), 1U) << "downloaded once";
    EXPECT_EQ(read_file(mirror_ / std::string(kRepoId) / kTinyHref),
              read_file(upstream_ / kTinyHref));
    expect_nothing_leaked_or_lost(result);
}

TEST_F(SyncHostile, ThousandsOfConflictingDuplicatesAreReportedBriefly) {
    const auto start =
        original_primary_.find("<package type=\"rpm\">\n  <name>rpmirror-sample-tiny");
    ASSERT_NE(start, std::string::npos);
    const auto end = original_primary_.find("</package>\n", start) + 11;
    const std::string conflicting = replace_once(original_primary_.substr(start, end - start),
                                                 "<size package=\"6581\"", "<size package=\"1\"");
    std::string copies;
    for (int copy = 0; copy < 3000; ++copy) {
        copies += conflicting;
    }
    std::string xml = original_primary_;
    xml.insert(end, copies);
    NginxServer& server = serve(upstream_);
    publish_primary(xml);

    const CommandResult result = sync(args_for(server.url("/")));

    EXPECT_EQ(result.exit_code, 0) << "the first entry is used:\n" << result.err;
    EXPECT_LT(lines_of(result.err).size(), 20U) << result.err;
    EXPECT_NE(result.err.find("... and 2990 more duplicate entries"), std::string::npos)
        << result.err;
    EXPECT_EQ(read_file(mirror_ / std::string(kRepoId) / kTinyHref),
              read_file(upstream_ / kTinyHref));
    expect_nothing_leaked_or_lost(result);
}

// --- entities in every XML document ------------------------------------------------------------

TEST_F(SyncHostile, BillionLaughsInPrimaryIsRefused) {
    std::string xml = replace_once(original_primary_, "<metadata ",
                                   billion_laughs_doctype("metadata") + "<metadata ");
    xml = replace_once(xml, "<summary>", "<summary>&lol9;");
    expect_primary_refused(xml, {"primary.xml.gz", "entit"});
}

TEST_F(SyncHostile, ExternalEntityInPrimaryIsRefused) {
    std::string xml = replace_once(original_primary_, "<metadata ",
                                   "<!DOCTYPE metadata [<!ENTITY xxe SYSTEM \"file://" +
                                       secret_.string() + "\">]>\n<metadata ");
    xml = replace_once(xml, "href=\"" + kTinyHref + "\"", "href=\"Packages/&xxe;\"");
    expect_primary_refused(xml, {"primary.xml.gz", "entit"});
}

TEST_F(SyncHostile, BillionLaughsInRepomdIsRefused) {
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"));
    std::string repomd = read_file(upstream_ / "repodata" / "repomd.xml");
    repomd = replace_once(repomd, "<repomd ", billion_laughs_doctype("repomd") + "<repomd ");
    repomd = replace_once(repomd, "<revision>", "<revision>&lol9;");
    TempDir::write_at(upstream_ / "repodata" / "repomd.xml", repomd);

    expect_refused(sync(args_for(server.url("/"))), {"repomd.xml", "entit"});
}

TEST_F(SyncHostile, ExternalEntityInRepomdIsRefused) {
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"));
    std::string repomd = read_file(upstream_ / "repodata" / "repomd.xml");
    repomd = replace_once(
        repomd, "<repomd ",
        "<!DOCTYPE repomd [<!ENTITY xxe SYSTEM \"file://" + secret_.string() + "\">]>\n<repomd ");
    repomd = replace_once(repomd, "<revision>", "<revision>&xxe;");
    TempDir::write_at(upstream_ / "repodata" / "repomd.xml", repomd);

    expect_refused(sync(args_for(server.url("/"))), {"repomd.xml", "entit"});
}

// A metalink for upstream's repomd.xml, with `doctype` before its root and `in_body` inside a
// <url> element's text.
std::string metalink_for(const fs::path& repomd, const std::string& base_url,
                         const std::string& doctype, const std::string& in_body) {
    const std::string bytes = read_file(repomd);
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n{}"
        "<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\">\n"
        " <files>\n"
        "  <file name=\"repomd.xml\">\n"
        "   <size>{}</size>\n"
        "   <verification><hash type=\"sha256\">{}</hash></verification>\n"
        "   <resources maxconnections=\"1\">\n"
        "    <url protocol=\"http\" type=\"http\" "
        "preference=\"100\">{}{}repodata/repomd.xml</url>\n"
        "   </resources>\n"
        "  </file>\n"
        " </files>\n"
        "</metalink>\n",
        doctype, bytes.size(), hash_bytes(ChecksumType::Sha256, bytes), base_url, in_body);
}

class SyncHostileMetalink : public SyncHostile {
  protected:
    // Syncs with `metalink=` in a .repo file, first with a good metalink, then with one that
    // has `doctype` and `in_body` planted; returns the second run.
    CommandResult sync_with_planted_metalink(const std::string& doctype,
                                             const std::string& in_body) {
        NginxServer& server = serve(upstream_);
        const fs::path metalink = upstream_ / "metalink.xml";
        TempDir::write_at(
            metalink, metalink_for(upstream_ / "repodata" / "repomd.xml", server.url("/"), "", ""));
        TempDir::write_at(
            tmp_ / "empty-reposdir" / "hostile.repo",
            "[hostile]\nname=hostile\nmetalink=" + server.url("/metalink.xml") + "\ngpgcheck=0\n");
        const std::vector<std::string> args{"--repo", std::string(kRepoId), "-p", mirror_.string()};
        const CommandResult good = sync(args);
        EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
        good_files_ = tree_digests(mirror_ / std::string(kRepoId), kStateFile);
        TempDir::write_at(metalink, metalink_for(upstream_ / "repodata" / "repomd.xml",
                                                 server.url("/"), doctype, in_body));
        return sync(args);
    }
};

TEST_F(SyncHostileMetalink, BillionLaughsInMetalinkIsRefused) {
    expect_refused(sync_with_planted_metalink(billion_laughs_doctype("metalink"), "&lol9;"),
                   {"metalink.xml", "entit"});
}

TEST_F(SyncHostileMetalink, ExternalEntityInMetalinkIsRefused) {
    expect_refused(sync_with_planted_metalink("<!DOCTYPE metalink [<!ENTITY xxe SYSTEM \"file://" +
                                                  secret_.string() + "\">]>\n",
                                              "&xxe;"),
                   {"metalink.xml", "entit"});
}

// --- compression bombs and repomd.xml records -----------------------------------------------

TEST_F(SyncHostile, DecompressionBombIsStoppedAtTheDeclaredSize) {
    // 512 concatenated gzip members of 1 MiB of blanks: 512 MiB of "XML" from about 0.5 MiB,
    // while repomd.xml declares the small original size.
    const std::string member = gzip(std::string(1 << 20, ' '));
    std::string bomb = gzip(original_primary_.substr(0, original_primary_.find("<package")));
    for (int copy = 0; copy < 512; ++copy) {
        bomb += member;
    }
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"));
    publish_compressed_primary(bomb, original_primary_, original_primary_.size());

    expect_refused(sync(args_for(server.url("/"))), {"primary.xml.gz"});
}

TEST_F(SyncHostile, RecordFailingItsChecksumIsRefused) {
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"));
    const std::string xml = primary_with_tiny_href("Packages/other.rpm");
    const std::string compressed = gzip(xml);
    fs::remove_all(upstream_ / "repodata");
    TempDir::write_at(upstream_ / "repodata" / "primary.xml.gz", compressed);
    // The checksums of the original primary: the served file does not match them.
    TempDir::write_at(upstream_ / "repodata" / "repomd.xml",
                      replace_once(repomd_with_primary(gzip(original_primary_), original_primary_,
                                                       original_primary_.size()),
                                   fmt::format("<size>{}</size>", gzip(original_primary_).size()),
                                   fmt::format("<size>{}</size>", compressed.size())));

    expect_refused(sync(args_for(server.url("/"))),
                   {"metadata 'primary'", "/repodata/primary.xml.gz: sha256 mismatch"});
}

TEST_F(SyncHostile, RecordHrefClimbingOutOfRepodataIsRefused) {
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"), {"--download-metadata"});
    const std::string compressed = gzip(original_primary_);
    TempDir::write_at(upstream_ / "repodata" / "primary.xml.gz", compressed);
    TempDir::write_at(
        upstream_ / "repodata" / "repomd.xml",
        replace_once(repomd_with_primary(compressed, original_primary_, original_primary_.size()),
                     "repodata/primary.xml.gz", "repodata/../../../outside/primary.xml.gz"));

    expect_refused(sync(args_for(server.url("/"), {"--download-metadata"})),
                   {"primary: href '../../../outside/primary.xml.gz' escapes"});
}

// --- servers that lie or redirect ------------------------------------------------------------

TEST_F(SyncHostile, RedirectToAFileUrlIsRefused) {
    FaultServer faulty(
        upstream_,
        {{"paths", {{"/repodata/repomd.xml", {{{"redirect", "file://" + secret_.string()}}}}}}},
        tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    expect_refused(result, {faulty.url("/repodata/repomd.xml") + ": refused redirect to 'file://" +
                            secret_.string() + "': only http and https redirects are followed"});
    EXPECT_FALSE(fs::exists(mirror_ / std::string(kRepoId) / "repodata"));
}

TEST_F(SyncHostile, PackageRedirectToAFileUrlIsRefused) {
    FaultServer faulty(
        upstream_, {{"paths", {{"/" + kTinyHref, {{{"redirect", "file://" + secret_.string()}}}}}}},
        tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    expect_refused(result, {std::string(kTinyName), faulty.url("/" + kTinyHref) +
                                                        ": refused redirect to 'file://" +
                                                        secret_.string() + "'"});
    EXPECT_FALSE(fs::exists(mirror_ / std::string(kRepoId) / kTinyHref));
}

TEST_F(SyncHostile, RedirectWithinTheSameSchemeIsFollowed) {
    FaultServer faulty(upstream_,
                       {{"paths",
                         {{"/" + kTinyHref, {{{"redirect", "/moved/tiny.rpm"}}}},
                          {"/moved/tiny.rpm", {{{"file", kTinyHref}}}}}}},
                       tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(read_file(mirror_ / std::string(kRepoId) / kTinyHref),
              read_file(upstream_ / kTinyHref));
    EXPECT_EQ(faulty.requests_for("/moved/tiny.rpm").size(), 1U);
}

TEST_F(SyncHostile, HugeContentLengthAbortsTheTransferNamingTheUrl) {
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"));
    fs::remove(mirror_ / std::string(kRepoId) / kTinyHref);
    good_files_.erase(kTinyHref);
    FaultServer faulty(upstream_,
                       {{"paths", {{"/" + kTinyHref, {{{"content_length", 1000000000000000}}}}}}},
                       tmp_.path());

    const CommandResult result = sync(args_for(faulty.url("/")));

    expect_refused(result, {std::string(kTinyName), faulty.url("/" + kTinyHref)});
    EXPECT_FALSE(fs::exists(mirror_ / std::string(kRepoId) / kTinyHref));
}

// --- URLs from upstream: http and https only -------------------------------------------------
// Each file:// URL below names upstream's own directory: were it followed, the sync would copy
// a complete, valid repository from the local disk and succeed.

TEST_F(SyncHostile, FileUrlInAMirrorlistIsRefused) {
    NginxServer& server = serve(upstream_);
    TempDir::write_at(upstream_ / "mirrorlist.txt",
                      server.url("/") + "\nfile://" + upstream_.string() + "\n");
    write_repo_file("mirrorlist=" + server.url("/mirrorlist.txt"));

    const CommandResult result = sync({"--repo", std::string(kRepoId), "-p", mirror_.string()});

    expect_refused(result, {server.url("/mirrorlist.txt") + ": lists the mirror 'file://" +
                            upstream_.string() +
                            "': only http and https URLs are accepted from an upstream mirror "
                            "list; refused"});
    EXPECT_FALSE(fs::exists(mirror_ / std::string(kRepoId)));
}

TEST_F(SyncHostile, FileUrlInAMetalinkIsRefused) {
    NginxServer& server = serve(upstream_);
    TempDir::write_at(upstream_ / "metalink.xml",
                      metalink_for(upstream_ / "repodata" / "repomd.xml",
                                   "file://" + upstream_.string() + "/", "", ""));
    write_repo_file("metalink=" + server.url("/metalink.xml"));

    const CommandResult result = sync({"--repo", std::string(kRepoId), "-p", mirror_.string()});

    expect_refused(result, {server.url("/metalink.xml") + ": lists the mirror 'file://" +
                            upstream_.string() + "/': only http and https URLs are accepted"});
    EXPECT_FALSE(fs::exists(mirror_ / std::string(kRepoId)));
}

TEST_F(SyncHostile, FtpAndRsyncMirrorsInAMirrorlistAreSkippedNotRefused) {
    NginxServer& server = serve(upstream_);
    TempDir::write_at(
        upstream_ / "mirrorlist.txt",
        "ftp://127.0.0.1:1/repo/\nrsync://127.0.0.1:1/repo/\n" + server.url("/") + "\n");
    write_repo_file("mirrorlist=" + server.url("/mirrorlist.txt"));

    const CommandResult result = sync({"--repo", std::string(kRepoId), "-p", mirror_.string()});

    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_digests(mirror_ / std::string(kRepoId)), package_digests(upstream_));
}

TEST_F(SyncHostile, FileUrlInALocalMirrorlistOfTheUserIsAccepted) {
    // The user's own mirrorlist (a file:// URL in the configuration) may name local mirrors.
    const fs::path list = TempDir::write_at(tmp_ / "mirrors.txt", "file://" + upstream_.string());
    write_repo_file("mirrorlist=file://" + list.string());

    const CommandResult result = sync({"--repo", std::string(kRepoId), "-p", mirror_.string()});

    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    EXPECT_EQ(package_digests(mirror_ / std::string(kRepoId)), package_digests(upstream_));
}

TEST_F(SyncHostile, FileUrlAsAPackageXmlBaseIsRefused) {
    const std::string base = "file://" + upstream_.string() + "/";
    expect_primary_refused(
        replace_once(original_primary_, "<location href=\"" + kTinyHref + "\"",
                     "<location xml:base=\"" + base + "\" href=\"" + kTinyHref + "\""),
        {"repository 'hostile': xml:base '" + base +
         "': only http and https URLs are accepted from upstream metadata; refused"});
}

TEST_F(SyncHostile, FileUrlAsARecordXmlBaseIsRefused) {
    NginxServer& server = serve(upstream_);
    const std::string base = "file://" + upstream_.string() + "/";
    const std::string compressed = gzip(original_primary_);
    publish_compressed_primary(compressed, original_primary_);
    TempDir::write_at(
        upstream_ / "repodata" / "repomd.xml",
        replace_once(read_file(upstream_ / "repodata" / "repomd.xml"),
                     "<location href=\"repodata/primary.xml.gz\"",
                     "<location xml:base=\"" + base + "\" href=\"repodata/primary.xml.gz\""));

    const CommandResult result = sync(args_for(server.url("/")));

    expect_refused(
        result, {server.url("/repodata/repomd.xml") + ": record 'primary' has xml:base '" + base +
                 "': only http and https URLs are accepted from upstream metadata; "
                 "refused"});
    EXPECT_FALSE(fs::exists(mirror_ / std::string(kRepoId) / "Packages"));
}

// --- symlinks planted in the destination -------------------------------------------------------

TEST_F(SyncHostile, SymlinkedRepodataLeadingOutsideIsNeverWrittenThrough) {
    NginxServer& server = serve(upstream_);
    fs::create_directories(mirror_ / std::string(kRepoId));
    fs::create_directory_symlink(outside_, mirror_ / std::string(kRepoId) / "repodata");

    const CommandResult result = sync(args_for(server.url("/"), {"--download-metadata"}));

    expect_refused(result, {"hostile/repodata: exists and is not a directory"});
    EXPECT_TRUE(fs::is_symlink(mirror_ / std::string(kRepoId) / "repodata"));
}

TEST_F(SyncHostile, SymlinkedSubdirectoryLeadingOutsideIsNeverWrittenThrough) {
    // The package's parent is a symlink one level below Packages/.
    const std::string xml = primary_with_tiny_href("Packages/sub/tiny.rpm");
    TempDir::write_at(upstream_ / "Packages" / "sub" / "tiny.rpm",
                      read_file(upstream_ / kTinyHref));
    NginxServer& server = serve(upstream_);
    mirror_good_copy(server.url("/"));
    publish_primary(xml);
    fs::create_directory_symlink(outside_, mirror_ / std::string(kRepoId) / "Packages" / "sub");

    const CommandResult result = sync(args_for(server.url("/")));

    expect_refused(result,
                   {std::string(kTinyName), "Packages/sub: a symlink in the path leads outside"});
}

}  // namespace
}  // namespace rpmirror::test
