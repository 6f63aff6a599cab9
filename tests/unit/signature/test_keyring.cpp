// The signature stage against keys, signatures and packages made in the test with gpg and rpmsign.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "integration/sync/sync_harness.hpp"
#include "signature/signature.hpp"
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

TEST_F(SignatureTest, KeyThatExpiredAfterSigningIsAnErrorNotAVerdict) {
    const auto rpm = package("expired", Signer::Expired);  // signed 2020-03-01, expired 06-01
    auto checked = keyring_of({Signer::Expired}).check_package(rpm);
    ASSERT_FALSE(checked);
    EXPECT_EQ(checked.error().subject, rpm.string());
    EXPECT_NE(checked.error().message.find("expired on 2020-06-01, after it signed (2020-03-01)"),
              std::string::npos)
        << checked.error().message;
}

TEST_F(SignatureTest, KeyThatExpiredBeforeSigningIsAVerdict) {
    const auto rpm = package("lapsed", Signer::Lapsed);  // expired 2020-06-01, signed 2021-01-01
    auto checked = keyring_of({Signer::Lapsed}).check_package(rpm);
    ASSERT_TRUE(checked) << checked.error().to_string();
    ASSERT_TRUE(*checked);
    EXPECT_EQ((*checked)->kind, PackageRejection::KeyExpired);
    EXPECT_NE(
        (*checked)->error.message.find("expired on 2020-06-01, before it signed (2021-01-01)"),
        std::string::npos)
        << (*checked)->error.message;
}

TEST_F(SignatureTest, RevokedKeyIsAVerdict) {
    const auto rpm = package("revoked", Signer::Revoked);
    auto checked = keyring_of({Signer::Revoked}).check_package(rpm);
    ASSERT_TRUE(checked) << checked.error().to_string();
    ASSERT_TRUE(*checked);
    EXPECT_EQ((*checked)->kind, PackageRejection::KeyRevoked);
    EXPECT_NE((*checked)->error.message.find("is revoked"), std::string::npos);
}

TEST_F(SignatureTest, EachDefiniteFailureIsItsOwnVerdict) {
    const Keyring keyring = keyring_of({Signer::Good});
    const auto kind_of = [&keyring](const std::filesystem::path& rpm) {
        auto checked = keyring.check_package(rpm);
        EXPECT_TRUE(checked) << checked.error().to_string();
        EXPECT_TRUE(checked && *checked);
        return checked && *checked ? (*checked)->kind : PackageRejection::NotAPackage;
    };
    EXPECT_EQ(kind_of(package("unsigned", std::nullopt)), PackageRejection::NotSigned);
    EXPECT_EQ(kind_of(package("other", Signer::Other)), PackageRejection::UnknownKey);
    const auto corrupt = package("corrupt", Signer::Good);
    std::string bytes = test::read_file(corrupt);
    bytes[bytes.size() - 100] = static_cast<char>(bytes[bytes.size() - 100] ^ 0x55);
    TempDir::write_at(corrupt, bytes);
    EXPECT_EQ(kind_of(corrupt), PackageRejection::BadSignature);
    // A changed payload is what dnf reports first, whatever the signature (rpmkeys: BAD).
    for (const std::optional<Signer> signer :
         {std::optional<Signer>(Signer::Other), std::optional<Signer>()}) {
        const auto changed = package(signer ? "changed-other" : "changed-unsigned", signer);
        std::string changed_bytes = test::read_file(changed);
        changed_bytes[changed_bytes.size() - 100] =
            static_cast<char>(changed_bytes[changed_bytes.size() - 100] ^ 0x55);
        TempDir::write_at(changed, changed_bytes);
        EXPECT_EQ(kind_of(changed), PackageRejection::BadSignature) << changed;
    }
    EXPECT_EQ(kind_of(tmp_.write("fake.rpm", std::string(4096, 'x'))),
              PackageRejection::NotAPackage);
    auto good = keyring.check_package(package("good", Signer::Good));
    ASSERT_TRUE(good) << good.error().to_string();
    EXPECT_FALSE(*good);
}

TEST_F(SignatureTest, DnfWordsEveryVerdictAsDnfDoes) {
    const std::string name = "foo-1.0-1.noarch.rpm";
    EXPECT_EQ(dnf_rejection_message(PackageRejection::NotSigned, name),
              "Package foo-1.0-1.noarch.rpm is not signed");
    EXPECT_EQ(dnf_rejection_message(PackageRejection::UnknownKey, name),
              "Public key for foo-1.0-1.noarch.rpm is not installed");
    EXPECT_EQ(dnf_rejection_message(PackageRejection::BadSignature, name),
              "Problem opening package foo-1.0-1.noarch.rpm");
    EXPECT_EQ(dnf_rejection_message(PackageRejection::NotAPackage, name),
              "Problem opening package foo-1.0-1.noarch.rpm");
    EXPECT_EQ(dnf_rejection_message(PackageRejection::KeyRevoked, name),
              "Public key for foo-1.0-1.noarch.rpm is not trusted");
    EXPECT_EQ(dnf_rejection_message(PackageRejection::KeyExpired, name),
              "Public key for foo-1.0-1.noarch.rpm is not trusted");
}

