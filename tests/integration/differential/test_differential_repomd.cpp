// repomd.xml read by rpmirror and by librepo, on the corpus of repomd_corpus.cpp.
//
// Two readings are compared per repository:
// - the verdict: rpmirror's is what a sync does with every record (parse_repomd, then for each
//   record record_destination and verify_metadata_file, and primary decompressed against its
//   <open-size>); librepo's is a local repository with every record wanted and checksums on
//   (librepo_dump.py "verify"). Both accept, or both refuse, unless the case expects one of the
//   Disagreements of differential.hpp.
// - the fields, when both parsers accept the document: revision, tags, and per record type the
//   href, checksum, open-checksum, timestamp, sizes and database version. python3-librepo gives
//   records as a dict by type (the last record of a type wins) and 0 for a missing number, so
//   rpmirror's last record of each type is compared and a missing number counts as 0. Digests
//   are compared as values (case and surrounding whitespace aside: rpmirror stores them
//   lowercase and trimmed); what a digest's spelling does to verification shows in the verdict.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "checksum/hasher.hpp"
#include "differential.hpp"
#include "index/index.hpp"
#include "metadata/metadata.hpp"
#include "repomd_corpus.hpp"
#include "support/temp_dir.hpp"
#include "util/text.hpp"

namespace rpmirror::test::differential {
namespace {

using nlohmann::json;
using D = Disagreement;

// ---------------------------------------------------------------------------------------------
// rpmirror's reading

struct RpmirrorReading {
    std::optional<Repomd> repomd;  // iff parse_repomd accepted the document
    std::optional<Error> refusal;  // the first reason a sync would refuse the repository
};

RpmirrorReading read_with_rpmirror(const std::string& document,
                                   const std::filesystem::path& repository) {
    RpmirrorReading reading;
    auto parsed = parse_repomd(document, "repomd.xml");
    if (!parsed) {
        reading.refusal = parsed.error();
        return reading;
    }
    reading.repomd = std::move(*parsed);
    for (const RepomdRecord& record : reading.repomd->records) {
        auto relative = record_destination(record, "differential", "repomd.xml");
        if (!relative) {
            reading.refusal = relative.error();
            return reading;
        }
        const std::filesystem::path file = repository / "repodata" / *relative;
        if (auto verified = verify_metadata_file(file, record); !verified) {
            reading.refusal = verified.error();
            return reading;
        }
        if (record.type == "primary") {  // read with <open-size> as its exact size
            DecompressOptions options;
            options.expected_size = record.open_size;
            auto read = decompress_file(file, options,
                                        [](std::span<const char>) { return Result<void>{}; });
            if (!read) {
                reading.refusal = read.error();
                return reading;
            }
        }
    }
    return reading;
}

// ---------------------------------------------------------------------------------------------
// Comparison

bool has_upper_hex(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) { return c >= 'A' && c <= 'F'; });
}

// librepo's text `theirs` against rpmirror's `ours` (a revision, a tag).
void compare_text(std::vector<Difference>& differences, const std::string& what, const json& theirs,
                  const std::optional<std::string>& ours) {
    const std::optional<std::string> librepo =
        theirs.is_string() ? std::optional<std::string>(theirs.get<std::string>()) : std::nullopt;
    if (librepo == ours) {
        return;
    }
    std::optional<D> kind;
    if (librepo && text::trim(*librepo) == ours.value_or("")) {
        kind = D::TrimmedText;  // a text of only whitespace is none to rpmirror
    } else if (librepo && ours && *librepo == replace_all(*ours, "&", "&#38;")) {
        kind = D::EscapedAmpersand;
    }
    differences.push_back({kind, what + ": librepo \"" + librepo.value_or("(none)").substr(0, 80) +
                                     "\", rpmirror \"" + ours.value_or("(none)").substr(0, 80) +
                                     "\""});
}

void compare_tags(std::vector<Difference>& differences, const std::string& what, const json& theirs,
                  const std::vector<std::string>& ours) {
    if (!theirs.is_array() || theirs.size() != ours.size()) {
        differences.push_back({std::nullopt, what + ": librepo " + theirs.dump() + ", rpmirror " +
                                                 std::to_string(ours.size()) + " tags"});
        return;
    }
    for (std::size_t index = 0; index < ours.size(); ++index) {
        compare_text(differences, what + "[" + std::to_string(index) + "]", theirs[index],
                     ours[index]);
    }
}

