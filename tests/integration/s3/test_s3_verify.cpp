// `rpmirror verify` on an s3:// mirror against a real Ceph RADOS Gateway (scripts/ceph-s3): the
// listing/state check, --no-cache hashing (ranged parallel GETs), damage of every kind, the CLI,
// and --repair. The mirror is a real createrepo_c repository (the sample-repo fixture) uploaded
// with S3Client, with the state object the S3 sync writes (s3/mirror_state.hpp).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "audit/audit.hpp"
#include "checksum/hasher.hpp"
#include "integration/s3/ceph_fixture.hpp"
#include "integration/sync/sync_harness.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/lease.hpp"
#include "s3/mirror_state.hpp"
#include "support/child_process.hpp"
#include "support/http_server.hpp"
#include "support/nginx.hpp"
#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

constexpr const char* kDataPackage = "Packages/rpmirror-sample-data-1.0-1.noarch.rpm";  // 3 MB
constexpr const char* kTinyPackage = "Packages/rpmirror-sample-tiny-1.0-1.noarch.rpm";
constexpr const char* kSmallPackage = "Packages/rpmirror-sample-small-1.0-1.noarch.rpm";

// The sample repository: the ctest fixture's, else built once for this process.
std::filesystem::path sample_repo() {
    if (auto prebuilt = prebuilt_test_repo("sample-repo")) {
        return *prebuilt;
    }
    static TempDir built;
    const std::filesystem::path repo = built / "sample-repo";
    if (!std::filesystem::exists(repo / "repodata" / "repomd.xml")) {
        const int status =
            run_command({(source_root() / "scripts" / "make-sample-repo").string(), repo.string()},
                        built / "make.log");
        if (status != 0) {
            throw std::runtime_error("make-sample-repo failed:\n" + read_file(built / "make.log"));
        }
    }
    return repo;
}

// The settings of `config` as a destination's (AuditOptions::s3).
s3::S3Overrides overrides_of(const s3::S3Config& config) {
    s3::S3Overrides overrides;
    overrides.endpoint = config.endpoint;
    overrides.region = config.region;
    overrides.credentials = config.credentials;
    overrides.path_style = config.path_style;
    return overrides;
}

class S3VerifyTest : public CephS3Test {
  protected:
    void SetUp() override {
        CephS3Test::SetUp();
        repo_ = s3::S3Location{bucket(), "mirror/sample/"};
    }

    // Uploads every file of the sample repository below repo_ (repodata/ too iff `metadata`)
    // and, iff `state`, the state object recording each upload as the S3 sync does.
    void upload_mirror(bool metadata = true, bool state = true) {
        const std::filesystem::path root = sample_repo();
        s3::MirrorState mirror_state;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
            if (!entry.is_regular_file()) {
                continue;
            }
            const std::string relative =
                std::filesystem::relative(entry.path(), root).generic_string();
            if (!metadata && relative.starts_with("repodata/")) {
                continue;
            }
            const std::string body = read_file(entry.path());
            auto etag = client().put_object(bucket(), repo_.key(relative), body);
            ASSERT_TRUE(etag) << etag.error().to_string();
            if (relative != "repodata/repomd.xml") {
                mirror_state.objects[relative] = {body.size(), *etag, ChecksumType::Sha256,
                                                  hash_bytes(ChecksumType::Sha256, body)};
            }
            total_bytes_ += relative == "repodata/repomd.xml" ? 0 : body.size();
        }
        if (state) {
            ASSERT_TRUE(s3::store_state(client(), repo_, mirror_state));
        }
    }

    // Replaces the object `relative` with `body`.
    void put(const std::string& relative, const std::string& body) {
        auto etag = client().put_object(bucket(), repo_.key(relative), body);
        ASSERT_TRUE(etag) << etag.error().to_string();
    }

    std::string original(const std::string& relative) const {
        return read_file(sample_repo() / relative);
    }

    RepoAuditReport audit(AuditOptions options = {}) {
        options.s3 = overrides_of(cluster().config());
        return audit_repository("sample", repo_.to_string(), options);
    }

    static std::vector<std::string> describe(const RepoAuditReport& report) {
        std::vector<std::string> lines;
        for (const AuditProblem& problem : report.problems) {
            lines.push_back(problem.path.generic_string() + ": " + problem.describe());
        }
        return lines;
    }

    s3::S3Location repo_;
    std::uint64_t total_bytes_ = 0;
};

