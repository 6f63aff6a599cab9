// `rpmirror sync -p s3://` against a misbehaving store: the real binary talks to the real Ceph
// RADOS Gateway through tests/integration/fault_server.py in proxy mode, which forwards every
// request but the ones its script answers with an S3 error (SlowDown, a 200 with an <Error>
// body) or drops. Retries are made fast with RPMIRROR_S3_RETRY_DELAY_MS; nothing here sleeps.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "integration/s3/s3_sync_fixture.hpp"
#include "s3/config.hpp"
#include "s3/mirror_state.hpp"
#include "support/http_server.hpp"
#include "support/signing.hpp"

namespace rpmirror::test {
namespace {

// Returns `text` with the characters special in a Python regular expression escaped.
std::string regex_escape(const std::string& text) {
    std::string escaped;
    for (const char c : text) {
        if (std::string_view(".^$*+?{}[]\\|()").find(c) != std::string_view::npos) {
            escaped += '\\';
        }
        escaped += c;
    }
    return escaped;
}

nlohmann::json s3_error(int status, const std::string& code) {
    nlohmann::json made = nlohmann::json::object();
    made["s3_error"] = {{"status", status}, {"code", code}};
    return made;
}

// A step of one key: {"drop": true}, {"ok_with_error": "InternalError"}.
nlohmann::json step(const std::string& kind, const nlohmann::json& value) {
    nlohmann::json made = nlohmann::json::object();
    made[kind] = value;
    return made;
}

const nlohmann::json kForward = nlohmann::json::object();

// A rule of the proxy's script: requests that fit `match` get `steps` (see fault_server.py).
nlohmann::json rule(const nlohmann::json& match, std::vector<nlohmann::json> steps) {
    nlohmann::json made = nlohmann::json::object();
    made["match"] = match;
    made["steps"] = nlohmann::json::array();
    for (auto& each : steps) {
        made["steps"].push_back(std::move(each));
    }
    return made;
}

class S3FaultTest : public S3SyncTest {
  protected:
    void SetUp() override {
        S3SyncTest::SetUp();
        ::setenv("RPMIRROR_S3_RETRY_DELAY_MS", "1", 1);
    }

    void TearDown() override {
        ::unsetenv("RPMIRROR_S3_RETRY_DELAY_MS");
        ::unsetenv("RPMIRROR_S3_CLOCK_OFFSET");
        ::setenv("AWS_ENDPOINT_URL", cluster().endpoint().c_str(), 1);
        S3SyncTest::TearDown();
    }

    // Puts a fault_server.py proxy with `rules` between the following syncs and the gateway.
    void through_proxy(const std::vector<nlohmann::json>& rules) {
        const auto work = tmp_ / ("proxy-" + std::to_string(++proxies_));
        std::filesystem::create_directories(work);
        nlohmann::json script = nlohmann::json::object();
        script["rules"] = nlohmann::json::array();
        for (const auto& each : rules) {
            script["rules"].push_back(each);
        }
        proxy_ =
            std::make_unique<FaultServer>(FaultServer::proxy(cluster().endpoint(), script, work));
        ::setenv("AWS_ENDPOINT_URL", proxy_->url().c_str(), 1);
    }

    // Lets the following syncs talk to the gateway directly.
    void direct() { ::setenv("AWS_ENDPOINT_URL", cluster().endpoint().c_str(), 1); }

    // The PUTs the proxy saw for `relative` in the mirrored repository, in arrival order.
    std::vector<LoggedRequest> puts_of(const std::string& relative) const {
        std::vector<LoggedRequest> puts;
        for (auto& request : proxy_->requests_for("/" + bucket() + "/" + key(relative))) {
            if (request.method == "PUT") {
                puts.push_back(std::move(request));
            }
        }
        return puts;
    }

    // Every object under the test's prefix (the repository, its state, its lease).
    std::vector<s3::ListedObject> everything() {
        auto listed = client().list_all_objects(bucket(), prefix_ + "/");
        EXPECT_TRUE(listed) << listed.error().to_string();
        return listed ? *listed : std::vector<s3::ListedObject>{};
    }

