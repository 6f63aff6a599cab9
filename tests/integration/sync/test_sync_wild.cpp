// Repository metadata as it exists in the wild, beyond what today's createrepo_c writes: records
// and packages without <size> (old createrepo), "sha" (sha1) checksums, and packages hosted
// elsewhere (<location xml:base>). Each repository is the sample one with its metadata rewritten.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "checksum/hasher.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "rpmirror/checksum/checksum.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class SyncWild : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        upstream_ = copy_repo(test_repo("sample-repo"), tmp_ / "upstream");
        primary_ = gunzip(only_file_ending(upstream_ / "repodata", "-primary.xml.gz"));
    }

    // Replaces repodata/ with `primary` alone, in a repomd.xml record with `type` checksums and,
    // without `with_size`, no <size>/<open-size> (as old createrepo wrote).
    void publish_primary(const std::string& primary, ChecksumType type, const std::string& name,
                         bool with_size) {
        fs::remove_all(upstream_ / "repodata");
        const std::string compressed = gzip(primary);
        TempDir::write_at(upstream_ / "repodata" / "primary.xml.gz", compressed);
        const std::string sizes =
            with_size ? fmt::format("    <size>{}</size>\n    <open-size>{}</open-size>\n",
                                    compressed.size(), primary.size())
                      : std::string();
        TempDir::write_at(
            upstream_ / "repodata" / "repomd.xml",
            fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                        "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\">\n"
                        "  <data type=\"primary\">\n"
                        "    <checksum type=\"{0}\">{1}</checksum>\n"
                        "    <open-checksum type=\"{0}\">{2}</open-checksum>\n"
                        "    <location href=\"repodata/primary.xml.gz\"/>\n"
                        "{3}"
                        "  </data>\n"
                        "</repomd>\n",
                        name, hash_bytes(type, compressed), hash_bytes(type, primary), sizes));
    }

    std::vector<std::string> args() const {
        return {"--repofrompath", "wild," + url_, "--repo",
                "wild",           "-p",           (tmp_ / "mirror").string()};
    }

    fs::path upstream_;
    std::string primary_;
    std::string url_;
};

TEST_F(SyncWild, PackagesAndRecordsWithoutSizeAndWithShaChecksumsAreVerifiedByChecksum) {
    // Every <size .../> removed, every sha256 package checksum replaced by the package's sha1
    // under the old name "sha".
    std::string primary = std::regex_replace(primary_, std::regex("<size [^>]*/>"), "");
    for (const auto& entry : fs::directory_iterator(upstream_ / "Packages")) {
        const std::string bytes = read_file(entry.path());
        const std::string from = "<checksum type=\"sha256\" pkgid=\"YES\">" +
                                 hash_bytes(ChecksumType::Sha256, bytes) + "</checksum>";
        const auto at = primary.find(from);
        ASSERT_NE(at, std::string::npos) << from;
        primary.replace(at, from.size(),
                        "<checksum type=\"sha\" pkgid=\"YES\">" +
                            hash_bytes(ChecksumType::Sha1, bytes) + "</checksum>");
    }
    ASSERT_EQ(primary.find("<size "), std::string::npos);
    publish_primary(primary, ChecksumType::Sha1, "sha", /*with_size=*/false);
    url_ = serve(upstream_).url("/");

    const CommandResult synced = sync(args());
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(package_digests(tmp_ / "mirror" / "wild"), package_digests(upstream_));

    // A damaged copy (same size) is found by its checksum and fetched again; a leftover .part
    // of a file whose size is unknown is started over, never trusted.
    const fs::path tiny = tmp_ / "mirror" / "wild" / kTinyHref;
    std::string damaged = read_file(tiny);
    damaged[damaged.size() / 2] ^= 0x55;
    fs::remove(tiny);
    TempDir::write_at(tiny, damaged);
    TempDir::write_at(tiny.parent_path() / ("." + tiny.filename().string() + ".part"), "junk");
    const CommandResult again =
        sync({"--repofrompath", "wild," + url_, "--repo", "wild", "-p", (tmp_ / "mirror").string(),
              "--state-dir", (tmp_ / "state").string()});
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(package_digests(tmp_ / "mirror" / "wild"), package_digests(upstream_));
    EXPECT_FALSE(fs::exists(tiny.parent_path() / ("." + tiny.filename().string() + ".part")));
}