// A number as python3-librepo gives it (0 when missing) against rpmirror's.
template <typename T>
void compare_number(std::vector<Difference>& differences, const std::string& what,
                    const json& theirs, const std::optional<T>& ours, bool is_size) {
    const std::int64_t librepo = theirs.is_number() ? theirs.get<std::int64_t>() : 0;
    const std::int64_t rpmirror = ours ? static_cast<std::int64_t>(*ours) : 0;
    if (librepo == rpmirror) {
        return;
    }
    const std::optional<D> kind =
        is_size && librepo < 0 && !ours ? std::optional<D>(D::NegativeSize) : D::NumberBase;
    differences.push_back({kind, what + ": librepo " + std::to_string(librepo) + ", rpmirror " +
                                     (ours ? std::to_string(*ours) : "(none)")});
}

// A checksum librepo keeps as text and type name against rpmirror's parsed one. An unusable
// optional checksum (unknown type, not a digest) is one rpmirror drops and librepo never uses.
void compare_checksum(std::vector<Difference>& differences, const std::string& what,
                      const json& text, const json& type_name,
                      const std::optional<RecordChecksum>& ours) {
    std::optional<RecordChecksum> librepo;
    if (text.is_string() && type_name.is_string()) {
        const auto type = parse_checksum_type(type_name.get<std::string>());
        const std::string digest(text::trim(text.get<std::string>()));
        if (type && is_valid_hex_digest(*type, digest)) {
            librepo = RecordChecksum{*type, text::to_lower(digest)};
        }
    }
    if (librepo.has_value() != ours.has_value() ||
        (librepo && (librepo->type != ours->type || librepo->hex != ours->hex))) {
        differences.push_back({std::nullopt, what + ": librepo " + text.dump() + " (" +
                                                 type_name.dump() + "), rpmirror " +
                                                 (ours ? ours->hex : std::string("(none)"))});
    }
}

void compare_fields(std::vector<Difference>& differences, const json& theirs, const Repomd& ours) {
    compare_text(differences, "revision", theirs["revision"], ours.revision);
    compare_tags(differences, "content_tags", theirs["content_tags"], ours.content_tags);
    compare_tags(differences, "repo_tags", theirs["repo_tags"], ours.repo_tags);
    const json& distro = theirs["distro_tags"];
    if (!distro.is_array() || distro.size() != ours.distro_tags.size()) {
        differences.push_back({std::nullopt, "distro_tags: librepo " + distro.dump()});
    } else {
        for (std::size_t index = 0; index < distro.size(); ++index) {
            const std::string what = "distro_tags[" + std::to_string(index) + "]";
            compare_text(differences, what + ".cpeid",
                         distro[index][0].is_null() ? json("") : distro[index][0],
                         ours.distro_tags[index].cpeid);
            compare_text(differences, what, distro[index][1], ours.distro_tags[index].name);
        }
    }
    std::map<std::string, const RepomdRecord*> last_of_type;
    for (const RepomdRecord& record : ours.records) {
        last_of_type[record.type] = &record;
    }
    static const std::set<std::string> kNotRecords = {"revision", "repo_tags", "content_tags",
                                                      "distro_tags"};
    std::set<std::string> librepo_types;
    for (const auto& [type, fields] : theirs.items()) {
        if (kNotRecords.count(type) == 0) {
            librepo_types.insert(type);
        }
    }
    for (const std::string& type : librepo_types) {
        const auto found = last_of_type.find(type);
        if (found == last_of_type.end()) {
            const bool escaped = last_of_type.contains(replace_all(type, "&#38;", "&"));
            differences.push_back({escaped ? std::optional<D>(D::EscapedAmpersand) : std::nullopt,
                                   "record '" + type + "' only librepo has"});
            continue;
        }
        const json& fields = theirs[type];
        const RepomdRecord& record = *found->second;
        const std::string what = "record '" + type.substr(0, 40) + "' ";
        if (text_of(fields["location_href"]) != record.location_href) {
            const bool escaped =
                text_of(fields["location_href"]) == replace_all(record.location_href, "&", "&#38;");
            differences.push_back({escaped ? std::optional<D>(D::EscapedAmpersand) : std::nullopt,
                                   what + "href: librepo " + fields["location_href"].dump() +
                                       ", rpmirror " + record.location_href});
        }
        compare_checksum(differences, what + "checksum", fields["checksum"],
                         fields["checksum_type"], record.checksum);
        compare_checksum(differences, what + "open-checksum", fields["checksum_open"],
                         fields["checksum_open_type"], record.open_checksum);
        compare_checksum(differences, what + "header-checksum", fields["header_checksum"],
                         fields["header_checksum_type"], record.header_checksum);
        compare_number(differences, what + "timestamp", fields["timestamp"], record.timestamp,
                       false);
        compare_number(differences, what + "size", fields["size"], record.size, true);
        compare_number(differences, what + "open-size", fields["size_open"], record.open_size,
                       true);
        compare_number(differences, what + "database_version", fields["db_version"],
                       record.database_version, false);
    }
    for (const auto& [type, record] : last_of_type) {
        if (librepo_types.count(type) == 0) {
            const bool escaped = type.find('&') != std::string::npos &&
                                 librepo_types.contains(replace_all(type, "&", "&#38;"));
            differences.push_back({escaped ? std::optional<D>(D::EscapedAmpersand) : std::nullopt,
                                   "record '" + type + "' only rpmirror has"});
        }
    }
}

