// ConnectionBudget: one count of transfers in flight shared by many Downloaders, with a limit per
// host and a fair share per client (see download.hpp). Everything is under one mutex; the only
// calls made with it held are the clients' wake functions (curl_multi_wakeup), which never call
// back into the budget.
#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "rpmirror/download/download.hpp"

namespace rpmirror {

ConnectionBudget::ConnectionBudget(unsigned total, unsigned per_host)
    : total_(total), per_host_(per_host) {
    if (total == 0) {
        throw std::invalid_argument("a connection budget needs at least one connection");
    }
}

// --- tokens and clients: moving handles -------------------------------------------------------

ConnectionBudget::Token::Token(Token&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)),
      client_(other.client_),
      host_(std::move(other.host_)) {}

ConnectionBudget::Token& ConnectionBudget::Token::operator=(Token&& other) noexcept {
    if (this != &other) {
        reset();
        budget_ = std::exchange(other.budget_, nullptr);
        client_ = other.client_;
        host_ = std::move(other.host_);
    }
    return *this;
}

void ConnectionBudget::Token::reset() {
    if (budget_ != nullptr) {
        std::exchange(budget_, nullptr)->release(client_, host_);
    }
}

ConnectionBudget::Client::Client(Client&& other) noexcept
    : budget_(std::exchange(other.budget_, nullptr)), id_(other.id_) {}

ConnectionBudget::Client& ConnectionBudget::Client::operator=(Client&& other) noexcept {
    if (this != &other) {
        leave();
        budget_ = std::exchange(other.budget_, nullptr);
        id_ = other.id_;
    }
    return *this;
}

void ConnectionBudget::Client::leave() {
    if (budget_ != nullptr) {
        std::exchange(budget_, nullptr)->remove(id_);
    }
}

ConnectionBudget::Token ConnectionBudget::Client::try_acquire(std::string_view url) {
    return budget_ != nullptr ? budget_->acquire(id_, url) : Token{};
}

void ConnectionBudget::Client::stop_waiting() {
    if (budget_ != nullptr) {
        budget_->set_not_waiting(id_);
    }
}

// --- the budget --------------------------------------------------------------------------------

ConnectionBudget::Client ConnectionBudget::join(std::function<void()> wake) {
    const std::lock_guard lock(mutex_);
    Client client;
    client.budget_ = this;
    client.id_ = next_client_++;
    clients_.emplace(client.id_, ClientState{std::move(wake), 0, false, {}});
    stats_.clients = clients_.size();
    return client;
}

ConnectionBudget::Token ConnectionBudget::acquire(std::uint64_t client, std::string_view url) {
    std::string host = host_key(url);
    const std::lock_guard lock(mutex_);
    ClientState& self = clients_.at(client);
    const auto host_held = [this](const std::string& name) {
        const auto found = hosts_.find(name);
        return found == hosts_.end() ? 0U : found->second;
    };
    bool allowed = stats_.in_use < total_ && (per_host_ == 0 || host_held(host) < per_host_);
    if (allowed) {
        // Least served first: another waiting client that could use a token and holds fewer
        // goes before this one (it has been woken and takes it on its next pass).
        for (const auto& [id, other] : clients_) {
            if (id != client && other.waiting && other.held < self.held &&
                (per_host_ == 0 || host_held(other.waiting_host) < per_host_)) {
                allowed = false;
                break;
            }
        }
    }
    if (!allowed) {
        self.waiting = true;
        self.waiting_host = std::move(host);
        ++stats_.refused;
        return Token{};
    }
    const bool was_waiting = std::exchange(self.waiting, false);
    ++self.held;
    const unsigned on_host = ++hosts_[host];
    ++stats_.in_use;
    ++stats_.granted;
    stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
    stats_.peak_per_host = std::max(stats_.peak_per_host, on_host);
    stats_.peak_per_client = std::max(stats_.peak_per_client, self.held);
    if (was_waiting) {
        // Others may have been held back for this client.
        wake_waiters_locked(client);
    }
    Token token;
    token.budget_ = this;
    token.client_ = client;
    token.host_ = std::move(host);
    return token;
}

void ConnectionBudget::release(std::uint64_t client, const std::string& host) {
    const std::lock_guard lock(mutex_);
    if (const auto found = clients_.find(client); found != clients_.end()) {
        --found->second.held;
    }
    if (const auto found = hosts_.find(host); found != hosts_.end() && --found->second == 0) {
        hosts_.erase(found);
    }
    --stats_.in_use;
    wake_waiters_locked(0);
}

void ConnectionBudget::set_not_waiting(std::uint64_t client) {
    const std::lock_guard lock(mutex_);
    if (std::exchange(clients_.at(client).waiting, false)) {
        wake_waiters_locked(client);
    }
}

void ConnectionBudget::remove(std::uint64_t client) {
    const std::lock_guard lock(mutex_);
    clients_.erase(client);
    stats_.clients = clients_.size();
    wake_waiters_locked(0);
}

void ConnectionBudget::wake_waiters_locked(std::uint64_t except) {
    for (auto& [id, state] : clients_) {
        if (id != except && state.waiting && state.wake) {
            state.wake();
        }
    }
}

ConnectionBudget::Stats ConnectionBudget::stats() const {
    const std::lock_guard lock(mutex_);
    return stats_;
}

std::string ConnectionBudget::host_key(std::string_view url) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0) {
        return std::string(url);
    }
    std::string scheme(url.substr(0, scheme_end));
    std::string_view authority = url.substr(scheme_end + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
        authority.remove_prefix(at + 1);  // user:password@
    }
    std::string_view host = authority;
    std::string_view port;
    const auto colon = authority.rfind(':');
    const auto bracket = authority.rfind(']');
    if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty()) {
        return std::string(url);
    }
    std::string key = scheme + "://" + std::string(host);
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (port.empty()) {
        const std::string& lower = key;
        if (lower.starts_with("https://")) {
            port = "443";
        } else if (lower.starts_with("http://")) {
            port = "80";
        } else if (lower.starts_with("ftp://")) {
            port = "21";
        }
    }
    if (!port.empty()) {
        key += ':';
        key += port;
    }
    return key;
}

}  // namespace rpmirror
