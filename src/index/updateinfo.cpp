// Advisories: reading updateinfo.xml, selecting by it, trimming it (rpmirror/index/updateinfo.hpp).
#include "rpmirror/index/updateinfo.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "index/index.hpp"
#include "index/updateinfo.hpp"
#include "util/text.hpp"
#include "util/xml.hpp"
#include "util/xml_scanner.hpp"

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
        if (depth_ == 1 && local_name != "updates") {
            parser_->fail(Error{ErrorCode::BadInput, "is not an updateinfo document (<updates>)",
                                parser_->document_name(), 0});
        } else if (depth_ == 2 && local_name == "update") {
            current_ = Advisory{};
            current_.type = value("type");
        } else if (depth_ == 3 && local_name == "issued") {
            current_.issued = parse_issued(value("date"));
        } else if (depth_ == 5 && local_name == "package") {
            current_.nevras.push_back(closure_nevra(value("name"), value("epoch"), value("version"),
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
    // Read (and so checked) by the parser every reader uses; then copied span by span, each
    // <update>, <collection> and <package> kept byte for byte or left out whole.
    if (xml.find("<!ENTITY") != std::string_view::npos) {
        return make_error(ErrorCode::Unsafe, "declares an XML entity: refused",
                          std::string(display_name));
    }
    UpdateinfoHandler handler;
    xml::PushParser parser(handler, std::string(display_name));
    handler.attach(parser);
    // In chunks, as from a file: libxml2 refuses one huge chunk ("Huge input lookup").
    constexpr std::size_t kChunk = 256 * 1024;
    for (std::size_t offset = 0; offset < xml.size(); offset += kChunk) {
        if (auto fed = parser.feed(xml.substr(offset, kChunk)); !fed) {
            return tl::unexpected(std::move(fed.error()));
        }
    }
    if (auto finished = parser.finish(); !finished) {
        return tl::unexpected(std::move(finished.error()));
    }
    const std::vector<Advisory> advisories = handler.take();

    TrimmedUpdateinfo trimmed;
    std::string& out = trimmed.xml;
    out.reserve(xml.size());
    std::size_t copied = 0;  // input before this is in `out` or left out
    // Copies the input up to the whitespace before `begin` (what is left out from there takes its
    // indentation along).
    const auto copy_to_indent_of = [&](std::size_t begin) {
        std::size_t start = begin;
        while (start > copied && text::is_space(xml[start - 1])) {
            --start;
        }
        out.append(xml.substr(copied, start - copied));
        copied = start;
    };
    bool changed = false;
    int depth = 0;
    std::size_t next_update = 0;
    const Advisory* update = nullptr;  // the <update> being copied
    bool skipping_update = false;      // inside an <update> left out
    bool skipping_package = false;     // inside a <package> left out
    std::size_t update_mark = 0;       // where `out` stood before the <update> being copied
    std::size_t collection_mark = 0;   // ... and before its <collection> being copied
    std::size_t in_update = 0;         // the packages kept in the <update> being copied
    std::size_t in_collection = 0;     // ... and in its <collection>
    const auto end_collection = [&](std::size_t end) {
        if (in_collection == 0) {  // no package left: the collection goes
            out.resize(collection_mark);
            copied = end;
            changed = true;
        }
        in_update += in_collection;
    };
    const auto end_update = [&](std::size_t end) {
        if (!skipping_update && in_update == 0) {
            trimmed.left_out.push_back(update->id + ": no package of it is mirrored");
            out.resize(update_mark);
        }
        if (skipping_update || in_update == 0) {
            copied = end;
            changed = true;
        }
        update = nullptr;
        skipping_update = false;
    };
    for (std::size_t at = xml.find('<'); at != std::string_view::npos;) {
        const auto markup = xml_scan::read_markup(xml, at);
        if (!markup) {
            break;  // the parser accepted the document: only its end can be left
        }
        const std::size_t end = markup->end;
        const std::string_view tag = xml.substr(markup->begin, end - markup->begin);
        const auto attribute = [&tag](std::string_view name) {
            const auto value = xml_scan::attribute(tag, name);
            return value ? xml_scan::unescape(*value) : std::string();
        };
        if (markup->kind == xml_scan::Markup::Kind::Open) {
            const int level = depth;
            if (!markup->self_closing) {
                ++depth;
            }
            if (level == 1 && markup->name == "update" && next_update < advisories.size()) {
                update = &advisories[next_update++];
                in_update = 0;
                copy_to_indent_of(markup->begin);
                update_mark = out.size();
                if (!advisory_selected(*update, filter, std::nullopt)) {
                    trimmed.left_out.push_back(update->id +
                                               ": not selected (--advisories, "
                                               "--advisory-severity)");
                    skipping_update = true;
                } else if (!advisory_selected(*update, {}, as_of)) {
                    trimmed.left_out.push_back(update->id + ": issued after the --as-of date");
                    skipping_update = true;
                }
                if (markup->self_closing) {
                    end_update(end);
                }
            } else if (update != nullptr && !skipping_update && level == 3 &&
                       markup->name == "collection") {
                copy_to_indent_of(markup->begin);
                collection_mark = out.size();
                in_collection = 0;
                if (markup->self_closing) {
                    end_collection(end);
                }
            } else if (update != nullptr && !skipping_update && !skipping_package && level == 4 &&
                       markup->name == "package") {
                if (kept_nevras.contains(closure_nevra(attribute("name"), attribute("epoch"),
                                                       attribute("version"), attribute("release"),
                                                       attribute("arch")))) {
                    ++in_collection;
                } else {
                    copy_to_indent_of(markup->begin);
                    changed = true;
                    if (markup->self_closing) {
                        copied = end;
                    } else {
                        skipping_package = true;
                    }
                }
            }
        } else if (markup->kind == xml_scan::Markup::Kind::Close) {
            const int level = --depth;
            if (level == 4 && skipping_package && markup->name == "package") {
                copied = end;
                skipping_package = false;
            } else if (level == 3 && update != nullptr && !skipping_update &&
                       markup->name == "collection") {
                end_collection(end);
            } else if (level == 1 && update != nullptr && markup->name == "update") {
                end_update(end);
            }
        }
        at = xml.find('<', end);
    }
    if (!changed) {
        return std::optional<TrimmedUpdateinfo>();
    }
    out.append(xml.substr(copied));
    return std::optional<TrimmedUpdateinfo>(std::move(trimmed));
}

}  // namespace rpmirror
