#include <gtest/gtest.h>

#include "config/repo_files.hpp"
#include "config_test_support.hpp"
#include "rpmirror/config/config.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

using test::count_warnings;
using test::fedora_vars;
using test::repo_ids;

// Writes `text` as `name` in `dir` and reads it back with read_repo_file.
Result<std::vector<RepoConfig>> read_text(const test::TempDir& dir, std::string_view text,
                                          std::vector<ConfigWarning>& warnings,
                                          std::string_view name = "test.repo") {
    return read_repo_file(dir.write(name, text), fedora_vars(), warnings);
}

// Reads a one-repo file whose [r] section holds `body`; fails the test on error.
RepoConfig read_one(const test::TempDir& dir, std::string_view body) {
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir, "[r]\nbaseurl=http://127.0.0.1/r/\n" + std::string(body), warnings);
    EXPECT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE(warnings.empty()) << warnings.front().to_string();
    if (!repos || repos->size() != 1) {
        ADD_FAILURE() << "expected exactly one repo";
        return RepoConfig{};
    }
    return repos->front();
}

// Returns the error of a one-repo file whose [r] section holds `body` on its line 2.
std::string error_of(const test::TempDir& dir, std::string_view body) {
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir, "[r]\n" + std::string(body), warnings);
    if (repos) {
        ADD_FAILURE() << "expected an error for: " << body;
        return {};
    }
    EXPECT_EQ(repos.error().code, ErrorCode::BadInput);
    return repos.error().to_string();
}

TEST(RepoFile, EveryHonouredKeyIsParsed) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir,
                           "[full]\n"
                           "name=Full $releasever\n"
                           "baseurl=http://127.0.0.1/a/$basearch/ http://127.0.0.1/b/\n"
                           "mirrorlist=http://127.0.0.1/mirrors?r=$releasever\n"
                           "metalink=http://127.0.0.1/metalink?arch=$basearch\n"
                           "enabled=0\n"
                           "gpgcheck=1\n"
                           "repo_gpgcheck=yes\n"
                           "gpgkey=file:///k1,file:///k2-$releasever\n"
                           "sslverify=off\n"
                           "sslcacert=/etc/pki/ca.pem\n"
                           "sslclientcert=/etc/pki/client.pem\n"
                           "sslclientkey=/etc/pki/client.key\n"
                           "proxy=http://127.0.0.1:3128\n"
                           "proxy_username=pu\n"
                           "proxy_password=pp\n"
                           "username=u\n"
                           "password=p@ss word\n"
                           "includepkgs=bash* coreutils\n"
                           "excludepkgs=kernel*,glibc-devel\n"
                           "max_parallel_downloads=7\n"
                           "max_downloads_per_mirror=2\n"
                           "throttle=1.5M\n"
                           "bandwidth=10M\n"
                           "minrate=2k\n"
                           "timeout=2m\n"
                           "retries=0\n"
                           "user_agent=rpmirror-test/1\n"
                           "ip_resolve=ipv6\n"
                           "skip_if_unavailable=true\n"
                           "type=rpm-md\n",
                           warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE(warnings.empty());
    ASSERT_EQ(repos->size(), 1u);
    const RepoConfig& repo = repos->front();
    EXPECT_EQ(repo.id, "full");
    EXPECT_EQ(repo.name, "Full 40");
    EXPECT_EQ(repo.baseurls,
              (std::vector<std::string>{"http://127.0.0.1/a/x86_64/", "http://127.0.0.1/b/"}));
    EXPECT_EQ(repo.mirrorlist, "http://127.0.0.1/mirrors?r=40");
    EXPECT_EQ(repo.metalink, "http://127.0.0.1/metalink?arch=x86_64");
    EXPECT_FALSE(repo.enabled);
    EXPECT_TRUE(repo.gpgcheck);
    EXPECT_TRUE(repo.repo_gpgcheck);
    EXPECT_EQ(repo.gpgkeys, (std::vector<std::string>{"file:///k1", "file:///k2-40"}));
    EXPECT_FALSE(repo.sslverify);
    EXPECT_EQ(repo.sslcacert, "/etc/pki/ca.pem");
    EXPECT_EQ(repo.sslclientcert, "/etc/pki/client.pem");
    EXPECT_EQ(repo.sslclientkey, "/etc/pki/client.key");
    EXPECT_EQ(repo.proxy, "http://127.0.0.1:3128");
    EXPECT_EQ(repo.proxy_username, "pu");
    EXPECT_EQ(repo.proxy_password, "pp");
    EXPECT_EQ(repo.username, "u");
    EXPECT_EQ(repo.password, "p@ss word");
    EXPECT_EQ(repo.includepkgs, (std::vector<std::string>{"bash*", "coreutils"}));
    EXPECT_EQ(repo.excludepkgs, (std::vector<std::string>{"kernel*", "glibc-devel"}));
    EXPECT_EQ(repo.max_parallel_downloads, 7u);
    EXPECT_EQ(repo.max_downloads_per_mirror, 2u);
    EXPECT_EQ(repo.throttle_bytes_per_second, 1572864u);
    EXPECT_FALSE(repo.throttle_percent);
    EXPECT_EQ(repo.bandwidth_bytes_per_second, 10485760u);
    EXPECT_EQ(repo.minrate_bytes_per_second, 2048u);
    EXPECT_EQ(repo.timeout_seconds, 120u);
    EXPECT_EQ(repo.retries, 0u);
    EXPECT_EQ(repo.user_agent, "rpmirror-test/1");
    EXPECT_EQ(repo.ip_resolve, IpResolve::V6);
    EXPECT_TRUE(repo.skip_if_unavailable);
    EXPECT_EQ(repo.defined_at.file, (dir / "test.repo").string());
    EXPECT_EQ(repo.defined_at.line, 1u);
}

