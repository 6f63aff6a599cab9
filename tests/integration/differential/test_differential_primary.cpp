// primary.xml read by rpmirror and by libsolv (libsolv-tools: rpmmd2solv, then dumpsolv -j), the
// reader dnf resolves packages with, on documents the test writes (see differential.hpp).
//
// rpmirror's verdict is what a sync does with the packages: parse_primary_file (a package it
// skips fails the repository), select_packages (everything) and plan_sync (every href and
// xml:base checked); libsolv's is rpmmd2solv's exit status. Fields, per package (matched by
// name, arch and EVR): checksum, location (libsolv's media dir and file, the file being
// name-version-release.arch.rpm when it says so), xml:base, download size and build time, and
// the package count.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <regex>

#include "checksum/hasher.hpp"
#include "differential.hpp"
#include "index/index.hpp"
#include "plan/plan.hpp"
#include "support/temp_dir.hpp"
#include "util/text.hpp"

namespace rpmirror::test::differential {
namespace {

using nlohmann::json;
using D = Disagreement;

struct PackageSpec {
    std::string name = "bash";
    std::string arch = "x86_64";
    std::optional<std::string> epoch = "0";
    std::string version = "5.2.26";
    std::string release = "3.fc40";
    std::optional<std::string> checksum_type = "sha256";
    std::optional<std::string> digest;  // default: the sha256 of the NEVRA
    bool has_checksum = true;
    std::optional<std::string> size = "1875331";
    std::string build_time = "1706140800";
    std::optional<std::string> href;  // default: Packages/<initial>/<n>-<v>-<r>.<a>.rpm
    std::optional<std::string> xml_base;
    bool has_location = true;
    std::string description = "The GNU Bourne Again shell.";
    std::string extra;  // raw XML inside <format>

    std::string file_name() const {
        return name + "-" + version + "-" + release + "." + arch + ".rpm";
    }

    std::string render() const {
        const std::string nevra = name + "-" + epoch.value_or("0") + ":" + version + "-" + release;
        const auto type = parse_checksum_type(checksum_type.value_or("sha256"));
        return "<package type=\"rpm\">\n  <name>" + name + "</name>\n  <arch>" + arch +
               "</arch>\n  <version" + (epoch ? " epoch=\"" + *epoch + "\"" : "") + " ver=\"" +
               version + "\" rel=\"" + release + "\"/>\n" +
               (has_checksum
                    ? "  <checksum" +
                          (checksum_type ? " type=\"" + *checksum_type + "\"" : std::string()) +
                          " pkgid=\"YES\">" +
                          digest.value_or(hash_bytes(type ? *type : ChecksumType::Sha256, nevra)) +
                          "</checksum>\n"
                    : "") +
               "  <summary>" + name + "</summary>\n  <description>" + description +
               "</description>\n  <packager>Fedora Project</packager>\n"
               "  <url>https://www.gnu.org/software/bash</url>\n  <time file=\"1706150000\" "
               "build=\"" +
               build_time + "\"/>\n" +
               (size ? "  <size package=\"" + *size +
                           "\" installed=\"8315287\" archive=\"8341000\"/>\n"
                     : "") +
               (has_location
                    ? "  <location" + (xml_base ? " xml:base=\"" + *xml_base + "\"" : "") +
                          " href=\"" +
                          href.value_or("Packages/" + name.substr(0, 1) + "/" + file_name()) +
                          "\"/>\n"
                    : "") +
               "  <format>\n    <rpm:license>GPL-3.0-or-later</rpm:license>\n"
               "    <rpm:sourcerpm>" +
               name + "-" + version + "-" + release +
               ".src.rpm</rpm:sourcerpm>\n    <rpm:provides>\n      <rpm:entry name=\"" + name +
               "\" flags=\"EQ\" epoch=\"0\" ver=\"" + version + "\" rel=\"" + release +
               "\"/>\n    </rpm:provides>\n    <file>/usr/bin/" + name + "</file>\n" + extra +
               "  </format>\n</package>\n";
    }
};

struct PrimaryCase {
    std::string name;
    std::vector<PackageSpec> packages;
    std::string declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    std::optional<std::string> declared_count;  // default: the number of packages
    std::string root_extra;                     // more attributes on <metadata>
    bool crlf = false;
    bool bom = false;
    std::optional<std::string> document;  // replaces the rendering
    std::set<Disagreement> expected;

