// The lease lock of an s3:// mirror (s3/lease.hpp) against a real Ceph RADOS Gateway: two
// acquirers, expiry and take-over, renew, release, and locks that are not ours left alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "integration/s3/ceph_fixture.hpp"
#include "integration/sync/sync_harness.hpp"
#include "rpmirror/s3/s3.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"
#include "s3/lease.hpp"
#include "s3/mirror_state.hpp"
#include "support/http_server.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {
namespace {

using namespace std::chrono_literals;
using s3::Lease;
using s3::LeaseRecord;

class S3LeaseTest : public CephS3Test {
  protected:
    s3::S3Location repo() const { return *s3::S3Location::parse("s3://" + bucket() + "/m/base"); }
    std::string lock_key() const { return "m/base/.rpmirror/lock"; }
    std::string lock_url() const { return "s3://" + bucket() + "/" + lock_key(); }

    // The lock object as it is in the bucket, or nullopt iff there is none.
    std::optional<LeaseRecord> stored_lock() {
        auto body = client().get_object(bucket(), lock_key());
        if (!body) {
            EXPECT_EQ(body.error().code, ErrorCode::NotFound) << body.error().to_string();
            return std::nullopt;
        }
        auto record = s3::parse_lease(*body, lock_url());
        EXPECT_TRUE(record) << *body;
        return record ? std::optional<LeaseRecord>(*record) : std::nullopt;
    }

    // A second worker: its own client, its clock `offset` ahead.
    s3::S3Client other_worker(std::chrono::seconds offset = 0s) {
        s3::S3Config config = cluster().config();
        config.clock_offset = offset;
        return s3::S3Client(config);
    }

    TempDir tmp_;

    static std::int64_t unix_now() {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }
};

TEST_F(S3LeaseTest, SecondAcquirerIsBusyNamingOwnerAndExpiry) {
    auto first = Lease::acquire(client(), repo(), "host-a:100", 600s);
    ASSERT_TRUE(first) << first.error().to_string();
    EXPECT_TRUE(first->held());
    EXPECT_TRUE(first->exclusive()) << "RGW honours If-None-Match";
    EXPECT_TRUE(first->warnings().empty());
    EXPECT_EQ(first->url(), lock_url());
    const auto stored = stored_lock();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->owner, "host-a:100");
    EXPECT_GE(stored->expires, unix_now() + 590);

    s3::S3Client worker_b = other_worker();
    auto second = Lease::acquire(worker_b, repo(), "host-b:200", 600s);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::Busy);
    EXPECT_EQ(second.error().subject, lock_url());
    EXPECT_NE(second.error().message.find("being synced by host-a:100 until 20"), std::string::npos)
        << second.error().message;
    // The holder's lock is unchanged.
    EXPECT_EQ(stored_lock()->token, stored->token);
}

TEST_F(S3LeaseTest, ReleaseDeletesTheLockAndLetsTheNextWorkerIn) {
    auto first = Lease::acquire(client(), repo(), "host-a:100", 600s);
    ASSERT_TRUE(first) << first.error().to_string();
    ASSERT_TRUE(first->release());
    EXPECT_FALSE(first->held());
    EXPECT_FALSE(stored_lock());
    EXPECT_TRUE(first->release()) << "idempotent";

    s3::S3Client worker_b = other_worker();
    {
        auto second = Lease::acquire(worker_b, repo(), "host-b:200", 600s);
        ASSERT_TRUE(second) << second.error().to_string();
        EXPECT_EQ(stored_lock()->owner, "host-b:200");
    }  // the destructor releases
    EXPECT_FALSE(stored_lock());
    // Other repositories' locks are independent.
    auto base = Lease::acquire(client(), repo(), "host-a:100", 600s);
    auto updates = Lease::acquire(worker_b, *s3::S3Location::parse("s3://" + bucket() + "/m/up"),
                                  "host-b:200", 600s);
    EXPECT_TRUE(base) << base.error().to_string();
    EXPECT_TRUE(updates) << updates.error().to_string();
}

