// --shard K/N: parsing, and the split of jobs by name (deterministic, complete, disjoint).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "jobs/jobs_config.hpp"
#include "rpmirror/jobs/jobs.hpp"

namespace rpmirror {
namespace {

TEST(Shard, ParsesKOfN) {
    auto shard = parse_shard("2/5", "--shard");
    ASSERT_TRUE(shard) << shard.error().to_string();
    EXPECT_EQ(shard->index, 2U);
    EXPECT_EQ(shard->count, 5U);
    EXPECT_EQ(shard->to_string(), "2/5");
    auto single = parse_shard("1/1", "--shard");
    ASSERT_TRUE(single);
    EXPECT_EQ(single->count, 1U);
}

TEST(Shard, InvalidValueIsBadInputNamingIt) {
    for (const char* text : {"", "3", "0/2", "3/2", "1/0", "a/b", "1/2/3", "-1/2", " 1/2", "1/2 ",
                             "1/99999999999", "1/65537"}) {
        auto shard = parse_shard(text, "--shard");
        ASSERT_FALSE(shard) << text;
        EXPECT_EQ(shard.error().code, ErrorCode::BadInput);
        const std::string message = shard.error().to_string();
        EXPECT_NE(message.find("--shard"), std::string::npos) << message;
        EXPECT_NE(message.find("'" + std::string(text) + "'"), std::string::npos) << message;
        EXPECT_NE(message.find("K/N"), std::string::npos) << message;
    }
}

// The split is a fixed function of the name: these values were computed by an independent
// implementation (Python: hashlib.sha256 + the jump consistent hash) and must never change, or
// workers of different versions would run a job twice or not at all.
TEST(Shard, SplitIsAFixedFunctionOfTheName) {
    const std::map<std::string, std::vector<unsigned>> expected = {
        // name -> shard for N = 1, 2, 3, 4, 7, 100
        {"fedora", {1, 2, 2, 2, 7, 60}}, {"updates", {1, 2, 2, 2, 2, 82}},
        {"epel", {1, 1, 3, 3, 3, 30}},   {"a", {1, 2, 2, 2, 2, 51}},
        {"b", {1, 1, 1, 4, 6, 26}},      {"alpha", {1, 1, 3, 3, 3, 3}},
    };
    const unsigned counts[] = {1, 2, 3, 4, 7, 100};
    for (const auto& [name, shards] : expected) {
        for (std::size_t i = 0; i < shards.size(); ++i) {
            EXPECT_EQ(shard_of(name, counts[i]), shards[i]) << name << " of " << counts[i];
        }
    }
}

TEST(Shard, EveryJobRunsExactlyOnceForEveryN) {
    std::vector<std::string> names;
    for (int index = 0; index < 200; ++index) {
        names.push_back("repo-" + std::to_string(index));
    }
    for (unsigned count = 1; count <= 12; ++count) {
        std::map<std::string, unsigned> runs;
        std::vector<std::size_t> per_worker(count + 1, 0);
        for (unsigned worker = 1; worker <= count; ++worker) {
            for (const std::string& name : names) {
                if (in_shard(name, Shard{worker, count})) {
                    ++runs[name];
                    ++per_worker[worker];
                }
            }
        }
        for (const std::string& name : names) {
            EXPECT_EQ(runs[name], 1U) << name << " with N = " << count;
        }
        // Spread: no worker is left idle with 200 names (a hash mod-2 parity trap would show).
        for (unsigned worker = 1; worker <= count; ++worker) {
            EXPECT_GT(per_worker[worker], 0U) << worker << "/" << count;
        }
    }
}

TEST(Shard, AddingAWorkerMovesJobsOnlyToTheNewWorker) {
    for (unsigned count = 1; count < 10; ++count) {
        for (int index = 0; index < 100; ++index) {
            const std::string name = "job" + std::to_string(index);
            const unsigned before = shard_of(name, count);
            const unsigned after = shard_of(name, count + 1);
            EXPECT_TRUE(after == before || after == count + 1) << name;
        }
    }
}

}  // namespace
}  // namespace rpmirror