    std::string render() const {
        if (document) {
            return *document;
        }
        std::string xml = declaration +
                          "<metadata xmlns=\"http://linux.duke.edu/metadata/common\" "
                          "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\"" +
                          root_extra + " packages=\"" +
                          declared_count.value_or(std::to_string(packages.size())) + "\">\n";
        for (const PackageSpec& package : packages) {
            xml += package.render();
        }
        xml += "</metadata>\n";
        if (crlf) {
            std::string converted;
            for (const char c : xml) {
                converted += c == '\n' ? std::string("\r\n") : std::string(1, c);
            }
            xml = converted;
        }
        return bom ? "\xEF\xBB\xBF" + xml : xml;
    }
};

std::vector<PackageSpec> three_packages() {
    PackageSpec noarch;
    noarch.name = "tzdata";
    noarch.arch = "noarch";
    noarch.version = "2024a";
    noarch.release = "5.fc40";
    PackageSpec source = PackageSpec{};
    source.arch = "src";
    source.href = "SRPMS/bash-5.2.26-3.fc40.src.rpm";
    PackageSpec epoch;
    epoch.name = "perl-Carp";
    epoch.arch = "noarch";
    epoch.epoch = "1";
    epoch.version = "1.54";
    epoch.release = "502.fc40";
    return {PackageSpec{}, noarch, source, epoch};
}

PrimaryCase sample_case(std::string name) {
    PrimaryCase primary_case;
    primary_case.name = std::move(name);
    primary_case.packages = three_packages();
    return primary_case;
}

std::vector<PrimaryCase> primary_cases() {
    std::vector<PrimaryCase> cases;
    const auto add = [&cases](std::string name, const std::function<void(PrimaryCase&)>& change,
                              std::set<Disagreement> expected = {}) {
        PrimaryCase primary_case = sample_case(std::move(name));
        primary_case.expected = std::move(expected);
        change(primary_case);
        cases.push_back(std::move(primary_case));
    };
    const auto first = [](PrimaryCase& primary_case) -> PackageSpec& {
        return primary_case.packages.front();
    };
    add("createrepo_c", [](PrimaryCase&) {});
    for (const char* type : {"sha", "sha1", "md5", "sha512", "SHA256"}) {
        add(std::string("checksum_type_") + type, [type](PrimaryCase& primary_case) {
            for (PackageSpec& package : primary_case.packages) {
                package.checksum_type = type;
            }
        });
    }
    add("uppercase_digest", [&first](PrimaryCase& primary_case) {
        std::string digest = hash_bytes(ChecksumType::Sha256, "x");
        for (char& c : digest) {
            c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        first(primary_case).digest = digest;
    });
    add("xml_base_https", [&first](PrimaryCase& primary_case) {
        first(primary_case).xml_base = "https://cdn.example/f40/";
    });
    add("no_epoch", [&first](PrimaryCase& primary_case) { first(primary_case).epoch.reset(); });
    add("no_size", [&first](PrimaryCase& primary_case) { first(primary_case).size.reset(); });
    add("latin1_declared", [&first](PrimaryCase& primary_case) {
        primary_case.declaration = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n";
        first(primary_case).description = "Caf\xE9 cr\xE8me";
    });
    add("crlf_and_bom", [](PrimaryCase& primary_case) {
        primary_case.crlf = true;
        primary_case.bom = true;
    });
    add("long_description", [&first](PrimaryCase& primary_case) {
        first(primary_case).description = std::string(1'000'000, 'd');
    });
    add("extra_namespaces_and_elements", [&first](PrimaryCase& primary_case) {
        primary_case.root_extra = " xmlns:suse=\"http://novell.com/package/metadata/suse/common\"";
        first(primary_case).extra =
            "    <suse:keyword>shell</suse:keyword>\n    <rpm:header-range start=\"4504\" "
            "end=\"24000\"/>\n    <unknown-element a=\"b\"><x/></unknown-element>\n";
    });
    add("declared_count_wrong",
        [](PrimaryCase& primary_case) { primary_case.declared_count = "7"; });
    add("deep_href",
        [&first](PrimaryCase& primary_case) { first(primary_case).href = "a/b/c/d/e/f/bash.rpm"; });
    add("href_dot_segments", [&first](PrimaryCase& primary_case) {
        first(primary_case).href = "./Packages/b/../b/bash-5.2.26-3.fc40.x86_64.rpm";
    });
    add("no_packages", [](PrimaryCase& primary_case) { primary_case.packages.clear(); });
    add("file_time_not_a_number", [](PrimaryCase& primary_case) {
        primary_case.document = replace_all(primary_case.render(), "time file=\"1706150000\"",
                                            "time file=\"yesterday\"");
    });
    add("empty_release", [&first](PrimaryCase& primary_case) {
        first(primary_case).release = "";
        first(primary_case).href = "Packages/b/bash.rpm";
    });
    add("epoch_with_leading_zero",
        [&first](PrimaryCase& primary_case) { first(primary_case).epoch = "010"; });
    add("name_with_white_space",
        [&first](PrimaryCase& primary_case) {
            first(primary_case).name = " bash ";
            first(primary_case).href = "Packages/b/bash.rpm";
        },
        {D::TrimmedText});
    add("element_inside_arch",
        [&first](PrimaryCase& primary_case) {
            first(primary_case).arch = "x86<b/>_64";
            first(primary_case).href = "Packages/b/bash.rpm";
        },
        {D::IncompletePackage});
    add("newline_before_digest",
        [&first](PrimaryCase& primary_case) {
            first(primary_case).digest = "\n" + hash_bytes(ChecksumType::Sha256, "x");
        },
        {D::PaddedDigest});
    // rpmirror refuses these: the repository fails.
    add("package_without_checksum",
        [&first](PrimaryCase& primary_case) { first(primary_case).has_checksum = false; },
        {D::Unverifiable});
    add("href_escaping_the_repository",
        [&first](PrimaryCase& primary_case) { first(primary_case).href = "../../etc/bash.rpm"; },
        {D::UnsafeHref});
    add("absolute_href",
        [&first](PrimaryCase& primary_case) { first(primary_case).href = "/etc/bash.rpm"; },
        {D::UnsafeHref});
    add("xml_base_file_url",
        [&first](PrimaryCase& primary_case) { first(primary_case).xml_base = "file:///srv/"; },
        {D::UnsafeXmlBase});
    for (const char* epoch : {"one", "-1", "4294967296"}) {
        add(std::string("epoch_") + epoch,
            [epoch, &first](PrimaryCase& primary_case) { first(primary_case).epoch = epoch; },
            {D::MalformedNumber});
    }
    for (const char* size : {"abc", "-1", "1.5", "99999999999999999999"}) {
        add(std::string("size_") + size,
            [size, &first](PrimaryCase& primary_case) { first(primary_case).size = size; },
            {D::MalformedNumber});
    }
    add("build_time_not_a_number",
        [&first](PrimaryCase& primary_case) { first(primary_case).build_time = "1.5"; },
        {D::MalformedNumber});
    add("two_checksums", [](PrimaryCase& primary_case) {
        const std::string document = primary_case.render();
        const std::size_t start = document.find("  <checksum");
        const std::size_t end = document.find('\n', start) + 1;
        primary_case.document =
            document.substr(0, end) + document.substr(start, end - start) + document.substr(end);
    });
    // An invalid one before it: libsolv refuses the package, and so does rpmirror.
    add("two_checksums_the_first_invalid", [](PrimaryCase& primary_case) {
        const std::string document = primary_case.render();
        const std::size_t start = document.find("  <checksum");
        primary_case.document = document.substr(0, start) +
                                "  <checksum type=\"abc\" pkgid=\"YES\">00</checksum>\n" +
                                document.substr(start);
    });
    add("xml_version_not_1",
        [](PrimaryCase& primary_case) {
            primary_case.declaration = "<?xml version=\"2.0\" encoding=\"UTF-8\"?>\n";
        },
        {D::XmlVersion});
    // Both refuse.
    PrimaryCase truncated = sample_case("truncated");
    truncated.document = truncated.render().substr(0, 900);
    cases.push_back(truncated);
    PrimaryCase not_utf8 = sample_case("not_utf8_undeclared");
    not_utf8.packages.front().description = "Caf\xE9";
    cases.push_back(not_utf8);

    // Mutations: the document cut short, and each element of the first package left out.
    const std::string baseline = sample_case("baseline").render();
    for (std::size_t eighth = 1; eighth < 8; ++eighth) {
        PrimaryCase cut = sample_case("mutation_truncated_" + std::to_string(eighth) + "_of_8");
        cut.document = baseline.substr(0, baseline.size() * eighth / 8);
        cases.push_back(cut);
    }
    for (const auto& [element, expected] :
         std::vector<std::pair<std::string, std::set<D>>>{{"name", {D::IncompletePackage}},
                                                          {"arch", {D::IncompletePackage}},
                                                          {"version", {D::IncompletePackage}},
                                                          {"checksum", {D::Unverifiable}},
                                                          {"time", {}},
                                                          {"size", {}},
                                                          {"location", {D::IncompletePackage}},
                                                          {"format", {}}}) {
        PrimaryCase without = sample_case("mutation_no_" + element);
        std::string document = baseline;
        const std::size_t start = document.find("  <" + element);
        const std::size_t end = element == "format" ? document.find("</format>\n", start) + 10
                                                    : document.find('\n', start) + 1;
        document.erase(start, end - start);
        without.document = document;
        without.expected = expected;
        cases.push_back(without);
    }
    return cases;
}

// ---------------------------------------------------------------------------------------------

struct Package {
    std::string checksum;  // "type:hex"
    std::string location;
    std::string base;
    std::int64_t size = 0;
    std::int64_t build_time = 0;
    bool padded = false;  // libsolv's name or arch has white space around it
};

std::string key(std::string_view name, std::string_view arch, std::string_view evr) {
    return std::string(name) + "." + std::string(arch) + " " + std::string(evr);
}

// libsolv's packages by key, or nullopt iff rpmmd2solv refused the document.
std::optional<std::map<std::string, Package>> read_with_libsolv(
    const std::filesystem::path& primary, const std::filesystem::path& work, std::string& log) {
    const std::filesystem::path solv = work / "primary.solv";
    const std::filesystem::path dump = work / "primary.json";
    const int status =
        run_command({"sh", "-c", "rpmmd2solv < \"$0\" > \"$1\" && dumpsolv -j \"$1\" > \"$2\"",
                     primary.string(), solv.string(), dump.string()},
                    work / "libsolv.log");
    log = read_file(work / "libsolv.log");
    if (status != 0) {
        return std::nullopt;
    }
    const json document = json::parse(read_file(dump));
    std::map<std::string, Package> packages;
    for (const json& solvable : document["repositories"][0].value("solvables", json::array())) {
        // rpmirror trims the name and arch; libsolv keeps " x86_64" (TrimmedText).
        const std::string raw_name = solvable.value("solvable:name", "");
        const std::string raw_arch = solvable.value("solvable:arch", "");
        const std::string name(text::trim(raw_name));
        const std::string arch(text::trim(raw_arch));
        std::string evr = solvable.value("solvable:evr", "");
        // rpm compares epochs as numbers: libsolv keeps the text ("010:1-2"), rpmirror the number.
        // rel="" is "1-" to libsolv, no rel "1": an empty release to rpmirror either way.
        if (!evr.empty() && evr.back() == '-') {
            evr.pop_back();
        }
        const std::size_t colon = evr.find(':');
        if (colon != std::string::npos && colon > 1 && evr[0] == '0' &&
            evr.find_first_not_of("0123456789") == colon) {
            const std::size_t digits = evr.find_first_not_of('0');
            evr.erase(0, digits == colon ? colon + 1 : digits);
        }
        Package package;
        if (solvable.contains("solvable:checksum")) {
            package.checksum = solvable["solvable:checksum"].value("type", "") + ":" +
                               solvable["solvable:checksum"].value("value", "");
        }
        // solvable_lookup_location: the media file, or "n-v-r.a.rpm" when it is void.
        std::string file = solvable.value("solvable:mediafile", json()).is_string()
                               ? solvable["solvable:mediafile"].get<std::string>()
                               : name + "-" + evr.substr(evr.find(':') + 1) + "." + arch + ".rpm";
        const std::string dir = solvable.value("solvable:mediadir", json()).is_string()
                                    ? solvable["solvable:mediadir"].get<std::string>()
                                    : "";
        package.location = dir.empty() ? file : dir + "/" + file;
        package.base = solvable.value("solvable:mediabase", json()).is_string()
                           ? solvable["solvable:mediabase"].get<std::string>()
                           : "";
        package.size = solvable.value("solvable:downloadsize", std::int64_t{0});
        package.build_time = solvable.value("solvable:buildtime", std::int64_t{0});
        package.padded = name != raw_name || arch != raw_arch;
        packages[key(name, arch, evr)] = package;
    }
    return packages;
}

// True iff `document` opens with an XML declaration whose version is not "1." and digits.
bool declares_another_xml_version(std::string_view document) {
    static const std::regex kVersion(R"(^(\xEF\xBB\xBF)?<\?xml\s+version\s*=\s*["']([^"']*)["'])");
    std::match_results<std::string_view::const_iterator> match;
    if (!std::regex_search(document.begin(), document.end(), match, kVersion)) {
        return false;
    }
    static const std::regex kOne(R"(1\.[0-9]+)");
    return !std::regex_match(match[2].first, match[2].second, kOne);
}

struct CaseVerdict {
    bool libsolv_accepts = false;
    bool rpmirror_accepts = false;
    std::vector<Difference> differences;
};

CaseVerdict compare_case(const PrimaryCase& primary_case, const TempDir& scratch) {
    const std::filesystem::path work = scratch / primary_case.name;
    const std::filesystem::path primary =
        TempDir::write_at(work / "primary.xml", primary_case.render());
    std::string libsolv_log;
    const auto theirs = read_with_libsolv(primary, work, libsolv_log);
    std::vector<Difference> differences;

    std::optional<Error> refusal;
    std::optional<D> refusal_kind;
    auto index = parse_primary_file(primary);
    if (!index) {
        refusal = index.error();
    } else if (!index->issues().empty() && !index->issues().front().skipped_package.empty()) {
        const std::string& message = index->issues().front().message;
        refusal = Error{ErrorCode::BadInput, message, primary.string(), 0};
        if (message.find("without <checksum>") != std::string::npos) {
            refusal_kind = D::Unverifiable;
        } else if (message.find("without <name>") != std::string::npos ||
                   message.find("without <arch>") != std::string::npos ||
                   message.find("without <version") != std::string::npos ||
                   message.find("without <location") != std::string::npos) {
            refusal_kind = D::IncompletePackage;
        } else if (message.find("non-numeric") != std::string::npos ||
                   message.find("absurd size") != std::string::npos ||
                   message.find("negative size") != std::string::npos) {
            refusal_kind = D::MalformedNumber;
        }
    } else {
        const Selection selection = select_packages(*index, SelectionOptions{});
        auto plan = plan_sync(*index, selection, work / "mirror", PathPolicy{}, "differential");
        if (!plan) {
            refusal = plan.error();
            refusal_kind = plan.error().message.find("xml:base") != std::string::npos
                               ? D::UnsafeXmlBase
                               : D::UnsafeHref;
        }
    }
    if (!index && declares_another_xml_version(primary_case.render())) {
        refusal_kind = D::XmlVersion;
    }
    if (theirs && refusal) {
        differences.push_back({refusal_kind, "verdict: libsolv accepts, rpmirror refuses: " +
                                                 refusal->to_string().substr(0, 300)});
    } else if (!theirs && !refusal) {
        // rpmirror trims the digest's text; libsolv takes " abc\n" as it is, and refuses it.
        const bool padded = libsolv_log.find(" checksum") != std::string::npos &&
                            libsolv_log.find("invalid ") != std::string::npos;
        differences.push_back({padded ? std::optional(D::PaddedDigest) : std::nullopt,
                               "verdict: rpmirror accepts, libsolv refuses: " + libsolv_log});
    }
    CaseVerdict verdict{theirs.has_value(), !refusal, {}};
    if (!theirs || !index || refusal) {
        verdict.differences = std::move(differences);
        return verdict;
    }
    std::map<std::string, Package> ours;
    for (std::size_t position = 0; position < index->size(); ++position) {
        const PackageView view = (*index)[position];
        // libsolv writes no "-" before an empty release.
        const std::string evr = (view.epoch != 0 ? std::to_string(view.epoch) + ":" : "") +
                                std::string(view.version) +
                                (view.release.empty() ? "" : "-" + std::string(view.release));
        Package package;
        package.checksum =
            std::string(checksum_type_name(view.checksum_type)) + ":" + view.checksum_hex();
        package.location = std::string(view.location_href);
        package.base = std::string(view.location_base);
        package.size =
            view.package_size == kUnknownSize ? 0 : static_cast<std::int64_t>(view.package_size);
        package.build_time = view.build_time;
        ours[key(view.name, view.arch, evr)] = package;
    }
    if (ours.size() != theirs->size()) {
        differences.push_back({std::nullopt, "libsolv has " + std::to_string(theirs->size()) +
                                                 " packages, rpmirror " +
                                                 std::to_string(ours.size())});
    }
    for (const auto& [package_key, package] : ours) {
        const auto found = theirs->find(package_key);
        if (found == theirs->end()) {
            differences.push_back({std::nullopt, package_key + ": only rpmirror has it"});
            continue;
        }
        const Package& other = found->second;
        if (other.padded) {
            differences.push_back({D::TrimmedText, package_key + ": libsolv keeps the white space "
                                                                 "around its name or arch"});
        }
        const auto field = [&](const std::string& what, const std::string& libsolv,
                               const std::string& mine) {
            if (libsolv != mine) {
                differences.push_back({std::nullopt, package_key + " " + what + ": libsolv \"" +
                                                         libsolv.substr(0, 100) +
                                                         "\", rpmirror \"" + mine.substr(0, 100) +
                                                         "\""});
            }
        };
        field("checksum", other.checksum, package.checksum);
        // As the file each names: libsolv drops a leading "./".
        field("location", std::filesystem::path(other.location).lexically_normal().string(),
              std::filesystem::path(package.location).lexically_normal().string());
        field("xml:base", other.base, package.base);
        field("size", std::to_string(other.size), std::to_string(package.size));
        field("build time", std::to_string(other.build_time), std::to_string(package.build_time));
    }
    verdict.differences = std::move(differences);
    return verdict;
}

TEST(DifferentialPrimary, PrimaryReadAsLibsolvReadsItOrAsListed) {
    TempDir scratch;
    // Without the tools every document would look refused by libsolv: fail instead.
    ASSERT_EQ(run_command({"sh", "-c", "command -v rpmmd2solv && command -v dumpsolv"},
                          scratch / "tools.log"),
              0)
        << "rpmmd2solv and dumpsolv are missing: scripts/deps installs libsolv-tools";
    for (const PrimaryCase& primary_case : primary_cases()) {
        SCOPED_TRACE(primary_case.name);
        const std::vector<Difference> differences = compare_case(primary_case, scratch).differences;
        EXPECT_EQ(kinds_of(differences), names_of(primary_case.expected))
            << "case " << primary_case.name << ":\n"
            << describe(differences);
    }
}

// The random half: mutations of the four-package document, each read by both. Every difference
// must be one doc/sync.md lists; libsolv's verdict is rpmmd2solv's exit status, as above.
TEST(DifferentialPrimary, RandomMutationsDisagreeOnlyAsListed) {
    const auto [seed, count] = random_campaign();
    std::mt19937 random(seed);
    const std::string baseline = sample_case("baseline").render();
    TempDir scratch;
    std::size_t both_accept = 0;
    std::size_t both_refuse = 0;
    std::size_t listed = 0;
    for (std::size_t index = 0; index < count; ++index) {
        PrimaryCase mutated = sample_case("random_" + std::to_string(index));
        mutated.document = mutate_document(baseline, random);
        const CaseVerdict verdict = compare_case(mutated, scratch);
        both_accept += verdict.libsolv_accepts && verdict.rpmirror_accepts ? 1 : 0;
        both_refuse += !verdict.libsolv_accepts && !verdict.rpmirror_accepts ? 1 : 0;
        listed += verdict.differences.empty() ? 0 : 1;
        EXPECT_EQ(kinds_of(verdict.differences).count("Unclassified"), 0U)
            << mutated.name << " (seed " << seed << "): a difference no Disagreement lists:\n"
            << describe(verdict.differences) << "document:\n"
            << mutated.document->substr(0, 6000);
    }
    // The mutations bite both ways: some documents stay acceptable, some are broken.
    EXPECT_GT(both_accept, count / 20)
        << both_refuse << " refused by both, " << listed << " with listed differences";
    EXPECT_GT(both_refuse, count / 20) << both_accept << " accepted by both";
}

}  // namespace
}  // namespace rpmirror::test::differential
