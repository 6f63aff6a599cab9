// The files of a repository as a bundle carries them, listed over the memory store: rpmirror's
// own files and temporaries left out, a directory without repodata/repomd.xml refused by name.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "export/repository_files.hpp"
#include "store/object_store.hpp"

namespace rpmirror::bundle {
namespace {

TEST(BundleRepositoryFiles, PublishedKeysLeaveOutHiddenSegments) {
    EXPECT_TRUE(is_published_key("Packages/a/foo.rpm"));
    EXPECT_TRUE(is_published_key("repodata/repomd.xml"));
    EXPECT_FALSE(is_published_key(".rpmirror/state.json"));
    EXPECT_FALSE(is_published_key("Packages/.foo.rpm.part"));
    EXPECT_FALSE(is_published_key(".repodata.tmp/primary.xml.gz"));
}

TEST(BundleRepositoryFiles, ListsTheRepositoryBelowItsPrefix) {
    auto store = store::memory_object_store();
    for (const char* key :
         {"base/repodata/repomd.xml", "base/Packages/a.rpm", "base/.rpmirror/state.json",
          "base/Packages/.b.rpm.part", "other/repodata/repomd.xml"}) {
        ASSERT_TRUE(store->put(key, std::string(key)).has_value()) << key;
    }
    auto files = list_repository(*store, "base");
    ASSERT_TRUE(files.has_value()) << files.error().to_string();
    std::vector<std::string> keys;
    for (const ListedFile& file : *files) {
        keys.push_back(file.key);
    }
    EXPECT_EQ(keys, (std::vector<std::string>{"Packages/a.rpm", "repodata/repomd.xml"}));
    EXPECT_EQ(files->front().size, std::string("base/Packages/a.rpm").size());
}

TEST(BundleRepositoryFiles, NoIndexIsNoRepository) {
    auto store = store::memory_object_store();
    ASSERT_TRUE(store->put("empty/Packages/a.rpm", "x").has_value());
    auto files = list_repository(*store, "empty");
    ASSERT_FALSE(files.has_value());
    EXPECT_NE(files.error().to_string().find("no repository here (no repodata/repomd.xml)"),
              std::string::npos)
        << files.error().to_string();
}

}  // namespace
}  // namespace rpmirror::bundle