TEST_F(S3VerifyTest, IntactMirrorIsVerifiedFromTheStateWithoutReadingPackages) {
    upload_mirror();
    const RepoAuditReport report = audit();
    ASSERT_TRUE(report.ok()) << (report.error ? report.error->to_string() : "")
                             << ::testing::PrintToString(describe(report));
    EXPECT_EQ(report.packages, 5U);
    EXPECT_GE(report.metadata_files, 3U);
    EXPECT_EQ(report.verified, report.packages + report.metadata_files);
    // Everything vouched for by the state; only repomd.xml and primary.xml were read (to know
    // what to expect), and they do not count as hashed objects.
    EXPECT_EQ(report.from_cache, report.verified);
    EXPECT_EQ(report.bytes_hashed, 0U);
    // One LIST (under 1000 objects), the state, repomd.xml and primary.xml: no HEAD or GET per
    // object.
    EXPECT_EQ(report.s3_requests, 4U);
    EXPECT_EQ(report.repo_dir, "s3://" + bucket() + "/mirror/sample/");
}

TEST_F(S3VerifyTest, NoCacheHashesEveryObjectLargeOnesInParallelRanges) {
    upload_mirror();
    AuditOptions options;
    options.use_checksum_cache = false;
    options.threads = 3;
    options.ranged_threshold = 1 << 20;  // the 3 MB package: 7 ranges of 512 KiB, 3 at a time
    options.range_size = 512 << 10;
    const RepoAuditReport report = audit(options);
    ASSERT_TRUE(report.ok()) << (report.error ? report.error->to_string() : "")
                             << ::testing::PrintToString(describe(report));
    EXPECT_EQ(report.from_cache, 0U);
    EXPECT_EQ(report.verified, report.packages + report.metadata_files);
    EXPECT_EQ(report.bytes_hashed, total_bytes_);
    // One LIST, repomd.xml and primary.xml (no state: nothing is trusted), the 3 MB package in 7
    // ranged GETs, every other object (and primary.xml again) in one.
    EXPECT_EQ(report.s3_requests, 3U + 7U + (report.verified - 1));
}

TEST_F(S3VerifyTest, AnObjectReplacedWhileItsRangesAreReadIsNotJudged) {
    upload_mirror();
    // The second ranged GET of the 3 MB package is held by a proxy until the test has replaced
    // the object: without pinning, the digest would be of a mix of both versions, the object
    // "damaged", and --repair would delete the new one.
    TempDir work;
    const std::filesystem::path release = work.path() / "release";
    const std::string package_path = "/" + bucket() + "/" + repo_.key(kDataPackage);
    const nlohmann::json script = {
        {"rules",
         {{{"match", {{"method", "GET"}, {"path_re", "sample-data-1\\.0-1\\.noarch\\.rpm$"}}},
           {"steps",
            {nlohmann::json::object(), {{"hold", release.string()}}, nlohmann::json::object()}}}}}};
    FaultServer proxy = FaultServer::proxy(cluster().endpoint(), script, work.path());
    s3::S3Config config = cluster().config();
    config.endpoint = proxy.url();
    AuditOptions options;
    options.use_checksum_cache = false;
    options.threads = 1;
    options.ranged_threshold = 1 << 20;
    options.range_size = 512 << 10;
    RepoAuditReport report;
    options.s3 = overrides_of(config);
    std::jthread auditing([&] { report = audit_repository("sample", repo_.to_string(), options); });
    ASSERT_TRUE(wait_until([&] {
        for (const LoggedRequest& request : proxy.requests_for(package_path)) {
            if (request.action == "hold") {
                return true;
            }
        }
        return false;
    }));
    std::string replacement = original(kDataPackage);
    replacement[10] ^= 0x01;
    ASSERT_TRUE(client().put_object(bucket(), repo_.key(kDataPackage), replacement));
    TempDir::write_at(release, "go");
    auditing.join();
    const auto found =
        std::find_if(report.problems.begin(), report.problems.end(),
                     [](const AuditProblem& problem) { return problem.path == kDataPackage; });
    ASSERT_NE(found, report.problems.end()) << ::testing::PrintToString(describe(report));
    EXPECT_EQ(found->kind, ProblemKind::Unreadable) << found->describe();
    EXPECT_NE(found->detail.find("replaced while it was being read"), std::string::npos)
        << found->detail;
    // The held range was refused by the store (If-Match), and nothing was read after it.
    const auto requests = proxy.requests_for(package_path);
    ASSERT_EQ(requests.size(), 2U);
    EXPECT_NE(requests[1].headers.value("if-match", std::string()), "");
}

