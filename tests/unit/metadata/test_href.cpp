#include <gtest/gtest.h>

#include "metadata/metadata.hpp"

namespace rpmirror {
namespace {

// Returns the error message for `href`, or "" iff it was accepted.
std::string rejection(std::string_view href, const PathPolicy& policy = {}) {
    const auto result = safe_relative_path(href, "evil-1.0-1.x86_64", policy);
    if (result) {
        return {};
    }
    EXPECT_EQ(result.error().code, ErrorCode::Unsafe);
    EXPECT_EQ(result.error().subject, "evil-1.0-1.x86_64");
    return result.error().message;
}

TEST(Href, OrdinaryHrefsAreNormalizedRelativePaths) {
    const auto plain = safe_relative_path("Packages/b/bash-5.2-1.x86_64.rpm", "bash");
    ASSERT_TRUE(plain);
    EXPECT_EQ(*plain, std::filesystem::path("Packages/b/bash-5.2-1.x86_64.rpm"));
    const auto dotted = safe_relative_path("./Packages/x/../b/./bash.rpm", "bash");
    ASSERT_TRUE(dotted);
    EXPECT_EQ(*dotted, std::filesystem::path("Packages/b/bash.rpm"));
    EXPECT_TRUE(dotted->is_relative());
}

TEST(Href, LiteralSpecialCharactersArePlainFileNameBytes) {
    // hrefs are literal: '%' is a plain byte (never decoded), and so are + ^ ~ space.
    const auto encoded = safe_relative_path("Packages/%2e%2e%2f/x%2e%2e/%2e%2e%2e.rpm", "pkg");
    ASSERT_TRUE(encoded);
    EXPECT_EQ(*encoded, std::filesystem::path("Packages/%2e%2e%2f/x%2e%2e/%2e%2e%2e.rpm"));
    const auto odd = safe_relative_path("Packages/g++-12^git~1 %41.rpm", "g++");
    ASSERT_TRUE(odd);
    EXPECT_EQ(odd->filename(), "g++-12^git~1 %41.rpm");
}

TEST(Href, EachUnsafeFormIsRejectedWithItsReason) {
    EXPECT_EQ(rejection(""), "empty href");
    EXPECT_EQ(rejection("/etc/passwd"), "href '/etc/passwd' is an absolute path");
    EXPECT_EQ(rejection("../x.rpm"), "href '../x.rpm' escapes the repository root");
    EXPECT_EQ(rejection("Packages/../../x.rpm"),
              "href 'Packages/../../x.rpm' escapes the repository root");
    EXPECT_EQ(rejection(".."), "href '..' escapes the repository root");
    // "." and ".." spelled with percent-encoded dots are refused: no package is named so, and a
    // server or tool that decodes them would climb out.
    EXPECT_EQ(rejection("%2e%2e/%2E%2e/etc/passwd"),
              "href '%2e%2e/%2E%2e/etc/passwd' has a percent-encoded '.' or '..' segment");
    EXPECT_EQ(rejection("Packages/.%2e/x.rpm"),
              "href 'Packages/.%2e/x.rpm' has a percent-encoded '.' or '..' segment");
    EXPECT_EQ(rejection("Packages/%2e/x.rpm"),
              "href 'Packages/%2e/x.rpm' has a percent-encoded '.' or '..' segment");
    EXPECT_EQ(rejection("a//b.rpm"), "href 'a//b.rpm' has an empty path segment");
    EXPECT_EQ(rejection("Packages/"), "href 'Packages/' ends with '/'");
    EXPECT_EQ(rejection("."), "href '.' names the repository root, not a file");
    EXPECT_EQ(rejection("a/.."), "href 'a/..' names the repository root, not a file");
    EXPECT_EQ(rejection(std::string_view("a\0b.rpm", 7)), "href 'a\\x00b.rpm' contains a NUL byte");
    EXPECT_EQ(rejection("a\nb.rpm"), "href 'a\\x0ab.rpm' contains control character 0x0a");
    EXPECT_EQ(rejection("a\x7f.rpm"), "href 'a\\x7f.rpm' contains control character 0x7f");
    const std::string long_segment(256, 'n');
    // Messages show at most 200 bytes of the href.
    EXPECT_EQ(rejection("Packages/" + long_segment),
              "href 'Packages/" + std::string(191, 'n') +
                  "...' has a path segment longer than 255 bytes");
    EXPECT_TRUE(rejection("Packages/" + std::string(255, 'n')).empty());
    std::string long_path;
    while (long_path.size() <= kMaxPathBytes) {
        long_path += std::string(100, 'd') + "/";
    }
    long_path += "x.rpm";
    const std::string message = rejection(long_path);
    EXPECT_NE(message.find("...' is longer than 4096 bytes"), std::string::npos) << message;
}

TEST(Href, SafeWritePathAllowsTheAmazonLinuxBlobstoreLayout) {
    PathPolicy policy;
    policy.safe_write_path = "../../../../blobstore";
    const std::string href =
        "../../../../blobstore/" + std::string(64, 'f') + "/bash-5.2-1.amzn2023.x86_64.rpm";
    const auto allowed = safe_relative_path(href, "bash", policy);
    ASSERT_TRUE(allowed) << allowed.error().to_string();
    EXPECT_EQ(*allowed, std::filesystem::path(href));

    // Escapes beyond the safe write path are still refused.
    EXPECT_EQ(rejection("../../../../blobstore/../etc/passwd", policy),
              "href '../../../../blobstore/../etc/passwd' escapes the repository root and is not "
              "inside safe_write_path '../../../../blobstore'");
    EXPECT_FALSE(rejection("../../../../../blobstore/x.rpm", policy).empty());
    EXPECT_FALSE(rejection("../../../blobstore/x.rpm", policy).empty());
    EXPECT_FALSE(rejection("../../../../blobstore", policy).empty());  // the directory itself
    // Inside the repository is always fine.
    EXPECT_TRUE(rejection("Packages/x.rpm", policy).empty());
}

TEST(Href, PrefixOfADirectoryNameIsNotInsideIt) {
    // librepo's string-prefix test accepts /x/a2 for /x/a; components must be compared.
    PathPolicy relative;
    relative.safe_write_path = "../a";
    EXPECT_TRUE(rejection("../a/p.rpm", relative).empty());
    EXPECT_EQ(rejection("../a2/p.rpm", relative),
              "href '../a2/p.rpm' escapes the repository root and is not inside safe_write_path "
              "'../a'");

    PathPolicy absolute;
    absolute.repo_root = "/x/repo";
    absolute.safe_write_path = "/x/a";
    EXPECT_TRUE(rejection("../a/p.rpm", absolute).empty());
    EXPECT_FALSE(rejection("../a2/p.rpm", absolute).empty());
    EXPECT_FALSE(rejection("../../../../x/a/p.rpm", absolute).empty());  // above "/"
}

TEST(Href, AbsoluteSafeWritePathNeedsTheRepositoryRoot) {
    PathPolicy policy;
    policy.safe_write_path = "/x/a";
    EXPECT_FALSE(rejection("../a/p.rpm", policy).empty());
    policy.repo_root = "/x/r";
    EXPECT_TRUE(rejection("../a/p.rpm", policy).empty());
    EXPECT_TRUE(rejection("../r/../a/sub/p.rpm", policy).empty());
}

TEST(Href, DifferentClimbDepthsAreComparedOnlyWithAKnownRoot) {
    PathPolicy policy;
    policy.safe_write_path = "../../store";
    // "../x" lands in the root's parent; whether that is inside ../../store depends on names.
    EXPECT_FALSE(rejection("../x.rpm", policy).empty());
    policy.repo_root = "/srv/store/repo";  // root's parent is /srv/store == ../../store
    EXPECT_TRUE(rejection("../x.rpm", policy).empty());
    policy.repo_root = "/srv/other/repo";
    EXPECT_FALSE(rejection("../x.rpm", policy).empty());
}

TEST(Href, AnHrefClimbingBackIntoTheRootIsThePathInsideIt) {
    PathPolicy policy;
    // Unknown root: a climb cannot be told from an escape.
    EXPECT_FALSE(rejection("../x86_64/Packages/a.rpm", policy).empty());
    policy.repo_root = "/m/guids/G1/x86_64";
    for (const std::string_view href :
         {"../x86_64/Packages/a.rpm", "../../G1/x86_64/Packages/a.rpm",
          "../../../guids/G1/x86_64/Packages/a.rpm", "../x86_64/./Packages/b/../a.rpm"}) {
        const auto inside = safe_relative_path(href, "a", policy);
        ASSERT_TRUE(inside) << href << ": " << inside.error().to_string();
        EXPECT_EQ(*inside, std::filesystem::path("Packages/a.rpm")) << href;
    }
    // A sibling, a cousin, the root itself, or a climb above the filesystem root stay outside.
    EXPECT_FALSE(rejection("../aarch64/Packages/a.rpm", policy).empty());
    EXPECT_FALSE(rejection("../../G2/x86_64/Packages/a.rpm", policy).empty());
    EXPECT_FALSE(rejection("../x86_64", policy).empty());
    EXPECT_FALSE(rejection("../../../../../m/guids/G1/x86_64/a.rpm", policy).empty());
    // With a safe write path the same href is the file inside the root, not a blob beside it.
    policy.safe_write_path = "/m";
    const auto blob = safe_relative_path("../x86_64/Packages/a.rpm", "a", policy);
    ASSERT_TRUE(blob);
    EXPECT_EQ(*blob, std::filesystem::path("Packages/a.rpm"));
}

}  // namespace
}  // namespace rpmirror
