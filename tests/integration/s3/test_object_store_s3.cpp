// The ObjectStore contract (tests/unit/store/object_store_contract.hpp) against a prefix in a
// bucket of the suite's Ceph RADOS Gateway: the same assertions the memory and disk stores pass.
#include <gtest/gtest.h>

#include <atomic>

#include "integration/s3/ceph_fixture.hpp"
#include "s3/config.hpp"
#include "unit/store/object_store_contract.hpp"

namespace rpmirror::test {
namespace {

// The cluster of the S3 suite (CephS3Test's), for a factory.
struct Cluster : CephS3Test {
    using CephS3Test::bucket_name;
    using CephS3Test::cluster;
    void TestBody() override {}
};

// A bucket of its own per test, under a prefix (keys are relative to it), emptied and deleted
// afterwards.
struct BucketUnderTest final : StoreUnderTest {
    BucketUnderTest() : client(Cluster::cluster().config()) {
        static std::atomic<int> counter{0};
        bucket = Cluster::bucket_name("objects-" + std::to_string(::getpid()) + "-" +
                                      std::to_string(counter++));
        auto created = client.create_bucket(bucket);
        if (!created) {
            throw std::runtime_error(created.error().to_string());
        }
        objects = store::s3_object_store(Cluster::cluster().config(),
                                         s3::S3Location{bucket, "mirror/root/"});
        other_bucket = bucket + "-other";
        if (auto made = client.create_bucket(other_bucket); !made) {
            throw std::runtime_error(made.error().to_string());
        }
        elsewhere = store::s3_object_store(Cluster::cluster().config(),
                                           s3::S3Location{other_bucket, "live/root/"});
    }
    ~BucketUnderTest() override {
        for (const std::string& name : {bucket, other_bucket}) {
            if (auto listed = client.list_all_objects(name, "")) {
                std::vector<std::string> keys;
                for (const auto& object : *listed) {
                    keys.push_back(object.key);
                }
                if (!keys.empty()) {
                    (void)client.delete_objects(name, keys);
                }
            }
            (void)client.delete_bucket(name);
        }
    }
    store::ObjectStore& store() override { return *objects; }
    store::ObjectStore* other() override { return elsewhere.get(); }

    s3::S3Client client;
    std::string bucket;
    std::string other_bucket;
    std::unique_ptr<store::ObjectStore> objects;
    std::unique_ptr<store::ObjectStore> elsewhere;
};

INSTANTIATE_TEST_SUITE_P(Bucket, ObjectStoreContract,
                         ::testing::Values(StoreFactory{
                             "s3", [] { return std::make_unique<BucketUnderTest>(); }}),
                         store_name);

}  // namespace
}  // namespace rpmirror::test
