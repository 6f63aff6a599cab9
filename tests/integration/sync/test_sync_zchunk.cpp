// zchunk metadata deltas: a repository made by createrepo_c --zck in two revisions (the second
// with one package removed and two added), served by nginx. The second sync fetches only the
// zchunk headers and the changed chunks of the *_zck records (ranged requests; nginx's
// $body_bytes_sent is the measure), and the records it assembles are byte-identical to
// upstream's. A server that ignores Range, chunks that do not verify and --zchunk=off all end in
// a full download of the record, never in a failure.
// Without --download-metadata, primary_zck replaces primary.xml.gz: the first run downloads it
// whole and keeps it in the state directory, the next fetches its header and changed chunks
// only, and parses it; a kept copy that is no zchunk file falls back to primary.xml.gz.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "integration/sync/sync_fixture.hpp"

namespace rpmirror::test {
namespace {

namespace fs = std::filesystem;

constexpr int kPackages = 42;  // zpkg3..zpkg42 in revision 1; zpkg1..zpkg42 but zpkg30 in 2

// One RPM per source package (createrepo_c ends a zchunk chunk at each source package).
const fs::path& built_rpms() {
    static TempDir dir;
    static const fs::path rpms = [] {
        const fs::path specs = dir / "specs";
        fs::create_directories(specs);
        std::vector<std::string> argv{"rpmbuild", "--quiet", "-bb", "--define",
                                      "_topdir " + (dir / "top").string()};
        for (int i = 1; i <= kPackages; ++i) {
            const std::string name = "zpkg" + std::to_string(i);
            TempDir::write_at(specs / (name + ".spec"),
                              "Name: " + name + "\nVersion: 1\nRelease: 1\nSummary: package " +
                                  std::to_string(i) +
                                  " of the zchunk test\nLicense: MIT\nBuildArch: noarch\n"
                                  "%description\nPackage number " +
                                  std::to_string(i) +
                                  ", described at some length so that its chunk of primary.xml "
                                  "is a few hundred bytes, as in a real repository.\n%files\n");
            argv.push_back((specs / (name + ".spec")).string());
        }
        run_checked(argv, dir / "logs");
        return dir / "top" / "RPMS" / "noarch";
    }();
    return rpms;
}

fs::path rpm_of(int i) {
    return built_rpms() / ("zpkg" + std::to_string(i) + "-1-1.noarch.rpm");
}

class SyncZchunk : public SyncFixture {
  protected:
    void SetUp() override {
        SyncFixture::SetUp();
        upstream_ = tmp_ / "upstream";
        fs::create_directories(upstream_ / "Packages");
        for (int i = 3; i <= kPackages; ++i) {
            fs::copy_file(rpm_of(i), upstream_ / "Packages" / rpm_of(i).filename());
        }
        make_repodata("1");
    }

    void make_repodata(const std::string& revision) {
        fs::remove_all(upstream_ / "repodata");
        run_checked({"createrepo_c", "--quiet", "--zck", "--no-database", "--revision", revision,
                     upstream_.string()},
                    tmp_ / "logs");
    }

    // Revision 2: zpkg30 removed, zpkg1 and zpkg2 added (their chunks are apart: two ranges).
    void make_revision_2() {
        fs::remove(upstream_ / "Packages" / rpm_of(30).filename());
        for (int i = 1; i <= 2; ++i) {
            fs::copy_file(rpm_of(i), upstream_ / "Packages" / rpm_of(i).filename());
        }
        make_repodata("2");
    }

    NginxServer& serve_with(const std::string& extra_config) {
        NginxOptions options;
        options.extra_server_config = extra_config;
        servers_.push_back(std::make_unique<NginxServer>(
            upstream_, tmp_ / ("nginx-" + std::to_string(servers_.size())), options));
        return *servers_.back();
    }

