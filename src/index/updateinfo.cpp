// Advisories: reading updateinfo.xml, selecting by it, trimming it (rpmirror/updateinfo.hpp).
#include "rpmirror/updateinfo.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "rpmirror/index.hpp"
#include "util/text.hpp"
#include "util/xml.hpp"
#include "util/xml_tree.hpp"

namespace rpmirror {

namespace {

constexpr std::string_view kSeverities[] = {"Low", "Moderate", "Important", "Critical"};

std::vector<std::string_view> words_of(std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t position = 0;
    while (position < text.size()) {
        const std::size_t begin = text.find_first_not_of(", \t\r\n", position);
        if (begin == std::string_view::npos) {
            break;
        }
        const std::size_t end = std::min(text.find_first_of(", \t\r\n", begin), text.size());
        words.push_back(text.substr(begin, end - begin));
        position = end;
    }
    return words;
}

// An <issued date=...> as libsolv reads it: seconds since the epoch, or "YYYY-MM-DD HH:MM:SS",
// or "YYYY-MM-DD" (UTC).
std::optional<std::int64_t> parse_issued(const std::string& text) {
    std::int64_t seconds = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (!text.empty() && error == std::errc() && end == text.data() + text.size()) {
        return seconds;
    }
    for (const char* format : {"%Y-%m-%d %H:%M:%S", "%Y-%m-%d"}) {
        std::tm date{};
        const char* rest = ::strptime(text.c_str(), format, &date);
        if (rest != nullptr && text::trim(rest).empty()) {
            return static_cast<std::int64_t>(::timegm(&date));
        }
    }
    return std::nullopt;
}

// The strict NEVRA of a <package> of a <collection>.
std::string package_nevra(const xmlNode* package) {
    std::string epoch = xml::attribute(package, "epoch");
    if (epoch.empty()) {
        epoch = "0";
    }
    return fmt::format("{}-{}:{}-{}.{}", xml::attribute(package, "name"), epoch,
                       xml::attribute(package, "version"), xml::attribute(package, "release"),
                       xml::attribute(package, "arch"));
}

// Reads one <update> (without its packages iff `packages` is null).
Advisory read_advisory(xmlNode* update) {
    Advisory advisory;
    advisory.type = xml::attribute(update, "type");
    if (xmlNode* id = xml::child_element(update, "id"); id != nullptr) {
        advisory.id = xml::element_text(id);
    }
    if (xmlNode* severity = xml::child_element(update, "severity"); severity != nullptr) {
        advisory.severity = xml::element_text(severity);
    }
    if (xmlNode* issued = xml::child_element(update, "issued"); issued != nullptr) {
        advisory.issued = parse_issued(xml::attribute(issued, "date"));
    }
    if (xmlNode* list = xml::child_element(update, "pkglist"); list != nullptr) {
        for (xmlNode* collection = list->children; collection != nullptr;
             collection = collection->next) {
            if (!xml::is_element(collection, "collection")) {
                continue;
            }
            for (xmlNode* package = collection->children; package != nullptr;
                 package = package->next) {
                if (xml::is_element(package, "package")) {
                    advisory.nevras.push_back(package_nevra(package));
                }
            }
        }
    }
    return advisory;
}

// updateinfo.xml's <update> elements: the type attribute; the <id>, <title> and <severity>
// text; <issued date=...>; the <package> elements of pkglist/collection.
class UpdateinfoHandler final : public xml::SaxHandler {
  public:
    void attach(xml::PushParser& parser) { parser_ = &parser; }

