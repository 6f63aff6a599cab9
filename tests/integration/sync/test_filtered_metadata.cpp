// A filtered mirror (-a, -n, -x, --source) with --download-metadata publishes metadata listing
// exactly the mirrored packages: dnf reads it, lists what is there and downloads every package
// it lists; the package set equals what createrepo_c over the mirrored files gives. Without a
// filter, or with --upstream-metadata, the metadata is upstream's byte for byte. A rewritten
// repomd.xml is signed with --sign-key or published without repomd.xml.asc.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "checksum/hasher.hpp"
#include "integration/sync/sync_fixture.hpp"
#include "metadata/metadata.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/signing.hpp"
#include "util/unique_fd.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

class FilteredMetadata : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = test_repo("index-repo");
    }

    CommandResult mirror(const std::vector<std::string>& filters,
                         const std::vector<std::string>& env = {}) {
        if (server_ == nullptr) {
            server_ = &serve(upstream_);
        }
        std::vector<std::string> args{
            "--repofrompath",           "idx," + server_->url("/"), "--repo", "idx", "-p",
            (tmp_ / "mirror").string(), "--download-metadata"};
        args.insert(args.end(), filters.begin(), filters.end());
        if (env.empty()) {
            return sync(args);
        }
        std::vector<std::string> argv{"env"};
        argv.insert(argv.end(), env.begin(), env.end());
        std::vector<std::string> full{"-c", (tmp_ / "empty.conf").string(), "--reposdir",
                                      (tmp_ / "empty-reposdir").string()};
        full.insert(full.end(), args.begin(), args.end());
        const auto sync_argv = rpmirror_sync_argv(full);
        argv.insert(argv.end(), sync_argv.begin(), sync_argv.end());
        return run_to_end(argv, tmp_ / "logs");
    }

    fs::path repo() const { return tmp_ / "mirror" / "idx"; }

    // dnf repoquery of every package of the repository at `dir`: "nevra location" lines, sorted.
    std::vector<std::string> repoquery(const fs::path& dir) {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)));
        argv.insert(argv.end(), {"--repofrompath=m,file://" + dir.string(), "--repo=m", "repoquery",
                                 "-a", "--qf", "%{name}-%{evr}.%{arch} %{location}"});
        const CommandResult query = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(query.exit_code, 0) << query.err;
        std::vector<std::string> lines = lines_of(query.out);
        std::sort(lines.begin(), lines.end());
        return lines;
    }

    // The "pkgid href" pairs primary.xml of the repository at `dir` lists, sorted (read with
    // gzip and a regular expression: independent of rpmirror's parser).
    std::vector<std::string> primary_packages(const fs::path& dir) {
        const std::string xml = gunzip(only_file_ending(dir / "repodata", "-primary.xml.gz"));
        static const std::regex package(
            R"re(<checksum type="sha256" pkgid="YES">([0-9a-f]+)</checksum>[\s\S]*?<location href="([^"]+)"/>)re");
        std::vector<std::string> found;
        for (auto it = std::sregex_iterator(xml.begin(), xml.end(), package);
             it != std::sregex_iterator(); ++it) {
            found.push_back((*it)[1].str() + " " + (*it)[2].str());
        }
        std::sort(found.begin(), found.end());
        return found;
    }

    // The mirror's packages indexed by createrepo_c (a copy of them, in tmp_).
    fs::path createrepo_of_mirror() {
        const fs::path copy = tmp_ / ("createrepo-" + std::to_string(++dnf_runs_));
        fs::create_directories(copy);
        fs::copy(repo() / "Packages", copy / "Packages", fs::copy_options::recursive);
        run_checked({"createrepo_c", "--quiet", "--no-database", copy.string()}, tmp_ / "logs");
        return copy;
    }

    // The mirrored package files, as "Packages/<name>" sorted.
    std::vector<std::string> mirrored_files() const {
        std::vector<std::string> files;
        for (const auto& entry : fs::recursive_directory_iterator(repo() / "Packages")) {
            if (entry.is_regular_file()) {
                files.push_back(fs::relative(entry.path(), repo()).string());
            }
        }
        std::sort(files.begin(), files.end());
        return files;
    }

    // Checks everything a filtered mirror promises: dnf lists exactly the mirrored files, the
    // pkgids and locations equal createrepo_c's over those files, repomd.xml lists no sqlite
    // database and `rpmirror verify` passes.
    void expect_consistent_metadata() {
        const std::vector<std::string> listed = repoquery(repo());
        std::vector<std::string> locations;
        for (const std::string& line : listed) {
            locations.push_back(line.substr(line.find(' ') + 1));
        }
        std::sort(locations.begin(), locations.end());
        EXPECT_EQ(locations, mirrored_files());
        const fs::path reference = createrepo_of_mirror();
        EXPECT_EQ(primary_packages(repo()), primary_packages(reference));
        EXPECT_EQ(listed, repoquery(reference));
        const std::string repomd = read_file(repo() / "repodata" / "repomd.xml");
        EXPECT_EQ(repomd.find("_db\""), std::string::npos) << repomd;
        const CommandResult verified = run_to_end(
            {rpmirror_binary(), "verify", "-p", (tmp_ / "mirror").string(), "-c",
             (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string()},
            tmp_ / "logs");
        EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
    }

    // dnf downloads every binary package it lists from the mirror.
    void expect_dnf_downloads_everything() {
        std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)));
        const fs::path destination = tmp_ / ("downloaded-" + std::to_string(dnf_runs_));
        argv.insert(argv.end(), {"--repofrompath=m,file://" + repo().string(), "--repo=m",
                                 "download", "--destdir", destination.string()});
        std::size_t wanted = 0;
        for (const std::string& line : repoquery(repo())) {
            const std::string nevra = line.substr(0, line.find(' '));
            if (!nevra.ends_with(".src")) {  // dnf download takes source packages by --source
                argv.push_back(nevra);
                ++wanted;
            }
        }
        ASSERT_GT(wanted, 0U);
        const CommandResult downloaded = run_to_end(argv, tmp_ / "logs");
        EXPECT_EQ(downloaded.exit_code, 0) << downloaded.out << downloaded.err;
        std::size_t files = 0;
        for (const auto& entry : fs::directory_iterator(destination)) {
            files += entry.path().extension() == ".rpm" ? 1 : 0;
        }
        EXPECT_EQ(files, wanted);
    }

    fs::path upstream_;
    NginxServer* server_ = nullptr;
    int dnf_runs_ = 0;
};