TEST_F(S3LeaseTest, ExpiredLeaseIsTakenOverAndItsHolderLearnsAtRenew) {
    // A's lease lasts one second and is not renewed (A died or stalled); B waits for it.
    auto first = Lease::acquire(client(), repo(), "host-a:100", 1s);
    ASSERT_TRUE(first) << first.error().to_string();
    s3::S3Client worker_b = other_worker();
    auto second = Lease::acquire(worker_b, repo(), "host-b:200", 600s, 60s);
    ASSERT_TRUE(second) << second.error().to_string();
    EXPECT_EQ(stored_lock()->owner, "host-b:200");

    auto renewed = first->renew();
    ASSERT_FALSE(renewed);
    EXPECT_EQ(renewed.error().code, ErrorCode::Busy);
    EXPECT_EQ(renewed.error().subject, lock_url());
    EXPECT_NE(renewed.error().message.find("lease lost: now held by host-b:200 until"),
              std::string::npos)
        << renewed.error().message;
    EXPECT_FALSE(first->held());
    // Lost for good: confirm() says so without asking the store again.
    const auto confirmed = first->confirm();
    ASSERT_FALSE(confirmed);
    EXPECT_EQ(confirmed.error().message, renewed.error().message);
    // A's release leaves B's lock alone.
    EXPECT_TRUE(first->release());
    ASSERT_TRUE(stored_lock());
    EXPECT_EQ(stored_lock()->owner, "host-b:200");
}

TEST_F(S3LeaseTest, AWorkerWhoseClockIsAheadDoesNotTakeOverALiveLease) {
    auto first = Lease::acquire(client(), repo(), "host-a:100", 60s);
    ASSERT_TRUE(first) << first.error().to_string();
    // B's clock is two minutes ahead: by its own clock A's lease has expired, by the store's it
    // has not. The store's (its answers' Date) decides.
    s3::S3Client worker_b = other_worker(120s);
    auto second = Lease::acquire(worker_b, repo(), "host-b:200", 600s);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::Busy);
    EXPECT_NE(second.error().message.find("being synced by host-a:100"), std::string::npos)
        << second.error().message;
    EXPECT_EQ(stored_lock()->owner, "host-a:100");
    EXPECT_TRUE(first->renew());
    // And the lease B would write after A's release is reckoned on the store's clock too.
    ASSERT_TRUE(first->release());
    auto third = Lease::acquire(worker_b, repo(), "host-b:200", 600s);
    ASSERT_TRUE(third) << third.error().to_string();
    EXPECT_LE(stored_lock()->expires, unix_now() + 600 + 5);
    EXPECT_GE(stored_lock()->expires, unix_now() + 600 - 5);
}

TEST_F(S3LeaseTest, AnotherHolderWithTheSameOwnerTextIsStillAnotherHolder) {
    // Two containers both called "localhost", both pid 1: the same owner text, two leases.
    auto first = Lease::acquire(client(), repo(), "localhost:1", 600s);
    ASSERT_TRUE(first) << first.error().to_string();
    s3::S3Client worker_b = other_worker();
    auto second = Lease::acquire(worker_b, repo(), "localhost:1", 600s);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().code, ErrorCode::Busy);
    EXPECT_TRUE(first->renew());
}

TEST_F(S3LeaseTest, KeepAliveRenewsFromItsOwnThread) {
    auto lease = Lease::acquire(client(), repo(), "host-a:100", 2s);
    ASSERT_TRUE(lease) << lease.error().to_string();
    const std::int64_t first_expiry = stored_lock()->expires;
    lease->keep_alive();
    // Renewed every half second, while this thread does nothing with the lease.
    EXPECT_TRUE(wait_until([&] { return stored_lock()->expires > first_expiry; }))
        << "never renewed";
    EXPECT_TRUE(lease->held());
    EXPECT_TRUE(lease->confirm());
    EXPECT_GE(lease->requests(), 2U);
}

TEST_F(S3LeaseTest, ReleaseLeavesAForeignLockUntouched) {
    auto mine = Lease::acquire(client(), repo(), "host-a:100", 600s);
    ASSERT_TRUE(mine) << mine.error().to_string();
    // Someone else's lock replaces ours (e.g. an operator, or a take-over).
    const LeaseRecord foreign{"host-c:300", unix_now() + 600, "feedbeef"};
    ASSERT_TRUE(client().put_object(bucket(), lock_key(), s3::to_json(foreign)));
    EXPECT_TRUE(mine->release());
    const auto stored = stored_lock();
    ASSERT_TRUE(stored);
    EXPECT_EQ(stored->token, "feedbeef");
    EXPECT_EQ(stored->owner, "host-c:300");
}