    void start_element(std::string_view local_name, std::string_view /*namespace_uri*/,
                       std::span<const xml::Attribute> attributes) override {
        ++depth_;
        text_.clear();
        const auto value = [&attributes](std::string_view name) {
            for (const xml::Attribute& attribute : attributes) {
                if (attribute.local_name == name && attribute.namespace_uri.empty()) {
                    return std::string(attribute.value);
                }
            }
            return std::string();
        };
        if (depth_ == 2 && local_name == "update") {
            current_ = Advisory{};
            current_.type = value("type");
        } else if (depth_ == 3 && local_name == "issued") {
            current_.issued = parse_issued(value("date"));
        } else if (depth_ == 5 && local_name == "package") {
            const std::string epoch = value("epoch");
            current_.nevras.push_back(fmt::format("{}-{}:{}-{}.{}", value("name"),
                                                  epoch.empty() ? "0" : epoch, value("version"),
                                                  value("release"), value("arch")));
        }
    }

    void end_element(std::string_view local_name, std::string_view /*namespace_uri*/) override {
        if (depth_ == 3 && local_name == "id") {
            current_.id = text::trim(text_);
        } else if (depth_ == 3 && local_name == "title") {
            current_.title = text_;
        } else if (depth_ == 3 && local_name == "severity") {
            current_.severity = text::trim(text_);
        } else if (depth_ == 2 && local_name == "update") {
            if (current_.id.empty()) {
                parser_->fail_at_line("<update> without <id>");
            } else {
                advisories_.push_back(std::move(current_));
            }
        }
        text_.clear();
        --depth_;
    }

    void characters(std::string_view text) override {
        if (depth_ == 3) {
            text_.append(text);
        }
    }

    std::vector<Advisory> take() { return std::move(advisories_); }