TEST_F(S3VerifyTest, NoCacheFindsDamageTheStateVouchesFor) {
    upload_mirror();
    // Damage the store's listing cannot show: the object differs from what was verified, but
    // the state was (wrongly) updated to its new ETag, e.g. by a buggy or hostile writer.
    std::string damaged = original(kDataPackage);
    damaged[damaged.size() / 2] ^= 0x55;
    auto etag = client().put_object(bucket(), repo_.key(kDataPackage), damaged);
    ASSERT_TRUE(etag);
    auto state = s3::load_state(client(), repo_);
    ASSERT_TRUE(state && *state);
    (*state)->objects.at(kDataPackage).etag = *etag;
    ASSERT_TRUE(s3::store_state(client(), repo_, **state));

    EXPECT_TRUE(audit().ok()) << ::testing::PrintToString(describe(audit()));

    AuditOptions options;
    options.use_checksum_cache = false;
    options.ranged_threshold = 1 << 20;
    options.range_size = 1 << 20;
    options.threads = 2;
    const RepoAuditReport report = audit(options);
    ASSERT_FALSE(report.error) << report.error->to_string();
    ASSERT_EQ(report.problems.size(), 1U) << ::testing::PrintToString(describe(report));
    const AuditProblem& problem = report.problems[0];
    EXPECT_EQ(problem.kind, ProblemKind::ChecksumMismatch);
    EXPECT_EQ(problem.path, kDataPackage);
    EXPECT_EQ(problem.expected_digest, hash_bytes(ChecksumType::Sha256, original(kDataPackage)));
    EXPECT_EQ(problem.actual_digest, hash_bytes(ChecksumType::Sha256, damaged));
}

TEST_F(S3VerifyTest, MissingWrongSizeAndRewrittenObjectsAreReported) {
    upload_mirror();
    ASSERT_TRUE(client().delete_object(bucket(), repo_.key(kTinyPackage)));
    put(kSmallPackage, "short");
    // Same size, other bytes: the ETag no longer matches the state, so it is read and hashed.
    std::string rewritten = original(kDataPackage);
    rewritten[0] ^= 0x01;
    put(kDataPackage, rewritten);

    const RepoAuditReport report = audit();
    ASSERT_FALSE(report.error) << report.error->to_string();
    ASSERT_EQ(report.problems.size(), 3U) << ::testing::PrintToString(describe(report));
    EXPECT_EQ(report.problems[0].path, kDataPackage);
    EXPECT_EQ(report.problems[0].kind, ProblemKind::ChecksumMismatch);
    EXPECT_EQ(report.problems[1].path, kSmallPackage);
    EXPECT_EQ(report.problems[1].kind, ProblemKind::SizeMismatch);
    EXPECT_EQ(report.problems[1].actual_size, 5U);
    EXPECT_EQ(report.problems[2].path, kTinyPackage);
    EXPECT_EQ(report.problems[2].kind, ProblemKind::Missing);
    EXPECT_EQ(report.bytes_hashed, rewritten.size());
    EXPECT_EQ(report.from_cache, report.verified);
}

TEST_F(S3VerifyTest, WithoutStateEveryObjectIsHashed) {
    upload_mirror(/*metadata=*/true, /*state=*/false);
    const RepoAuditReport report = audit();
    ASSERT_TRUE(report.ok()) << (report.error ? report.error->to_string() : "");
    EXPECT_EQ(report.from_cache, 0U);
    EXPECT_EQ(report.bytes_hashed, total_bytes_);
}

TEST_F(S3VerifyTest, WithoutPublishedMetadataTheStateSaysWhatToExpect) {
    upload_mirror(/*metadata=*/false, /*state=*/true);
    ASSERT_TRUE(client().delete_object(bucket(), repo_.key(kTinyPackage)));
    const RepoAuditReport report = audit();
    ASSERT_FALSE(report.error) << report.error->to_string();
    EXPECT_EQ(report.packages, 5U);
    EXPECT_EQ(report.metadata_files, 0U);
    ASSERT_EQ(report.problems.size(), 1U) << ::testing::PrintToString(describe(report));
    EXPECT_EQ(report.problems[0].path, kTinyPackage);
    EXPECT_EQ(report.problems[0].kind, ProblemKind::Missing);
}

TEST_F(S3VerifyTest, ExtraPackagesAreListedWhenAsked) {
    upload_mirror();
    put("Packages/stray-1.0-1.noarch.rpm", "stray");
    put("notes.txt", "not a package");
    EXPECT_TRUE(audit().ok());
    AuditOptions options;
    options.report_extra = true;
    const RepoAuditReport report = audit(options);
    ASSERT_EQ(report.problems.size(), 1U) << ::testing::PrintToString(describe(report));
    EXPECT_EQ(report.problems[0].kind, ProblemKind::Extra);
    EXPECT_EQ(report.problems[0].path, "Packages/stray-1.0-1.noarch.rpm");
}

