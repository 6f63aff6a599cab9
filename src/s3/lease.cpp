// The lease lock of an s3:// mirror (see s3/lease.hpp).
#include "s3/lease.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "s3/config.hpp"
#include "s3/json_object.hpp"
#include "s3/mirror_state.hpp"

namespace rpmirror::s3 {
namespace {

constexpr std::chrono::milliseconds kFirstPoll{250};
constexpr std::chrono::milliseconds kLongestPoll{5000};
constexpr unsigned kVanishedRetries = 8;

// Now on the store's clock (S3Client::store_now), in unix seconds.
std::int64_t unix_now(const S3Client& client) {
    return std::chrono::duration_cast<std::chrono::seconds>(client.store_now().time_since_epoch())
        .count();
}

// "2026-12-01T09:30:00Z".
std::string utc_time(std::int64_t unix_seconds) {
    const std::time_t time = static_cast<std::time_t>(unix_seconds);
    std::tm parts{};
    ::gmtime_r(&time, &parts);
    std::array<char, 32> text{};
    const std::size_t length =
        std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &parts);
    return std::string(text.data(), length);
}

std::string random_token() {
    std::random_device device;
    return fmt::format("{:08x}{:08x}{:08x}{:08x}", device(), device(), device(), device());
}

// Waits `delay` unless `stop` is requested first. Returns false iff it was.
bool wait_unless_stopped(std::chrono::milliseconds delay, const std::stop_token& stop) {
    std::mutex mutex;
    std::condition_variable_any woken;
    std::unique_lock lock(mutex);
    return !woken.wait_for(lock, stop, delay, [] { return false; }) && !stop.stop_requested();
}

tl::unexpected<Error> busy(const std::string& url, const LeaseRecord& holder) {
    return make_error(
        ErrorCode::Busy,
        fmt::format("being synced by {} until {}", holder.owner, utc_time(holder.expires)), url);
}

// What reading the current lock found.
struct CurrentLock {
    std::optional<LeaseRecord> record;  // nullopt: no lock object
};

Result<CurrentLock> read_lock(S3Client& client, const S3Location& repo) {
    const std::string key = repo.key(kLockKey);
    auto body = client.get_object(repo.bucket, key);
    if (!body) {
        if (body.error().code == ErrorCode::NotFound) {
            return CurrentLock{};
        }
        return tl::unexpected(std::move(body.error()));
    }
    auto record = parse_lease(*body, object_url(repo.bucket, key));
    if (!record) {
        return make_error(ErrorCode::Busy,
                          "the lock object is not an rpmirror lease (" + record.error().message +
                              "); it is left alone: delete it if no worker syncs this repository",
                          object_url(repo.bucket, key));
    }
    return CurrentLock{std::move(*record)};
}

}  // namespace

std::string to_json(const LeaseRecord& record) {
    const nlohmann::json document = {
        {"owner", record.owner}, {"expires", record.expires}, {"token", record.token}};
    return document.dump();
}

Result<LeaseRecord> parse_lease(std::string_view json, std::string_view shown) {
    const std::string subject(shown);
    auto parsed = parse_json_object(json, subject);
    if (!parsed) {
        return tl::unexpected(std::move(parsed.error()));
    }
    const nlohmann::json& document = *parsed;
    try {
        LeaseRecord record;
        record.owner = document.at("owner").get<std::string>();
        record.expires = document.at("expires").get<std::int64_t>();
        record.token = document.at("token").get<std::string>();
        return record;
    } catch (const nlohmann::json::exception& error) {
        return make_error(ErrorCode::BadInput, std::string("not a lease: ") + error.what(),
                          subject);
    }
}

std::string default_lease_owner() {
    std::array<char, 256> host{};
    if (::gethostname(host.data(), host.size() - 1) != 0) {
        host[0] = '\0';
    }
    return fmt::format("{}:{}", host[0] != '\0' ? host.data() : "localhost", ::getpid());
}

struct Lease::State {
    State(S3Config config, S3Location repo_in, LeaseRecord record_in, std::chrono::seconds ttl_in)
        : client(std::move(config)),
          repo(std::move(repo_in)),
          record(std::move(record_in)),
          ttl(ttl_in) {}

