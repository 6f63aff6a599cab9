// The signature stage against keys, signatures and packages made in the test with gpg and rpmsign.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "integration/sync/sync_harness.hpp"
#include "rpmirror/signature.hpp"
#include "support/signing.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

using test::Signer;
using test::TempDir;
using test::test_keys;

class SignatureTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!test::signing_tools_available()) {
            GTEST_FAIL()
                << "/usr/bin/gpg or /usr/bin/rpmsign not found; scripts/deps installs them "
                   "(Debian packages gpg, rpm)";
        }
    }

    // A keyring holding the public keys of `signers`, each from its own file.
    static Keyring keyring_of(std::initializer_list<Signer> signers) {
        Keyring keyring;
        for (const Signer signer : signers) {
            const auto path = test_keys().key_file(signer);
            auto added = keyring.add_armored(test::read_file(path), path.string());
            EXPECT_TRUE(added) << added.error().to_string();
        }
        return keyring;
    }

    // Returns the armored detached signature of `data` by `signer`.
    std::string detached_signature(Signer signer, const std::string& data) {
        const auto file = tmp_.write("data", data);
        test_keys().sign_detached(signer, file, tmp_ / "data.asc");
        return test::read_file(tmp_ / "data.asc");
    }

    // A copy of the sample repository's smallest package, signed by `signer` (or unsigned).
    std::filesystem::path package(const std::string& name, std::optional<Signer> signer) {
        const auto path = tmp_ / (name + ".rpm");
        std::filesystem::copy_file(
            test::test_repo("sample-repo") / "Packages" / "rpmirror-sample-tiny-1.0-1.noarch.rpm",
            path);
        if (signer) {
            test_keys().sign_rpm(*signer, path);
        }
        return path;
    }

    TempDir tmp_;
};

TEST_F(SignatureTest, ArmoredFileWithSeveralKeysLoadsThemAll) {
    const std::string both = test::read_file(test_keys().key_file(Signer::Good)) +
                             test::read_file(test_keys().key_file(Signer::Other));
    Keyring keyring;
    ASSERT_TRUE(keyring.add_armored(both, "both.asc"));
    ASSERT_EQ(keyring.keys().size(), 2u);
    EXPECT_EQ(keyring.keys()[0].key_id, test_keys().key_id(Signer::Good));
    EXPECT_EQ(keyring.keys()[1].key_id, test_keys().key_id(Signer::Other));
    EXPECT_FALSE(keyring.keys()[0].expires);
    // Both are usable: a signature by the second one verifies.
    const std::string data = "repomd";
    EXPECT_TRUE(keyring.verify_detached(data, detached_signature(Signer::Other, data), "x"));
}

TEST_F(SignatureTest, TextWithoutKeyIsBadInput) {
    Keyring keyring;
    auto added = keyring.add_armored("<html>not found</html>", "http://x/key");
    ASSERT_FALSE(added);
    EXPECT_EQ(added.error().code, ErrorCode::BadInput);
    EXPECT_EQ(added.error().subject, "http://x/key");
}

TEST_F(SignatureTest, ExpiryIsReadFromTheKey) {
    const Keyring keyring = keyring_of({Signer::Expired});
    ASSERT_EQ(keyring.keys().size(), 1u);
    ASSERT_TRUE(keyring.keys()[0].expires);
    EXPECT_EQ(*keyring.keys()[0].expires, 1591012800);  // 2020-06-01T12:00:00Z (gpg: noon)
}

TEST_F(SignatureTest, GoodDetachedSignatureVerifies) {
    const std::string data = "<repomd>good</repomd>\n";
    const Keyring keyring = keyring_of({Signer::Good});
    auto verified = keyring.verify_detached(data, detached_signature(Signer::Good, data), "sig");
    EXPECT_TRUE(verified) << verified.error().to_string();
}

TEST_F(SignatureTest, ModifiedDataIsABadSignature) {
    const std::string data = "<repomd>good</repomd>\n";
    const std::string signature = detached_signature(Signer::Good, data);
    auto verified =
        keyring_of({Signer::Good}).verify_detached("<repomd>evil</repomd>\n", signature, "sig");
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::Corrupt);
    EXPECT_NE(verified.error().message.find("bad signature"), std::string::npos);
    EXPECT_EQ(verified.error().subject, "sig");
}

TEST_F(SignatureTest, SignatureByAnotherKeyNamesThatKey) {
    const std::string data = "data";
    auto verified = keyring_of({Signer::Good})
                        .verify_detached(data, detached_signature(Signer::Other, data), "sig");
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().message, "signed with key 0x" + test_keys().key_id(Signer::Other) +
                                            " which is not among the repository's gpgkey");
}

TEST_F(SignatureTest, SignatureByAnExpiredKeyIsRefused) {
    const std::string data = "data";
    auto verified = keyring_of({Signer::Good, Signer::Expired})
                        .verify_detached(data, detached_signature(Signer::Expired, data), "sig");
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::Unsafe);
    EXPECT_NE(verified.error().message.find("key 0x" + test_keys().key_id(Signer::Expired)),
              std::string::npos)
        << verified.error().message;
    EXPECT_NE(verified.error().message.find("expired on 2020-06-01"), std::string::npos)
        << verified.error().message;
}

