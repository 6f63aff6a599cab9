// A mirror's source record (store/source_record.hpp): written and read back over the memory store
// (secrets left out, the selection said), refused when damaged (naming the record and the line),
// ignored when of another repository; a directory's kept beside its sync state; and looked up
// for `sync --repo ID` only where no configuration defines ID.
#include <gtest/gtest.h>

#include <filesystem>

#include "store/local_store.hpp"
#include "store/source_record.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror {
namespace {

namespace stdfs = std::filesystem;

// Where a bucket keeps it (the memory store stands in for one).
constexpr std::string_view kKey = "fedora/.rpmirror/source.repo";

RepoConfig fedora() {
    RepoConfig repo;
    repo.id = "fedora";
    repo.name = "Fedora 40 - x86_64";
    repo.baseurls = {"https://mirror.example/fedora/40/", "https://user:s3cret@other.example/f/"};
    repo.metalink = "https://mirrors.example/metalink?repo=fedora-40&arch=x86_64";
    repo.gpgcheck = true;
    repo.gpgkeys = {"file:///etc/pki/rpm-gpg/RPM-GPG-KEY-fedora-40-x86_64"};
    repo.sslclientcert = "/etc/pki/entitlement/1.pem";
    repo.sslclientkey = "/etc/pki/entitlement/1-key.pem";
    repo.proxy = "http://puser:ppass@proxy.example:3128";
    repo.proxy_username = "puser";
    repo.proxy_password = "ppass";
    repo.username = "mirror";
    repo.password = "hunter2";
    repo.includepkgs = {"kernel*", "bash"};
    repo.excludepkgs = {"*-debuginfo"};
    repo.timeout_seconds = 90;
    return repo;
}

RecordedSelection x86_newest() {
    RecordedSelection selection;
    selection.options.arches = {"x86_64", "noarch"};
    selection.options.newest_only = true;
    return selection;
}

TEST(SourceRecord, ReadsBackWhatTheSyncUsedWithoutItsSecrets) {
    const auto objects = store::memory_object_store();
    ASSERT_TRUE(store::write_source_record(*objects, kKey, fedora(), x86_newest()));

    const auto text = objects->read("fedora/.rpmirror/source.repo");
    ASSERT_TRUE(text) << text.error().to_string();
    EXPECT_EQ(text->find("hunter2"), std::string::npos) << *text;
    EXPECT_EQ(text->find("ppass"), std::string::npos) << *text;
    EXPECT_EQ(text->find("s3cret"), std::string::npos) << *text;

    const auto read = store::read_source_record(*objects, kKey, "fedora");
    ASSERT_TRUE(read) << read.error().to_string();
    ASSERT_TRUE(read->source);
    const RepoConfig& repo = read->source->config;
    EXPECT_EQ(repo.id, "fedora");
    EXPECT_EQ(repo.name, "Fedora 40 - x86_64");
    EXPECT_EQ(repo.baseurls, (std::vector<std::string>{"https://mirror.example/fedora/40/",
                                                       "https://user@other.example/f/"}));
    EXPECT_EQ(repo.metalink, fedora().metalink);
    EXPECT_TRUE(repo.gpgcheck);
    EXPECT_EQ(repo.gpgkeys, fedora().gpgkeys);
    EXPECT_EQ(repo.sslclientcert, fedora().sslclientcert);
    EXPECT_EQ(repo.sslclientkey, fedora().sslclientkey) << "a path, not a secret";
    EXPECT_EQ(repo.proxy, "http://puser@proxy.example:3128");
    EXPECT_EQ(repo.proxy_username, "puser");
    EXPECT_FALSE(repo.proxy_password);
    EXPECT_EQ(repo.username, "mirror");
    EXPECT_FALSE(repo.password);
    EXPECT_EQ(repo.includepkgs, fedora().includepkgs);
    EXPECT_EQ(repo.excludepkgs, fedora().excludepkgs);
    EXPECT_EQ(repo.timeout_seconds, 90U);
    EXPECT_EQ(repo.defined_at.file, objects->describe("fedora/.rpmirror/source.repo"));
    EXPECT_EQ(read->source->record, objects->describe("fedora/.rpmirror/source.repo"));
    EXPECT_EQ(read->source->selection, "--arch x86_64,noarch --newest-only");
    EXPECT_EQ(read->source->left_out,
              (std::vector<std::string>{"the password in baseurl", "password",
                                        "the password in proxy", "proxy_password"}));
}

TEST(SourceRecord, AnExplicitlyDisabledProxyStaysDisabled) {
    const auto objects = store::memory_object_store();
    RepoConfig repo = fedora();
    repo.proxy = std::string();
    ASSERT_TRUE(store::write_source_record(*objects, kKey, repo, {}));
    const auto read = store::read_source_record(*objects, kKey, "fedora");
    ASSERT_TRUE(read && read->source);
    EXPECT_EQ(read->source->config.proxy, std::string());
    EXPECT_EQ(read->source->selection, "every package");
}

TEST(SourceRecord, NoRecordIsNeitherASourceNorAnError) {
    const auto objects = store::memory_object_store();
    const auto read = store::read_source_record(*objects, kKey, "fedora");
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_FALSE(read->source);
    EXPECT_TRUE(read->ignored.empty());
}

TEST(SourceRecord, ARecordOfAnotherRepositoryIsIgnoredAndNamed) {
    const auto objects = store::memory_object_store();
    ASSERT_TRUE(store::write_source_record(*objects, "copy/.rpmirror/source.repo", fedora(), {}));
    const auto read = store::read_source_record(*objects, "copy/.rpmirror/source.repo", "copy");
    ASSERT_TRUE(read) << read.error().to_string();
    EXPECT_FALSE(read->source);
    EXPECT_NE(read->ignored.find("records repository 'fedora', not 'copy'"), std::string::npos)
        << read->ignored;
    EXPECT_NE(read->ignored.find("copy/.rpmirror/source.repo"), std::string::npos) << read->ignored;
}

// Each damaged record: the error names the record and the line.
TEST(SourceRecord, ADamagedRecordIsAnErrorNamingItsLine) {
    const struct {
        std::string_view text;
        std::string_view says;
    } cases[] = {
        {"[fedora]\nbaseurl=https://x/\nnot a key value line\n", "line 3"},
        {"[fedora]\nbaseurl=https://x/\nsslverify=maybe\n", "line 3"},
        {"# comment\n[fedora]\nbaseurl=https://x/\nbaseurll=https://y/\n", "line 4"},
        {"[fedora]\nbaseurl=https://x/\n[updates]\nbaseurl=https://y/\n", "holds 2"},
        {"# nothing but a comment\n", "holds 0"},
        {"[fedora]\nbaseurl=https://x/$undefined/\n", "line 2"},
    };
    for (const auto& damaged : cases) {
        const auto objects = store::memory_object_store();
        ASSERT_TRUE(objects->put(kKey, damaged.text));
        const auto read = store::read_source_record(*objects, kKey, "fedora");
        ASSERT_FALSE(read) << damaged.text;
        const std::string message = read.error().to_string();
        EXPECT_EQ(read.error().code, ErrorCode::BadInput) << message;
        EXPECT_NE(message.find("fedora/.rpmirror/source.repo"), std::string::npos) << message;
        EXPECT_NE(message.find(damaged.says), std::string::npos) << message;
    }
}

// A directory's record is kept with its sync state, outside the mirror's tree.
TEST(SourceRecord, ADirectorysRecordIsBesideItsSyncStateNotInTheMirror) {
    test::TempDir dir;
    store::LocalStore mirror(dir / "mirror/fedora", dir / "state");
    ASSERT_TRUE(store::write_source_record(mirror, fedora(), x86_newest()));
    stdfs::path expected = sync_state_path(dir / "state", dir / "mirror/fedora");
    expected.replace_extension(".source.repo");
    EXPECT_TRUE(stdfs::is_regular_file(expected)) << expected;
    EXPECT_FALSE(stdfs::exists(dir / "mirror")) << "nothing written in the mirror's tree";
    const auto read = store::read_source_record(mirror, "fedora");
    ASSERT_TRUE(read) << read.error().to_string();
    ASSERT_TRUE(read->source);
    EXPECT_EQ(read->record, expected.string());
    EXPECT_EQ(read->source->config.metalink, fedora().metalink);
}

TEST(SourceRecord, SyncReadsTheRecordOnlyForARepoNoConfigurationDefines) {
    test::TempDir dir;
    const store::SourceLookup where{.download_path = (dir / "mirror").string(),
                                    .state_dir = dir / "state",
                                    .norepopath = false,
                                    .s3 = std::nullopt};
    store::LocalStore recorded(dir / "mirror/fedora", dir / "state");
    ASSERT_TRUE(store::write_source_record(recorded, fedora(), x86_newest()));
    store::LocalStore broken(dir / "mirror/broken", dir / "state");
    const store::RecordPlace place = store::source_record_place(broken);
    ASSERT_TRUE(place.objects->put(place.key, "[broken]\nretries=many\n"));

    std::vector<RepoConfig> repos;
    std::vector<std::string> notes;
    const std::vector<std::string> patterns = {"fedora", "fed*", "absent"};
    ASSERT_TRUE(store::add_recorded_sources(repos, patterns, where, notes));
    ASSERT_EQ(repos.size(), 1U);
    EXPECT_EQ(repos[0].baseurls.front(), "https://mirror.example/fedora/40/");
    ASSERT_EQ(notes.size(), 1U);
    EXPECT_NE(notes[0].find(".source.repo"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("--arch x86_64,noarch --newest-only"), std::string::npos) << notes[0];
    EXPECT_NE(notes[0].find("password"), std::string::npos) << notes[0];

    // A configured repository wins: its record is not even read.
    RepoConfig configured;
    configured.id = "broken";
    configured.baseurls = {"https://configured.example/"};
    std::vector<RepoConfig> given = {configured};
    notes.clear();
    const std::vector<std::string> only_broken = {"broken"};
    ASSERT_TRUE(store::add_recorded_sources(given, only_broken, where, notes));
    ASSERT_EQ(given.size(), 1U);
    EXPECT_EQ(given[0].baseurls.front(), "https://configured.example/");
    EXPECT_TRUE(notes.empty());

    // Not configured: the damaged record is an error naming it and its line; nothing is added.
    std::vector<RepoConfig> none;
    const auto refused = store::add_recorded_sources(none, only_broken, where, notes);
    ASSERT_FALSE(refused);
    const std::string message = refused.error().to_string();
    EXPECT_NE(message.find(place.objects->describe(place.key)), std::string::npos) << message;
    EXPECT_NE(message.find("line 2"), std::string::npos) << message;
    EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace rpmirror