    mutable std::mutex mutex;  // guards everything below
    S3Client client;           // the lease's own
    S3Location repo;
    LeaseRecord record;
    std::chrono::seconds ttl;
    bool held = true;
    bool exclusive = true;
    // The lock object's ETag as this lease last wrote it (empty: unknown, read before renewing),
    // and whether the store honours If-Match on PUT: a renewal then replaces only that version,
    // so a takeover between two renewals can never be overwritten.
    std::string etag;
    bool if_match_honoured = true;
    std::vector<std::string> warnings;
    std::optional<Error> lost;  // set iff a renewal found the lease lost
    // When the lease was taken or last renewed (the local monotonic clock: only how long ago).
    std::chrono::steady_clock::time_point renewed_at = std::chrono::steady_clock::now();

    std::string url() const { return object_url(repo.bucket, repo.key(kLockKey)); }

    // Marks the lease lost with `error` (every later renew/confirm returns it).
    tl::unexpected<Error> lose(Error error) {
        held = false;
        lost = error;
        return tl::unexpected(std::move(error));
    }

    // A failure to reach the store: the lease is lost iff it has expired meanwhile.
    tl::unexpected<Error> failed(Error error) {
        if (unix_now(client) >= record.expires) {
            return lose(Error{ErrorCode::Busy,
                              fmt::format("lease lost: it expired at {} before it could be "
                                          "renewed ({})",
                                          utc_time(record.expires), error.message),
                              url()});
        }
        return tl::unexpected(std::move(error));
    }

    // renew(), the mutex held.
    Result<void> renew_locked() {
        if (lost) {
            return tl::unexpected(*lost);
        }
        if (!held) {
            return make_error(ErrorCode::Busy, "lease lost: it was released", url());
        }
        const bool conditional = if_match_honoured && !etag.empty();
        const bool expired = unix_now(client) >= record.expires;
        if (!conditional || expired) {
            // The version to replace is not known (or the store would not honour the
            // condition), or another worker may have taken the expired lease over: read the
            // lock and check it is still this lease's first (naming the holder if not).
            if (auto checked = check_still_ours(); !checked) {
                return checked;
            }
        }
        if (expired) {
            // Still our object, but expired: another worker may be deleting it right now.
            return lose(Error{ErrorCode::Busy,
                              fmt::format("lease lost: it expired at {} before it was renewed",
                                          utc_time(record.expires)),
                              url()});
        }
        LeaseRecord renewed = record;
        renewed.expires = unix_now(client) + ttl.count();
        PutOptions put;
        put.content_type = "application/json";
        if (conditional) {
            put.if_match = etag;
        }
        auto stored = client.put_object(repo.bucket, repo.key(kLockKey), to_json(renewed), put);
        if (!stored) {
            if (conditional && stored.error().code == ErrorCode::Busy) {
                // 412: the lock is no longer the version this lease wrote (taken over, or gone):
                // say by whom, and the lease is lost; nothing was overwritten.
                if (auto checked = check_still_ours(); !checked) {
                    return checked;
                }
                return lose(Error{ErrorCode::Busy,
                                  "lease lost: the lock object changed since this lease wrote it",
                                  url()});
            }
            return failed(std::move(stored.error()));
        }
        etag = *stored;
        record = std::move(renewed);
        renewed_at = std::chrono::steady_clock::now();
        return {};
    }

    // Success iff the lock object still carries this lease's token (its ETag then noted);
    // otherwise the lease is lost, naming the holder, or the store's error.
    Result<void> check_still_ours() {
        auto info = client.head_object(repo.bucket, repo.key(kLockKey));
        auto current = read_lock(client, repo);
        if (!current) {
            if (current.error().code == ErrorCode::Busy) {  // no longer a lease at all
                return lose(std::move(current.error()));
            }
            return failed(std::move(current.error()));
        }
        if (!current->record) {
            return lose(Error{ErrorCode::Busy, "lease lost: the lock object is gone", url()});
        }
        if (current->record->token != record.token) {
            return lose(
                Error{ErrorCode::Busy,
                      fmt::format("lease lost: now held by {} until {}", current->record->owner,
                                  utc_time(current->record->expires)),
                      url()});
        }
        // The HEAD came first: an ETag of an older version only makes the next conditional
        // renewal fail safe (412, then this check again).
        etag = info ? info->etag : std::string();
        return {};
    }
};

