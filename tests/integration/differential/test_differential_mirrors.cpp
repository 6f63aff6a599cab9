// Metalinks and mirrorlists read by rpmirror and by librepo (see differential.hpp).
//
// Metalink: rpmirror's verdict is parse_metalink, the mirrors it would use
// (usable_listed_mirrors of base_urls(); the metalink is the test's own file, so its file://
// mirror is allowed) and verify_repomd_against_metalink of the repository's repomd.xml; librepo's
// is fetching that repomd.xml through the metalink (its first mirror is the repository, as a
// file:// URL; the others are closed ports on 127.0.0.1) with checksums on. Fields: timestamp,
// size, hashes, alternates, URLs and the mirrors' base URLs.
// Mirrorlist: read as a list from upstream (rpmirror: parse_mirrorlist, usable_listed_mirrors
// with an https list URL; librepo: its mirrors); the verdict is "there is a mirror to use".
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>

#include "checksum/hasher.hpp"
#include "differential.hpp"
#include "metadata/metadata.hpp"
#include "support/temp_dir.hpp"
#include "util/text.hpp"

namespace rpmirror::test::differential {
namespace {

using nlohmann::json;
using D = Disagreement;

const std::string kRepomd =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\"><revision>1700000000</revision>"
    "</repomd>\n";

// ---------------------------------------------------------------------------------------------
// Metalink corpus

struct MetalinkSpec {
    std::optional<std::string> timestamp = "1700000000";
    std::optional<std::string> size;  // default: the size of kRepomd
    bool has_size = true;
    std::vector<std::pair<std::string, std::string>> hashes;  // default: md5 sha1 sha256 sha512
    bool default_hashes = true;
    std::string alternates =
        "   <mm0:alternates>\n    <mm0:alternate>\n     <mm0:timestamp>1699990000</mm0:timestamp>\n"
        "     <size>2970</size>\n     <verification>\n      <hash type=\"sha256\">" +
        std::string(64, 'a') + "</hash>\n     </verification>\n    </mm0:alternate>\n" +
        "   </mm0:alternates>\n";
    // <url> lines after the repository's own (preference 100); "@REPO@" is its file:// URL.
    std::string repository_url =
        "    <url protocol=\"file\" type=\"file\" location=\"XX\" preference=\"100\">"
        "@REPO@repodata/repomd.xml</url>\n";
    std::string other_urls =
        "    <url protocol=\"https\" type=\"https\" location=\"US\" preference=\"90\">"
        "https://127.0.0.1:9/fedora/updates/40/x86_64/repodata/repomd.xml</url>\n"
        "    <url protocol=\"http\" type=\"http\" location=\"DE\" preference=\"80\">"
        "http://127.0.0.1:9/pub/fedora/repodata/repomd.xml</url>\n";
    std::string file_name = " name=\"repomd.xml\"";
    std::string before_file;  // other <file>s
    std::string in_file;      // extra elements inside <file>
    bool crlf = false;
    bool bom = false;