  private:
    xml::PushParser* parser_ = nullptr;
    int depth_ = 0;
    Advisory current_;
    std::string text_;
    std::vector<Advisory> advisories_;
};

bool equal_ignoring_case(std::string_view left, std::string_view right) {
    return text::to_lower(left) == text::to_lower(right);
}

}  // namespace

Result<void> parse_advisories(std::string_view text, AdvisoryFilter& filter) {
    const auto words = words_of(text);
    if (words.empty()) {
        return make_error(ErrorCode::BadInput,
                          "expected advisory types (security, bugfix, enhancement, newpackage) "
                          "or advisory IDs",
                          "--advisories");
    }
    for (const std::string_view word : words) {
        auto& list = std::find(std::begin(kAdvisoryTypes), std::end(kAdvisoryTypes), word) !=
                             std::end(kAdvisoryTypes)
                         ? filter.types
                         : filter.ids;
        if (std::find(list.begin(), list.end(), word) == list.end()) {
            list.emplace_back(word);
        }
    }
    return {};
}

Result<void> parse_advisory_severities(std::string_view text, AdvisoryFilter& filter) {
    const auto words = words_of(text);
    if (words.empty()) {
        return make_error(ErrorCode::BadInput, "expected Low, Moderate, Important or Critical",
                          "--advisory-severity");
    }
    for (const std::string_view word : words) {
        const auto* known = std::find_if(
            std::begin(kSeverities), std::end(kSeverities),
            [&](std::string_view severity) { return equal_ignoring_case(severity, word); });
        if (known == std::end(kSeverities)) {
            return make_error(ErrorCode::BadInput, "expected Low, Moderate, Important or Critical",
                              "--advisory-severity " + std::string(word));
        }
        if (std::find(filter.severities.begin(), filter.severities.end(), *known) ==
            filter.severities.end()) {
            filter.severities.emplace_back(*known);
        }
    }
    return {};
}

Result<std::int64_t> parse_as_of(std::string_view text) {
    constexpr std::int64_t kDay = 24 * 60 * 60;
    auto parsed = parse_min_build_time(text);
    if (!parsed) {
        return make_error(ErrorCode::BadInput, "expected YYYY-MM-DD or seconds since the epoch",
                          "--as-of " + std::string(text));
    }
    // A date is its whole day; seconds are that second.
    return text.find('-') != std::string_view::npos ? *parsed + kDay - 1 : *parsed;
}

Result<std::vector<Advisory>> parse_updateinfo_file(const std::filesystem::path& path,
                                                    std::string_view display_name,
                                                    std::uint64_t ceiling) {
    UpdateinfoHandler handler;
    xml::PushParser parser(handler, std::string(display_name));
    handler.attach(parser);
    DecompressOptions options;
    options.ceiling = ceiling;
    auto streamed = decompress_file(
        path, options, [&parser](std::span<const char> chunk) { return parser.feed(chunk); });
    if (!streamed) {
        Error error = std::move(streamed.error());
        if (error.subject == path.string()) {
            error.subject = std::string(display_name);
        }
        return tl::unexpected(std::move(error));
    }
    if (auto finished = parser.finish(); !finished) {
        return tl::unexpected(std::move(finished.error()));
    }
    return handler.take();
}

bool advisory_selected(const Advisory& advisory, const AdvisoryFilter& filter,
                       std::optional<std::int64_t> as_of) {
    const auto contains = [](const std::vector<std::string>& list, std::string_view value) {
        return std::find(list.begin(), list.end(), value) != list.end();
    };
    if ((!filter.types.empty() || !filter.ids.empty()) && !contains(filter.types, advisory.type) &&
        !contains(filter.ids, advisory.id)) {
        return false;
    }
    if (!filter.severities.empty() &&
        std::none_of(filter.severities.begin(), filter.severities.end(),
                     [&](const std::string& severity) {
                         return equal_ignoring_case(severity, advisory.severity);
                     })) {
        return false;
    }
    return !as_of || (advisory.issued && *advisory.issued <= *as_of);
}

Result<std::optional<TrimmedUpdateinfo>> trim_updateinfo_xml(
    std::string_view xml, const std::unordered_set<std::string>& kept_nevras,
    const AdvisoryFilter& filter, std::optional<std::int64_t> as_of,
    std::string_view display_name) {
    auto doc = xml::read_tree(xml, "updates", "an updateinfo document", display_name);
    if (!doc) {
        return tl::unexpected(std::move(doc.error()));
    }
    TrimmedUpdateinfo trimmed;
    bool changed = false;
    for (xmlNode* update = xmlDocGetRootElement(doc->get())->children; update != nullptr;) {
        xmlNode* next_update = update->next;
        if (!xml::is_element(update, "update")) {
            update = next_update;
            continue;
        }
        const Advisory advisory = read_advisory(update);
        std::string reason;
        if (!advisory_selected(advisory, filter, std::nullopt)) {
            reason = "not selected (--advisories, --advisory-severity)";
        } else if (!advisory_selected(advisory, {}, as_of)) {
            reason = "issued after the --as-of date";
        } else {
            std::size_t packages_left = 0;
            xmlNode* list = xml::child_element(update, "pkglist");
            for (xmlNode* collection = list == nullptr ? nullptr : list->children;
                 collection != nullptr;) {
                xmlNode* next_collection = collection->next;
                if (!xml::is_element(collection, "collection")) {
                    collection = next_collection;
                    continue;
                }
                std::size_t in_collection = 0;
                for (xmlNode* package = collection->children; package != nullptr;) {
                    xmlNode* next_package = package->next;
                    if (xml::is_element(package, "package")) {
                        if (kept_nevras.contains(package_nevra(package))) {
                            ++in_collection;
                        } else {
                            xml::remove_node(package);
                            changed = true;
                        }
                    }
                    package = next_package;
                }
                if (in_collection == 0) {
                    xml::remove_node(collection);
                    changed = true;
                }
                packages_left += in_collection;
                collection = next_collection;
            }
            if (packages_left == 0) {
                reason = "no package of it is mirrored";
            }
        }
        if (!reason.empty()) {
            trimmed.left_out.push_back(fmt::format("{}: {}", advisory.id, reason));
            xml::remove_node(update);
            changed = true;
        }
        update = next_update;
    }
    if (!changed) {
        return std::optional<TrimmedUpdateinfo>();
    }
    auto text = xml::write_tree(doc->get(), display_name);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    trimmed.xml = std::move(*text);
    return std::optional<TrimmedUpdateinfo>(std::move(trimmed));
}

}  // namespace rpmirror