Lease::Lease(std::unique_ptr<State> state) : state_(std::move(state)) {}

Lease::Lease(Lease&& other) noexcept
    : state_(std::move(other.state_)), keeper_(std::move(other.keeper_)) {}

Lease& Lease::operator=(Lease&& other) noexcept {
    if (this != &other) {
        stop_keep_alive();
        (void)release();
        state_ = std::move(other.state_);
        keeper_ = std::move(other.keeper_);
    }
    return *this;
}

Lease::~Lease() {
    stop_keep_alive();
    (void)release();
}

void Lease::stop_keep_alive() {
    if (keeper_.joinable()) {
        keeper_.request_stop();
        keeper_.join();
    }
}

std::string Lease::url() const {
    return state_ ? state_->url() : std::string();
}

bool Lease::held() const {
    if (!state_) {
        return false;
    }
    const std::lock_guard lock(state_->mutex);
    return state_->held;
}

std::string Lease::owner() const {
    const std::lock_guard lock(state_->mutex);
    return state_->record.owner;
}

bool Lease::exclusive() const {
    const std::lock_guard lock(state_->mutex);
    return state_->exclusive;
}

std::vector<std::string> Lease::warnings() const {
    const std::lock_guard lock(state_->mutex);
    return state_->warnings;
}

std::uint64_t Lease::requests() const {
    if (!state_) {
        return 0;
    }
    const std::lock_guard lock(state_->mutex);
    return state_->client.request_count();
}

std::chrono::system_clock::time_point Lease::expires() const {
    const std::lock_guard lock(state_->mutex);
    return std::chrono::system_clock::time_point(std::chrono::seconds(state_->record.expires));
}