TEST(RepoFile, DefaultsAreDnfsAndNameDefaultsToId) {
    test::TempDir dir;
    const RepoConfig repo = read_one(dir, "");
    EXPECT_EQ(repo.name, "r");
    EXPECT_TRUE(repo.enabled);
    EXPECT_FALSE(repo.gpgcheck);
    EXPECT_FALSE(repo.repo_gpgcheck);
    EXPECT_TRUE(repo.sslverify);
    EXPECT_FALSE(repo.proxy);
    EXPECT_FALSE(repo.max_parallel_downloads);
    EXPECT_FALSE(repo.max_downloads_per_mirror);
    EXPECT_FALSE(repo.throttle_bytes_per_second);
    EXPECT_FALSE(repo.throttle_percent);
    EXPECT_FALSE(repo.bandwidth_bytes_per_second);
    EXPECT_EQ(repo.minrate_bytes_per_second, 1000u);
    EXPECT_EQ(repo.timeout_seconds, 30u);
    EXPECT_EQ(repo.retries, 10u);
    EXPECT_EQ(repo.ip_resolve, IpResolve::Any);
    EXPECT_FALSE(repo.skip_if_unavailable);
    EXPECT_FALSE(repo.mirrorlist);
    EXPECT_FALSE(repo.metalink);
}

TEST(RepoFile, ListsSplitOnCommasSpacesAndContinuationLines) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir,
                           "[r]\n"
                           "baseurl=http://127.0.0.1/1/, http://127.0.0.1/2/\n"
                           "  http://127.0.0.1/3/\n"
                           "\thttp://127.0.0.1/4/,,http://127.0.0.1/5/\n"
                           "gpgkey = file:///a\n"
                           "    file:///b\n"
                           "exclude=a  b,c\n",
                           warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    const RepoConfig& repo = repos->front();
    EXPECT_EQ(repo.baseurls, (std::vector<std::string>{"http://127.0.0.1/1/", "http://127.0.0.1/2/",
                                                       "http://127.0.0.1/3/", "http://127.0.0.1/4/",
                                                       "http://127.0.0.1/5/"}));
    EXPECT_EQ(repo.gpgkeys, (std::vector<std::string>{"file:///a", "file:///b"}));
    EXPECT_EQ(repo.excludepkgs, (std::vector<std::string>{"a", "b", "c"}));  // `exclude` alias
}

TEST(RepoFile, CommentedOutLinesAreNotRead) {
    test::TempDir dir;
    const RepoConfig repo = read_one(dir, "#enabled=0\n;gpgcheck=1\nname=Named\n");
    EXPECT_TRUE(repo.enabled);
    EXPECT_FALSE(repo.gpgcheck);
    EXPECT_EQ(repo.name, "Named");
}