// Why rpmirror refused what librepo accepted, from rpmirror's error.
std::optional<D> rpmirror_refusal_kind(const Error& error) {
    const std::string& message = error.message;
    if (message.find("without <checksum>") != std::string::npos) {
        return D::Unverifiable;
    }
    if (message.find("size mismatch") != std::string::npos ||
        message.find("decompress") != std::string::npos ||
        message.find("expected") != std::string::npos) {
        return D::SizeMismatch;
    }
    if (message.find("is not a file under repodata/") != std::string::npos) {
        return D::OutsideRepodata;
    }
    if (message.find("xml:base") != std::string::npos) {
        return D::UnsafeXmlBase;
    }
    if (error.code == ErrorCode::Unsafe && message.find("href") != std::string::npos) {
        return D::UnsafeHref;
    }
    return std::nullopt;
}

// Why librepo refused what rpmirror (which read `ours`) accepted: the spelling of a digest it
// compares as a string, or two records of one type (librepo finds a record by its type, and
// checks the file of one against the checksum of the other).
std::optional<D> librepo_refusal_kind(const json& librepo, const Repomd& ours) {
    if (text_of(librepo["verify"]["error"]).find("Checksum mismatch") == std::string::npos ||
        !librepo["parse"]["repomd"].is_object()) {
        return std::nullopt;
    }
    std::set<std::string> types;
    for (const RepomdRecord& record : ours.records) {
        if (!types.insert(record.type).second) {
            return D::DuplicateRecord;
        }
    }
    for (const auto& [type, fields] : librepo["parse"]["repomd"].items()) {
        const std::string digest = fields.is_object() ? text_of(fields["checksum"]) : "";
        if (digest != text::trim(digest)) {
            return D::PaddedDigest;
        }
        if (has_upper_hex(digest)) {
            return D::UppercaseDigest;
        }
    }
    return std::nullopt;
}

std::vector<Difference> compare(const json& librepo, const RpmirrorReading& ours) {
    std::vector<Difference> differences;
    const bool librepo_accepts = librepo["verify"]["ok"].get<bool>();
    const bool rpmirror_accepts = !ours.refusal.has_value();
    if (librepo_accepts && !rpmirror_accepts) {
        differences.push_back(
            {rpmirror_refusal_kind(*ours.refusal), "verdict: librepo accepts, rpmirror refuses: " +
                                                       ours.refusal->to_string().substr(0, 300)});
    } else if (!librepo_accepts && rpmirror_accepts) {
        differences.push_back(
            {librepo_refusal_kind(librepo, *ours.repomd),
             "verdict: rpmirror accepts, librepo refuses: " + text_of(librepo["verify"]["error"])});
    }
    if (librepo["parse"]["ok"].get<bool>() && ours.repomd) {
        compare_fields(differences, librepo["parse"]["repomd"], *ours.repomd);
    }
    return differences;
}

// ---------------------------------------------------------------------------------------------

void run_corpus(const std::vector<RepomdCase>& cases) {
    TempDir scratch;
    json manifest = json::array();
    std::vector<std::string> documents;
    for (const RepomdCase& repomd_case : cases) {
        const std::filesystem::path repository = scratch / repomd_case.name;
        documents.push_back(write_repository(repomd_case, repository));
        manifest.push_back(
            {{"name", repomd_case.name}, {"kind", "repomd"}, {"path", repository.string()}});
    }
    const json librepo = run_librepo(manifest, scratch.path());
    ASSERT_FALSE(librepo.contains("error")) << text_of(librepo["error"]);
    for (std::size_t index = 0; index < cases.size(); ++index) {
        const RepomdCase& repomd_case = cases[index];
        SCOPED_TRACE(repomd_case.name);
        ASSERT_TRUE(librepo.contains(repomd_case.name));
        const RpmirrorReading ours =
            read_with_rpmirror(documents[index], scratch / repomd_case.name);
        std::vector<Difference> differences;
        try {
            differences = compare(librepo[repomd_case.name], ours);
        } catch (const json::exception& error) {
            ADD_FAILURE() << "case " << repomd_case.name << ": librepo's answer "
                          << librepo[repomd_case.name].dump().substr(0, 600)
                          << " is not as expected: " << error.what();
            continue;
        }
        EXPECT_EQ(kinds_of(differences), names_of(repomd_case.expected))
            << "case " << repomd_case.name << ": differences between librepo and rpmirror:\n"
            << describe(differences)
            << "librepo: " << librepo[repomd_case.name].dump().substr(0, 600);
    }
}