TEST_F(S3VerifyTest, DamagedPrimaryIsTheReportsErrorNamingTheObject) {
    upload_mirror();
    std::string primary_key;
    for (const auto& entry : std::filesystem::directory_iterator(sample_repo() / "repodata")) {
        if (entry.path().filename().string().ends_with("-primary.xml.gz")) {
            primary_key = "repodata/" + entry.path().filename().string();
        }
    }
    ASSERT_FALSE(primary_key.empty());
    std::string damaged = original(primary_key);
    damaged[damaged.size() / 2] ^= 0x20;
    put(primary_key, damaged);
    const RepoAuditReport report = audit();
    ASSERT_TRUE(report.error);
    EXPECT_EQ(report.error->code, ErrorCode::Corrupt) << report.error->to_string();
    EXPECT_NE(report.error->to_string().find("s3://" + bucket() + "/mirror/sample/" + primary_key),
              std::string::npos)
        << report.error->to_string();
    EXPECT_EQ(report.packages, 0U);
}

TEST_F(S3VerifyTest, NothingThereAndMissingBucketAreErrorsNamingThem) {
    const RepoAuditReport empty = audit();
    ASSERT_TRUE(empty.error);
    EXPECT_EQ(empty.error->code, ErrorCode::NotFound);
    EXPECT_NE(empty.error->to_string().find("s3://" + bucket() + "/mirror/sample/"),
              std::string::npos)
        << empty.error->to_string();

    AuditOptions options;
    options.s3 = overrides_of(cluster().config());
    const RepoAuditReport missing = audit_repository(
        "sample", s3::S3Location{"no-such-bucket-s3verify", "m/"}.to_string(), options);
    ASSERT_TRUE(missing.error);
    EXPECT_NE(missing.error->to_string().find("s3://no-such-bucket-s3verify"), std::string::npos)
        << missing.error->to_string();
    EXPECT_NE(missing.error->to_string().find("NoSuchBucket"), std::string::npos)
        << missing.error->to_string();
}

// The CLI: `rpmirror verify -p s3://BUCKET/PREFIX` with the store options, credentials from the
// environment.
class S3VerifyCliTest : public S3VerifyTest {
  protected:
    int verify(std::vector<std::string> extra) {
        std::vector<std::string> argv{RPMIRROR_BINARY,
                                      "verify",
                                      "-p",
                                      "s3://" + bucket() + "/mirror",
                                      "--s3-endpoint",
                                      cluster().endpoint(),
                                      "--s3-addressing",
                                      "path",
                                      "--json",
                                      (tmp_ / "report.json").string()};
        argv.insert(argv.end(), extra.begin(), extra.end());
        const auto& env = cluster().env();
        return run_in_child([&] {
            ::unsetenv("AWS_ENDPOINT_URL");  // the option must be what finds the store
            ::setenv("AWS_ACCESS_KEY_ID", env.at("AWS_ACCESS_KEY_ID").c_str(), 1);
            ::setenv("AWS_SECRET_ACCESS_KEY", env.at("AWS_SECRET_ACCESS_KEY").c_str(), 1);
            ::setenv("AWS_SHARED_CREDENTIALS_FILE", (tmp_ / "none").c_str(), 1);
            ::setenv("AWS_CONFIG_FILE", (tmp_ / "none").c_str(), 1);
            return run_command(argv, tmp_ / "output.log");
        });
    }
    std::string output() const { return read_file(tmp_ / "output.log"); }
    nlohmann::json json() const { return nlohmann::json::parse(read_file(tmp_ / "report.json")); }

    TempDir tmp_;
};

