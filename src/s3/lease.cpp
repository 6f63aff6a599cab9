// The lease lock of an s3:// mirror (see s3/lease.hpp).
#include "s3/lease.hpp"

#include <signal.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "s3/json_object.hpp"
#include "s3/mirror_state.hpp"

namespace rpmirror::s3 {
namespace {

constexpr std::chrono::milliseconds kFirstPoll{250};
constexpr std::chrono::milliseconds kLongestPoll{5000};
constexpr unsigned kVanishedRetries = 8;

std::int64_t unix_now(const S3Client& client) {
    const auto now = std::chrono::system_clock::now() + client.config().clock_offset;
    return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
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

namespace {

// Returns true iff `owner` names a process of this host (default_lease_owner's "HOST:PID") that
// no longer exists: a worker killed here (a cron run's SIGKILL) does not block its repository
// until the lease expires. A pid reused since only makes it look alive (the lease then expires).
bool holder_died_here(std::string_view owner) {
    const std::size_t colon = owner.rfind(':');
    if (colon == std::string_view::npos) {
        return false;
    }
    const std::string ours = default_lease_owner();
    if (ours.substr(0, ours.rfind(':')) != owner.substr(0, colon)) {
        return false;
    }
    pid_t pid = 0;
    const std::string_view digits = owner.substr(colon + 1);
    const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
    if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size() || pid <= 0) {
        return false;
    }
    return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

Lease::Lease(S3Client& client, S3Location repo, LeaseRecord record, std::chrono::seconds ttl)
    : client_(&client), repo_(std::move(repo)), record_(std::move(record)), ttl_(ttl) {}

Lease::Lease(Lease&& other) noexcept
    : client_(other.client_),
      repo_(std::move(other.repo_)),
      record_(std::move(other.record_)),
      ttl_(other.ttl_),
      held_(std::exchange(other.held_, false)),
      exclusive_(other.exclusive_),
      warnings_(std::move(other.warnings_)) {}

Lease& Lease::operator=(Lease&& other) noexcept {
    if (this != &other) {
        (void)release();
        client_ = other.client_;
        repo_ = std::move(other.repo_);
        record_ = std::move(other.record_);
        ttl_ = other.ttl_;
        held_ = std::exchange(other.held_, false);
        exclusive_ = other.exclusive_;
        warnings_ = std::move(other.warnings_);
    }
    return *this;
}

Lease::~Lease() {
    (void)release();
}

std::string Lease::url() const {
    return object_url(repo_.bucket, repo_.key(kLockKey));
}

std::chrono::system_clock::time_point Lease::expires() const {
    return std::chrono::system_clock::time_point(std::chrono::seconds(record_.expires)) -
           client_->config().clock_offset;
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
    while (true) {
        record.expires = unix_now(client) + ttl.count();
        auto created = client.put_object(repo.bucket, key, to_json(record), create_only);
        if (created) {
            Lease lease(client, repo, std::move(record), ttl);
            // The same create again: a store that honours If-None-Match refuses it (412); one
            // that ignores it accepts it (the body is the same, so nothing changes).
            auto again = client.put_object(repo.bucket, key, to_json(lease.record_), create_only);
            if (again) {
                lease.exclusive_ = false;
                lease.warnings_.push_back(
                    fmt::format("{}: the store does not honour If-None-Match (conditional PUT): "
                                "the lock does not keep two workers from syncing this repository "
                                "at once; run one worker per repository",
                                url));
            } else if (again.error().code != ErrorCode::Busy) {
                return tl::unexpected(std::move(again.error()));
            }
            return lease;
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
        if ((holder.expires < unix_now(client) || holder_died_here(holder.owner)) &&
            !took_over_expired) {
            // Expired, or its worker died on this host: taken over once (see the race in
            // lease.hpp).
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
    if (!held_) {
        return make_error(ErrorCode::Busy, "lease lost: it was released", url());
    }
    auto current = read_lock(*client_, repo_);
    if (!current) {
        return tl::unexpected(std::move(current.error()));
    }
    if (!current->record || current->record->token != record_.token) {
        held_ = false;
        if (!current->record) {
            return make_error(ErrorCode::Busy, "lease lost: the lock object is gone", url());
        }
        return make_error(ErrorCode::Busy,
                          fmt::format("lease lost: now held by {} until {}", current->record->owner,
                                      utc_time(current->record->expires)),
                          url());
    }
    LeaseRecord renewed = record_;
    renewed.expires = unix_now(*client_) + ttl_.count();
    PutOptions plain;
    plain.content_type = "application/json";
    if (auto stored =
            client_->put_object(repo_.bucket, repo_.key(kLockKey), to_json(renewed), plain);
        !stored) {
        return tl::unexpected(std::move(stored.error()));
    }
    record_ = std::move(renewed);
    return {};
}

Result<void> Lease::release() {
    if (!held_) {
        return {};
    }
    held_ = false;
    auto current = read_lock(*client_, repo_);
    if (!current) {
        return tl::unexpected(std::move(current.error()));
    }
    if (!current->record || current->record->token != record_.token) {
        return {};  // gone, or another worker's now: left alone
    }
    return client_->delete_object(repo_.bucket, repo_.key(kLockKey));
}

}  // namespace rpmirror::s3
