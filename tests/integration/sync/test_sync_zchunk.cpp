// zchunk metadata deltas: a repository made by createrepo_c --zck in two revisions (the second
// with one package removed and two added), served by nginx. The second sync fetches only the
// zchunk headers and the changed chunks of the *_zck records (ranged requests; nginx's
// $body_bytes_sent is the measure), and the records it assembles are byte-identical to
// upstream's. A server that ignores Range, chunks that do not verify and --zchunk=off all end in
// a full download of the record, never in a failure.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
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

}  // namespace
}  // namespace rpmirror::test