    std::string render(const std::string& repository_url_base) const {
        std::string hash_lines;
        const auto hash_list =
            default_hashes ? std::vector<std::pair<std::string, std::string>>{{"md5", ""},
                                                                              {"sha1", ""},
                                                                              {"sha256", ""},
                                                                              {"sha512", ""}}
                           : hashes;
        for (const auto& [type, value] : hash_list) {
            const auto known = parse_checksum_type(type);
            hash_lines += "    <hash type=\"" + type + "\">" +
                          (value.empty() && known ? hash_bytes(*known, kRepomd) : value) +
                          "</hash>\n";
        }
        std::string xml =
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
            "<metalink version=\"3.0\" xmlns=\"http://www.metalinker.org/\" type=\"dynamic\" "
            "pubdate=\"Tue, 14 Nov 2023 22:13:20 GMT\" generator=\"mirrormanager\" "
            "xmlns:mm0=\"http://fedorahosted.org/mirrormanager\">\n <files>\n" +
            before_file + "  <file" + file_name + ">\n" +
            (timestamp ? "   <mm0:timestamp>" + *timestamp + "</mm0:timestamp>\n" : "") +
            (has_size ? "   <size>" + size.value_or(std::to_string(kRepomd.size())) + "</size>\n"
                      : "") +
            "   <verification>\n" + hash_lines + "   </verification>\n" + alternates + in_file +
            "   <resources maxconnections=\"1\">\n" +
            replace_all(repository_url + other_urls, "@REPO@", repository_url_base) +
            "   </resources>\n  </file>\n </files>\n</metalink>\n";
        if (crlf) {
            xml = replace_all(xml, "\n", "\r\n");
        }
        return bom ? "\xEF\xBB\xBF" + xml : xml;
    }
};

struct MetalinkCase {
    std::string name;
    MetalinkSpec spec;
    std::optional<std::string> document;  // replaces spec.render()
    std::set<Disagreement> expected;
};

std::vector<MetalinkCase> metalink_cases() {
    std::vector<MetalinkCase> cases;
    const auto add = [&cases](std::string name, const std::function<void(MetalinkSpec&)>& change,
                              std::set<Disagreement> expected = {}) {
        MetalinkCase metalink_case{std::move(name), {}, std::nullopt, std::move(expected)};
        change(metalink_case.spec);
        cases.push_back(std::move(metalink_case));
    };
    add("mirrormanager", [](MetalinkSpec&) {});
    add("rsync_and_ftp_mirrors",
        [](MetalinkSpec& spec) {
            spec.other_urls +=
                "    <url protocol=\"rsync\" type=\"rsync\" location=\"DE\" preference=\"70\">"
                "rsync://127.0.0.1:9/fedora/repodata/repomd.xml</url>\n"
                "    <url protocol=\"ftp\" type=\"ftp\" location=\"FR\" preference=\"60\">"
                "ftp://127.0.0.1:9/fedora/repodata/repomd.xml</url>\n";
        },
        {D::UnfetchableMirror});
    add("fractional_timestamps", [](MetalinkSpec& spec) {
        spec.timestamp = "1700000000.25";
        spec.alternates = replace_all(spec.alternates, "1699990000", "1699990000.5");
    });
    add("no_timestamp_no_size", [](MetalinkSpec& spec) {
        spec.timestamp.reset();
        spec.has_size = false;
    });
    add("numbers_as_librepo_reads_them", [](MetalinkSpec& spec) {
        spec.timestamp = "soon";
        spec.alternates = replace_all(spec.alternates, "<size>2970", "<size>2970 bytes");
    });
    add("uppercase_hashes",
        [](MetalinkSpec& spec) {
            spec.default_hashes = false;
            spec.hashes = {{"sha256", upper(hash_bytes(ChecksumType::Sha256, kRepomd))}};
        },
        {D::UppercaseDigest});
    add("unknown_hash_types_beside_known", [](MetalinkSpec& spec) {
        spec.default_hashes = false;
        spec.hashes = {{"sha3-256", std::string(64, 'b')},
                       {"sha256", hash_bytes(ChecksumType::Sha256, kRepomd)},
                       {"blake2b", "00"}};
    });
    add("only_unknown_hash_types",
        [](MetalinkSpec& spec) {
            spec.default_hashes = false;
            spec.hashes = {{"sha3-256", std::string(64, 'b')}};
            spec.alternates.clear();
        },
        {D::Unverifiable});
    add("weak_hash_wrong",
        [](MetalinkSpec& spec) {
            spec.default_hashes = false;
            spec.hashes = {{"md5", std::string(32, '0')},
                           {"sha256", hash_bytes(ChecksumType::Sha256, kRepomd)}};
        },
        {D::EveryHashChecked});
    add("size_wrong", [](MetalinkSpec& spec) { spec.size = "7"; }, {D::SizeMismatch});
    add("repomd_matches_only_the_alternate", [](MetalinkSpec& spec) {
        spec.default_hashes = false;
        spec.hashes = {{"sha256", std::string(64, 'c')}};
        spec.has_size = false;
        spec.alternates = "   <mm0:alternates><mm0:alternate><verification><hash type=\"sha256\">" +
                          hash_bytes(ChecksumType::Sha256, kRepomd) +
                          "</hash></verification></mm0:alternate></mm0:alternates>\n";
    });
    add("url_without_repomd_suffix", [](MetalinkSpec& spec) {
        spec.other_urls = "    <url preference=\"90\">https://127.0.0.1:9/pub/fedora/</url>\n";
    });
    add("preferences_out_of_range", [](MetalinkSpec& spec) {
        spec.other_urls =
            replace_all(replace_all(spec.other_urls, "\"90\"", "\"-1\""), "\"80\"", "\"high\"");
    });
    add("unsorted_preferences",
        [](MetalinkSpec& spec) {
            spec.repository_url = replace_all(spec.repository_url, "\"100\"", "\"50\"");
        },
        {D::MirrorOrder});
    add("other_files_and_extra_elements", [](MetalinkSpec& spec) {
        spec.before_file =
            "  <file name=\"other.xml\"><size>1</size><verification><hash type=\"md5\">zz</hash>"
            "</verification></file>\n";
        spec.in_file = "   <mm0:private>x</mm0:private>\n   <description>d</description>\n";
    });
    add("hash_without_type", [](MetalinkSpec& spec) {
        spec.in_file = "";
        spec.default_hashes = false;
        spec.hashes = {{"sha256", hash_bytes(ChecksumType::Sha256, kRepomd)}};
        spec.alternates = "   <verification><hash>abc</hash></verification>\n";
    });
    add("crlf_and_bom", [](MetalinkSpec& spec) {
        spec.crlf = true;
        spec.bom = true;
    });
    // Both refuse these.
    add("no_repomd_file", [](MetalinkSpec& spec) { spec.file_name = " name=\"other.xml\""; });
    add("nameless_file", [](MetalinkSpec& spec) { spec.before_file = "  <file></file>\n"; });
    add("no_urls", [](MetalinkSpec& spec) {
        spec.repository_url.clear();
        spec.other_urls.clear();
    });
    add("every_hash_wrong", [](MetalinkSpec& spec) {
        spec.default_hashes = false;
        spec.hashes = {{"sha256", std::string(64, '0')}};
    });
    cases.push_back({"truncated", {}, "<?xml version=\"1.0\"?>\n<metalink><files><file name=", {}});
    cases.push_back({"not_a_metalink", {}, "<?xml version=\"1.0\"?>\n<repomd/>\n", {}});
    return cases;
}

// ---------------------------------------------------------------------------------------------
// Metalink comparison

// The hashes of a librepo version (main entry or alternate) that rpmirror knows, as rpmirror
// keeps them: lowercase hex (the spelling's consequences show in the verdict). A hash that is no
// digest of its type refuses the metalink in the main entry (the verdict shows it) and is
// dropped from an alternate.
std::vector<std::pair<ChecksumType, std::string>> known_hashes(const json& hashes) {
    std::vector<std::pair<ChecksumType, std::string>> known;
    for (const json& hash : hashes) {
        const auto type = parse_checksum_type(text_of(hash[0]));
        const std::string hex = text::to_lower(text::trim(text_of(hash[1])));
        if (type && is_valid_hex_digest(*type, hex)) {
            known.emplace_back(*type, hex);
        }
    }
    return known;
}

void compare_version(std::vector<Difference>& differences, const std::string& what,
                     const json& theirs, const MetalinkFileVersion& ours) {
    const auto number = [](const json& value) {
        return value.is_number() ? value.get<std::int64_t>() : 0;
    };
    // Numbers: librepo's strtoll base 0 reads "010" and "0x10" otherwise (NumberBase); a
    // negative size is none to rpmirror (NegativeSize).
    if (number(theirs["timestamp"]) != ours.timestamp.value_or(0)) {
        differences.push_back({D::NumberBase, what + " timestamp: librepo " +
                                                  theirs["timestamp"].dump() + ", rpmirror " +
                                                  std::to_string(ours.timestamp.value_or(0))});
    }
    if (number(theirs["size"]) != static_cast<std::int64_t>(ours.size.value_or(0))) {
        const D kind = number(theirs["size"]) < 0 && !ours.size ? D::NegativeSize : D::NumberBase;
        differences.push_back({kind, what + " size: librepo " + theirs["size"].dump() +
                                         ", rpmirror " + std::to_string(ours.size.value_or(0))});
    }
    std::vector<std::pair<ChecksumType, std::string>> mine;
    for (const MetalinkHash& hash : ours.hashes) {
        mine.emplace_back(hash.type, hash.hex);
    }
    if (known_hashes(theirs["hashes"]) != mine) {
        differences.push_back(
            {std::nullopt, what + " hashes: librepo " + theirs["hashes"].dump().substr(0, 300)});
    }
}

bool is_unfetchable(std::string_view url) {
    return url.starts_with("ftp://") || url.starts_with("rsync://");
}

// A metalink's ftp:// and rsync:// mirrors, and a <url> that is no URL rpmirror fetches at all
// ("md5", "file ://x"): librepo lists them, rpmirror skips them.
bool is_unfetched_metalink_url(std::string_view url) {
    return !url.starts_with("http://") && !url.starts_with("https://") &&
           !url.starts_with("file://");
}

// librepo's mirrors against the ones rpmirror would use.
void compare_mirrors(std::vector<Difference>& differences, const json& theirs,
                     const std::vector<std::string>& ours) {
    std::vector<std::string> librepo;
    for (const json& mirror : theirs) {
        const std::string url = text_of(mirror);
        if (const std::string trimmed(text::trim(url));
            trimmed != url && !is_unfetched_metalink_url(trimmed) &&
            std::find(ours.begin(), ours.end(), url) == ours.end()) {
            differences.push_back({D::TrimmedText, "librepo keeps the mirror \"" + url + "\""});
            librepo.push_back(trimmed);
        } else if (is_unfetched_metalink_url(url)) {
            differences.push_back({D::UnfetchableMirror, "librepo also lists " + url});
        } else {
            librepo.push_back(url);
        }
    }
    if (librepo == ours) {
        return;
    }
    std::vector<std::string> sorted_librepo = librepo;
    std::vector<std::string> sorted_ours = ours;
    std::sort(sorted_librepo.begin(), sorted_librepo.end());
    std::sort(sorted_ours.begin(), sorted_ours.end());
    differences.push_back(
        {sorted_librepo == sorted_ours ? std::optional<D>(D::MirrorOrder) : std::nullopt,
         "mirrors: librepo " + json(librepo).dump() + ", rpmirror " + json(ours).dump()});
}

// `repository` is the base URL of the one mirror that serves repomd.xml (file://): a metalink
// that does not lead rpmirror there is one it could not fetch repomd.xml through.
std::vector<Difference> compare_metalink(const json& librepo, const std::string& document,
                                         const std::string& list_url,
                                         const std::string& repository) {
    std::vector<Difference> differences;
    std::optional<Error> refusal;
    auto parsed = parse_metalink(document, list_url);
    std::vector<std::string> mirrors;
    if (!parsed) {
        refusal = parsed.error();
    } else if (auto usable = usable_listed_mirrors(parsed->base_urls(), list_url); !usable) {
        refusal = usable.error();
    } else if (auto verified = verify_repomd_against_metalink(
                   std::as_bytes(std::span(kRepomd.data(), kRepomd.size())), *parsed);
               !verified) {
        mirrors = *usable;
        refusal = verified.error();
    } else {
        mirrors = *usable;
        if (std::find(mirrors.begin(), mirrors.end(), repository) == mirrors.end()) {
            refusal = Error{ErrorCode::Network, "no mirror serves repomd.xml", list_url, 0};
        }
    }
    const bool librepo_accepts = librepo["ok"].get<bool>() && librepo["verify"]["ok"].get<bool>();
    if (librepo_accepts && refusal) {
        std::optional<D> kind;
        if (refusal->message.find("no hash of a known type") != std::string::npos) {
            kind = D::Unverifiable;
        } else if (refusal->message.find("<hash type=") != std::string::npos &&
                   refusal->message.find("digest") != std::string::npos) {
            // A hash that is no digest fails as one that does not match; librepo checks only
            // the strongest.
            kind = D::EveryHashChecked;
        } else if (refusal->code == ErrorCode::Corrupt && parsed) {
            // librepo checks the strongest hash only and never the size.
            const bool size_differs = parsed->repomd.size && *parsed->repomd.size != kRepomd.size();
            kind = size_differs ? D::SizeMismatch : D::EveryHashChecked;
        }
        differences.push_back(
            {kind, "verdict: librepo accepts, rpmirror refuses: " + refusal->to_string()});
    } else if (!librepo_accepts && !refusal) {
        const std::string error = text_of(librepo["error"]) + text_of(librepo["verify"]["error"]);
        const bool upper_hash =
            parsed && std::any_of(librepo["metalink"]["hashes"].begin(),
                                  librepo["metalink"]["hashes"].end(), [](const json& hash) {
                                      const std::string hex = text_of(hash[1]);
                                      return hex != text::to_lower(hex);
                                  });
        differences.push_back({upper_hash ? std::optional<D>(D::UppercaseDigest) : std::nullopt,
                               "verdict: rpmirror accepts, librepo refuses: " + error});
    }
    if (!librepo["ok"].get<bool>() || !parsed) {
        return differences;
    }
    const json& metalink = librepo["metalink"];
    compare_version(differences, "repomd.xml", metalink, parsed->repomd);
    // python3-librepo leaves "alternates" out when there are none.
    const json librepo_alternates = metalink.value("alternates", json::array());
    std::vector<json> alternates;
    for (const json& alternate : librepo_alternates) {
        if (!known_hashes(alternate["hashes"]).empty()) {  // rpmirror drops the others
            alternates.push_back(alternate);
        }
    }
    if (alternates.size() != parsed->alternates.size()) {
        differences.push_back({std::nullopt, "alternates: librepo " + librepo_alternates.dump()});
    } else {
        for (std::size_t index = 0; index < alternates.size(); ++index) {
            compare_version(differences, "alternate " + std::to_string(index), alternates[index],
                            parsed->alternates[index]);
        }
    }
    // URLs by their text: location, preference, and the protocol where librepo has one (rpmirror
    // takes a missing one from the URL's scheme).
    // rpmirror trims a URL's text, librepo keeps its whitespace (TrimmedText).
    std::multimap<std::string, const json*> librepo_urls;  // a <url> may be listed twice
    std::size_t librepo_url_count = 0;
    for (const json& url : metalink["urls"]) {
        const std::string text = text_of(url["url"]);
        const std::string trimmed(text::trim(text));
        if (trimmed != text) {
            differences.push_back({D::TrimmedText, "librepo keeps <url> \"" + text + "\""});
        }
        if (!trimmed.empty()) {  // librepo skips an empty <url> too
            librepo_urls.emplace(trimmed, &url);
            ++librepo_url_count;
        }
    }
    if (librepo_url_count != parsed->urls.size()) {
        differences.push_back({std::nullopt, "urls: librepo " + metalink["urls"].dump()});
    }
    const auto same = [](const std::string& librepo, const std::string& ours) {
        return librepo == ours || librepo == replace_all(ours, "&", "&#38;");
    };
    for (const MetalinkUrl& url : parsed->urls) {
        // Of librepo's <url>s with this text, the one that reads alike (else the first).
        const auto [first, last] = librepo_urls.equal_range(url.url);
        if (first == last) {
            differences.push_back({std::nullopt, "url only rpmirror has: " + url.url});
            continue;
        }
        auto found = std::find_if(first, last, [&](const auto& entry) {
            const json& candidate = *entry.second;
            return same(text_of(candidate["location"]), url.location) &&
                   candidate["preference"].get<int>() == url.preference &&
                   (text_of(candidate["protocol"]).empty() ||
                    same(text_of(candidate["protocol"]), url.protocol));
        });
        if (found == last) {
            found = first;
        }
        const json& theirs = *found->second;
        librepo_urls.erase(found);
        const bool escaped = text_of(theirs["location"]) != url.location ||
                             text_of(theirs["protocol"]) != url.protocol;
        if (theirs["preference"].get<int>() != url.preference) {
            differences.push_back({D::NumberBase, "url " + url.url + " preference: librepo " +
                                                      theirs["preference"].dump() + ", rpmirror " +
                                                      std::to_string(url.preference)});
        }
        if (!same(text_of(theirs["location"]), url.location) ||
            (!text_of(theirs["protocol"]).empty() &&
             !same(text_of(theirs["protocol"]), url.protocol))) {
            differences.push_back({std::nullopt, "url " + url.url + ": librepo " + theirs.dump() +
                                                     ", rpmirror " + url.protocol + " " +
                                                     url.location + " " +
                                                     std::to_string(url.preference)});
        } else if (escaped && theirs["protocol"].is_string()) {
            differences.push_back({D::EscapedAmpersand, "url " + url.url + ": librepo " +
                                                            theirs.dump() + ", rpmirror " +
                                                            url.protocol + " " + url.location});
        }
    }
    compare_mirrors(differences, librepo["mirrors"], mirrors);
    return differences;
}

TEST(DifferentialMetalink, MetalinksReadAsLibrepoReadsThemOrAsListed) {
    TempDir scratch;
    const std::filesystem::path repository = scratch / "repository";
    TempDir::write_at(repository / "repodata" / "repomd.xml", kRepomd);
    const std::string repository_url = "file://" + repository.string() + "/";
    const std::vector<MetalinkCase> cases = metalink_cases();
    json manifest = json::array();
    std::vector<std::string> documents;
    for (const MetalinkCase& metalink_case : cases) {
        documents.push_back(
            metalink_case.document.value_or(metalink_case.spec.render(repository_url)));
        const std::filesystem::path path =
            scratch.write(metalink_case.name + ".metalink", documents.back());
        manifest.push_back({{"name", metalink_case.name}, {"kind", "metalink"}, {"path", path}});
    }
    const json librepo = run_librepo(manifest, scratch.path());
    ASSERT_FALSE(librepo.contains("error")) << text_of(librepo["error"]);
    for (std::size_t index = 0; index < cases.size(); ++index) {
        const MetalinkCase& metalink_case = cases[index];
        SCOPED_TRACE(metalink_case.name);
        const std::string list_url =
            "file://" + (scratch / (metalink_case.name + ".metalink")).string();
        std::vector<Difference> differences;
        try {
            differences = compare_metalink(librepo[metalink_case.name], documents[index], list_url,
                                           repository_url);
        } catch (const json::exception& error) {
            ADD_FAILURE() << "case " << metalink_case.name << ": librepo's answer "
                          << librepo[metalink_case.name].dump()
                          << " is not as expected: " << error.what();
            continue;
        }
        EXPECT_EQ(kinds_of(differences), names_of(metalink_case.expected))
            << "case " << metalink_case.name << ":\n"
            << describe(differences)
            << "librepo: " << librepo[metalink_case.name].dump().substr(0, 800);
    }
}

// Random mutations of the MirrorManager-like metalink (random_campaign, mutate_document): read by
// both, every difference must be a listed Disagreement (the expected set of a random document is
// unknown, so any listed one is allowed); an unlisted one fails, printing the document.
TEST(DifferentialMetalink, RandomMutationsDisagreeOnlyAsListed) {
    const auto [seed, count] = random_campaign();
    std::mt19937 random(seed);
    TempDir scratch;
    const std::filesystem::path repository = scratch / "repository";
    TempDir::write_at(repository / "repodata" / "repomd.xml", kRepomd);
    const std::string baseline = MetalinkSpec{}.render("file://" + repository.string() + "/");
    json manifest = json::array();
    std::vector<std::string> documents;
    for (std::size_t index = 0; index < count; ++index) {
        const std::string name = "random_" + std::to_string(index);
        documents.push_back(mutate_document(baseline, random));
        const std::filesystem::path path = scratch.write(name + ".metalink", documents.back());
        manifest.push_back({{"name", name}, {"kind", "metalink"}, {"path", path}});
    }
    const json librepo = run_librepo(manifest, scratch.path());
    ASSERT_FALSE(librepo.contains("error")) << text_of(librepo["error"]);
    std::size_t both_accept = 0;
    std::size_t both_refuse = 0;
    for (std::size_t index = 0; index < count; ++index) {
        const std::string name = "random_" + std::to_string(index);
        ASSERT_TRUE(librepo.contains(name)) << name;
        std::vector<Difference> differences;
        try {
            differences = compare_metalink(librepo[name], documents[index],
                                           "file://" + (scratch / (name + ".metalink")).string(),
                                           "file://" + repository.string() + "/");
        } catch (const json::exception& error) {
            ADD_FAILURE() << name << ": librepo's answer " << librepo[name].dump().substr(0, 600)
                          << " is not as expected: " << error.what();
            continue;
        }
        const bool verdicts_differ = std::any_of(
            differences.begin(), differences.end(),
            [](const Difference& difference) { return difference.detail.starts_with("verdict"); });
        const bool librepo_accepts = librepo[name]["verify"]["ok"].get<bool>();
        both_accept += librepo_accepts && !verdicts_differ ? 1 : 0;
        both_refuse += !librepo_accepts && !verdicts_differ ? 1 : 0;
        EXPECT_EQ(kinds_of(differences).count("Unclassified"), 0U)
            << name << " (seed " << seed << "): a difference no Disagreement lists:\n"
            << describe(differences) << "librepo: " << librepo[name].dump().substr(0, 1500)
            << "\ndocument:\n"
            << documents[index].substr(0, 4000);
    }
    EXPECT_GT(both_accept, count / 20) << both_refuse << " refused by both";
    EXPECT_GT(both_refuse, count / 20) << both_accept << " accepted by both";
}

// ---------------------------------------------------------------------------------------------
// Mirrorlists

struct MirrorlistCase {
    std::string name;
    std::string text;
    std::set<Disagreement> expected;
};

std::vector<MirrorlistCase> mirrorlist_cases() {
    const std::string plain =
        "https://mirror-a.example/fedora/updates/40/x86_64/\n"
        "http://mirror-b.example/pub/fedora/updates/40/x86_64/\n";
    const std::string long_url = "https://mirror-l.example/" + std::string(5000, 'l') + "/";
    return {
        {"plain", plain, {}},
        {"comments_blank_lines_and_indentation",
         "# mirrors for updates-released-f40\n\n  https://mirror-a.example/u/\n\t"
         "http://mirror-b.example/u/\t \n   \n# end\n",
         {}},
        {"no_final_newline", "https://mirror-a.example/u/\nhttps://mirror-b.example/u/", {}},
        {"crlf", replace_all(plain, "\n", "\r\n"), {D::CarriageReturn}},
        {"utf8_bom", "\xEF\xBB\xBF" + plain, {D::TrimmedText}},
        {"ftp_and_rsync_mirrors",
         plain + "ftp://mirror-f.example/pub/u/\nrsync://mirror-r.example/u/\n",
         {D::UnfetchableMirror}},
        {"only_ftp", "ftp://mirror-f.example/pub/u/\n", {D::UnfetchableMirror}},
        {"relative_lines_and_words", plain + "mirror-c.example/u/\nfoo\n../x/\n", {}},
        {"local_path_and_file_url",
         plain + "/srv/mirror/u/\nfile:///srv/mirror/u/\n",
         {D::UnsafeMirror}},
        {"long_line", long_url + "\n" + plain, {D::LongLine}},
        // Both refuse: nothing to use.
        {"only_comments", "# no mirrors today\n\n", {}},
        {"empty", "", {}},
    };
}

std::vector<Difference> compare_mirrorlist(const json& librepo, const std::string& text) {
    constexpr std::string_view kListUrl = "https://mirrors.example/mirrorlist?repo=updates";
    std::vector<Difference> differences;
    std::optional<Error> refusal;
    std::vector<std::string> mirrors;
    auto parsed = parse_mirrorlist(text, kListUrl);
    if (!parsed) {
        refusal = parsed.error();
    } else if (auto usable = usable_listed_mirrors(*parsed, kListUrl); !usable) {
        refusal = usable.error();
    } else if (usable->empty()) {
        refusal = Error{ErrorCode::BadInput, "no mirror rpmirror can fetch from", "", 0};
    } else {
        mirrors = *usable;
    }
    const bool librepo_accepts = librepo["ok"].get<bool>();
    if (librepo_accepts && refusal) {
        std::optional<D> kind;
        if (refusal->code == ErrorCode::Unsafe) {
            kind = D::UnsafeMirror;
        } else if (parsed && std::all_of(parsed->begin(), parsed->end(), is_unfetchable)) {
            kind = D::UnfetchableMirror;
        }
        differences.push_back(
            {kind, "verdict: librepo accepts, rpmirror refuses: " + refusal->to_string()});
    } else if (!librepo_accepts && !refusal) {
        differences.push_back({std::nullopt, "verdict: rpmirror accepts, librepo refuses: " +
                                                 text_of(librepo["error"])});
    }
    if (!librepo_accepts || refusal || librepo["mirrors"].is_null()) {
        return differences;  // null: python3-librepo could not hand back a non-UTF-8 mirror
    }
    std::vector<std::string> librepo_mirrors;
    for (const json& mirror : librepo["mirrors"]) {
        const std::string url = text_of(mirror);
        if (is_unfetchable(url)) {
            differences.push_back({D::UnfetchableMirror, "librepo also lists " + url});
        } else {
            librepo_mirrors.push_back(url);
        }
    }
    // librepo reads lines with fgets(4096): a longer one is cut, its rest read as another line.
    bool long_line = false;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        long_line = long_line || end - at >= 4095;
        at = end + 1;
    }
    if (librepo_mirrors.size() != mirrors.size()) {
        differences.push_back({long_line ? std::optional<D>(D::LongLine) : std::nullopt,
                               "mirrors: librepo " + json(librepo_mirrors).dump() + ", rpmirror " +
                                   json(mirrors).dump()});
        return differences;
    }
    for (std::size_t index = 0; index < mirrors.size(); ++index) {
        const std::string& theirs = librepo_mirrors[index];
        const std::string& ours = mirrors[index];
        if (theirs == ours) {
            continue;
        }
        std::optional<D> kind;
        if (theirs == ours + "\r") {
            kind = D::CarriageReturn;
        } else if (theirs == "\xEF\xBB\xBF" + ours) {
            kind = D::TrimmedText;
        } else if (long_line && ours.starts_with(theirs)) {
            kind = D::LongLine;  // cut at 4095 bytes of the line, indentation included
        }
        differences.push_back({kind, "mirror " + std::to_string(index) + ": librepo \"" +
                                         theirs.substr(0, 80) + "\", rpmirror \"" +
                                         ours.substr(0, 80) + "\""});
    }
    return differences;
}

TEST(DifferentialMirrorlist, MirrorlistsReadAsLibrepoReadsThemOrAsListed) {
    TempDir scratch;
    const std::vector<MirrorlistCase> cases = mirrorlist_cases();
    json manifest = json::array();
    for (const MirrorlistCase& mirrorlist_case : cases) {
        const auto path = scratch.write(mirrorlist_case.name + ".mirrorlist", mirrorlist_case.text);
        manifest.push_back(
            {{"name", mirrorlist_case.name}, {"kind", "mirrorlist"}, {"path", path}});
    }
    const json librepo = run_librepo(manifest, scratch.path());
    ASSERT_FALSE(librepo.contains("error")) << text_of(librepo["error"]);
    for (const MirrorlistCase& mirrorlist_case : cases) {
        SCOPED_TRACE(mirrorlist_case.name);
        const auto differences =
            compare_mirrorlist(librepo[mirrorlist_case.name], mirrorlist_case.text);
        EXPECT_EQ(kinds_of(differences), names_of(mirrorlist_case.expected))
            << "case " << mirrorlist_case.name << ":\n"
            << describe(differences)
            << "librepo: " << librepo[mirrorlist_case.name].dump().substr(0, 800);
    }
}

// Random mutations of a mirrorlist with comments and a few mirrors (random_campaign,
// mutate_document): every difference must be a listed Disagreement.
TEST(DifferentialMirrorlist, RandomMutationsDisagreeOnlyAsListed) {
    const auto [seed, count] = random_campaign();
    std::mt19937 random(seed);
    const std::string baseline =
        "# mirrors for updates-released-f40 arch=x86_64 country=global\n"
        "https://mirror-a.example/fedora/updates/40/x86_64/\n"
        "http://mirror-b.example/pub/fedora/updates/40/x86_64/\n"
        "  https://mirror-c.example/f/updates/40/x86_64/\n"
        "\n"
        "https://mirror-d.example/linux/updates/40/Everything/x86_64/\n";
    TempDir scratch;
    json manifest = json::array();
    std::vector<std::string> texts;
    for (std::size_t index = 0; index < count; ++index) {
        const std::string name = "random_" + std::to_string(index);
        texts.push_back(mutate_document(baseline, random));
        const auto path = scratch.write(name + ".mirrorlist", texts.back());
        manifest.push_back({{"name", name}, {"kind", "mirrorlist"}, {"path", path}});
    }
    const json librepo = run_librepo(manifest, scratch.path());
    ASSERT_FALSE(librepo.contains("error")) << text_of(librepo["error"]);
    for (std::size_t index = 0; index < count; ++index) {
        const std::string name = "random_" + std::to_string(index);
        ASSERT_TRUE(librepo.contains(name)) << name;
        const auto differences = compare_mirrorlist(librepo[name], texts[index]);
        EXPECT_EQ(kinds_of(differences).count("Unclassified"), 0U)
            << name << " (seed " << seed << "): a difference no Disagreement lists:\n"
            << describe(differences) << "librepo: " << librepo[name].dump().substr(0, 1500)
            << "\ntext:\n"
            << texts[index].substr(0, 4000);
    }
}

}  // namespace
}  // namespace rpmirror::test::differential