Result<Lease> Lease::acquire(S3Client& client, const S3Location& repo, std::string owner,
                             std::chrono::seconds ttl, std::optional<std::chrono::seconds> wait,
                             std::stop_token stop) {
    const std::string key = repo.key(kLockKey);
    const std::string url = object_url(repo.bucket, key);
    ttl = std::max(ttl, std::chrono::seconds(1));
    LeaseRecord record{std::move(owner), 0, random_token()};
    PutOptions create_only;
    create_only.content_type = "application/json";
    create_only.if_none_match = true;
    const auto deadline = std::chrono::steady_clock::now() + wait.value_or(std::chrono::seconds(0));
    std::chrono::milliseconds poll = kFirstPoll;
    bool took_over_expired = false;
    unsigned vanished = 0;
    // Makes the held lease: probes whether the store honours If-None-Match and, iff the expiry
    // written was reckoned on a clock the store's answer has since shown to be off, renews it at
    // once (before the store answered, the client knows only the local clock).
    const auto take = [&](LeaseRecord taken, std::string etag) -> Result<Lease> {
        const std::int64_t written_start = taken.expires - ttl.count();
        Lease lease(std::make_unique<State>(client.config(), repo, std::move(taken), ttl));
        State& state = *lease.state_;
        state.etag = std::move(etag);
        // The same create again: a store that honours If-None-Match refuses it (412); one that
        // ignores it accepts it (the body is the same, so nothing changes).
        auto again = client.put_object(repo.bucket, key, to_json(state.record), create_only);
        if (again) {
            state.exclusive = false;
            state.warnings.push_back(
                fmt::format("{}: the store does not honour If-None-Match (conditional PUT): the "
                            "lock does not keep two workers from syncing this repository at "
                            "once; run one worker per repository",
                            url));
        } else if (again.error().code != ErrorCode::Busy) {
            return tl::unexpected(std::move(again.error()));
        }
        if (again) {
            state.etag = *again;
        }
        // A replacement of a version the lock is not: a store that honours If-Match refuses it
        // (412); one that ignores it replaces the lock with the same body. (Ceph RGW and AWS S3
        // honour it: doc/s3.md.)
        PutOptions other_version;
        other_version.content_type = "application/json";
        other_version.if_match = "00000000000000000000000000000000";
        auto probe = client.put_object(repo.bucket, key, to_json(state.record), other_version);
        if (probe) {
            state.if_match_honoured = false;
            state.etag = *probe;
            state.warnings.push_back(fmt::format(
                "{}: the store does not honour If-Match (conditional PUT): a renewal reads the "
                "lock, then writes it; a takeover in between would be overwritten (a takeover "
                "needs the lease expired first)",
                url));
        } else if (probe.error().code != ErrorCode::Busy) {
            return tl::unexpected(std::move(probe.error()));
        }
        const std::int64_t store_now = unix_now(client);
        if (written_start < store_now - 2 || written_start > store_now + 2) {
            const std::lock_guard lock(state.mutex);
            if (auto renewed = state.renew_locked(); !renewed) {
                return tl::unexpected(std::move(renewed.error()));
            }
        }
        return lease;
    };
    while (true) {
        record.expires = unix_now(client) + ttl.count();
        auto created = client.put_object(repo.bucket, key, to_json(record), create_only);
        if (created) {
            return take(std::move(record), *created);
        }
        if (created.error().code != ErrorCode::Busy) {
            return tl::unexpected(std::move(created.error()));
        }
        auto current = read_lock(client, repo);
        if (!current) {
            return tl::unexpected(std::move(current.error()));
        }
        if (!current->record) {
            // Released between the create and the read: create again (a bounded number of
            // times: other workers taking and releasing it all along count as busy).
            if (++vanished <= kVanishedRetries) {
                continue;
            }
            return make_error(ErrorCode::Busy,
                              "other workers keep taking and releasing this lock; try again", url);
        }
        const LeaseRecord& holder = *current->record;
        if (holder.token == record.token) {
            // Our own create: the store carried it out, its answer was lost, and the client's
            // retry was refused because the object now exists.
            return take(holder, std::string());  // its ETag read before the first renewal
        }
        if (holder.expires < unix_now(client) && !took_over_expired) {
            // Expired on the store's clock: taken over once (see the race in lease.hpp).
            took_over_expired = true;
            if (auto removed = client.delete_object(repo.bucket, key); !removed) {
                return tl::unexpected(std::move(removed.error()));
            }
            continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (!wait || now >= deadline) {
            return busy(url, holder);
        }
        const auto remaining =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
        if (!wait_unless_stopped(std::min(poll, remaining), stop)) {
            return make_error(
                ErrorCode::Interrupted,
                fmt::format("stopped while waiting for the lock held by {}", holder.owner), url);
        }
        poll = std::min(poll * 2, kLongestPoll);
        took_over_expired = false;
    }
}

Result<void> Lease::renew() {
    if (!state_) {
        return make_error(ErrorCode::Busy, "lease lost: it was moved from", "");
    }
    const std::lock_guard lock(state_->mutex);
    return state_->renew_locked();
}

Result<void> Lease::confirm() {
    if (!state_) {
        return renew();
    }
    const std::lock_guard lock(state_->mutex);
    if (!state_->lost && state_->held &&
        std::chrono::steady_clock::now() - state_->renewed_at < state_->ttl / 8) {
        return {};  // taken or renewed a moment ago: at least 7/8 of the ttl is ahead
    }
    return state_->renew_locked();
}

void Lease::keep_alive() {
    if (keeper_.joinable() || !state_) {
        return;
    }
    keeper_ = std::jthread([state = state_.get()](std::stop_token stop) {
        std::mutex mutex;
        std::condition_variable_any tick;
        const auto period = std::max<std::chrono::milliseconds>(
            std::chrono::duration_cast<std::chrono::milliseconds>(state->ttl) / 4,
            std::chrono::milliseconds(250));
        while (true) {
            {
                std::unique_lock lock(mutex);
                if (tick.wait_for(lock, stop, period, [] { return false; }) ||
                    stop.stop_requested()) {
                    return;
                }
            }
            const std::lock_guard lock(state->mutex);
            if (!state->held) {
                return;
            }
            (void)state->renew_locked();  // lost: held is false now and the loop ends
        }
    });
}

Result<void> Lease::release() {
    if (!state_) {
        return {};
    }
    const std::lock_guard lock(state_->mutex);
    if (!state_->held) {
        return {};
    }
    state_->held = false;
    auto current = read_lock(state_->client, state_->repo);
    if (!current) {
        return tl::unexpected(std::move(current.error()));
    }
    if (!current->record || current->record->token != state_->record.token) {
        return {};  // gone, or another worker's now: left alone
    }
    return state_->client.delete_object(state_->repo.bucket, state_->repo.key(kLockKey));
}

}  // namespace rpmirror::s3