// Runs as root too: a directory opens read-only, and reading it fails with EISDIR.
TEST_F(SignatureTest, UnreadableFileIsAnIoErrorNotAVerdict) {
    std::filesystem::create_directory(tmp_ / "dir.rpm");
    auto checked = keyring_of({Signer::Good}).check_package(tmp_ / "dir.rpm");
    ASSERT_FALSE(checked);
    EXPECT_EQ(checked.error().code, ErrorCode::Io);
    EXPECT_EQ(checked.error().sys_errno, EISDIR);
    EXPECT_EQ(checked.error().subject, (tmp_ / "dir.rpm").string());
}

TEST_F(SignatureTest, TooManyOpenFilesIsAnErrorNotAVerdict) {
    const auto rpm = package("good", Signer::Good);
    const Keyring keyring = keyring_of({Signer::Good});
    // In a child whose descriptor limit is what it already has open: the next open is EMFILE.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        const int lowest_free = ::dup(0);
        ::close(lowest_free);
        const rlimit limit{static_cast<rlim_t>(lowest_free), static_cast<rlim_t>(lowest_free)};
        if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
            ::_exit(3);
        }
        auto checked = keyring.check_package(rpm);
        ::_exit(!checked && checked.error().code == ErrorCode::Io &&
                        checked.error().sys_errno == EMFILE
                    ? 0
                : checked ? 1
                          : 2);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a verdict, 2: another error, 3: setrlimit failed";
}

TEST_F(SignatureTest, InstalledKeysAreTheKeysImportedInTheRpmDatabaseOfTheRoot) {
    const auto root = tmp_ / "root";
    std::filesystem::create_directories(root);
    test::run_checked({"rpmkeys", "--root", root.string(), "--import",
                       test_keys().key_file(Signer::Good).string(), "--import",
                       test_keys().key_file(Signer::Revoked).string()},
                      tmp_ / "logs");
    auto keys = load_installed_keys(root);
    ASSERT_TRUE(keys) << keys.error().to_string();
    std::vector<std::string> ids;
    for (const SigningKey& key : keys->keys()) {
        ids.push_back(key.key_id);
        EXPECT_NE(key.source.find("in the rpm database of " + root.string()), std::string::npos)
            << key.source;
    }
    std::sort(ids.begin(), ids.end());
    std::vector<std::string> expected{test_keys().key_id(Signer::Good),
                                      test_keys().key_id(Signer::Revoked)};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(ids, expected);

    EXPECT_TRUE(keys->verify_package(package("good", Signer::Good)));
    auto other = keys->check_package(package("other", Signer::Other));
    ASSERT_TRUE(other && *other);
    EXPECT_EQ((*other)->kind, PackageRejection::UnknownKey);
    EXPECT_EQ((*other)->error.message,
              "signed with key 0x" + test_keys().key_id(Signer::Other) +
                  " which is not among the keys imported in the rpm database of " + root.string());
    // The rpm database keeps the revocation: rpm 4.18 would accept the signature, rpmirror not.
    auto revoked = keys->check_package(package("revoked", Signer::Revoked));
    ASSERT_TRUE(revoked && *revoked);
    EXPECT_EQ((*revoked)->kind, PackageRejection::KeyRevoked);
}

TEST_F(SignatureTest, RootWithoutAnRpmDatabaseTrustsNoKey) {
    auto keys = load_installed_keys(tmp_.path());
    ASSERT_TRUE(keys) << keys.error().to_string();
    EXPECT_TRUE(keys->empty());
    auto checked = keys->check_package(package("good", Signer::Good));
    ASSERT_TRUE(checked && *checked);
    EXPECT_EQ((*checked)->kind, PackageRejection::UnknownKey);
}

TEST_F(SignatureTest, MissingInstallrootTrustsNoKey) {
    // dnf creates a missing installroot, whose empty rpm database trusts nothing.
    auto keys = load_installed_keys(tmp_ / "missing");
    ASSERT_TRUE(keys) << keys.error().to_string();
    auto checked = keys->check_package(package("good", Signer::Good));
    ASSERT_TRUE(checked && *checked);
    EXPECT_EQ((*checked)->kind, PackageRejection::UnknownKey);
}

TEST_F(SignatureTest, InstallrootThatIsAFileIsNotFound) {
    test::TempDir::write_at(tmp_ / "file", "x");
    auto keys = load_installed_keys(tmp_ / "file");
    ASSERT_FALSE(keys);
    EXPECT_EQ(keys.error().code, ErrorCode::NotFound);
    EXPECT_EQ(keys.error().subject, (tmp_ / "file").string());
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
