// s3://BUCKET/PREFIX parsing and the resolution of endpoint, region and credentials from explicit
// settings, the environment and the AWS CLI's files.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "rpmirror/s3/s3.hpp"
#include "s3/config.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::s3 {
namespace {

TEST(S3Location, ParsesBucketAndPrefix) {
    auto location = S3Location::parse("s3://my-mirror/fedora/40/");
    ASSERT_TRUE(location) << location.error().to_string();
    EXPECT_EQ(location->bucket, "my-mirror");
    EXPECT_EQ(location->prefix, "fedora/40/");
    EXPECT_EQ(location->key("repodata/repomd.xml"), "fedora/40/repodata/repomd.xml");
    EXPECT_EQ(location->to_string(), "s3://my-mirror/fedora/40/");

    auto no_slash = S3Location::parse("s3://my-mirror/fedora");
    ASSERT_TRUE(no_slash);
    EXPECT_EQ(no_slash->prefix, "fedora/");
    auto root = S3Location::parse("s3://my-mirror");
    ASSERT_TRUE(root);
    EXPECT_EQ(root->prefix, "");
    EXPECT_EQ(root->key("a.rpm"), "a.rpm");
}

TEST(S3Location, RejectsBadLocationsNamingThem) {
    const std::map<std::string, std::string> bad = {
        {"http://bucket/x", "not an s3:// location"},
        {"s3://", "no bucket name"},
        {"s3://ab", "3 to 63 characters"},
        {"s3://My_Bucket/x", "lowercase letters"},
        {"s3://-bucket", "start and end"},
        {"s3://bucket//x", "empty, '.' or '..'"},
        {"s3://bucket/a/../b", "empty, '.' or '..'"},
    };
    for (const auto& [text, problem] : bad) {
        auto parsed = S3Location::parse(text);
        ASSERT_FALSE(parsed) << text;
        EXPECT_EQ(parsed.error().code, ErrorCode::BadInput);
        EXPECT_EQ(parsed.error().subject, text);
        EXPECT_NE(parsed.error().message.find(problem), std::string::npos)
            << text << ": " << parsed.error().message;
    }
}

class S3ConfigTest : public ::testing::Test {
  protected:
    EnvLookup env() {
        return [this](std::string_view name) -> std::optional<std::string> {
            const auto found = vars_.find(std::string(name));
            if (found == vars_.end()) {
                return std::nullopt;
            }
            return found->second;
        };
    }
    test::TempDir home_;
    std::map<std::string, std::string> vars_ = {{"HOME", home_.path().string()}};
};

TEST_F(S3ConfigTest, EnvironmentGivesCredentialsEndpointAndRegion) {
    vars_["AWS_ACCESS_KEY_ID"] = "AKID";
    vars_["AWS_SECRET_ACCESS_KEY"] = "SECRET";
    vars_["AWS_SESSION_TOKEN"] = "TOKEN";
    vars_["AWS_ENDPOINT_URL"] = "http://127.0.0.1:7480/";
    vars_["AWS_DEFAULT_REGION"] = "eu-west-1";
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->credentials.access_key_id, "AKID");
    EXPECT_EQ(config->credentials.secret_access_key, "SECRET");
    EXPECT_EQ(config->credentials.session_token, "TOKEN");
    EXPECT_EQ(config->endpoint, "http://127.0.0.1:7480");
    EXPECT_TRUE(config->path_style);  // an endpoint: Ceph, MinIO
    EXPECT_EQ(config->region, "eu-west-1");
    vars_["AWS_REGION"] = "eu-central-1";  // wins over AWS_DEFAULT_REGION
    vars_["AWS_ENDPOINT_URL_S3"] = "https://s3.example.com";
    config = resolve_config({}, env());
    ASSERT_TRUE(config);
    EXPECT_EQ(config->region, "eu-central-1");
    EXPECT_EQ(config->endpoint, "https://s3.example.com");
}

