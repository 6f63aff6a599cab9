// ConnectionBudget: one count of transfers in flight shared by many Downloaders, with a limit per
// host and a fair share per client (see download.hpp). Everything is under one mutex; the only
// calls made with it held are the clients' wake functions (curl_multi_wakeup), which never call
// back into the budget.
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "download/download.hpp"

namespace rpmirror {

struct ConnectionBudget::State {
    struct ClientState {
        std::function<void()> wake;
        unsigned held = 0;
        bool waiting = false;
        std::string waiting_host;  // the host it was last refused for
    };
    mutable std::mutex mutex;
    std::map<std::uint64_t, State::ClientState> clients;
    std::map<std::string, unsigned, std::less<>> hosts;  // tokens held per host (> 0 only)
    std::uint64_t next_client = 1;
    Stats stats;
};

ConnectionBudget::ConnectionBudget(unsigned total, unsigned per_host)
    : total_(total), per_host_(per_host), state_(std::make_unique<State>()) {
    if (total == 0) {
        throw std::invalid_argument("a connection budget needs at least one connection");
    }
}

ConnectionBudget::~ConnectionBudget() = default;

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
    const std::lock_guard lock(state_->mutex);
    Client client;
    client.budget_ = this;
    client.id_ = state_->next_client++;
    state_->clients.emplace(client.id_, State::ClientState{std::move(wake), 0, false, {}});
    state_->stats.clients = state_->clients.size();
    return client;
}

ConnectionBudget::Token ConnectionBudget::acquire(std::uint64_t client, std::string_view url) {
    std::string host = host_key(url);
    const std::lock_guard lock(state_->mutex);
    State::ClientState& self = state_->clients.at(client);
    const auto host_held = [this](const std::string& name) {
        const auto found = state_->hosts.find(name);
        return found == state_->hosts.end() ? 0U : found->second;
    };
    bool allowed = state_->stats.in_use < total_ && (per_host_ == 0 || host_held(host) < per_host_);
    if (allowed) {
        // Least served first: another waiting client that could use a token and holds fewer
        // goes before this one (it has been woken and takes it on its next pass).
        for (const auto& [id, other] : state_->clients) {
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
        ++state_->stats.refused;
        return Token{};
    }
    const bool was_waiting = std::exchange(self.waiting, false);
    ++self.held;
    const unsigned on_host = ++state_->hosts[host];
    ++state_->stats.in_use;
    ++state_->stats.granted;
    state_->stats.peak_in_use = std::max(state_->stats.peak_in_use, state_->stats.in_use);
    state_->stats.peak_per_host = std::max(state_->stats.peak_per_host, on_host);
    state_->stats.peak_per_client = std::max(state_->stats.peak_per_client, self.held);
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
    const std::lock_guard lock(state_->mutex);
    if (const auto found = state_->clients.find(client); found != state_->clients.end()) {
        --found->second.held;
    }
    if (const auto found = state_->hosts.find(host);
        found != state_->hosts.end() && --found->second == 0) {
        state_->hosts.erase(found);
    }
    --state_->stats.in_use;
    wake_waiters_locked(0);
}

void ConnectionBudget::set_not_waiting(std::uint64_t client) {
    const std::lock_guard lock(state_->mutex);
    if (std::exchange(state_->clients.at(client).waiting, false)) {
        wake_waiters_locked(client);
    }
}

void ConnectionBudget::remove(std::uint64_t client) {
    const std::lock_guard lock(state_->mutex);
    state_->clients.erase(client);
    state_->stats.clients = state_->clients.size();
    wake_waiters_locked(0);
}

void ConnectionBudget::wake_waiters_locked(std::uint64_t except) {
    for (auto& [id, state] : state_->clients) {
        if (id != except && state.waiting && state.wake) {
            state.wake();
        }
    }
}

ConnectionBudget::Stats ConnectionBudget::stats() const {
    const std::lock_guard lock(state_->mutex);
    return state_->stats;
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
