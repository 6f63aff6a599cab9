// The per-repository lock of an s3:// mirror: the object `<repo prefix>.rpmirror/lock`, held as a
// lease (it expires unless renewed), so that several workers sharing a store (`--shard`, two
// timers by mistake) never sync one repository at once, and a worker that died does not block
// the repository for longer than the lease's time to live.
//
// The lock object is JSON: {"owner": "HOST:PID", "expires": UNIX_SECONDS, "token": "HEX"}; the
// token (random, per lease) tells this lease's object from one another process made with the
// same owner text.
//
// Exclusion rests on the store honouring `If-None-Match: *` on PUT (AWS S3 since 2024, Ceph RGW,
// MinIO): the lock is created only if it does not exist. Where the store ignores it, acquire
// still takes the lock (it is then only advisory: a second worker overwrites it) and says so in
// Lease::warnings(); run one worker per repository there.
//
// Taking over an expired lease has one race, accepted and documented: two workers that both see
// the same expired lock both delete it and re-create it; the store lets only one create win, but
// a worker whose delete comes after the other's create deletes the winner's fresh lock, and then
// both hold one. S3 (and RGW) have no conditional delete to close this. It needs a worker that
// died or stalled past its lease and two others arriving within milliseconds of each other; the
// loser learns it at its next renew(), which checks ownership first and fails.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "rpmirror/error.hpp"
#include "rpmirror/s3.hpp"

namespace rpmirror::s3 {

// What the lock object holds.
struct LeaseRecord {
    std::string owner;         // who holds it ("HOST:PID"), for messages
    std::int64_t expires = 0;  // unix time (seconds) after which it may be taken over
    std::string token;         // random hex, unique per lease
};

// Returns the record as the lock object's JSON body.
std::string to_json(const LeaseRecord& record);
// Parses a lock object's body. Returns Error{BadInput} with subject `shown` iff it is not one.
Result<LeaseRecord> parse_lease(std::string_view json, std::string_view shown);

// Returns "HOST:PID" of this process, the owner text a worker normally uses.
std::string default_lease_owner();

// A held lock; released (its object deleted, iff it is still this lease's) when destroyed.
// Uses the S3Client given to acquire() for every request, renew and release included: the
// client must outlive the Lease, and (S3Client not being thread-safe) must not be used by
// another thread at the same time. Move-only.
class Lease {
  public:
    // Takes the lock of the repository at `repo` (its prefix ends in '/'): creates
    // `<repo>.rpmirror/lock` with PUT If-None-Match: * holding {owner, now + ttl, token}, then
    // repeats that PUT once to learn whether the store honoured the condition (a second create
    // refused with 412: it did; accepted: it did not, and warnings() says two workers are not
    // excluded). If the lock exists: it is read; an expired one (expires < now), or one whose owner
    // is a process of this host that no longer exists (default_lease_owner), is deleted and the
    // create tried once more (see the race above); a live one is Error{Busy} "s3://BUCKET/KEY:
    // being synced by OWNER until TIME (UTC)". With `wait`, a live lock is waited for, polling
    // (0.25 s doubling to 5 s) until it is released or expires, for at most
    // `*wait`; `stop` ends the wait early with Error{Interrupted}. A lock object that is not a
    // lease (unreadable JSON) is never deleted: Error{Busy} naming it. Request failures are
    // returned as the client reports them (bucket, key, server code). `ttl` >= 1 s.
    static Result<Lease> acquire(S3Client& client, const S3Location& repo, std::string owner,
                                 std::chrono::seconds ttl,
                                 std::optional<std::chrono::seconds> wait = std::nullopt,
                                 std::stop_token stop = {});

    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // release(), its error ignored.
    ~Lease();

    // Extends the lease to now + ttl: reads the lock and, iff it is still this lease's (same
    // token), overwrites it (a plain PUT). Returns Error{Busy} "lease lost: ..." naming the
    // current holder iff another worker holds it now, or that the lock is gone; the Lease is then
    // no longer held. Call well within the ttl (e.g. every ttl/3).
    Result<void> renew();

    // Deletes the lock iff it is still this lease's (a lock another worker took over after
    // this lease expired is left alone). Idempotent: a released Lease does nothing.
    Result<void> release();

    // Returns true until release() (or a failed renew()) ended the lease.
    bool held() const { return held_; }
    const std::string& owner() const { return record_.owner; }
    // When the lease expires unless renewed.
    std::chrono::system_clock::time_point expires() const;
    // true iff the store honours If-None-Match (the lock excludes other workers).
    bool exclusive() const { return exclusive_; }
    // What the caller should tell the user (e.g. the store does not exclude two workers).
    const std::vector<std::string>& warnings() const { return warnings_; }
    // "s3://BUCKET/PREFIX.rpmirror/lock".
    std::string url() const;

  private:
    Lease(S3Client& client, S3Location repo, LeaseRecord record, std::chrono::seconds ttl);

    S3Client* client_;
    S3Location repo_;
    LeaseRecord record_;
    std::chrono::seconds ttl_;
    bool held_ = true;
    bool exclusive_ = true;
    std::vector<std::string> warnings_;
};

}  // namespace rpmirror::s3