TEST(RepoFile, EveryBooleanSpellingInAnyCase) {
    test::TempDir dir;
    const std::pair<const char*, bool> spellings[] = {
        {"1", true},      {"0", false},     {"yes", true},  {"no", false},  {"true", true},
        {"false", false}, {"on", true},     {"off", false}, {"YES", true},  {"No", false},
        {"True", true},   {"FALSE", false}, {"On", true},   {"OFF", false},
    };
    for (const auto& [text, expected] : spellings) {
        SCOPED_TRACE(text);
        const std::string value(text);
        const RepoConfig repo =
            read_one(dir, "enabled=" + value + "\ngpgcheck=" + value + "\nrepo_gpgcheck=" + value +
                              "\nsslverify=" + value + "\nskip_if_unavailable=" + value + "\n");
        EXPECT_EQ(repo.enabled, expected);
        EXPECT_EQ(repo.gpgcheck, expected);
        EXPECT_EQ(repo.repo_gpgcheck, expected);
        EXPECT_EQ(repo.sslverify, expected);
        EXPECT_EQ(repo.skip_if_unavailable, expected);
    }
    EXPECT_EQ(parse_config_bool("y"), std::nullopt);
    EXPECT_EQ(parse_config_bool(""), std::nullopt);
}

TEST(RepoFile, BadBooleanNamesFileLineKeyAndValue) {
    test::TempDir dir;
    EXPECT_EQ(error_of(dir, "name=x\nenabled=maybe\n"),
              (dir / "test.repo").string() +
                  ": line 3: invalid boolean 'maybe' for key 'enabled' (expected 1/0, yes/no, "
                  "true/false, on/off)");
    EXPECT_EQ(error_of(dir, "gpgcheck=\n"),
              (dir / "test.repo").string() +
                  ": line 2: invalid boolean '' for key 'gpgcheck' (expected 1/0, yes/no, "
                  "true/false, on/off)");
}

TEST(RepoFile, UnknownKeyIsAWarningNamingFileLineAndKey) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos =
        read_text(dir, "[r]\nbaseurl=http://127.0.0.1/\nbaseurll=typo\ncountme=1\n", warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0].kind, ConfigWarningKind::UnknownKey);
    EXPECT_EQ(warnings[0].where.file, (dir / "test.repo").string());
    EXPECT_EQ(warnings[0].where.line, 3u);
    EXPECT_EQ(warnings[0].key, "baseurll");
    EXPECT_EQ(warnings[0].to_string(),
              (dir / "test.repo").string() + ":3: unknown key 'baseurll' in repo 'r'; ignored");
    EXPECT_EQ(warnings[1].kind, ConfigWarningKind::IgnoredKey);
    EXPECT_EQ(warnings[1].key, "countme");
    EXPECT_EQ(warnings[1].where.line, 4u);
    EXPECT_EQ(repos->front().baseurls, std::vector<std::string>{"http://127.0.0.1/"});
}

TEST(RepoFile, PriorityAndCostAreReadAndCheckedAsDnfDoes) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir,
                           "[r]\nbaseurl=http://127.0.0.1/\npriority=5\ncost=300\n[s]\n"
                           "baseurl=http://127.0.0.1/\n",
                           warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ((*repos)[0].priority, 5);
    EXPECT_EQ((*repos)[0].cost, 300);
    EXPECT_EQ((*repos)[1].priority, 99);  // dnf's defaults
    EXPECT_EQ((*repos)[1].cost, 1000);
    for (const char* bad : {"priority=0", "priority=100", "priority=high", "cost=-1"}) {
        auto refused =
            read_text(dir, std::string("[r]\nbaseurl=http://127.0.0.1/\n") + bad + "\n", warnings);
        ASSERT_FALSE(refused) << bad;
        EXPECT_EQ(refused.error().code, ErrorCode::BadInput) << bad;
        EXPECT_NE(refused.error().to_string().find("line 3: invalid value"), std::string::npos)
            << refused.error().to_string();
    }
}

TEST(RepoFile, DuplicateIdInOneFileNamesBothLines) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(
        dir, "[a]\nbaseurl=http://127.0.0.1/1/\n\n[a]\nbaseurl=http://127.0.0.1/2/\n", warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().code, ErrorCode::BadInput);
    const std::string file = (dir / "test.repo").string();
    EXPECT_EQ(repos.error().to_string(),
              file + ": line 4: repo id 'a' is already defined at " + file + ":1");
}

TEST(RepoFile, DuplicateKeyWarnsAndTheLaterValueWins) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir,
                           "[r]\nbaseurl=http://127.0.0.1/old/\nbaseurl=http://127.0.0.1/new/"
                           "\nexclude=a\nexcludepkgs=b\n",
                           warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repos->front().baseurls, std::vector<std::string>{"http://127.0.0.1/new/"});
    EXPECT_EQ(repos->front().excludepkgs, std::vector<std::string>{"b"});
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0].kind, ConfigWarningKind::DuplicateKey);
    EXPECT_EQ(warnings[0].where.line, 3u);
    EXPECT_EQ(warnings[1].kind, ConfigWarningKind::DuplicateKey);
    EXPECT_EQ(warnings[1].key, "excludepkgs");
}

