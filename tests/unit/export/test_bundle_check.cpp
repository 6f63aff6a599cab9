// import's chunk check and its resume record, kept in the memory store: a second run reads no
// chunk the record vouches for, a chunk changed since is read again (and refused by name), a
// damaged record costs only checking again, and a completed import forgets its record.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "checksum/hasher.hpp"
#include "export/bundle_check.hpp"
#include "fs/scratch_dir.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "store/object_store.hpp"

namespace rpmirror::bundle {
namespace {

class BundleCheck : public ::testing::Test {
  protected:
    void SetUp() override {
        auto made = ScratchDir::create("rpmirror-bundle-check");
        ASSERT_TRUE(made.has_value()) << made.error().to_string();
        dir_.emplace(std::move(*made));
        manifest_.name = "b1";
        for (const std::string name : {"chunk-000000", "chunk-000001"}) {
            const std::string bytes = "the bytes of " + name;
            write(name, bytes);
            manifest_.chunks.push_back(
                Chunk{name, bytes.size(), hash_bytes(ChecksumType::Sha256, bytes)});
        }
    }

    void write(const std::string& name, const std::string& bytes) {
        std::ofstream out(dir_->path() / name, std::ios::binary | std::ios::trunc);
        out << bytes;
        ASSERT_TRUE(out.good()) << name;
    }

    ImportReport check() {
        ImportReport report;
        auto checked = check_chunks(dir_->path(), manifest_, *records_, report);
        EXPECT_TRUE(checked.has_value()) << checked.error().to_string();
        return report;
    }

    std::optional<ScratchDir> dir_;
    Manifest manifest_;
    std::unique_ptr<store::ObjectStore> records_ = store::memory_object_store();
};

TEST_F(BundleCheck, ASecondRunReadsNoChunkTheRecordVouchesFor) {
    const ImportReport first = check();
    EXPECT_EQ(first.chunks_checked, 2U);
    EXPECT_EQ(first.chunks_resumed, 0U);
    auto listed = records_->list("");
    ASSERT_TRUE(listed.has_value()) << listed.error().to_string();
    ASSERT_EQ(listed->size(), 1U);
    EXPECT_TRUE(listed->begin()->first.starts_with("b1-")) << listed->begin()->first;

    const ImportReport second = check();
    EXPECT_EQ(second.chunks_checked, 0U);
    EXPECT_EQ(second.chunks_resumed, 2U);
}

TEST_F(BundleCheck, AChunkChangedSinceIsReadAgainAndRefusedByName) {
    (void)check();
    write("chunk-000001", "the bytes of chunk-000001, and more");
    ImportReport report;
    auto checked = check_chunks(dir_->path(), manifest_, *records_, report);
    ASSERT_FALSE(checked.has_value());
    EXPECT_EQ(checked.error().code, ErrorCode::Corrupt);
    EXPECT_NE(checked.error().to_string().find("chunk-000001"), std::string::npos)
        << checked.error().to_string();
    EXPECT_EQ(report.chunks_resumed, 1U);
}

TEST_F(BundleCheck, ADamagedRecordOnlyCostsCheckingAgain) {
    (void)check();
    auto listed = records_->list("");
    ASSERT_TRUE(listed.has_value() && listed->size() == 1U);
    ASSERT_TRUE(records_->put(listed->begin()->first, "{not json").has_value());
    const ImportReport again = check();
    EXPECT_EQ(again.chunks_checked, 2U);
    EXPECT_EQ(again.chunks_resumed, 0U);
}

TEST_F(BundleCheck, ACompletedImportForgetsItsRecord) {
    (void)check();
    forget_checked_chunks(dir_->path(), manifest_, *records_);
    auto listed = records_->list("");
    ASSERT_TRUE(listed.has_value()) << listed.error().to_string();
    EXPECT_TRUE(listed->empty());
    EXPECT_EQ(check().chunks_checked, 2U);
}

}  // namespace
}  // namespace rpmirror::bundle