    std::vector<std::string> args(const NginxServer& server) const {
        return {"--repofrompath",
                "z," + server.url("/"),
                "--repo",
                "z",
                "--download-metadata",
                "-p",
                (tmp_ / "mirror").string()};
    }

    CommandResult sync_json(std::vector<std::string> arguments, nlohmann::json& report) {
        arguments.insert(arguments.end(), {"-v", "--json", (tmp_ / "report.json").string()});
        CommandResult result = sync(arguments);
        report = nlohmann::json::parse(read_file(tmp_ / "report.json"), nullptr, false);
        return result;
    }

    // The zchunk records of upstream's repodata/ by name suffix ("-primary.xml.zck"...).
    std::map<std::string, fs::path> upstream_zck() const {
        std::map<std::string, fs::path> records;
        for (const auto& entry : fs::directory_iterator(upstream_ / "repodata")) {
            const std::string name = entry.path().filename().string();
            if (name.ends_with(".zck")) {
                records[name.substr(name.find('-'))] = entry.path();
            }
        }
        return records;
    }

    // Every file of upstream's repodata/ is in the mirror's, byte for byte.
    void expect_repodata_identical() {
        for (const auto& entry : fs::directory_iterator(upstream_ / "repodata")) {
            const fs::path mirrored = tmp_ / "mirror/z/repodata" / entry.path().filename();
            ASSERT_TRUE(fs::exists(mirrored)) << mirrored;
            EXPECT_EQ(read_file(mirrored), read_file(entry.path())) << mirrored;
        }
    }

    // The access log entries after the first `skip` whose URI ends with `suffix`.
    std::vector<nlohmann::json> requests_of(const NginxServer& server, std::size_t skip,
                                            const std::string& suffix) {
        (void)uris_since(server, skip);  // everything before the sentinel is logged now
        std::vector<nlohmann::json> found;
        const auto entries = server.access_log();
        for (std::size_t index = skip; index < entries.size(); ++index) {
            if (entries[index].value("uri", "").ends_with(suffix)) {
                found.push_back(entries[index]);
            }
        }
        return found;
    }

    // The default mode (no --download-metadata), its state in tmp_/state`suffix`, its mirror in
    // tmp_/mirror`suffix`.
    std::vector<std::string> default_args(const NginxServer& server,
                                          const std::string& suffix = "") const {
        return {"--repofrompath",
                "z," + server.url("/"),
                "--repo",
                "z",
                "--state-dir",
                (tmp_ / ("state" + suffix)).string(),
                "-p",
                (tmp_ / ("mirror" + suffix)).string()};
    }

    // The primary_zck the default mode keeps for the next run's delta (state `suffix`), or an
    // empty path iff there is none.
    fs::path kept_primary_zck(const std::string& suffix = "") const {
        const fs::path repos = tmp_ / ("state" + suffix) / "repos";
        std::error_code error;
        for (fs::directory_iterator it(repos, error), end; !error && it != end;
             it.increment(error)) {
            if (it->path().filename().string().ends_with(".primary.xml.zck")) {
                return it->path();
            }
        }
        return {};
    }

    // The file names of the packages in tmp_/mirror`suffix`/z, sorted.
    std::set<std::string> mirrored_rpms(const std::string& suffix = "") const {
        std::set<std::string> names;
        for (const auto& entry :
             fs::recursive_directory_iterator(tmp_ / ("mirror" + suffix) / "z")) {
            if (entry.path().extension() == ".rpm") {
                names.insert(entry.path().filename().string());
            }
        }
        return names;
    }

    // The file names of upstream's packages.
    std::set<std::string> upstream_rpms() const {
        std::set<std::string> names;
        for (const auto& entry : fs::directory_iterator(upstream_ / "Packages")) {
            names.insert(entry.path().filename().string());
        }
        return names;
    }