TEST(RepoFile, ThrottleTakesBytesWithSuffixesOrAPercent) {
    test::TempDir dir;
    EXPECT_EQ(read_one(dir, "throttle=100\n").throttle_bytes_per_second, 100u);
    EXPECT_EQ(read_one(dir, "throttle=2k\n").throttle_bytes_per_second, 2048u);
    EXPECT_EQ(read_one(dir, "throttle=3M\n").throttle_bytes_per_second, 3u * 1024 * 1024);
    EXPECT_EQ(read_one(dir, "throttle=1g\n").throttle_bytes_per_second, 1024u * 1024 * 1024);
    const RepoConfig percent = read_one(dir, "throttle=50%\nbandwidth=1M\n");
    EXPECT_EQ(percent.throttle_percent, 50.0);
    EXPECT_FALSE(percent.throttle_bytes_per_second);
    EXPECT_EQ(percent.bandwidth_bytes_per_second, 1048576u);
    const RepoConfig unlimited = read_one(dir, "throttle=0\nbandwidth=0\n");
    EXPECT_FALSE(unlimited.throttle_bytes_per_second);
    EXPECT_FALSE(unlimited.throttle_percent);
    EXPECT_FALSE(unlimited.bandwidth_bytes_per_second);
    EXPECT_EQ(error_of(dir, "throttle=fast\n"),
              (dir / "test.repo").string() +
                  ": line 2: invalid value 'fast' for key 'throttle' (expected bytes per second "
                  "with an optional k, M or G suffix, or a percentage such as 50%)");
    EXPECT_NE(error_of(dir, "throttle=150%\n").find("'150%'"), std::string::npos);
    EXPECT_NE(error_of(dir, "throttle=-1\n").find("'-1'"), std::string::npos);
    EXPECT_NE(error_of(dir, "bandwidth=1T\n").find("key 'bandwidth'"), std::string::npos);
}

TEST(RepoFile, NumbersAreValidatedWithTheirRanges) {
    test::TempDir dir;
    EXPECT_EQ(read_one(dir, "timeout=45\n").timeout_seconds, 45u);
    EXPECT_EQ(read_one(dir, "timeout=1h\n").timeout_seconds, 3600u);
    EXPECT_EQ(read_one(dir, "timeout=1d\n").timeout_seconds, 86400u);
    EXPECT_EQ(read_one(dir, "retries=3\n").retries, 3u);
    EXPECT_EQ(read_one(dir, "minrate=0\n").minrate_bytes_per_second, 0u);
    EXPECT_EQ(read_one(dir, "max_parallel_downloads=256\n").max_parallel_downloads, 256u);
    EXPECT_EQ(error_of(dir, "max_parallel_downloads=257\n"),
              (dir / "test.repo").string() +
                  ": line 2: invalid value '257' for key 'max_parallel_downloads' (expected an "
                  "integer from 1 to 256)");
    EXPECT_NE(error_of(dir, "max_parallel_downloads=0\n").find("'0'"), std::string::npos);
    EXPECT_NE(error_of(dir, "max_downloads_per_mirror=0\n").find("key 'max_downloads_per_mirror'"),
              std::string::npos);
    EXPECT_NE(error_of(dir, "retries=-1\n").find("key 'retries'"), std::string::npos);
    EXPECT_NE(error_of(dir, "retries=99999999999\n").find("key 'retries'"), std::string::npos);
    EXPECT_NE(error_of(dir, "timeout=5x\n").find("key 'timeout'"), std::string::npos);
    EXPECT_NE(error_of(dir, "minrate=lots\n").find("key 'minrate'"), std::string::npos);
}

TEST(RepoFile, IpResolveSpellings) {
    test::TempDir dir;
    EXPECT_EQ(read_one(dir, "ip_resolve=4\n").ip_resolve, IpResolve::V4);
    EXPECT_EQ(read_one(dir, "ip_resolve=IPv4\n").ip_resolve, IpResolve::V4);
    EXPECT_EQ(read_one(dir, "ip_resolve=6\n").ip_resolve, IpResolve::V6);
    EXPECT_EQ(read_one(dir, "ip_resolve=ipv6\n").ip_resolve, IpResolve::V6);
    EXPECT_EQ(read_one(dir, "ip_resolve=whatever\n").ip_resolve, IpResolve::Any);
    EXPECT_EQ(error_of(dir, "ip_resolve=5\n"),
              (dir / "test.repo").string() +
                  ": line 2: invalid value '5' for key 'ip_resolve' (expected 4, 6, ipv4, ipv6 or "
                  "whatever)");
}