TEST_F(FilteredMetadata, ArchFilterPublishesExactlyTheMirroredPackagesAndANextRunIsANoOp) {
    const CommandResult first = mirror({"-a", "x86_64,noarch"});
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_EQ(first.err.find("lists"), std::string::npos) << first.err;  // no upstream warning
    expect_consistent_metadata();
    expect_dnf_downloads_everything();
    EXPECT_EQ(mirrored_files().size(), 8U);
    // verify --remote judges it against what its recorded selection publishes from upstream's
    // current metadata, not record by record against upstream's.
    const CommandResult remote = run_to_end(
        {rpmirror_binary(), "verify", "-p", (tmp_ / "mirror").string(), "--remote",
         "--repofrompath", "idx," + server_->url("/"), "--repo", "idx", "-c",
         (tmp_ / "empty.conf").string(), "--reposdir", (tmp_ / "empty-reposdir").string()},
        tmp_ / "logs");
    EXPECT_EQ(remote.exit_code, 0) << remote.out << remote.err;
    EXPECT_NE(remote.out.find("idx: OK"), std::string::npos) << remote.out;

    const auto published = tree_digests(repo() / "repodata");
    const std::size_t requests = log_size(*server_);
    const CommandResult second = mirror({"-a", "x86_64,noarch"});
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_NE(second.out.find("up to date"), std::string::npos) << second.out;
    EXPECT_EQ(tree_digests(repo() / "repodata"), published);
    EXPECT_EQ(uris_since(*server_, requests), (std::vector<std::string>{"/repodata/repomd.xml"}));

    // Without the filter the mirror holds every package and upstream's metadata, verbatim.
    const CommandResult unfiltered = mirror({});
    ASSERT_EQ(unfiltered.exit_code, 0) << unfiltered.out << unfiltered.err;
    EXPECT_EQ(tree_digests(repo() / "repodata"), tree_digests(upstream_ / "repodata"));
}

