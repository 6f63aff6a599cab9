#include "differential.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>

namespace rpmirror::test::differential {

std::string_view name(Disagreement disagreement) {
    switch (disagreement) {
        case Disagreement::Unverifiable:
            return "Unverifiable";
        case Disagreement::SizeMismatch:
            return "SizeMismatch";
        case Disagreement::OutsideRepodata:
            return "OutsideRepodata";
        case Disagreement::UnsafeXmlBase:
            return "UnsafeXmlBase";
        case Disagreement::UnsafeHref:
            return "UnsafeHref";
        case Disagreement::UnsafeMirror:
            return "UnsafeMirror";
        case Disagreement::UnfetchableMirror:
            return "UnfetchableMirror";
        case Disagreement::EveryHashChecked:
            return "EveryHashChecked";
        case Disagreement::IncompletePackage:
            return "IncompletePackage";
        case Disagreement::MalformedNumber:
            return "MalformedNumber";
        case Disagreement::XmlVersion:
            return "XmlVersion";
        case Disagreement::UppercaseDigest:
            return "UppercaseDigest";
        case Disagreement::PaddedDigest:
            return "PaddedDigest";
        case Disagreement::TrimmedText:
            return "TrimmedText";
        case Disagreement::NumberBase:
            return "NumberBase";
        case Disagreement::NegativeSize:
            return "NegativeSize";
        case Disagreement::MirrorOrder:
            return "MirrorOrder";
        case Disagreement::CarriageReturn:
            return "CarriageReturn";
        case Disagreement::LongLine:
            return "LongLine";
        case Disagreement::DuplicateRecord:
            return "DuplicateRecord";
        case Disagreement::EscapedAmpersand:
            return "EscapedAmpersand";
    }
    return "?";
}

std::set<std::string> kinds_of(const std::vector<Difference>& differences) {
    std::set<std::string> kinds;
    for (const Difference& difference : differences) {
        kinds.insert(difference.kind ? std::string(name(*difference.kind)) : "Unclassified");
    }
    return kinds;
}

std::set<std::string> names_of(const std::set<Disagreement>& expected) {
    std::set<std::string> names;
    for (const Disagreement disagreement : expected) {
        names.insert(std::string(name(disagreement)));
    }
    return names;
}

std::string describe(const std::vector<Difference>& differences) {
    std::string text;
    for (const Difference& difference : differences) {
        text += "  [" + (difference.kind ? std::string(name(*difference.kind)) : "Unclassified") +
                "] " + difference.detail + "\n";
    }
    return text.empty() ? "  (none)\n" : text;
}

nlohmann::json run_librepo(const nlohmann::json& manifest, const std::filesystem::path& scratch) {
    const std::filesystem::path manifest_path = scratch / "manifest.json";
    const std::filesystem::path output_path = scratch / "librepo.json";
    const std::filesystem::path log_path = scratch / "librepo.log";
    {
        std::ofstream stream(manifest_path);
        stream << manifest.dump();
    }
    const std::filesystem::path dumper =
        source_root() / "tests" / "integration" / "differential" / "librepo_dump.py";
    const int status = run_command(
        {"/usr/bin/python3", dumper.string(), manifest_path.string(), output_path.string()},
        log_path);
    if (status != 0) {
        return {{"error", "librepo_dump.py exited with " + std::to_string(status) + ":\n" +
                              read_file(log_path)}};
    }
    try {
        return nlohmann::json::parse(read_file(output_path));
    } catch (const nlohmann::json::exception& error) {
        return {{"error", std::string("librepo_dump.py wrote no JSON: ") + error.what()}};
    }
}

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

std::string upper(std::string text) {
    for (char& c : text) {
        if (c >= 'a' && c <= 'z') {
            c = static_cast<char>(c - 'a' + 'A');
        }
    }
    return text;
}

std::string text_of(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : std::string();
}

RandomCampaign random_campaign() {
    const char* seed = std::getenv("RPMIRROR_DIFFERENTIAL_SEED");
    const char* cases = std::getenv("RPMIRROR_DIFFERENTIAL_CASES");
    return {seed != nullptr ? static_cast<std::uint32_t>(std::stoul(seed)) : 20261204U,
            cases != nullptr ? static_cast<std::size_t>(std::stoul(cases)) : 400U};
}

std::string mutate_document(std::string document, std::mt19937& random) {
    static const std::vector<std::string> kTokens = {"",
                                                     " ",
                                                     "0",
                                                     "-1",
                                                     "1.5",
                                                     "0x10",
                                                     "010",
                                                     "99999999999999999999",
                                                     "abc",
                                                     "&amp;",
                                                     "&#0;",
                                                     "<",
                                                     "]]>",
                                                     "\xc3\xa9",
                                                     "\xff\xfe",
                                                     "sha",
                                                     "SHA256",
                                                     "md5",
                                                     "sha512",
                                                     "../x",
                                                     "/etc/passwd",
                                                     "repodata//x.xml",
                                                     "file:///etc/",
                                                     "http://127.0.0.1:9/",
                                                     "\r\n",
                                                     "\t",
                                                     "primary",
                                                     "filelists",
                                                     "<data type=\"x\"/>",
                                                     std::string(5000, 'a')};
    const auto pick = [&random](std::size_t size) {
        return std::uniform_int_distribution<std::size_t>(0, size - 1)(random);
    };
    const auto token = [&]() { return kTokens[pick(kTokens.size())]; };
    // The spans [begin, end) of element texts ("...>TEXT<") or of attribute values ("=\"V\"").
    const auto spans = [&document](bool attributes) {
        std::vector<std::pair<std::size_t, std::size_t>> found;
        const char open = attributes ? '"' : '>';
        const char close = attributes ? '"' : '<';
        for (std::size_t at = document.find(open); at != std::string::npos;
             at = document.find(open, at + 1)) {
            if (attributes && (at == 0 || document[at - 1] != '=')) {
                continue;
            }
            const std::size_t end = document.find(close, at + 1);
            if (end == std::string::npos) {
                break;
            }
            if (end > at + 1 && document.find('\n', at) > end) {
                found.emplace_back(at + 1, end);
            }
            if (attributes) {
                at = end;
            }
        }
        return found;
    };
    const auto lines = [&document]() {
        std::vector<std::pair<std::size_t, std::size_t>> found;  // each line with its '\n'
        for (std::size_t at = 0; at < document.size();) {
            const std::size_t end = std::min(document.find('\n', at), document.size() - 1) + 1;
            found.emplace_back(at, end);
            at = end;
        }
        return found;
    };
    const std::size_t operations = 1 + pick(3);
    for (std::size_t step = 0; step < operations && !document.empty(); ++step) {
        const std::size_t operation = pick(8);
        switch (operation) {
            case 0:
            case 1:
            case 2:
            case 3: {  // an element's text (0, 1) or an attribute's value (2, 3)
                const auto found = spans(operation >= 2);
                if (!found.empty()) {
                    const auto [begin, end] = found[pick(found.size())];
                    document.replace(begin, end - begin, token());
                }
                break;
            }
            case 4: {  // a line deleted
                const auto found = lines();
                const auto [begin, end] = found[pick(found.size())];
                document.erase(begin, end - begin);
                break;
            }
            case 5: {  // a line duplicated
                const auto found = lines();
                const auto [begin, end] = found[pick(found.size())];
                document.insert(end, document.substr(begin, end - begin));
                break;
            }
            case 6: {  // a byte changed
                document[pick(document.size())] = static_cast<char>(pick(256));
                break;
            }
            default: {  // a token inserted anywhere
                document.insert(pick(document.size() + 1), token());
                break;
            }
        }
    }
    return document;
}

}  // namespace rpmirror::test::differential