TEST_F(S3LeaseTest, RenewExtendsTheLease) {
    auto lease = Lease::acquire(client(), repo(), "host-a:100", 60s);
    ASSERT_TRUE(lease) << lease.error().to_string();
    const std::int64_t before = stored_lock()->expires;
    EXPECT_LE(before, unix_now() + 61);
    const auto renewed = lease->renew();
    ASSERT_TRUE(renewed) << renewed.error().to_string();
    EXPECT_GE(stored_lock()->expires, before);
    EXPECT_TRUE(lease->held());
    EXPECT_EQ(stored_lock()->owner, "host-a:100");
    const auto expires =
        std::chrono::duration_cast<std::chrono::seconds>(lease->expires().time_since_epoch())
            .count();
    EXPECT_EQ(expires, stored_lock()->expires);
}

TEST_F(S3LeaseTest, ALostAnswerToTheCreateIsRecognisedAsOurOwnLock) {
    // The store carries out the create, the answer is lost; the client's retry gets 412.
    const auto work = tmp_.path() / "proxy";
    std::filesystem::create_directories(work);
    const nlohmann::json script = {
        {"rules",
         {{{"match", {{"method", "PUT"}, {"path_re", "/\\.rpmirror/lock$"}}},
           {"steps", {{{"lose_answer", true}}, nlohmann::json::object()}}}}}};
    FaultServer proxy = FaultServer::proxy(cluster().endpoint(), script, work);
    s3::S3Config config = cluster().config();
    config.endpoint = proxy.url();
    config.retry_base_delay = 1ms;
    s3::S3Client through(config);
    auto lease = Lease::acquire(through, repo(), "host-a:100", 600s);
    ASSERT_TRUE(lease) << lease.error().to_string();
    EXPECT_TRUE(lease->held());
    EXPECT_TRUE(lease->exclusive());
    std::vector<std::string> puts;
    for (const LoggedRequest& request : proxy.requests_for("/" + bucket() + "/" + lock_key())) {
        if (request.method == "PUT") {
            puts.push_back(request.action);
        }
    }
    // The lost create, its retry (412), the probes of If-None-Match and If-Match (412 each).
    EXPECT_EQ(puts, (std::vector<std::string>{"lose_answer", "forward", "forward", "forward"}));
    EXPECT_EQ(stored_lock()->owner, "host-a:100");
    ASSERT_TRUE(lease->release());
    EXPECT_FALSE(stored_lock());
}

// A renewal replaces only the version of the lock this lease wrote (PUT If-Match): a lock another
// worker wrote while the renewal was in flight is never overwritten, and the lease is lost.
TEST_F(S3LeaseTest, ARenewalNeverOverwritesALockWrittenWhileItWasInFlight) {
    const auto work = tmp_.path() / "proxy";
    std::filesystem::create_directories(work);
    const std::filesystem::path release = work / "release-renewal";
    // The lease's create and its two probes pass; the next PUT of the lock (the renewal) is held.
    const nlohmann::json forward = nlohmann::json::object();
    const nlohmann::json script = {
        {"rules",
         {{{"match", {{"method", "PUT"}, {"path_re", "/\\.rpmirror/lock$"}}},
           {"steps", {forward, forward, forward, {{"hold", release.string()}}, forward}}}}}};
    FaultServer proxy = FaultServer::proxy(cluster().endpoint(), script, work);
    s3::S3Config config = cluster().config();
    config.endpoint = proxy.url();
    s3::S3Client through(config);
    auto lease = Lease::acquire(through, repo(), "host-a:100", 600s);
    ASSERT_TRUE(lease) << lease.error().to_string();

    std::optional<Result<void>> renewed;
    std::thread renewing([&] { renewed = lease->renew(); });
    const bool held = wait_until(
        [&] {
            for (const LoggedRequest& request : proxy.requests()) {
                if (request.action == "hold") {
                    return true;
                }
            }
            return false;
        },
        std::chrono::seconds(60));
    // Meanwhile another worker writes the lock (as a takeover would).
    const LeaseRecord other{"host-b:200", unix_now() + 600, "feedface"};
    ASSERT_TRUE(client().put_object(bucket(), lock_key(), s3::to_json(other)));
    TempDir::write_at(release, "go");
    renewing.join();
    EXPECT_TRUE(held) << "the renewal never reached the store's lock while held";
    ASSERT_TRUE(renewed.has_value());
    ASSERT_FALSE(*renewed) << "the renewal overwrote the other worker's lock";
    EXPECT_EQ(renewed->error().code, ErrorCode::Busy);
    EXPECT_NE(renewed->error().message.find("lease lost: now held by host-b:200"),
              std::string::npos)
        << renewed->error().to_string();
    EXPECT_FALSE(lease->held());
    ASSERT_TRUE(stored_lock());
    EXPECT_EQ(stored_lock()->token, "feedface");
}