TEST_F(SyncWild, APackageWithoutSizeWhoseChecksumDoesNotMatchFails) {
    std::string primary = std::regex_replace(primary_, std::regex("<size [^>]*/>"), "");
    // The tiny package's file is replaced upstream by other bytes: only the checksum can tell.
    TempDir::write_at(upstream_ / kTinyHref, "not the package");
    publish_primary(primary, ChecksumType::Sha256, "sha256", /*with_size=*/true);
    url_ = serve(upstream_).url("/");

    const CommandResult synced = sync(args());
    EXPECT_EQ(synced.exit_code, 1) << synced.out << synced.err;
    EXPECT_NE(synced.err.find("rpmirror-sample-tiny"), std::string::npos) << synced.err;
    EXPECT_NE(synced.err.find("sha256 mismatch"), std::string::npos) << synced.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "wild" / kTinyHref));
}

TEST_F(SyncWild, APackageWithAnXmlBaseIsFetchedFromThere) {
    // The tiny package lives on another server only.
    const fs::path elsewhere = tmp_ / "elsewhere";
    fs::create_directories(elsewhere / "Packages");
    fs::rename(upstream_ / kTinyHref, elsewhere / kTinyHref);
    NginxServer& other = serve(elsewhere);
    const std::string from = "<location href=\"" + kTinyHref + "\"";
    const auto at = primary_.find(from);
    ASSERT_NE(at, std::string::npos);
    std::string primary = primary_;
    primary.replace(at, from.size(),
                    "<location xml:base=\"" + other.url("/") + "\" href=\"" + kTinyHref + "\"");
    publish_primary(primary, ChecksumType::Sha256, "sha256", /*with_size=*/true);
    NginxServer& server = serve(upstream_);
    url_ = server.url("/");

    const CommandResult synced = sync(args());
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(read_file(tmp_ / "mirror" / "wild" / kTinyHref), read_file(elsewhere / kTinyHref));
    EXPECT_EQ(package_uris(uris_since(other, 0)), std::vector<std::string>{"/" + kTinyHref});
    const std::vector<std::string> upstream_packages = package_uris(uris_since(server, 0));
    EXPECT_EQ(upstream_packages.size(), 4U);
    EXPECT_EQ(std::find(upstream_packages.begin(), upstream_packages.end(), "/" + kTinyHref),
              upstream_packages.end());

    // -u names it where it is fetched from.
    const CommandResult listed = sync({"--repofrompath", "wild," + url_, "--repo", "wild", "-u"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_NE(listed.out.find(other.url("/") + kTinyHref + "\n"), std::string::npos) << listed.out;
}

TEST_F(SyncWild, AnFtpXmlBaseIsRefusedNamingIt) {
    const std::string from = "<location href=\"" + kTinyHref + "\"";
    std::string primary = primary_;
    primary.replace(primary.find(from), from.size(),
                    "<location xml:base=\"ftp://mirror.example/\" href=\"" + kTinyHref + "\"");
    publish_primary(primary, ChecksumType::Sha256, "sha256", /*with_size=*/true);
    url_ = serve(upstream_).url("/");

    const CommandResult synced = sync(args());
    EXPECT_EQ(synced.exit_code, 1) << synced.out << synced.err;
    EXPECT_NE(synced.err.find("xml:base 'ftp://mirror.example/'"), std::string::npos) << synced.err;
    EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "wild" / kTinyHref));
}

}  // namespace
}  // namespace rpmirror::test