TEST_F(S3VerifyCliTest, VerifiesDiscoveredRepositoriesAndReportsDamage) {
    upload_mirror();
    ASSERT_EQ(verify({}), 0) << output();
    EXPECT_NE(output().find("sample: OK: 5 packages"), std::string::npos) << output();
    EXPECT_EQ(json()["repositories"][0]["repo"], "sample");
    EXPECT_EQ(json()["repositories"][0]["directory"], "s3://" + bucket() + "/mirror/sample/");
    EXPECT_EQ(json()["repositories"][0]["from_cache"], json()["repositories"][0]["verified"]);

    std::string damaged = original(kDataPackage);
    damaged[100] ^= 0x01;
    put(kDataPackage, damaged);
    ASSERT_EQ(verify({"--no-cache", "-j", "2", "--repo", "sam*"}), 1) << output();
    EXPECT_NE(output().find("sample: " + std::string(kDataPackage) + ": checksum mismatch"),
              std::string::npos)
        << output();
    EXPECT_EQ(json()["repositories"][0]["bytes_hashed"], total_bytes_);
    EXPECT_EQ(json()["repositories"][0]["problems"][0]["kind"], "checksum-mismatch");

    EXPECT_EQ(verify({"--repo", "nothing"}), 2) << output();
    EXPECT_NE(
        output().find("--repo 'nothing' matches no repository under s3://" + bucket() + "/mirror/"),
        std::string::npos)
        << output();
}

// --repair: the damaged objects deleted and forgotten by the state, then the S3 sync re-uploads
// them from the repository (real nginx).
TEST_F(S3VerifyCliTest, RepairReuploadsDamagedAndMissingObjects) {
    upload_mirror();
    NginxServer server(sample_repo(), tmp_ / "nginx");
    ASSERT_TRUE(client().delete_object(bucket(), repo_.key(kTinyPackage)));
    std::string damaged = original(kDataPackage);
    damaged[100] ^= 0x01;
    put(kDataPackage, damaged);

    ASSERT_EQ(verify({"--repair", "--repofrompath", "sample," + server.url("/")}), 0) << output();
    EXPECT_NE(output().find("sample: repair: removed 1"), std::string::npos) << output();
    EXPECT_NE(output().find("sample: after repair: OK"), std::string::npos) << output();
    auto data = client().get_object(bucket(), repo_.key(kDataPackage));
    ASSERT_TRUE(data) << data.error().to_string();
    EXPECT_EQ(*data, original(kDataPackage));
    auto tiny = client().get_object(bucket(), repo_.key(kTinyPackage));
    ASSERT_TRUE(tiny) << tiny.error().to_string();
    EXPECT_EQ(*tiny, original(kTinyPackage));
    ASSERT_EQ(verify({"--no-cache"}), 0) << output();
}

// The ACL the state records (the mirror was synced with --s3-acl public-read) is what the
// re-uploaded objects get: anonymous clients such as dnf can still read them.
TEST_F(S3VerifyCliTest, RepairKeepsTheMirrorsAcl) {
    upload_mirror();
    NginxServer server(sample_repo(), tmp_ / "nginx");
    auto state = s3::load_state(client(), repo_);
    ASSERT_TRUE(state && *state);
    s3::MirrorState updated = **state;
    updated.acl = "public-read";
    ASSERT_TRUE(s3::store_state(client(), repo_, updated));
    ASSERT_TRUE(client().delete_object(bucket(), repo_.key(kTinyPackage)));

    ASSERT_EQ(verify({"--repair", "--repofrompath", "sample," + server.url("/")}), 0) << output();
    const CommandResult status =
        run_to_end({"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                    cluster().endpoint() + "/" + bucket() + "/" + repo_.key(kTinyPackage)},
                   tmp_ / "logs");
    ASSERT_EQ(status.exit_code, 0) << status.err;
    EXPECT_EQ(status.out, "200") << "the repaired object is not public-read";
}

// A repair changes nothing while another worker holds the repository's lease.
TEST_F(S3VerifyCliTest, RepairChangesNothingUnderAnotherWorkersLease) {
    upload_mirror();
    NginxServer server(sample_repo(), tmp_ / "nginx");
    std::string damaged = original(kDataPackage);
    damaged[100] ^= 0x01;
    put(kDataPackage, damaged);
    s3::S3Client other(cluster().config());
    auto lease = s3::Lease::acquire(other, repo_, "other-worker:7", std::chrono::seconds(600));
    ASSERT_TRUE(lease) << lease.error().to_string();

    EXPECT_NE(verify({"--repair", "--repofrompath", "sample," + server.url("/")}), 0) << output();
    EXPECT_NE(output().find("being synced by other-worker:7"), std::string::npos) << output();
    auto data = client().get_object(bucket(), repo_.key(kDataPackage));
    ASSERT_TRUE(data) << data.error().to_string();
    EXPECT_EQ(*data, damaged) << "changed under another worker's lease";
    auto state = s3::load_state(client(), repo_);
    ASSERT_TRUE(state && *state);
    EXPECT_TRUE((*state)->objects.contains(kDataPackage)) << "the state was changed";
    EXPECT_TRUE(lease->held());
}

}  // namespace
}  // namespace rpmirror::test