TEST_F(S3LeaseTest, WaitsForALockThatExpires) {
    // A lock that expires in two seconds: a waiting worker gets it once it has.
    const LeaseRecord dying{"host-c:300", unix_now() + 2, "0123abcd"};
    ASSERT_TRUE(client().put_object(bucket(), lock_key(), s3::to_json(dying)));
    auto busy = Lease::acquire(client(), repo(), "host-a:100", 600s);
    ASSERT_FALSE(busy);
    EXPECT_EQ(busy.error().code, ErrorCode::Busy);
    auto waited = Lease::acquire(client(), repo(), "host-a:100", 600s, 60s);
    ASSERT_TRUE(waited) << waited.error().to_string();
    EXPECT_EQ(stored_lock()->owner, "host-a:100");
}

TEST_F(S3LeaseTest, StopEndsTheWait) {
    auto holder = Lease::acquire(client(), repo(), "host-a:100", 600s);
    ASSERT_TRUE(holder) << holder.error().to_string();
    s3::S3Client worker_b = other_worker();
    std::stop_source stop;
    stop.request_stop();
    auto waited = Lease::acquire(worker_b, repo(), "host-b:200", 600s, 3600s, stop.get_token());
    ASSERT_FALSE(waited);
    EXPECT_EQ(waited.error().code, ErrorCode::Interrupted);
    EXPECT_EQ(waited.error().subject, lock_url());
    EXPECT_NE(waited.error().message.find("host-a:100"), std::string::npos);
    EXPECT_TRUE(holder->held());
}

TEST_F(S3LeaseTest, ALockObjectThatIsNotALeaseIsNeverDeleted) {
    ASSERT_TRUE(client().put_object(bucket(), lock_key(), "locked by hand"));
    auto lease = Lease::acquire(client(), repo(), "host-a:100", 600s);
    ASSERT_FALSE(lease);
    EXPECT_EQ(lease.error().code, ErrorCode::Busy);
    EXPECT_EQ(lease.error().subject, lock_url());
    EXPECT_NE(lease.error().message.find("not an rpmirror lease"), std::string::npos)
        << lease.error().message;
    EXPECT_EQ(*client().get_object(bucket(), lock_key()), "locked by hand");
}

TEST_F(S3LeaseTest, MissingBucketNamesIt) {
    s3::S3Client worker = other_worker();
    auto lease = Lease::acquire(worker, *s3::S3Location::parse("s3://no-such-bucket-lease/m/base"),
                                "host-a:100", 60s);
    ASSERT_FALSE(lease);
    EXPECT_EQ(lease.error().code, ErrorCode::NotFound);
    // The bucket is what is missing, not the lock object the first request was for.
    EXPECT_EQ(lease.error().subject, "s3://no-such-bucket-lease");
    EXPECT_NE(lease.error().to_string().find("bucket 'no-such-bucket-lease' does not exist at "),
              std::string::npos)
        << lease.error().to_string();
    EXPECT_EQ(lease.error().to_string().find(".rpmirror/lock"), std::string::npos)
        << lease.error().to_string();
    EXPECT_NE(lease.error().to_string().find("NoSuchBucket"), std::string::npos);
}

TEST(S3Lease, RecordRoundTripsAndOwnerIsHostPid) {
    const LeaseRecord record{"h:1", 1700000000, "abc"};
    auto parsed = s3::parse_lease(s3::to_json(record), "s3://b/k");
    ASSERT_TRUE(parsed) << parsed.error().to_string();
    EXPECT_EQ(parsed->owner, "h:1");
    EXPECT_EQ(parsed->expires, 1700000000);
    EXPECT_EQ(parsed->token, "abc");
    auto bad = s3::parse_lease("{\"owner\":1}", "s3://b/k");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().subject, "s3://b/k");
    const std::string owner = s3::default_lease_owner();
    EXPECT_TRUE(owner.ends_with(":" + std::to_string(::getpid()))) << owner;
}

}  // namespace
}  // namespace rpmirror::test