TEST_F(S3ConfigTest, RetryDelayAndClockOffsetFromRpmirrorVariables) {
    vars_["AWS_ACCESS_KEY_ID"] = "AKID";
    vars_["AWS_SECRET_ACCESS_KEY"] = "SECRET";
    vars_["RPMIRROR_S3_RETRY_DELAY_MS"] = "5";
    vars_["RPMIRROR_S3_CLOCK_OFFSET"] = "-3600";
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->retry_base_delay, std::chrono::milliseconds(5));
    EXPECT_EQ(config->clock_offset, std::chrono::seconds(-3600));
    vars_["RPMIRROR_S3_RETRY_DELAY_MS"] = "5ms";
    config = resolve_config({}, env());
    ASSERT_FALSE(config);
    EXPECT_EQ(config.error().code, ErrorCode::BadInput);
    EXPECT_EQ(config.error().subject, "RPMIRROR_S3_RETRY_DELAY_MS");
    EXPECT_NE(config.error().message.find("'5ms'"), std::string::npos) << config.error().message;
}

TEST_F(S3ConfigTest, LeaseTtlFromItsVariableAtLeastOneSecond) {
    vars_["AWS_ACCESS_KEY_ID"] = "AKID";
    vars_["AWS_SECRET_ACCESS_KEY"] = "SECRET";
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->lease_ttl, std::chrono::seconds(120));
    vars_["RPMIRROR_S3_LEASE_TTL"] = "30";
    config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->lease_ttl, std::chrono::seconds(30));
    for (const char* bad : {"0", "-5", "2m"}) {
        vars_["RPMIRROR_S3_LEASE_TTL"] = bad;
        config = resolve_config({}, env());
        ASSERT_FALSE(config) << bad;
        EXPECT_EQ(config.error().code, ErrorCode::BadInput);
        EXPECT_EQ(config.error().subject, "RPMIRROR_S3_LEASE_TTL");
        EXPECT_NE(config.error().message.find(std::string("'") + bad + "'"), std::string::npos)
            << config.error().message;
    }
}

TEST_F(S3ConfigTest, StallTimeoutFromItsVariableAtLeastOneSecond) {
    vars_["AWS_ACCESS_KEY_ID"] = "AKID";
    vars_["AWS_SECRET_ACCESS_KEY"] = "SECRET";
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->stall_timeout, std::chrono::seconds(60));
    vars_["RPMIRROR_S3_STALL_TIMEOUT"] = "5";
    config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->stall_timeout, std::chrono::seconds(5));
    for (const char* bad : {"0", "-5", "2m"}) {
        vars_["RPMIRROR_S3_STALL_TIMEOUT"] = bad;
        config = resolve_config({}, env());
        ASSERT_FALSE(config) << bad;
        EXPECT_EQ(config.error().code, ErrorCode::BadInput);
        EXPECT_EQ(config.error().subject, "RPMIRROR_S3_STALL_TIMEOUT");
        EXPECT_NE(config.error().message.find(std::string("'") + bad + "'"), std::string::npos)
            << config.error().message;
    }
}

TEST_F(S3ConfigTest, AwsDefaultsToVirtualHostedRegionalEndpoint) {
    home_.write(".aws/credentials",
                "[default]\naws_access_key_id = A\naws_secret_access_key = S\n");
    home_.write(".aws/config", "[default]\nregion = ap-south-1\n");
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->endpoint, "https://s3.ap-south-1.amazonaws.com");
    EXPECT_FALSE(config->path_style);
    EXPECT_EQ(config->region, "ap-south-1");
    EXPECT_NE(config->credentials_source.find("profile default"), std::string::npos);
}