    std::unique_ptr<FaultServer> proxy_;
    int proxies_ = 0;
};

TEST_F(S3FaultTest, FirstPutOfEveryPackageAnsweredSlowDownIsRetried) {
    through_proxy(
        {rule({{"method", "PUT"}, {"path_re", "\\.rpm$"}}, {s3_error(503, "SlowDown"), kForward})});
    const CommandResult result = sync({"--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto packages = package_digests(upstream_);
    ASSERT_FALSE(packages.empty());
    for (const auto& [path, digest] : packages) {
        const auto puts = puts_of(path);
        ASSERT_EQ(puts.size(), 2U) << path;
        EXPECT_EQ(puts[0].action, "s3_error") << path;
        EXPECT_EQ(puts[0].step, 0) << path;
        EXPECT_EQ(puts[1].action, "forward") << path;  // the retry, logged after the first
        EXPECT_EQ(puts[1].step, 1) << path;
        auto info = client().head_object(bucket(), key(path));
        ASSERT_TRUE(info) << info.error().to_string();
        EXPECT_EQ(info->metadata["sha256"], digest) << path;
    }
    expect_published_complete("after SlowDown once per package");
}

TEST_F(S3FaultTest, SlowDownOnEveryPutOfOneKeyFailsAndKeepsThePreviousRevision) {
    // Revision 2 lacks one package; revision 3 brings it back, and the store refuses it.
    const std::string held_back = package_digests(upstream_).begin()->first;
    const std::string saved = read_file(upstream_ / held_back);
    std::filesystem::remove(upstream_ / held_back);
    recreate_repo(upstream_, "2", tmp_ / "logs");
    const CommandResult first = sync({"--download-metadata"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto previous = client().get_object(bucket(), key("repodata/repomd.xml"));
    ASSERT_TRUE(previous) << previous.error().to_string();

    TempDir::write_at(upstream_ / held_back, saved);
    recreate_repo(upstream_, "3", tmp_ / "logs");
    through_proxy({rule({{"method", "PUT"}, {"path_re", regex_escape(held_back) + "$"}},
                        {s3_error(503, "SlowDown")})});
    const CommandResult refused = sync({"--download-metadata"});
    EXPECT_NE(refused.exit_code, 0);
    EXPECT_NE(refused.err.find("s3://" + bucket() + "/" + key(held_back)), std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("SlowDown"), std::string::npos) << refused.err;
    const auto puts = puts_of(held_back);
    EXPECT_GE(puts.size(), 2U);  // retried before giving up
    for (const LoggedRequest& put : puts) {
        EXPECT_EQ(put.action, "s3_error");
    }
    EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml")), *previous)
        << "the previous revision stays published";

    direct();
    const CommandResult next = sync({"--download-metadata"});
    ASSERT_EQ(next.exit_code, 0) << next.err;
    EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml")),
              read_file(upstream_ / "repodata" / "repomd.xml"));
    expect_published_complete("after the store accepts again");
}

TEST_F(S3FaultTest, CompleteMultipartUploadAlwaysAnsweredOkWithErrorAbortsAndPublishesNothing) {
    const std::string big = add_big_package();
    // Answered by the proxy itself, never forwarded: the store never completes the upload.
    through_proxy(
        {rule({{"method", "POST"}, {"path_re", regex_escape(big) + "$"}, {"query_re", "uploadId="}},
              {s3_error(200, "InternalError")})});
    const CommandResult result = sync({"--download-metadata", "--s3-part-size", "5M"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("s3://" + bucket() + "/" + key(big)), std::string::npos)
        << result.err;
    EXPECT_NE(result.err.find("InternalError"), std::string::npos) << result.err;
    // The complete was retried as a 500 would be, then the upload aborted: no parts are left.
    std::size_t completes = 0;
    std::size_t aborts = 0;
    for (const LoggedRequest& request : proxy_->requests_for("/" + bucket() + "/" + key(big))) {
        completes += request.method == "POST" && request.action == "s3_error" ? 1 : 0;
        aborts += request.method == "DELETE" && request.query.find("uploadId=") == 0 ? 1 : 0;
    }
    EXPECT_EQ(completes, s3::S3Config{}.retries + 1);
    EXPECT_EQ(aborts, 1U);
    auto uploads = client().list_multipart_uploads(bucket(), prefix_);
    ASSERT_TRUE(uploads) << uploads.error().to_string();
    EXPECT_TRUE(uploads->empty());
    EXPECT_FALSE(objects().contains(big)) << "never completed";
    EXPECT_FALSE(objects().contains("repodata/repomd.xml")) << "nothing published";
    const nlohmann::json report = repo_report();
    bool named = false;
    for (const auto& failure : report.at("failures")) {
        named = named || failure.dump().find(big) != std::string::npos;
    }
    EXPECT_TRUE(named) << report.dump();
    auto state = s3::load_state(client(), s3::S3Location{bucket(), prefix_ + "/sample/"});
    ASSERT_TRUE(state) << state.error().to_string();
    ASSERT_TRUE(state->has_value());
    EXPECT_FALSE((*state)->objects.contains(big)) << "not counted as stored";
    EXPECT_EQ((*state)->objects.size(), package_digests(upstream_).size() - 1);
    // Not counted as stored: the next run (no faults) uploads it again, and publishes.
    direct();
    const CommandResult next = sync({"--download-metadata", "--s3-part-size", "5M"});
    ASSERT_EQ(next.exit_code, 0) << next.err;
    EXPECT_GE(repo_report().at("downloaded").get<std::size_t>(), 1U);
    expect_published_complete("after the failed complete");
}

TEST_F(S3FaultTest, CompleteMultipartUploadCarriedOutButAnsweredWithErrorIsConfirmedAndKept) {
    const std::string big = add_big_package();
    // The first complete reaches the store, which completes the upload, but its answer is a 200
    // with an <Error> body; the retry, forwarded, finds the upload gone (NoSuchUpload).
    through_proxy(
        {rule({{"method", "POST"}, {"path_re", regex_escape(big) + "$"}, {"query_re", "uploadId="}},
              {step("ok_with_error", "InternalError"), kForward})});
    const CommandResult result = sync({"--download-metadata", "--s3-part-size", "5M"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::vector<std::string> seen;  // the requests for the package after its last part
    for (const LoggedRequest& request : proxy_->requests_for("/" + bucket() + "/" + key(big))) {
        if (request.method != "PUT") {
            seen.push_back(request.method + " " + request.action);
        }
    }
    // Create, the complete answered with an error, its retry (NoSuchUpload), then the HEAD that
    // finds the object with this upload's size and SHA-256: no abort.
    // (The gateway answers the retried complete of a completed upload with 200, so there is
    // nothing to abort here; a complete that fails to the end is aborted:
    // ConfirmingAnOlderObjectOfTheSameContentStillAbortsTheUpload.)
    EXPECT_EQ(seen, (std::vector<std::string>{"POST forward", "POST ok_with_error", "POST forward",
                                              "HEAD forward"}));
    EXPECT_TRUE(objects().contains(big));
    auto state = s3::load_state(client(), s3::S3Location{bucket(), prefix_ + "/sample/"});
    ASSERT_TRUE(state) << state.error().to_string();
    ASSERT_TRUE(state->has_value());
    EXPECT_TRUE((*state)->objects.contains(big)) << "counted as stored";
    expect_published_complete("after the complete whose answer failed");
}

TEST_F(S3FaultTest, ConfirmingAnOlderObjectOfTheSameContentStillAbortsTheUpload) {
    const std::string big = add_big_package();
    ASSERT_EQ(sync({"--download-metadata", "--s3-part-size", "5M"}).exit_code, 0);
    // Uploaded again (--no-cache trusts nothing), and its complete never reaches the store: the
    // HEAD that confirms a complete finds the object of the first run, of the same size and
    // SHA-256, so it is kept; the upload of this run must still be aborted.
    through_proxy(
        {rule({{"method", "POST"}, {"path_re", regex_escape(big) + "$"}, {"query_re", "uploadId="}},
              {s3_error(200, "InternalError")})});
    const CommandResult result =
        sync({"--download-metadata", "--s3-part-size", "5M", "--no-cache"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    std::size_t aborts = 0;
    for (const LoggedRequest& request : proxy_->requests_for("/" + bucket() + "/" + key(big))) {
        aborts += request.method == "DELETE" && request.query.find("uploadId=") == 0 ? 1 : 0;
    }
    EXPECT_EQ(aborts, 1U);
    auto uploads = client().list_multipart_uploads(bucket(), prefix_);
    ASSERT_TRUE(uploads) << uploads.error().to_string();
    EXPECT_TRUE(uploads->empty()) << "the parts of the failed upload were left behind";
    expect_published_complete("after the confirmed complete");
}

TEST_F(S3FaultTest, ASignatureNeverSitsBesideAnIndexItDoesNotSign) {
    // Upstream signs every revision (repomd.xml.asc, published with the index).
    const auto sign = [](const std::filesystem::path& repo) {
        test_keys().sign_detached(Signer::Good, repo / "repodata" / "repomd.xml",
                                  repo / "repodata" / "repomd.xml.asc");
    };
    const auto new_revision = [&](const std::string& revision) {
        std::filesystem::remove(upstream_ / "repodata" / "repomd.xml.asc");
        recreate_repo(upstream_, revision, tmp_ / "logs");
        sign(upstream_);
    };
    // The signature in the bucket, if any, signs the index in the bucket.
    const auto expect_signature_matches = [&](const std::string& when) {
        const auto listed = objects();
        if (!listed.contains("repodata/repomd.xml.asc")) {
            return;
        }
        const auto index = client().get_object(bucket(), key("repodata/repomd.xml"));
        const auto signature = client().get_object(bucket(), key("repodata/repomd.xml.asc"));
        ASSERT_TRUE(index && signature) << when;
        const auto dir = tmp_ / ("check-" + std::to_string(listed.size()));
        std::filesystem::create_directories(dir);
        TempDir::write_at(dir / "repomd.xml", *index);
        TempDir::write_at(dir / "repomd.xml.asc", *signature);
        const CommandResult verified =
            run_to_end({kGpgBinary, "--homedir", test_keys().home().string(), "--verify",
                        (dir / "repomd.xml.asc").string(), (dir / "repomd.xml").string()},
                       tmp_ / "logs");
        EXPECT_EQ(verified.exit_code, 0) << when << ": " << verified.err;
    };
    sign(upstream_);
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    ASSERT_TRUE(objects().contains("repodata/repomd.xml.asc"));
    expect_signature_matches("revision 1");

    // Revision 2: every PUT of the signature fails (beyond the client's retries).
    new_revision("2");
    through_proxy({rule({{"method", "PUT"}, {"path_re", "/repodata/repomd\\.xml\\.asc$"}},
                        {s3_error(503, "SlowDown")})});
    const CommandResult no_signature = sync({"--download-metadata"});
    EXPECT_NE(no_signature.exit_code, 0);
    EXPECT_NE(no_signature.err.find("repomd.xml.asc"), std::string::npos) << no_signature.err;
    EXPECT_EQ(puts_of("repodata/repomd.xml.asc").size(), s3::S3Config{}.retries + 1);
    EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml")),
              read_file(upstream_ / "repodata" / "repomd.xml"));
    EXPECT_FALSE(objects().contains("repodata/repomd.xml.asc")) << "revision 1's, beside 2";
    expect_signature_matches("signature PUT failing");
    direct();
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    expect_signature_matches("revision 2, then a good run");
    ASSERT_TRUE(objects().contains("repodata/repomd.xml.asc"));

    // Revision 3: every PUT of the index fails. The old signature went first: the old index is
    // left unsigned, never beside revision 3's signature.
    new_revision("3");
    through_proxy({rule({{"method", "PUT"}, {"path_re", "/repodata/repomd\\.xml$"}},
                        {s3_error(503, "SlowDown")})});
    const CommandResult no_index = sync({"--download-metadata"});
    EXPECT_NE(no_index.exit_code, 0);
    EXPECT_EQ(puts_of("repodata/repomd.xml").size(), s3::S3Config{}.retries + 1);
    EXPECT_EQ(puts_of("repodata/repomd.xml.asc").size(), 0U);
    EXPECT_NE(*client().get_object(bucket(), key("repodata/repomd.xml")),
              read_file(upstream_ / "repodata" / "repomd.xml"));
    expect_signature_matches("index PUT failing");
    direct();
    ASSERT_EQ(sync({"--download-metadata"}).exit_code, 0);
    EXPECT_EQ(*client().get_object(bucket(), key("repodata/repomd.xml.asc")),
              read_file(upstream_ / "repodata" / "repomd.xml.asc"));
    expect_signature_matches("revision 3, then a good run");
}

TEST_F(S3FaultTest, WorkersWithTheSameHostNameInSeparatePidNamespacesNeverBothSync) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root for unshare --pid --mount-proc (PID namespaces)";
    }
    // The first worker is held at its first PUT of each package (after it took the lease) until
    // the test lets it go.
    const std::filesystem::path release = tmp_ / "release-first-worker";
    through_proxy({rule({{"method", "PUT"}, {"path_re", "\\.rpm$"}},
                        {step("hold", release.string()), kForward})});
    // Each worker in a PID namespace of its own, on this host (same UTS name): the first runs as
    // pid 2 there (sh forks it), the second as pid 1, where pid 2 does not exist. A worker that
    // judged the lock by "HOST:PID" would find its holder dead and take it over.
    std::vector<std::string> first_argv{"unshare", "--pid", "--fork",          "--mount-proc",
                                        "sh",      "-c",    "\"$@\"; exit $?", "sh"};
    for (std::string& arg : sync_argv(destination(), {"--download-metadata"})) {
        first_argv.push_back(std::move(arg));
    }
    RunningCommand first(first_argv, tmp_ / "first-worker");
    ASSERT_TRUE(wait_until(
        [&] {
            for (const LoggedRequest& request : proxy_->requests()) {
                if (request.action == "hold") {
                    return true;
                }
            }
            return false;
        },
        std::chrono::seconds(120)))
        << first.err();
    auto lock = client().get_object(bucket(), key(".rpmirror/lock"));
    ASSERT_TRUE(lock) << lock.error().to_string();
    std::array<char, 256> host{};
    ASSERT_EQ(::gethostname(host.data(), host.size() - 1), 0);
    EXPECT_NE(lock->find(std::string("\"") + host.data() + ":2\""), std::string::npos) << *lock;

    std::vector<std::string> second_argv{"unshare", "--pid", "--fork",      "--mount-proc",
                                         "sh",      "-c",    "exec \"$@\"", "sh"};
    for (std::string& arg :
         sync_argv(destination(), {"--download-metadata"}, tmp_ / "second-report.json")) {
        second_argv.push_back(std::move(arg));
    }
    const CommandResult second = run_to_end(second_argv, tmp_ / "logs");
    EXPECT_NE(second.exit_code, 0) << second.err;
    EXPECT_NE(second.err.find("being synced by " + std::string(host.data()) + ":2"),
              std::string::npos)
        << second.err;
    EXPECT_TRUE(puts_of("repodata/repomd.xml").empty()) << "the second worker published";

    TempDir::write_at(release, "go");
    EXPECT_EQ(first.wait(), 0) << first.err();
    EXPECT_EQ(puts_of("repodata/repomd.xml").size(), 1U);
    expect_published_complete("after the first worker finished");
    EXPECT_FALSE(objects().contains(".rpmirror/lock")) << "released";
}

TEST_F(S3FaultTest, DroppedConnectionDuringPutIsRetried) {
    const std::string dropped = package_digests(upstream_).begin()->first;
    through_proxy({rule({{"method", "PUT"}, {"path_re", regex_escape(dropped) + "$"}},
                        {step("drop", true), kForward})});
    const CommandResult result = sync({"--download-metadata"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto puts = puts_of(dropped);
    ASSERT_EQ(puts.size(), 2U);
    EXPECT_EQ(puts[0].action, "drop");
    EXPECT_EQ(puts[1].action, "forward");
    EXPECT_EQ(objects().at(dropped).size, std::filesystem::file_size(upstream_ / dropped));
    expect_published_complete("after a dropped PUT");
}

TEST_F(S3FaultTest, AStoreThatNeverAnswersAPutFailsTheSyncInsteadOfHangingIt) {
    // The gateway takes every PUT of one package and never answers it (the proxy holds it on a
    // file nobody creates). Before stall_timeout existed, the sync waited in curl forever. Each
    // attempt takes the timeout plus the few seconds libcurl's speed average needs to fall
    // below 1 byte/s after the body was sent (about 7 s here).
    const std::string stuck = package_digests(upstream_).begin()->first;
    through_proxy({rule({{"method", "PUT"}, {"path_re", regex_escape(stuck) + "$"}},
                        {step("hold", (tmp_ / "never-created").string())})});
    ::setenv("RPMIRROR_S3_STALL_TIMEOUT", "1", 1);
    const CommandResult result = sync({"--download-metadata"});
    ::unsetenv("RPMIRROR_S3_STALL_TIMEOUT");
    EXPECT_NE(result.exit_code, 0) << result.err;
    EXPECT_NE(result.err.find(stuck), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("the store sent nothing for 1 s"), std::string::npos) << result.err;
    const auto puts = puts_of(stuck);
    ASSERT_EQ(puts.size(), 6U) << "the first PUT and its 5 retries, each abandoned";
    for (const LoggedRequest& put : puts) {
        EXPECT_EQ(put.action, "hold");
    }
    EXPECT_TRUE(puts_of("repodata/repomd.xml").empty()) << "published without a package";
    EXPECT_FALSE(objects().contains(stuck));
}

TEST_F(S3FaultTest, ClockSkewFailsNamingBucketAndCodeAndWritesNothing) {
    // An hour ahead: the gateway refuses every signature (RequestTimeTooSkewed, 15 min allowed).
    ::setenv("RPMIRROR_S3_CLOCK_OFFSET", "3600", 1);
    const CommandResult result = sync({"--download-metadata"});
    ::unsetenv("RPMIRROR_S3_CLOCK_OFFSET");
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("s3://" + bucket()), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("RequestTimeTooSkewed"), std::string::npos) << result.err;
    EXPECT_TRUE(everything().empty());
}

TEST_F(S3FaultTest, MissingBucketIsNotCreatedAndNothingIsWritten) {
    through_proxy({});
    const std::string missing = "no-such-bucket-" + std::to_string(::getpid());
    const CommandResult result = sync_to("s3://" + missing + "/m", {"--download-metadata"});
    EXPECT_NE(result.exit_code, 0);
    EXPECT_NE(result.err.find("s3://" + missing), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("NoSuchBucket"), std::string::npos) << result.err;
    for (const LoggedRequest& request : proxy_->requests()) {
        EXPECT_NE(request.path, "/" + missing) << request.method << " of the bucket itself";
    }
    auto listed = client().list_all_objects(missing, "");
    ASSERT_FALSE(listed);
    EXPECT_NE(listed.error().message.find("NoSuchBucket"), std::string::npos);
}

}  // namespace
}  // namespace rpmirror::test