    fs::path upstream_;
};

TEST_F(SyncZchunk, SecondRevisionFetchesOnlyTheHeaderAndTheChangedChunks) {
    NginxServer& server = serve(upstream_);
    const CommandResult first = sync(args(server));
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    make_revision_2();
    const std::size_t before = log_size(server);
    nlohmann::json report;
    const CommandResult second = sync_json(args(server), report);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    expect_repodata_identical();

    const auto records = upstream_zck();
    ASSERT_EQ(records.size(), 3U);  // primary, filelists, other
    std::uint64_t sent_total = 0;
    for (const auto& [suffix, file] : records) {
        const auto requests = requests_of(server, before, suffix);
        ASSERT_GE(requests.size(), 2U) << suffix << ": the header, then the chunks";
        std::uint64_t sent = 0;
        // Several ranges in one request (nginx answers multipart/byteranges).
        EXPECT_NE(requests.back().value("range", "").find(','), std::string::npos)
            << suffix << " " << requests.back().dump();
        for (const nlohmann::json& request : requests) {
            EXPECT_EQ(request.value("status", 0), 206) << suffix << " " << request.dump();
            EXPECT_FALSE(request.value("range", "").empty()) << suffix;
            sent += request.value("bytes", std::uint64_t{0});
        }
        const std::uint64_t size = fs::file_size(file);
        // 3 of 41 packages changed: the header and 2 chunks, far below the whole file.
        EXPECT_LT(sent * 3, size) << suffix << ": nginx sent " << sent << " of " << size;
        sent_total += sent;
    }
    ASSERT_TRUE(report.is_object()) << second.out;
    const nlohmann::json& repo = report["repositories"][0];
    EXPECT_EQ(repo.value("zck_records", 0), 3) << repo.dump();
    EXPECT_GT(repo.value("zck_bytes_saved", std::uint64_t{0}), 0U) << repo.dump();
    // What rpmirror counted is what nginx sent (bodies, multipart framing included).
    EXPECT_EQ(repo.value("zck_bytes_fetched", std::uint64_t{0}), sent_total) << repo.dump();
    EXPECT_TRUE(repo["zck_fallbacks"].empty()) << repo.dump();
    EXPECT_NE(second.out.find("zchunk: 3 record(s) by delta"), std::string::npos) << second.out;
}

TEST_F(SyncZchunk, ServerIgnoringRangeFallsBackToTheFullFile) {
    NginxServer& server = serve_with("    max_ranges 0;");  // Range ignored: 200, whole file
    const CommandResult first = sync(args(server));
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    make_revision_2();
    nlohmann::json report;
    const CommandResult second = sync_json(args(server), report);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    expect_repodata_identical();
    const nlohmann::json& repo = report["repositories"][0];
    EXPECT_EQ(repo.value("zck_records", -1), 0) << repo.dump();
    EXPECT_EQ(repo["zck_fallbacks"].size(), 3U) << repo.dump();
    EXPECT_NE(second.err.find("answered a Range request with HTTP 200, not 206; downloading it "
                              "in full"),
              std::string::npos)
        << second.err;
}

TEST_F(SyncZchunk, ChunksThatDoNotVerifyFallBackToTheFullFile) {
    // Ranged requests are served from a copy whose data (after the zchunk headers) is corrupt;
    // whole-file requests get the real files.
    const fs::path corrupt = tmp_ / "corrupt";
    const CommandResult first = [&] {
        NginxServer& plain = serve(upstream_);
        return sync(args(plain));
    }();
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    make_revision_2();
    fs::create_directories(corrupt / "repodata");
    for (const auto& [suffix, file] : upstream_zck()) {
        std::string bytes = read_file(file);
        // Every byte after the zchunk header (zck_read_header says how long it is) flipped.
        const std::string header =
            run_to_end({"zck_read_header", file.string()}, tmp_ / "logs").out;
        const std::size_t at = header.find("Header size: ");
        ASSERT_NE(at, std::string::npos) << header;
        const std::size_t header_size = std::stoul(header.substr(at + 13));
        ASSERT_LT(header_size, bytes.size());
        for (std::size_t index = header_size; index < bytes.size(); ++index) {
            bytes[index] = static_cast<char>(bytes[index] ^ 0x5a);
        }
        TempDir::write_at(corrupt / "repodata" / file.filename(), bytes);
    }
    NginxServer& server = serve_with("    location /repodata/ { if ($http_range) { root " +
                                     corrupt.string() + "; } }");
    nlohmann::json report;
    const CommandResult second = sync_json(args(server), report);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    expect_repodata_identical();
    const nlohmann::json& repo = report["repositories"][0];
    EXPECT_EQ(repo.value("zck_records", -1), 0) << repo.dump();
    EXPECT_EQ(repo["zck_fallbacks"].size(), 3U) << repo.dump();
    EXPECT_NE(second.err.find("downloading it in full"), std::string::npos) << second.err;
}

TEST_F(SyncZchunk, OffDownloadsTheWholeFile) {
    NginxServer& server = serve(upstream_);
    const CommandResult first = sync(args(server));
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    make_revision_2();
    const std::size_t before = log_size(server);
    auto arguments = args(server);
    arguments.push_back("--zchunk=off");
    nlohmann::json report;
    const CommandResult second = sync_json(arguments, report);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    expect_repodata_identical();
    for (const auto& [suffix, file] : upstream_zck()) {
        const auto requests = requests_of(server, before, suffix);
        ASSERT_EQ(requests.size(), 1U) << suffix;
        EXPECT_EQ(requests[0].value("status", 0), 200) << requests[0].dump();
        EXPECT_EQ(requests[0].value("range", "x"), "") << requests[0].dump();
        EXPECT_EQ(requests[0].value("bytes", std::uint64_t{0}), fs::file_size(file));
    }
    EXPECT_EQ(report["repositories"][0].value("zck_records", -1), 0);
}

TEST_F(SyncZchunk, DefaultModeParsesPrimaryZckFetchedByDelta) {
    NginxServer& server = serve(upstream_);
    std::size_t before = log_size(server);
    const CommandResult first = sync(default_args(server));
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    // The first run has no earlier copy: primary_zck whole, primary.xml.gz not at all.
    std::vector<std::string> uris = uris_since(server, before);
    for (const std::string& uri : uris) {
        EXPECT_FALSE(uri.ends_with("-primary.xml.gz")) << uri;
    }
    EXPECT_EQ(requests_of(server, before, "-primary.xml.zck").size(), 1U);
    ASSERT_FALSE(kept_primary_zck().empty());
    EXPECT_EQ(mirrored_rpms(), upstream_rpms());

    make_revision_2();
    before = log_size(server);
    nlohmann::json report;
    const CommandResult second = sync_json(default_args(server), report);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    uris = uris_since(server, before);
    // repomd.xml, the header and the changed chunks of primary_zck, the two new packages.
    std::vector<std::string> metadata;
    for (const std::string& uri : uris) {
        if (!uri.starts_with("/Packages/")) {
            metadata.push_back(uri.ends_with("-primary.xml.zck") ? "primary.xml.zck" : uri);
        }
    }
    EXPECT_EQ(metadata, (std::vector<std::string>{"/repodata/repomd.xml", "primary.xml.zck",
                                                  "primary.xml.zck"}))
        << second.err;
    for (const nlohmann::json& request : requests_of(server, before, "-primary.xml.zck")) {
        EXPECT_EQ(request.value("status", 0), 206) << request.dump();
        EXPECT_FALSE(request.value("range", "").empty()) << request.dump();
    }
    EXPECT_EQ(package_uris(uris), (std::vector<std::string>{"/Packages/zpkg1-1-1.noarch.rpm",
                                                            "/Packages/zpkg2-1-1.noarch.rpm"}));
    ASSERT_TRUE(report.is_object()) << second.out;
    const nlohmann::json& repo = report["repositories"][0];
    EXPECT_EQ(repo.value("zck_records", 0), 1) << repo.dump();
    EXPECT_TRUE(repo["zck_fallbacks"].empty()) << repo.dump();
    // The kept copy is revision 2's now.
    const auto records = upstream_zck();
    EXPECT_EQ(read_file(kept_primary_zck()), read_file(records.at("-primary.xml.zck")));

    // The same packages as a fresh run that never reads zchunk.
    auto off = default_args(server, "-off");
    off.push_back("--zchunk=off");
    const CommandResult plain = sync(off);
    ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
    EXPECT_TRUE(kept_primary_zck("-off").empty());
    std::set<std::string> synced = mirrored_rpms();
    synced.erase("zpkg30-1-1.noarch.rpm");  // kept from revision 1 (no --delete)
    EXPECT_EQ(synced, mirrored_rpms("-off"));
    EXPECT_EQ(mirrored_rpms("-off"), upstream_rpms());
}

TEST_F(SyncZchunk, DefaultModeWithABadKeptCopyParsesPrimaryGz) {
    NginxServer& server = serve(upstream_);
    const CommandResult first = sync(default_args(server));
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    const fs::path kept = kept_primary_zck();
    ASSERT_FALSE(kept.empty());
    TempDir::write_at(kept, "not a zchunk file");
    make_revision_2();
    const std::size_t before = log_size(server);
    nlohmann::json report;
    const CommandResult second = sync_json(default_args(server), report);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    const std::vector<std::string> uris = uris_since(server, before);
    std::size_t gz = 0;
    for (const std::string& uri : uris) {
        EXPECT_FALSE(uri.ends_with("-primary.xml.zck")) << uri;
        gz += uri.ends_with("-primary.xml.gz") ? 1 : 0;
    }
    EXPECT_EQ(gz, 1U);
    EXPECT_EQ(package_uris(uris), (std::vector<std::string>{"/Packages/zpkg1-1-1.noarch.rpm",
                                                            "/Packages/zpkg2-1-1.noarch.rpm"}));
    const nlohmann::json& repo = report["repositories"][0];
    EXPECT_EQ(repo.value("zck_records", -1), 0) << repo.dump();
    ASSERT_EQ(repo["zck_fallbacks"].size(), 1U) << repo.dump();
    EXPECT_NE(second.err.find("zchunk: 'primary_zck': " + kept.string() +
                              ": the previous copy is not a zchunk file"),
              std::string::npos)
        << second.err;
    EXPECT_NE(second.err.find("; downloading 'primary' instead"), std::string::npos) << second.err;
    // Forgotten: the next run downloads primary_zck whole again.
    EXPECT_FALSE(fs::exists(kept));
}

TEST_F(SyncZchunk, RepositoryWithPrimaryZckOnlySyncs) {
    // repomd.xml without its primary record (and the file gone).
    const fs::path repomd = upstream_ / "repodata" / "repomd.xml";
    const std::string xml = read_file(repomd);
    const std::string without =
        std::regex_replace(xml, std::regex(R"(<data type="primary">[\s\S]*?</data>\s*)"), "");
    ASSERT_NE(without, xml);
    TempDir::write_at(repomd, without);
    for (const auto& entry : fs::directory_iterator(upstream_ / "repodata")) {
        if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
            fs::remove(entry.path());
        }
    }
    NginxServer& server = serve(upstream_);
    const CommandResult synced = sync(default_args(server));
    ASSERT_EQ(synced.exit_code, 0) << synced.out << synced.err;
    EXPECT_EQ(mirrored_rpms(), upstream_rpms());
    auto mirrored = args(server);
    const CommandResult with_metadata = sync(mirrored);
    ASSERT_EQ(with_metadata.exit_code, 0) << with_metadata.out << with_metadata.err;
    expect_repodata_identical();
}

}  // namespace
}  // namespace rpmirror::test