TEST_F(SignatureTest, GarbageSignatureIsBadInput) {
    auto verified = keyring_of({Signer::Good}).verify_detached("data", "<html>404</html>", "sig");
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::BadInput);
}

TEST_F(SignatureTest, PackageSignedByARepositoryKeyVerifies) {
    const auto rpm = package("good", Signer::Good);
    auto verified = keyring_of({Signer::Other, Signer::Good}).verify_package(rpm);
    EXPECT_TRUE(verified) << verified.error().to_string();
}

TEST_F(SignatureTest, UnsignedPackageIsRefused) {
    const auto rpm = package("unsigned", std::nullopt);
    auto verified = keyring_of({Signer::Good}).verify_package(rpm);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().message, "not signed");
    EXPECT_EQ(verified.error().subject, rpm.string());
}

TEST_F(SignatureTest, PackageSignedByAnotherKeyNamesThatKey) {
    const auto rpm = package("other", Signer::Other);
    auto verified = keyring_of({Signer::Good}).verify_package(rpm);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().message, "signed with key 0x" + test_keys().key_id(Signer::Other) +
                                            " which is not among the repository's gpgkey");
}

TEST_F(SignatureTest, PackageSignedByAnExpiredKeyIsRefused) {
    const auto rpm = package("expired", Signer::Expired);
    auto verified = keyring_of({Signer::Expired}).verify_package(rpm);
    ASSERT_FALSE(verified);
    EXPECT_NE(verified.error().message.find("expired on 2020-06-01"), std::string::npos)
        << verified.error().message;
}

TEST_F(SignatureTest, PackageWithAModifiedPayloadIsABadSignature) {
    const auto rpm = package("corrupt", Signer::Good);
    // One byte near the end: inside the compressed payload, after the signed header.
    std::string bytes = test::read_file(rpm);
    bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x55);
    TempDir::write_at(rpm, bytes);
    auto verified = keyring_of({Signer::Good}).verify_package(rpm);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::Corrupt);
    EXPECT_NE(verified.error().message.find("bad signature"), std::string::npos)
        << verified.error().message;
}

TEST_F(SignatureTest, NotAPackageIsBadInput) {
    const auto path = tmp_.write("fake.rpm", std::string(4096, 'x'));
    auto verified = keyring_of({Signer::Good}).verify_package(path);
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().code, ErrorCode::BadInput);
}

TEST_F(SignatureTest, SymlinkedPackageIsNotFollowed) {
    const auto rpm = package("good", Signer::Good);
    std::filesystem::create_symlink(rpm, tmp_ / "link.rpm");
    auto verified = keyring_of({Signer::Good}).verify_package(tmp_ / "link.rpm");
    ASSERT_FALSE(verified);
    EXPECT_EQ(verified.error().sys_errno, ELOOP);
}

TEST_F(SignatureTest, PackagesVerifyOnManyThreadsAtOnce) {
    const auto good = package("good", Signer::Good);
    const auto other = package("other", Signer::Other);
    const Keyring keyring = keyring_of({Signer::Good});
    std::atomic<int> good_ok{0};
    std::atomic<int> other_refused{0};
    {
        std::vector<std::jthread> threads;
        for (int thread = 0; thread < 4; ++thread) {
            threads.emplace_back([&] {
                for (int round = 0; round < 10; ++round) {
                    good_ok += keyring.verify_package(good) ? 1 : 0;
                    other_refused += keyring.verify_package(other) ? 0 : 1;
                }
            });
        }
    }
    EXPECT_EQ(good_ok.load(), 40);
    EXPECT_EQ(other_refused.load(), 40);
}

TEST_F(SignatureTest, RepositoryWithoutGpgkeyIsAnError) {
    RepoConfig repo;
    repo.id = "signed";
    auto keys = load_repo_keys(repo, DownloadOptions{});
    ASSERT_FALSE(keys);
    EXPECT_EQ(keys.error().code, ErrorCode::BadInput);
    EXPECT_EQ(keys.error().subject, "signed");
}

TEST_F(SignatureTest, RepositoryKeysLoadFromFileUrls) {
    RepoConfig repo;
    repo.id = "signed";
    repo.gpgkeys = {"file://" + test_keys().key_file(Signer::Good).string(),
                    "file://" + test_keys().key_file(Signer::Expired).string()};
    auto keys = load_repo_keys(repo, DownloadOptions{});
    ASSERT_TRUE(keys) << keys.error().to_string();
    EXPECT_EQ(keys->keys().size(), 2u);
    repo.gpgkeys.push_back("file://" + (tmp_ / "missing.asc").string());
    keys = load_repo_keys(repo, DownloadOptions{});
    ASSERT_FALSE(keys);
    EXPECT_EQ(keys.error().code, ErrorCode::NotFound);
    EXPECT_NE(keys.error().to_string().find("missing.asc"), std::string::npos);
}

}  // namespace
}  // namespace rpmirror
