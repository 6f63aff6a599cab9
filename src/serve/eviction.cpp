// See eviction.hpp.
#include "serve/eviction.hpp"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "serve/catalogue.hpp"

namespace rpmirror::serve {

HeldPackages::HeldPackages(JobCatalogue& catalogue, std::uint64_t bound, SnapshotKeys snapshot_keys,
                           JobCounters* counters)
    : catalogue_(catalogue),
      bound_(bound),
      snapshot_keys_(std::move(snapshot_keys)),
      counters_(counters) {
    std::lock_guard lock(mutex_);
    reread_locked();
}

std::uint64_t HeldPackages::now_locked() {
    const auto now =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
    last_tick_ = std::max(now, last_tick_ + 1);
    return last_tick_;
}

void HeldPackages::publish_locked() {
    if (counters_ != nullptr) {
        counters_->held_bytes.store(bytes_, std::memory_order_relaxed);
    }
}

void HeldPackages::reread_locked() {
    const std::shared_ptr<const Revision> revision = catalogue_.current();
    if (!revision || (read_ && revision->version == revision_)) {
        return;
    }
    std::unordered_map<std::string, Entry> held;
    std::uint64_t bytes = 0;
    for (const auto& [key, file] : revision->files) {
        if (file.held) {
            continue;  // metadata: never counted, never removed
        }
        auto info = catalogue_.stat(key);
        if (!info) {
            if (warn_) {
                warn_(fmt::format("{}: cannot count the held packages: {}", catalogue_.name(),
                                  info.error().to_string()));
            }
            return;  // counted again at the next keep
        }
        if (!*info) {
            continue;
        }
        Entry entry{(*info)->size,
                    static_cast<std::uint64_t>(std::max<std::int64_t>((*info)->modified_ns, 0))};
        if (const auto known = held_.find(key); known != held_.end()) {
            entry.last_served = known->second.last_served;
        }
        bytes += entry.size;
        held.emplace(key, entry);
    }
    held_ = std::move(held);
    bytes_ = bytes;
    revision_ = revision->version;
    read_ = true;
    publish_locked();
}

void HeldPackages::served(const std::string& key) {
    std::lock_guard lock(mutex_);
    if (const auto found = held_.find(key); found != held_.end()) {
        found->second.last_served = now_locked();
    }
}

void HeldPackages::kept(const std::string& key, std::uint64_t size) {
    std::lock_guard lock(mutex_);
    reread_locked();
    Entry& entry = held_[key];
    bytes_ = bytes_ - entry.size + size;
    entry.size = size;
    entry.last_served = now_locked();
    if (bytes_ > bound_) {
        evict_locked(key);
    }
    publish_locked();
}

void HeldPackages::evict_locked(const std::string& kept) {
    std::unordered_set<std::string> protected_keys;
    if (snapshot_keys_) {
        auto keys = snapshot_keys_();
        if (!keys) {
            if (warn_) {
                warn_(
                    fmt::format("{}: nothing removed to keep under cache-max-size: cannot read "
                                "what its snapshots hold: {}",
                                catalogue_.name(), keys.error().to_string()));
            }
            return;
        }
        protected_keys = std::move(*keys);
    }
    std::vector<std::pair<std::uint64_t, std::string>> oldest_first;
    for (const auto& [key, entry] : held_) {
        if (key != kept && !protected_keys.contains(key)) {
            oldest_first.emplace_back(entry.last_served, key);
        }
    }
    std::sort(oldest_first.begin(), oldest_first.end());
    for (const auto& [last_served, key] : oldest_first) {
        if (bytes_ <= bound_) {
            break;
        }
        if (auto removed = catalogue_.remove(key); !removed) {
            if (warn_) {
                warn_(fmt::format("{}: {}: not removed to keep under cache-max-size: {}",
                                  catalogue_.name(), key, removed.error().to_string()));
            }
            continue;
        }
        bytes_ -= held_.at(key).size;
        held_.erase(key);
        if (counters_ != nullptr) {
            counters_->evictions.fetch_add(1, std::memory_order_relaxed);
        }
    }
}

std::uint64_t HeldPackages::held_bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

}  // namespace rpmirror::serve
