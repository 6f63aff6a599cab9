// The per-repository lock of an s3:// mirror: the object `<repo prefix>.rpmirror/lock`, held as a
// lease (it expires unless renewed), so that several workers sharing a store (`--shard`, two
// timers by mistake, replicas of one container) never sync one repository at once, and a worker
// that died does not block the repository for longer than the lease's time to live.
//
// The lock object is JSON: {"owner": "HOST:PID", "expires": UNIX_SECONDS, "token": "HEX"}. The
// token (128 random bits, one per lease) is the lease's identity: every check compares it, and
// nothing else. The owner text is for messages only: two workers in different PID namespaces,
// containers or hosts may well have the same one, so no decision rests on a host name or a PID.
// A lease is alive until `expires`, judged on the store's clock (S3Client::store_now(): the Date
// of its answers), never on the local one: a worker whose clock is wrong neither takes over a
// live lease nor writes one that others see as expired.
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
// stalled past its lease and two others arriving within milliseconds of each other; the loser
// learns it at its next renewal, whose PUT If-Match the store refuses (the lock is no longer
// the version it wrote), and confirm() (which the sync calls before it writes its state and
// before it publishes) fails then too. A renewal never overwrites another worker's lock: it
// replaces only the version this lease wrote (where the store honours If-Match, probed when the
// lease is taken; elsewhere it reads the lock first, and a warning says so).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "s3/client.hpp"
#include "s3/config.hpp"

namespace rpmirror::s3 {

// What the lock object holds.
struct LeaseRecord {
    std::string owner;  // who holds it ("HOST:PID"), for messages only
    std::int64_t expires =
        0;              // unix time (seconds, the store's clock) after which it may be taken over
    std::string token;  // random hex, unique per lease: the lease's identity
};

// Returns the record as the lock object's JSON body.
std::string to_json(const LeaseRecord& record);
// Parses a lock object's body. Returns Error{BadInput} with subject `shown` iff it is not one.
Result<LeaseRecord> parse_lease(std::string_view json, std::string_view shown);

// Returns "HOST:PID" of this process, the owner text a worker normally uses (for messages).
std::string default_lease_owner();

// A held lock; released (its object deleted, iff it still carries this lease's token) when
// destroyed. After acquire() the lease talks to the store through a client of its own (made
// from the acquiring client's configuration), so renew(), confirm(), release() and the
// keep-alive thread never share a client with the caller. All members are safe to call from
// any thread. Move-only.
class Lease {
  public:
    // Takes the lock of the repository at `repo` (its prefix ends in '/'): creates
    // `<repo>.rpmirror/lock` with PUT If-None-Match: * holding {owner, store now + ttl, token},
    // then repeats that PUT once to learn whether the store honoured the condition (a second
    // create refused with 412: it did; accepted: it did not, and warnings() says two workers are
    // not excluded). If the lock exists it is read: one with this lease's token is ours (the
    // store carried out a create whose answer was lost, and the client's retry got 412); one
    // that expired on the store's clock is deleted and the create tried once more (see the race
    // above); a live one is Error{Busy} "s3://BUCKET/KEY: being synced by OWNER until TIME (UTC)".
    // With `wait`, a live lock is waited for, polling (0.25 s doubling to 5 s) until it is
    // released or expires, for at most `*wait`; `stop` ends the wait early with
    // Error{Interrupted}. A lock object that is not a lease (unreadable JSON) is never deleted:
    // Error{Busy} naming it. Request failures are returned as the client reports them (bucket,
    // key, server code). `ttl` >= 1 s.
    static Result<Lease> acquire(S3Client& client, const S3Location& repo, std::string owner,
                                 std::chrono::seconds ttl,
                                 std::optional<std::chrono::seconds> wait = std::nullopt,
                                 std::stop_token stop = {});

    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // Stops the keep-alive thread, then release(), its error ignored.
    ~Lease();

    // Extends the lease to store now + ttl: replaces the lock with PUT If-Match: the ETag this
    // lease last wrote, so a lock another worker took over is never overwritten (the store
    // answers 412; the lock is then read to name the holder). Where the ETag is not known, or
    // the store does not honour If-Match (acquire probes it: warnings() says so), the lock is
    // read first and overwritten iff it still carries this lease's token. Returns Error{Busy}
    // "lease lost: ..." naming the current holder iff another worker holds it now, or that the lock
    // is gone, or that this lease expired on the store's clock before it could be renewed; the
    // Lease is then no longer held, and every later renew() and confirm() fails with that error.
    // Another failure (the store unreachable) is returned and the lease stays held until it
    // expires.
    Result<void> renew();

    // Starts a thread that renews the lease every ttl/4 until the Lease is released or
    // destroyed, whatever the caller is doing (fetching metadata, downloading, waiting for
    // uploads). A renewal that fails for another reason than Busy is tried again at the next
    // tick. Idempotent.
    void keep_alive();

    // Returns success iff the lease is held with at least 7/8 of its ttl ahead: at once iff it
    // was taken or renewed less than ttl/8 ago, else by renewing now. Call it right before an
    // action only the holder may take (writing the mirror's state, publishing its metadata).
    // A lease found lost is the error renew() gives.
    Result<void> confirm();

    // Deletes the lock iff it still carries this lease's token (a lock another worker took over
    // after this lease expired is left alone). Idempotent: a released Lease does nothing.
    Result<void> release();

    // Returns true until release() (or a renewal that found the lease lost) ended the lease.
    bool held() const;
    std::string owner() const;
    // When the lease expires unless renewed, on the store's clock.
    std::chrono::system_clock::time_point expires() const;
    // true iff the store honours If-None-Match (the lock excludes other workers).
    bool exclusive() const;
    // What the caller should tell the user (e.g. the store does not exclude two workers).
    std::vector<std::string> warnings() const;
    // "s3://BUCKET/PREFIX.rpmirror/lock".
    std::string url() const;
    // Requests the lease's own client sent (renewals, release).
    std::uint64_t requests() const;

  private:
    struct State;
    explicit Lease(std::unique_ptr<State> state);
    void stop_keep_alive();

    std::unique_ptr<State> state_;
    std::jthread keeper_;
};

}  // namespace rpmirror::s3
