// ConnectionBudget on its own: the total and per-host limits, the fair share between clients,
// release on every path, wake-ups instead of polling, and many threads at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "download/download.hpp"

namespace rpmirror {
namespace {

using Token = ConnectionBudget::Token;

// Counts the wake-ups of one client.
struct WakeCounter {
    int count = 0;
    std::function<void()> function() {
        return [this] { ++count; };
    }
};

TEST(ConnectionBudgetTest, HostKeyIsSchemeHostAndPort) {
    EXPECT_EQ(ConnectionBudget::host_key("http://example.org/repo/x.rpm"), "http://example.org:80");
    EXPECT_EQ(ConnectionBudget::host_key("HTTPS://User:pw@Mirror.Example.ORG/a?b"),
              "https://mirror.example.org:443");
    EXPECT_EQ(ConnectionBudget::host_key("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    EXPECT_EQ(ConnectionBudget::host_key("http://[::1]:81/x"), "http://[::1]:81");
    EXPECT_EQ(ConnectionBudget::host_key("https://[::1]/x"), "https://[::1]:443");
    EXPECT_EQ(ConnectionBudget::host_key("not a url"), "not a url");
}

TEST(ConnectionBudgetTest, TotalLimitAndReleaseOnDestruction) {
    ConnectionBudget budget(2);
    WakeCounter wakes;
    auto client = budget.join(wakes.function());
    {
        Token first = client.try_acquire("http://a/1");
        Token second = client.try_acquire("http://b/2");
        ASSERT_TRUE(first);
        ASSERT_TRUE(second);
        EXPECT_FALSE(client.try_acquire("http://c/3"));  // refused: the total is reached
        EXPECT_EQ(budget.stats().in_use, 2U);
        Token moved = std::move(first);
        EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move): moved-from is empty
        moved.reset();
        EXPECT_EQ(budget.stats().in_use, 1U);
        EXPECT_EQ(wakes.count, 1);  // the refused client was woken by the release
    }
    const auto stats = budget.stats();
    EXPECT_EQ(stats.in_use, 0U);
    EXPECT_EQ(stats.peak_in_use, 2U);
    EXPECT_EQ(stats.granted, 2U);
    EXPECT_EQ(stats.refused, 1U);
}

TEST(ConnectionBudgetTest, PerHostLimitAcrossClients) {
    ConnectionBudget budget(10, 2);
    WakeCounter wakes_a;
    WakeCounter wakes_b;
    auto a = budget.join(wakes_a.function());
    auto b = budget.join(wakes_b.function());
    Token a1 = a.try_acquire("http://mirror:8080/x");
    Token b1 = b.try_acquire("http://MIRROR:8080/y");
    ASSERT_TRUE(a1);
    ASSERT_TRUE(b1);
    Token other = a.try_acquire("http://mirror:8081/z");  // another port is another host
    EXPECT_TRUE(other);
    EXPECT_FALSE(a.try_acquire("http://mirror:8080/z"));  // the host has its 2
    b1.reset();
    EXPECT_EQ(wakes_a.count, 1);
    Token a2 = a.try_acquire("http://mirror:8080/z");
    EXPECT_TRUE(a2);
    EXPECT_EQ(budget.stats().peak_per_host, 2U);
}

TEST(ConnectionBudgetTest, TwoClientsShareFairly) {
    ConnectionBudget budget(4);
    WakeCounter wakes_a;
    WakeCounter wakes_b;
    auto a = budget.join(wakes_a.function());
    std::vector<Token> held_a;
    for (int i = 0; i < 4; ++i) {
        held_a.push_back(a.try_acquire("http://h/"));
        ASSERT_TRUE(held_a.back());  // alone, a client may use the whole budget
    }
    auto b = budget.join(wakes_b.function());
    EXPECT_FALSE(b.try_acquire("http://h/"));
    held_a.pop_back();  // a transfer of A ends
    EXPECT_EQ(wakes_b.count, 1);
    // B waits and holds fewer: A may not take the free token back.
    EXPECT_FALSE(a.try_acquire("http://h/"));
    std::vector<Token> held_b;
    held_b.push_back(b.try_acquire("http://h/"));
    ASSERT_TRUE(held_b.back());
    EXPECT_GE(wakes_a.count, 1);  // A was held back for B: told when B got its token
    held_a.pop_back();
    held_b.push_back(b.try_acquire("http://h/"));
    ASSERT_TRUE(held_b.back());
    // 2 and 2, both want more: the budget is full.
    EXPECT_FALSE(a.try_acquire("http://h/"));
    EXPECT_FALSE(b.try_acquire("http://h/"));
    held_a.pop_back();  // A: 1, B: 2, both waiting; A holds fewer
    EXPECT_FALSE(b.try_acquire("http://h/"));
    held_a.push_back(a.try_acquire("http://h/"));
    ASSERT_TRUE(held_a.back());
    // A: 2, B: 2. B's transfer ends and B wants no more: while it still counts as waiting with
    // fewer tokens, A is held back; once it says so, A may use the idle token.
    held_b.pop_back();
    EXPECT_FALSE(a.try_acquire("http://h/"));
    b.stop_waiting();
    held_a.push_back(a.try_acquire("http://h/"));
    EXPECT_TRUE(held_a.back());
    EXPECT_EQ(budget.stats().peak_in_use, 4U);
}

TEST(ConnectionBudgetTest, ThreeClientsConvergeToTheFairShare) {
    // A holds the whole budget of 7 when B and C arrive. Each time a transfer of A ends, every
    // client tries to start one more (woken ones first): A must come down to ceil(7 / 3) = 3.
    ConnectionBudget budget(7);
    std::vector<ConnectionBudget::Client> clients;
    std::vector<std::vector<Token>> held(3);
    for (int i = 0; i < 3; ++i) {
        clients.push_back(budget.join({}));
    }
    for (int i = 0; i < 7; ++i) {
        held[0].push_back(clients[0].try_acquire("http://h/"));
        ASSERT_TRUE(held[0].back());
    }
    for (int round = 0; round < 20; ++round) {
        held[0].pop_back();              // A's transfers end one by one
        for (int c : {0, 1, 2, 1, 2}) {  // A first: the releasing client is the quickest
            if (Token token = clients[static_cast<std::size_t>(c)].try_acquire("http://h/")) {
                held[static_cast<std::size_t>(c)].push_back(std::move(token));
            }
        }
        EXPECT_EQ(held[0].size() + held[1].size() + held[2].size(), 7U);
        if (held[0].size() <= 3) {
            break;
        }
    }
    EXPECT_EQ(held[0].size(), 3U);
    EXPECT_EQ(held[1].size(), 2U);
    EXPECT_EQ(held[2].size(), 2U);
    // From now on, whoever finishes a transfer, nobody gets beyond 3.
    for (int round = 0; round < 30; ++round) {
        const auto ending = static_cast<std::size_t>(round % 3);
        held[ending].pop_back();
        for (int c : {0, 1, 2}) {
            if (Token token = clients[static_cast<std::size_t>(c)].try_acquire("http://h/")) {
                held[static_cast<std::size_t>(c)].push_back(std::move(token));
            }
        }
        for (const auto& tokens : held) {
            EXPECT_LE(tokens.size(), 3U);
        }
        EXPECT_EQ(held[0].size() + held[1].size() + held[2].size(), 7U);
    }
}

TEST(ConnectionBudgetTest, AClientWaitingOnAFullHostHoldsNobodyBack) {
    ConnectionBudget budget(4, 1);
    WakeCounter wakes_b;
    auto a = budget.join({});
    auto b = budget.join(wakes_b.function());
    Token on_x = a.try_acquire("http://x/");
    ASSERT_TRUE(on_x);
    EXPECT_FALSE(b.try_acquire("http://x/"));  // B (0 tokens) waits for host x
    Token on_y = a.try_acquire("http://y/");   // B could not use a token now: A goes on
    EXPECT_TRUE(on_y);
    on_x.reset();
    EXPECT_GE(wakes_b.count, 1);
    EXPECT_TRUE(b.try_acquire("http://x/"));
}

TEST(ConnectionBudgetTest, TokensMayOutliveTheirClient) {
    ConnectionBudget budget(2);
    WakeCounter wakes;
    auto waiting = budget.join(wakes.function());
    Token token;
    {
        auto client = budget.join({});
        token = client.try_acquire("http://h/");
        ASSERT_TRUE(token);
        EXPECT_EQ(budget.stats().clients, 2U);
    }
    EXPECT_EQ(budget.stats().clients, 1U);
    token.reset();
    EXPECT_EQ(budget.stats().in_use, 0U);
}

TEST(ConnectionBudgetTest, ManyThreadsNeverExceedTheLimits) {
    // 6 threads, each a client, each starting 300 short "transfers" on 3 hosts; a refused thread
    // sleeps on a condition variable until the budget wakes it (no polling, no timeout).
    constexpr unsigned kTotal = 5;
    constexpr unsigned kPerHost = 2;
    ConnectionBudget budget(kTotal, kPerHost);
    struct Waker {
        std::mutex mutex;
        std::condition_variable condition;
        bool woken = false;
    };
    std::vector<Waker> wakers(6);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < wakers.size(); ++t) {
        threads.emplace_back([&budget, &waker = wakers[t], t] {
            auto client = budget.join([&waker] {
                const std::lock_guard lock(waker.mutex);
                waker.woken = true;
                waker.condition.notify_one();
            });
            for (int i = 0; i < 300; ++i) {
                const std::string url =
                    "http://host" + std::to_string((t + static_cast<std::size_t>(i)) % 3) + "/f";
                Token token;
                for (;;) {
                    token = client.try_acquire(url);
                    if (token) {
                        break;
                    }
                    std::unique_lock lock(waker.mutex);
                    waker.condition.wait(lock, [&waker] { return waker.woken; });
                    waker.woken = false;
                }
                std::this_thread::yield();  // the "transfer"
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    const auto stats = budget.stats();
    EXPECT_EQ(stats.granted, 1800U);
    EXPECT_EQ(stats.in_use, 0U);
    EXPECT_EQ(stats.clients, 0U);
    EXPECT_LE(stats.peak_in_use, kTotal);
    EXPECT_LE(stats.peak_per_host, kPerHost);
}

}  // namespace
}  // namespace rpmirror
