#include "differential.hpp"

#include <fstream>

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

}  // namespace rpmirror::test::differential