TEST(RepoFile, TypeAcceptsRpmMdAliasesOnly) {
    test::TempDir dir;
    for (const char* type : {"rpm", "rpm-md", "yum", "RPM-MD", "repomd", "rpmmd"}) {
        SCOPED_TRACE(type);
        EXPECT_EQ(read_one(dir, std::string("type=") + type + "\n").id, "r");
    }
    EXPECT_EQ(error_of(dir, "type=deb\n"),
              (dir / "test.repo").string() +
                  ": line 2: unsupported repository type 'deb' for key 'type' (expected rpm-md, "
                  "rpm or yum)");
}

TEST(RepoFile, ProxyNoneOrEmptyMeansExplicitlyNoProxy) {
    test::TempDir dir;
    EXPECT_EQ(read_one(dir, "proxy=_none_\n").proxy, std::string());
    EXPECT_EQ(read_one(dir, "proxy=\n").proxy, std::string());
    EXPECT_FALSE(read_one(dir, "").proxy);
}

TEST(RepoFile, InvalidRepoIdsAreErrors) {
    test::TempDir dir;
    for (const char* id : {"a/b", "..", ".", "has space", "x$y"}) {
        SCOPED_TRACE(id);
        std::vector<ConfigWarning> warnings;
        // Appended, not "[" + std::string(id): GCC 12 at -O3 warns (-Wrestrict, a known false
        // positive) about operator+(const char*, std::string&&).
        std::string text = "[";
        text.append(id).append("]\nbaseurl=http://127.0.0.1/\n");
        auto repos = read_text(dir, text, warnings);
        ASSERT_FALSE(repos);
        std::string message = "line 1: invalid repo id '";
        message.append(id).append(
            "' (allowed: letters, digits, '-', '_', '.', ':'; not '.' or '..')");
        EXPECT_EQ(repos.error().message, message);
    }
    EXPECT_TRUE(is_valid_repo_id("fedora-updates_testing.x86_64:1"));
}

TEST(RepoFile, MainSectionInARepoFileIsIgnoredWithAWarning) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_text(dir, "[main]\ngpgcheck=1\n\n[r]\nbaseurl=http://127.0.0.1/\n", warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos), std::vector<std::string>{"r"});
    EXPECT_FALSE(repos->front().gpgcheck);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].kind, ConfigWarningKind::IgnoredKey);
    EXPECT_EQ(warnings[0].where.line, 1u);
}

TEST(RepoFile, MissingFileIsNotFound) {
    test::TempDir dir;
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(dir / "absent.repo", fedora_vars(), warnings);
    ASSERT_FALSE(repos);
    EXPECT_EQ(repos.error().code, ErrorCode::NotFound);
    EXPECT_EQ(repos.error().subject, (dir / "absent.repo").string());
}

TEST(RepoFile, FedoraRepoFileFromTheTree) {
    std::vector<ConfigWarning> warnings;
    auto repos = read_repo_file(test::config_data_dir() / "yum.repos.d" / "fedora.repo",
                                fedora_vars(), warnings);
    ASSERT_TRUE(repos) << repos.error().to_string();
    EXPECT_EQ(repo_ids(*repos),
              (std::vector<std::string>{"fedora", "fedora-debuginfo", "fedora-source"}));
    const RepoConfig& fedora = repos->front();
    EXPECT_EQ(fedora.name, "Fedora 40 - x86_64");
    EXPECT_EQ(fedora.metalink,
              "https://mirrors.fedoraproject.org/metalink?repo=fedora-40&arch=x86_64");
    EXPECT_TRUE(fedora.baseurls.empty());  // commented out
    EXPECT_TRUE(fedora.enabled);
    EXPECT_TRUE(fedora.gpgcheck);
    EXPECT_EQ(fedora.gpgkeys,
              std::vector<std::string>{"file:///etc/pki/rpm-gpg/RPM-GPG-KEY-fedora-40-x86_64"});
    EXPECT_FALSE((*repos)[1].enabled);
    EXPECT_FALSE((*repos)[2].enabled);
    // countme and metadata_expire are dnf keys rpmirror does not use: warned, never unknown.
    EXPECT_EQ(count_warnings(warnings, ConfigWarningKind::UnknownKey), 0u);
    EXPECT_EQ(count_warnings(warnings, ConfigWarningKind::IgnoredKey), 4u);
}

}  // namespace
}  // namespace rpmirror