// A record rpmirror rewrote carries its checksum-cache entry, as one it downloaded does: a
// `rpmirror verify` run later (beyond the cache's racy window) then writes no entry, which would
// change the record's ctime and make the next sync no no-op.
TEST_F(FilteredMetadata, RewrittenRecordsCarryTheirChecksumCacheEntry) {
    const CommandResult synced = mirror({"-a", "x86_64,noarch"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    auto repomd = parse_repomd(read_file(repo() / "repodata" / "repomd.xml"), "repomd.xml");
    ASSERT_TRUE(repomd) << repomd.error().to_string();
    std::size_t cached = 0;
    for (const RepomdRecord& record : repomd->records) {
        const std::filesystem::path file = repo() / record.location_href;
        const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
        struct stat st {};
        ASSERT_TRUE(fd && ::fstat(fd.get(), &st) == 0) << file;
        const auto digest = read_cached_digest(fd.get(), st, record.checksum.type);
        EXPECT_EQ(digest.value_or("none"), record.checksum.hex) << file;
        cached += digest ? 1 : 0;
    }
    EXPECT_GE(cached, 3U);  // primary, filelists, other at least
}

TEST_F(FilteredMetadata, NewestOnlyWithAnExcludeListsOnlyWhatIsMirrored) {
    const CommandResult synced = mirror({"-n", "-x", "rpmirror-idx-epoch"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    for (const std::string& file : mirrored_files()) {
        EXPECT_EQ(file.find("idx-epoch"), std::string::npos) << file;
    }
    expect_consistent_metadata();
    expect_dnf_downloads_everything();
}

TEST_F(FilteredMetadata, SourceOnlyListsTheSourcePackages) {
    const CommandResult synced = mirror({"--source"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(mirrored_files().size(), 2U);
    expect_consistent_metadata();
}

TEST_F(FilteredMetadata, XzRecordsAreRewrittenAsXz) {
    upstream_ = copy_repo(upstream_, tmp_ / "upstream-xz");
    fs::remove_all(upstream_ / "repodata");
    run_checked({"createrepo_c", "--quiet", "--general-compress-type", "xz", upstream_.string()},
                tmp_ / "logs");
    const CommandResult synced = mirror({"-a", "noarch"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    for (const char* record : {"-primary.xml.xz", "-filelists.xml.xz", "-other.xml.xz"}) {
        run_checked({"xz", "-t", only_file_ending(repo() / "repodata", record).string()},
                    tmp_ / "logs");
    }
    std::vector<std::string> locations;
    for (const std::string& line : repoquery(repo())) {
        locations.push_back(line.substr(line.find(' ') + 1));
    }
    std::sort(locations.begin(), locations.end());
    EXPECT_EQ(locations, mirrored_files());
    EXPECT_EQ(locations.size(), 3U);
}

// createrepo_c >= 1.0 writes a "filelists-ext" record with --filelists-ext (Debian 12's 0.17
// cannot: the test derives one from filelists.xml, as the format is filelists.xml under another
// root and namespace with more attributes per file). A filtered mirror rewrites it like
// filelists: it lists exactly the mirrored packages, and its packages="N" says how many.
TEST_F(FilteredMetadata, FilelistsExtListsOnlyTheMirroredPackages) {
    upstream_ = copy_repo(upstream_, tmp_ / "upstream-ext");
    std::string ext = gunzip(only_file_ending(upstream_ / "repodata", "-filelists.xml.gz"));
    ext = std::regex_replace(ext, std::regex("<filelists "), "<filelists-ext ");
    ext = std::regex_replace(ext, std::regex("</filelists>"), "</filelists-ext>");
    ext = std::regex_replace(ext, std::regex("metadata/filelists\""), "metadata/filelists-ext\"");
    ASSERT_NE(ext.find("<filelists-ext "), std::string::npos) << ext;
    TempDir::write_at(tmp_ / "filelists-ext.xml", ext);
    run_checked({"modifyrepo_c", "--mdtype=filelists-ext", (tmp_ / "filelists-ext.xml").string(),
                 (upstream_ / "repodata").string()},
                tmp_ / "logs");

    const CommandResult synced = mirror({"-a", "noarch"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    expect_consistent_metadata();
    const std::string repomd = read_file(repo() / "repodata" / "repomd.xml");
    EXPECT_NE(repomd.find("<data type=\"filelists-ext\">"), std::string::npos) << repomd;
    const std::string published =
        gunzip(only_file_ending(repo() / "repodata", "-filelists-ext.xml.gz"));
    std::vector<std::string> pkgids;
    static const std::regex package(R"re(<package pkgid="([0-9a-f]+)")re");
    for (auto it = std::sregex_iterator(published.begin(), published.end(), package);
         it != std::sregex_iterator(); ++it) {
        pkgids.push_back((*it)[1].str());
    }
    std::sort(pkgids.begin(), pkgids.end());
    std::vector<std::string> mirrored;
    for (const std::string& entry : primary_packages(repo())) {
        mirrored.push_back(entry.substr(0, entry.find(' ')));
    }
    std::sort(mirrored.begin(), mirrored.end());
    EXPECT_EQ(pkgids, mirrored);
    EXPECT_LT(mirrored.size(), primary_packages(upstream_).size());
    EXPECT_NE(published.find("packages=\"" + std::to_string(mirrored.size()) + "\""),
              std::string::npos)
        << published.substr(0, 300);
}

// comps (createrepo_c -g): a group whose mandatory package the filter left out cannot be
// installed from the mirror, so its published comps leaves it out (with a warning); the groups
// that stay lose the packages that are not mirrored; a package of another repository (bash) is
// not missing. dnf lists the groups and installs one from the mirror.
TEST_F(FilteredMetadata, CompsListsOnlyTheGroupsTheMirrorCanInstall) {
    upstream_ = copy_repo(upstream_, tmp_ / "upstream-comps");
    const auto group = [](const std::string& id, const std::string& packages) {
        return "  <group>\n    <id>" + id + "</id>\n    <name>" + id +
               "</name>\n    <default>false</default>\n    <uservisible>true</uservisible>\n"
               "    <packagelist>\n" +
               packages + "    </packagelist>\n  </group>\n";
    };
    const fs::path comps = TempDir::write_at(
        tmp_ / "comps.xml",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<comps>\n" +
            group("multi-tools",
                  "      <packagereq type=\"mandatory\">rpmirror-idx-multi</packagereq>\n") +
            group("noarch-tools",
                  "      <packagereq type=\"mandatory\">rpmirror-idx-noarch</packagereq>\n"
                  "      <packagereq type=\"optional\">rpmirror-idx-epoch</packagereq>\n") +
            group("base-tools", "      <packagereq type=\"mandatory\">bash</packagereq>\n") +
            "</comps>\n");
    fs::remove_all(upstream_ / "repodata");
    run_checked({"createrepo_c", "--quiet", "-g", comps.string(), upstream_.string()},
                tmp_ / "logs");

    const CommandResult synced = mirror({"-a", "noarch"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_NE((synced.out + synced.err)
                  .find("comps: group multi-tools: its mandatory package rpmirror-idx-multi is "
                        "not mirrored"),
              std::string::npos)
        << synced.out << synced.err;
    expect_consistent_metadata();
    for (const char* record : {"-comps.xml", "-comps.xml.gz"}) {
        std::string text = read_file(only_file_ending(repo() / "repodata", record));
        if (std::string(record).ends_with(".gz")) {
            text = gunzip(only_file_ending(repo() / "repodata", record));
        }
        EXPECT_EQ(text.find("multi-tools"), std::string::npos) << record << text;
        EXPECT_EQ(text.find("rpmirror-idx-epoch"), std::string::npos) << record << text;
        EXPECT_NE(text.find("<id>noarch-tools</id>"), std::string::npos) << record << text;
        EXPECT_NE(text.find(">bash</packagereq>"), std::string::npos) << record << text;
    }

    // dnf: the groups that stay, and one of them installed from the mirror.
    std::vector<std::string> argv = isolated_dnf(tmp_ / ("dnf-" + std::to_string(++dnf_runs_)));
    argv.insert(argv.end(), {"--repofrompath=m,file://" + repo().string(), "--repo=m", "group",
                             "list", "--ids"});
    const CommandResult groups = run_to_end(argv, tmp_ / "logs");
    ASSERT_EQ(groups.exit_code, 0) << groups.err;
    EXPECT_NE(groups.out.find("(noarch-tools)"), std::string::npos) << groups.out;
    EXPECT_NE(groups.out.find("(base-tools)"), std::string::npos) << groups.out;
    EXPECT_EQ(groups.out.find("multi-tools"), std::string::npos) << groups.out;
    const fs::path work = tmp_ / ("dnf-" + std::to_string(++dnf_runs_));
    argv = isolated_dnf(work);
    fs::create_directories(work / "log");
    argv.insert(argv.end(),
                {"--repofrompath=m,file://" + repo().string(), "--repo=m", "--installroot",
                 (tmp_ / "root").string(), "group", "install", "--downloadonly", "noarch-tools"});
    const CommandResult installed = run_to_end(argv, tmp_ / "logs");
    EXPECT_EQ(installed.exit_code, 0) << installed.out << installed.err;
}

TEST_F(FilteredMetadata, DroppingAFilterRepublishesUpstreamMetadataAndAddingOneRewritesIt) {
    ASSERT_EQ(mirror({}).exit_code, 0);
    EXPECT_EQ(tree_digests(repo() / "repodata"), tree_digests(upstream_ / "repodata"));
    const CommandResult filtered = mirror({"-n"});
    ASSERT_EQ(filtered.exit_code, 0) << filtered.out << filtered.err;
    EXPECT_NE(tree_digests(repo() / "repodata"), tree_digests(upstream_ / "repodata"));
    // The packages -n left out are still in the mirror (no --delete), but not listed.
    EXPECT_EQ(primary_packages(repo()).size(), 7U);
}

TEST_F(FilteredMetadata, UpstreamMetadataKeepsUpstreamsRecordsVerbatimWithAWarning) {
    const CommandResult synced = mirror({"-a", "x86_64", "--upstream-metadata"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(tree_digests(repo() / "repodata"), tree_digests(upstream_ / "repodata"));
    EXPECT_NE((synced.out + synced.err).find("the published metadata is upstream's"),
              std::string::npos)
        << synced.out << synced.err;
}

class FilteredMetadataSigned : public FilteredMetadata {
  protected:
    void SetUp() override {
        FilteredMetadata::SetUp();
        if (!signing_tools_available()) {
            GTEST_FAIL() << "gpg and rpmsign are needed (scripts/deps)";
        }
        // An upstream signed with the "other" key.
        upstream_ = copy_repo(upstream_, tmp_ / "upstream");
        test_keys().sign_detached(Signer::Other, upstream_ / "repodata" / "repomd.xml",
                                  upstream_ / "repodata" / "repomd.xml.asc");
    }

    std::vector<std::string> gnupg_env() const {
        return {"GNUPGHOME=" + test_keys().home().string()};
    }
};

TEST_F(FilteredMetadataSigned, SignKeySignsTheRewrittenRepomdAndGpgVerifiesIt) {
    const CommandResult synced =
        mirror({"-a", "x86_64", "--sign-key", test_keys().key_id(Signer::Good)}, gnupg_env());
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    const fs::path repodata = repo() / "repodata";
    ASSERT_TRUE(fs::exists(repodata / "repomd.xml.asc"));
    EXPECT_NE(read_file(repodata / "repomd.xml.asc"),
              read_file(upstream_ / "repodata" / "repomd.xml.asc"));
    const CommandResult verified =
        run_to_end({kGpgBinary, "--homedir", test_keys().home().string(), "--verify",
                    (repodata / "repomd.xml.asc").string(), (repodata / "repomd.xml").string()},
                   tmp_ / "logs");
    EXPECT_EQ(verified.exit_code, 0) << verified.err;
    EXPECT_NE(verified.err.find("good@rpmirror.invalid"), std::string::npos) << verified.err;
    expect_consistent_metadata();
}

TEST_F(FilteredMetadataSigned, AnUnknownSignKeyIsAClearErrorAndTheMirrorIsUntouched) {
    ASSERT_EQ(mirror({"-a", "noarch", "--sign-key", test_keys().key_id(Signer::Good)}, gnupg_env())
                  .exit_code,
              0);
    const auto before = tree_digests(tmp_ / "mirror");
    const CommandResult synced =
        mirror({"-a", "x86_64", "--sign-key", "0123456789ABCDEF"}, gnupg_env());
    EXPECT_NE(synced.exit_code, 0);
    EXPECT_NE(synced.err.find("0123456789ABCDEF"), std::string::npos) << synced.err;
    EXPECT_EQ(tree_digests(tmp_ / "mirror"), before);
}

TEST_F(FilteredMetadataSigned, WithoutSignKeyNoSignatureIsPublishedAndTheSummarySaysWhy) {
    const CommandResult synced = mirror({"-a", "x86_64"});
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_FALSE(fs::exists(repo() / "repodata" / "repomd.xml.asc"));
    EXPECT_NE((synced.out + synced.err).find("repomd.xml.asc not published"), std::string::npos)
        << synced.out << synced.err;
    expect_consistent_metadata();
}

// --sign-key only means something when metadata is published, and signing upstream's verbatim
// repomd.xml would replace upstream's own signature: usage errors. (--upstream-metadata alone
// changes nothing without --download-metadata, and is accepted.)
TEST_F(FilteredMetadataSigned, SignKeyNeedsDownloadMetadataAndExcludesUpstreamMetadata) {
    const std::vector<std::vector<std::string>> cases{
        {"--sign-key", "0123456789ABCDEF"},
        {"--download-metadata", "--upstream-metadata", "--sign-key", "0123456789ABCDEF"}};
    for (const std::vector<std::string>& options : cases) {
        std::vector<std::string> args{
            "--repofrompath",          "idx,file://" + upstream_.string(), "--repo", "idx", "-p",
            (tmp_ / "mirror").string()};
        args.insert(args.end(), options.begin(), options.end());
        const CommandResult synced = sync(args);
        EXPECT_EQ(synced.exit_code, 2) << synced.out << synced.err;
        EXPECT_NE(synced.err.find("--sign-key"), std::string::npos) << synced.err;
        EXPECT_FALSE(fs::exists(tmp_ / "mirror" / "idx"));
    }
}

}  // namespace
}  // namespace rpmirror::test