TEST_F(S3ConfigTest, ProfilesFromBothFiles) {
    home_.write(".aws/credentials",
                "# comment\n[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
                "[ceph]\naws_access_key_id = C\naws_secret_access_key = CS\n");
    home_.write(".aws/config",
                "[profile ceph]\nregion = local\ns3 =\n"
                "  endpoint_url = http://rgw.internal:8080\n"
                "  addressing_style = virtual\n");
    vars_["AWS_PROFILE"] = "ceph";
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->credentials.access_key_id, "C");
    EXPECT_EQ(config->region, "local");
    EXPECT_EQ(config->endpoint, "http://rgw.internal:8080");
    EXPECT_FALSE(config->path_style);

    // Environment keys win over AWS_PROFILE's, an explicit profile wins over both.
    vars_["AWS_ACCESS_KEY_ID"] = "E";
    vars_["AWS_SECRET_ACCESS_KEY"] = "ES";
    config = resolve_config({}, env());
    ASSERT_TRUE(config);
    EXPECT_EQ(config->credentials.access_key_id, "E");
    S3Overrides overrides;
    overrides.profile = "default";
    overrides.endpoint = "http://127.0.0.1:9000";
    overrides.path_style = true;
    config = resolve_config(overrides, env());
    ASSERT_TRUE(config);
    EXPECT_EQ(config->credentials.access_key_id, "D");
    EXPECT_EQ(config->endpoint, "http://127.0.0.1:9000");
    EXPECT_TRUE(config->path_style);
    vars_["AWS_SHARED_CREDENTIALS_FILE"] = (home_ / "elsewhere").string();
    home_.write("elsewhere", "[default]\naws_access_key_id = X\naws_secret_access_key = XS\n");
    config = resolve_config(overrides, env());
    ASSERT_TRUE(config);
    EXPECT_EQ(config->credentials.access_key_id, "X");
}

TEST_F(S3ConfigTest, CaBundleFromEnvironmentThenProfileAndMustBeReadable) {
    home_.write(".aws/credentials",
                "[default]\naws_access_key_id = A\naws_secret_access_key = S\n");
    auto config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_TRUE(config->ca_bundle.empty()) << "the system's certificates by default";
    const auto profile_bundle = home_.write("profile-ca.pem", "-----BEGIN CERTIFICATE-----\n");
    const auto env_bundle = home_.write("env-ca.pem", "-----BEGIN CERTIFICATE-----\n");
    home_.write(".aws/config", "[default]\nca_bundle = " + profile_bundle.string() + "\n");
    config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->ca_bundle, profile_bundle);
    vars_["AWS_CA_BUNDLE"] = env_bundle.string();  // wins over the profile, as in the AWS CLI
    config = resolve_config({}, env());
    ASSERT_TRUE(config) << config.error().to_string();
    EXPECT_EQ(config->ca_bundle, env_bundle);

    vars_["AWS_CA_BUNDLE"] = (home_ / "missing.pem").string();
    config = resolve_config({}, env());
    ASSERT_FALSE(config);
    EXPECT_EQ(config.error().code, ErrorCode::BadInput);
    EXPECT_EQ(config.error().subject, (home_ / "missing.pem").string());
    EXPECT_NE(config.error().message.find("AWS_CA_BUNDLE"), std::string::npos)
        << config.error().message;
    vars_.erase("AWS_CA_BUNDLE");
    home_.write(".aws/config", "[default]\nca_bundle = " + home_.path().string() + "\n");
    config = resolve_config({}, env());
    ASSERT_FALSE(config);
    EXPECT_NE(config.error().message.find("ca_bundle of profile default"), std::string::npos)
        << config.error().message;
}

TEST_F(S3ConfigTest, ErrorsNameWhatIsWrong) {
    auto none = resolve_config({}, env());
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().code, ErrorCode::BadInput);
    EXPECT_NE(none.error().message.find("no S3 credentials"), std::string::npos);
    EXPECT_NE(none.error().message.find(".aws/credentials"), std::string::npos);

    S3Overrides overrides;
    overrides.profile = "missing";
    auto profile = resolve_config(overrides, env());
    ASSERT_FALSE(profile);
    EXPECT_EQ(profile.error().subject, "missing");
    EXPECT_NE(profile.error().message.find("no such profile"), std::string::npos);

    const auto credentials = home_.write(".aws/credentials", "[default]\nthis is not a setting\n");
    auto malformed = resolve_config({}, env());
    ASSERT_FALSE(malformed);
    EXPECT_EQ(malformed.error().subject, credentials.string());
    EXPECT_NE(malformed.error().message.find("line 2"), std::string::npos);

    home_.write(".aws/credentials",
                "[default]\naws_access_key_id = A\naws_secret_access_key = S\n");
    vars_["AWS_ENDPOINT_URL"] = "ftp://host";
    auto endpoint = resolve_config({}, env());
    ASSERT_FALSE(endpoint);
    EXPECT_EQ(endpoint.error().subject, "ftp://host");
    EXPECT_NE(endpoint.error().message.find("AWS_ENDPOINT_URL"), std::string::npos);
}

}  // namespace
}  // namespace rpmirror::s3
