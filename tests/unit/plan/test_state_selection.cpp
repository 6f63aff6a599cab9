// The selection a sync records in its state file, read back as `verify` reads it.
#include <gtest/gtest.h>

#include "plan/plan.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

TEST(StateSelection, RecordedSelectionIsReadBackFieldByField) {
    test::TempDir tmp;
    SyncState state;
    state.repomd_sha256 = std::string(64, 'a');
    state.options_fingerprint = "v1";
    RecordedSelection recorded;
    recorded.options.arches = {"x86_64", "noarch"};
    recorded.options.newest_only = true;
    recorded.options.keep_versions = 3;
    recorded.options.include_globs = {"postgresql*"};
    recorded.options.exclude_globs = {"*-debuginfo"};
    recorded.options.min_build_time = 1199145600;
    recorded.modular = true;
    state.selection = recorded;
    const auto path = tmp / "state.json";
    ASSERT_TRUE(write_sync_state(path, state));

    const auto read = read_sync_state(path);
    ASSERT_TRUE(read);
    ASSERT_TRUE(read->selection);
    EXPECT_EQ(read->selection->options.arches, recorded.options.arches);
    EXPECT_FALSE(read->selection->options.source_only);
    EXPECT_TRUE(read->selection->options.newest_only);
    EXPECT_EQ(read->selection->options.keep_versions, 3U);
    EXPECT_EQ(read->selection->options.include_globs, recorded.options.include_globs);
    EXPECT_EQ(read->selection->options.exclude_globs, recorded.options.exclude_globs);
    EXPECT_EQ(read->selection->options.min_build_time, recorded.options.min_build_time);
    EXPECT_TRUE(read->selection->modular);
}

TEST(StateSelection, AStateWithoutASelectionReadsAsNone) {
    test::TempDir tmp;
    SyncState state;
    state.repomd_sha256 = std::string(64, 'a');
    const auto path = tmp / "state.json";
    ASSERT_TRUE(write_sync_state(path, state));
    const auto read = read_sync_state(path);
    ASSERT_TRUE(read);
    EXPECT_FALSE(read->selection);
}

// A state written before --keep-versions existed: its -n kept one version.
TEST(StateSelection, ASelectionWithoutKeepVersionsKeptOne) {
    test::TempDir tmp;
    const auto path =
        tmp.write("state.json",
                  R"({"version": 2, "repomd_sha256": "a", "options": "v1", "files": [],
            "selection": {"arches": [], "source": false, "newest_only": true, "include": [],
                          "exclude": [], "min_build_time": null, "modular": false}})");
    const auto read = read_sync_state(path);
    ASSERT_TRUE(read);
    ASSERT_TRUE(read->selection);
    EXPECT_TRUE(read->selection->options.newest_only);
    EXPECT_EQ(read->selection->options.keep_versions, 1U);
}

}  // namespace
}  // namespace rpmirror