TEST(DifferentialRepomd, QuirksOfRealRepositoriesReadAsLibrepoReadsThemOrAsListed) {
    run_corpus(repomd_quirks());
}

TEST(DifferentialRepomd, MutationsOfACreaterepoRepositoryReadAsLibrepoReadsThemOrAsListed) {
    run_corpus(repomd_mutations());
}

// Random mutations of the createrepo_c-like baseline, the fuzz-style half of the differential
// test (random_campaign, mutate_document: the same documents every run unless the environment
// asks for another campaign). The verdicts and fields of both readers must agree or differ only
// as a listed Disagreement (the expected set of a random case is unknown, so any
// listed one is allowed; an unlisted difference fails, with the document to reproduce it).
TEST(DifferentialRepomd, RandomMutationsDisagreeOnlyAsListed) {
    const auto [seed, count] = random_campaign();
    std::mt19937 random(seed);
    const RepomdSpec baseline = createrepo_like();
    const std::string document = baseline.render();
    TempDir scratch;
    json manifest = json::array();
    std::vector<std::string> documents;
    for (std::size_t index = 0; index < count; ++index) {
        const std::string name = "random_" + std::to_string(index);
        RepomdCase mutated{name, baseline, mutate_document(document, random), {}};
        documents.push_back(write_repository(mutated, scratch / name));
        manifest.push_back(
            {{"name", name}, {"kind", "repomd"}, {"path", (scratch / name).string()}});
    }
    const json librepo = run_librepo(manifest, scratch.path());
    ASSERT_FALSE(librepo.contains("error")) << text_of(librepo["error"]);
    std::size_t both_accept = 0;
    std::size_t both_refuse = 0;
    std::size_t listed = 0;
    for (std::size_t index = 0; index < count; ++index) {
        const std::string name = "random_" + std::to_string(index);
        ASSERT_TRUE(librepo.contains(name)) << name;
        const RpmirrorReading ours = read_with_rpmirror(documents[index], scratch / name);
        std::vector<Difference> differences;
        try {
            differences = compare(librepo[name], ours);
        } catch (const json::exception& error) {
            ADD_FAILURE() << name << ": librepo's answer " << librepo[name].dump().substr(0, 600)
                          << " is not as expected: " << error.what();
            continue;
        }
        const bool librepo_accepts = librepo[name]["verify"]["ok"].get<bool>();
        both_accept += librepo_accepts && !ours.refusal ? 1 : 0;
        both_refuse += !librepo_accepts && ours.refusal ? 1 : 0;
        listed += differences.empty() ? 0 : 1;
        const std::set<std::string> kinds = kinds_of(differences);
        EXPECT_EQ(kinds.count("Unclassified"), 0U)
            << name << " (seed " << seed << "): a difference no Disagreement lists:\n"
            << describe(differences) << "librepo: " << librepo[name].dump().substr(0, 600)
            << "\ndocument:\n"
            << documents[index].substr(0, 4000);
    }
    // The mutations bite both ways: some documents stay acceptable, some are broken.
    EXPECT_GT(both_accept, count / 20)
        << both_refuse << " refused by both, " << listed << " with listed differences";
    EXPECT_GT(both_refuse, count / 20) << both_accept << " accepted by both";
}

// A fractional <timestamp> used to refuse the whole repomd.xml (dnf mirrors such a repository).
TEST(DifferentialRepomd, FractionalTimestampIsAcceptedByBothWithTheSameSeconds) {
    const std::vector<RepomdCase> cases = repomd_quirks();
    const auto fractional =
        std::find_if(cases.begin(), cases.end(), [](const RepomdCase& repomd_case) {
            return repomd_case.name == "yum_createrepo_fractional_timestamps";
        });
    ASSERT_NE(fractional, cases.end());
    TempDir scratch;
    const std::string document = write_repository(*fractional, scratch / "repo");
    const RpmirrorReading ours = read_with_rpmirror(document, scratch / "repo");
    ASSERT_FALSE(ours.refusal) << ours.refusal->to_string();
    EXPECT_EQ(ours.repomd->find("primary")->timestamp, 1355315696);
}

}  // namespace
}  // namespace rpmirror::test::differential
