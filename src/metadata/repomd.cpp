// repomd.xml: the index of a repository's metadata files.
#include <algorithm>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"
#include "metadata/text.hpp"
#include "util/xml.hpp"

namespace rpmirror {

namespace {

using metadata_detail::parse_leading_integer;
using metadata_detail::to_lower;
using metadata_detail::trim;

// What librepo makes of a <data> without a type attribute (it warns and goes on).
constexpr std::string_view kUntypedRecord = "unknown";

// Stands on the element stack for a prefixed element (<rpm:data>, <foo:checksum>): librepo's
// parser matches unprefixed names only and skips such an element with all it contains, and so
// does this one. (No element name is empty, so nothing can be mistaken for it.)
constexpr std::string_view kForeignElement = "";

class RepomdHandler : public xml::SaxHandler {
  public:
    void start_element(std::string_view local_name, std::string_view /*namespace_uri*/,
                       std::span<const xml::Attribute> attributes) override {
        if (!parser->element_prefix().empty()) {
            local_name = kForeignElement;
        }
        // An element where repomd.xml has none (a <data> inside a <data>, an extension, a
        // foreign one) is skipped with everything it contains, as librepo's parser skips it; the
        // text of the element around it goes on (`<checksum>ab<x/>cd</checksum>` is "abcd").
        if (skipped_.enter(stack_.empty() || expected(stack_.back(), local_name))) {
            return;
        }
        stack_.emplace_back(local_name);
        // (Taken after the push: a view taken before it would dangle when the vector grows.)
        const std::string_view parent =
            stack_.size() >= 2 ? std::string_view(stack_[stack_.size() - 2]) : std::string_view();
        text_.clear();
        if (stack_.size() == 1) {
            if (local_name != "repomd") {
                parser->fail_at_line("root element is <" + root_name(local_name) +
                                     ">, not <repomd>");
            }
            return;
        }
        if (parent == "repomd" && local_name == "data") {
            in_record_ = true;
            record_ = RepomdRecord{};
            record_.line = parser->line();
            record_.type = std::string(attribute(attributes, "type"));
            has_checksum_ = false;
            // librepo names a record without a type "unknown" and keeps it; so does rpmirror
            // (it is still mirrored and verified like any other record), and so with type="".
            if (record_.type.empty()) {
                record_.type = kUntypedRecord;
            }
        } else if (parent == "tags" && local_name == "distro") {
            distro_cpeid_ = std::string(attribute(attributes, "cpeid"));
        } else if (in_record_ && parent == "data") {
            if (local_name == "checksum" || local_name == "open-checksum" ||
                local_name == "header-checksum") {
                checksum_type_ = std::string(attribute(attributes, "type"));
            } else if (local_name == "location") {
                const std::string_view href = attribute(attributes, "href");
                if (href.empty()) {
                    parser->fail_at_line(record_name() + " has <location> without href");
                    return;
                }
                record_.location_href = std::string(href);
                for (const xml::Attribute& attribute : attributes) {
                    if (attribute.local_name == "base" &&
                        attribute.namespace_uri == xml::kXmlNamespace) {
                        record_.location_base = std::string(attribute.value);
                    }
                }
            }
        }
    }

    void end_element(std::string_view local_name, std::string_view /*namespace_uri*/) override {
        if (skipped_.leave()) {
            return;
        }
        if (!parser->element_prefix().empty()) {
            local_name = kForeignElement;
        }
        const std::string_view parent =
            stack_.size() >= 2 ? std::string_view(stack_[stack_.size() - 2]) : std::string_view();
        const std::string_view text = trim(text_);
        if (parent == "repomd" && local_name == "revision") {
            // An empty <revision/> is no revision, as librepo has it.
            if (!text.empty()) {
                repomd.revision = std::string(text);
            }
        } else if (parent == "tags") {
            if (local_name == "content") {
                repomd.content_tags.emplace_back(text);
            } else if (local_name == "repo") {
                repomd.repo_tags.emplace_back(text);
            } else if (local_name == "distro") {
                repomd.distro_tags.push_back(RepomdDistroTag{distro_cpeid_, std::string(text)});
            }
        } else if (parent == "repomd" && local_name == "data") {
            finish_record();
        } else if (in_record_ && parent == "data") {
            record_field(local_name, text);
        }
        stack_.pop_back();
        text_.clear();
    }

    void characters(std::string_view text) override {
        if (!skipped_.skipping() && text_.size() < kMaxTextBytes) {
            text_ += text;
        }
    }

    xml::PushParser* parser = nullptr;
    Repomd repomd;

  private:
    static constexpr std::size_t kMaxTextBytes = 64 * 1024;

    static std::string_view attribute(std::span<const xml::Attribute> attributes,
                                      std::string_view name) {
        for (const xml::Attribute& attribute : attributes) {
            if (attribute.local_name == name && attribute.namespace_uri.empty()) {
                return attribute.value;
            }
        }
        return {};
    }

    std::string root_name(std::string_view local_name) const {
        return local_name.empty() ? std::string(parser->element_prefix()) + ":..."
                                  : std::string(local_name);
    }

    std::string record_name() const { return "<data type=\"" + record_.type + "\">"; }

    // True iff repomd.xml has an element `name` inside `parent` (anything else is skipped).
    static bool expected(std::string_view parent, std::string_view name) {
        static constexpr std::string_view kInRepomd[] = {"revision", "tags", "data"};
        static constexpr std::string_view kInTags[] = {"content", "repo", "distro"};
        static constexpr std::string_view kInData[] = {
            "checksum", "open-checksum", "header-checksum", "location",        "timestamp",
            "size",     "open-size",     "header-size",     "database_version"};
        const auto among = [name](std::span<const std::string_view> names) {
            return std::find(names.begin(), names.end(), name) != names.end();
        };
        return (parent == "repomd" && among(kInRepomd)) || (parent == "tags" && among(kInTags)) ||
               (parent == "data" && among(kInData));
    }

    // Parses the record's <checksum>: the last one it has (librepo keeps the last), found at
    // line checksum_line_ with the text checksum_text_ and the type attribute checksum_of_type_.
    std::optional<RecordChecksum> parse_checksum() {
        const std::string prefix =
            "line " + std::to_string(checksum_line_) + ": " + record_name() + " <checksum>";
        const auto type = parse_checksum_type(checksum_of_type_);
        if (!type) {
            parser->fail(Error{ErrorCode::Unsupported,
                               prefix + " has unknown checksum type \"" + checksum_of_type_ + "\"",
                               parser->document_name(), 0});
            return std::nullopt;
        }
        if (!is_valid_hex_digest(*type, checksum_text_)) {
            parser->fail(Error{ErrorCode::BadInput,
                               prefix + " \"" + checksum_text_ + "\" is not a " +
                                   std::string(checksum_type_name(*type)) + " digest",
                               parser->document_name(), 0});
            return std::nullopt;
        }
        return RecordChecksum{*type, to_lower(checksum_text_)};
    }

    // The optional checksums (<open-checksum>, <header-checksum>): rpmirror uses them only as
    // extra checks (a comps file's content, a zchunk header) and librepo never checks an
    // open-checksum at all, so one of an unknown type or that is not a digest is dropped, not a
    // reason to refuse the repository; the file itself is still verified by <checksum>.
    std::optional<RecordChecksum> parse_optional_checksum(std::string_view text) const {
        const auto type = parse_checksum_type(checksum_type_);
        if (!type || !is_valid_hex_digest(*type, text)) {
            return std::nullopt;
        }
        return RecordChecksum{*type, to_lower(text)};
    }

    // A size: as librepo reads it (parse_leading_integer); a negative one is no size.
    static std::optional<std::uint64_t> parse_size(std::string_view text) {
        const auto value = parse_leading_integer(text);
        if (!value || *value < 0) {
            return std::nullopt;
        }
        return static_cast<std::uint64_t>(*value);
    }

    // Numbers never refuse a repomd.xml: librepo reads them with strtoll and stores what it
    // read (0 for no digits at all), and dnf mirrors repositories whose <timestamp> is
    // "1355315696.84". rpmirror keeps the whole seconds (what librepo keeps); see
    // parse_leading_integer for the rest.
    void record_field(std::string_view element, std::string_view text) {
        if (element == "checksum") {  // checked when the record ends: the last one counts
            has_checksum_ = true;
            checksum_text_ = std::string(text);
            checksum_of_type_ = checksum_type_;
            checksum_line_ = parser->line();
        } else if (element == "open-checksum") {
            record_.open_checksum = parse_optional_checksum(text);
        } else if (element == "header-checksum") {
            record_.header_checksum = parse_optional_checksum(text);
        } else if (element == "timestamp") {
            record_.timestamp = parse_leading_integer(text);
        } else if (element == "size") {
            record_.size = parse_size(text);
        } else if (element == "open-size") {
            record_.open_size = parse_size(text);
        } else if (element == "header-size") {
            record_.header_size = parse_size(text);
        } else if (element == "database_version") {
            // librepo casts its 64-bit value to int; so does this (modular in C++20).
            if (const auto value = parse_leading_integer(text)) {
                record_.database_version = static_cast<int>(*value);
            } else {
                record_.database_version.reset();
            }
        }
    }

    void finish_record() {
        in_record_ = false;
        const std::string prefix = "line " + std::to_string(record_.line) + ": " + record_name();
        if (!has_checksum_) {
            parser->fail(Error{ErrorCode::BadInput, prefix + " without <checksum>",
                               parser->document_name(), 0});
            return;
        }
        auto checksum = parse_checksum();
        if (!checksum) {
            return;
        }
        record_.checksum = std::move(*checksum);
        if (record_.location_href.empty()) {
            parser->fail(Error{ErrorCode::BadInput, prefix + " without <location href>",
                               parser->document_name(), 0});
            return;
        }
        repomd.records.push_back(std::move(record_));
    }

    std::vector<std::string> stack_;
    xml::SkippedElements skipped_;
    std::string text_;
    bool in_record_ = false;
    bool has_checksum_ = false;
    RepomdRecord record_;
    std::string checksum_type_;  // the type attribute of the checksum element being read
    std::string checksum_text_;  // the record's last <checksum>, its type and line
    std::string checksum_of_type_;
    long checksum_line_ = 0;
    std::string distro_cpeid_;
};

}  // namespace

const RepomdRecord* Repomd::find(std::string_view type) const {
    for (const RepomdRecord& record : records) {
        if (record.type == type) {
            return &record;
        }
    }
    return nullptr;
}

Result<Repomd> parse_repomd(std::string_view document, std::string_view name) {
    RepomdHandler handler;
    if (auto parsed = metadata_detail::parse_xml_document(handler, document, name); !parsed) {
        return tl::unexpected(parsed.error());
    }
    return std::move(handler.repomd);
}

Result<void> verify_metadata_file(const std::filesystem::path& path, const RepomdRecord& record) {
    FileHasher hasher;
    VerifyRequest request;
    request.path = path;
    request.type = record.checksum.type;
    request.expected_digest = record.checksum.hex;
    request.expected_size = record.size;
    const VerifyResult result = hasher.verify(request);
    const std::string what =
        "metadata file for " + std::string("<data type=\"") + record.type + "\">";
    switch (result.status) {
        case VerifyStatus::Ok:
            return {};
        case VerifyStatus::SizeMismatch:
            return make_error(ErrorCode::Corrupt,
                              what + ": size mismatch: expected " +
                                  std::to_string(record.size.value_or(0)) + " bytes, actual " +
                                  std::to_string(result.actual_size) + " bytes",
                              path.string());
        case VerifyStatus::DigestMismatch:
            return make_error(ErrorCode::Corrupt,
                              what + ": " + std::string(checksum_type_name(record.checksum.type)) +
                                  " mismatch: expected " + record.checksum.hex + ", actual " +
                                  result.actual_digest,
                              path.string());
        case VerifyStatus::Missing:
        case VerifyStatus::IoError:
            break;
    }
    if (result.error) {
        return tl::unexpected(*result.error);
    }
    return make_error(ErrorCode::Io, what + ": could not be verified", path.string());
}

Result<std::filesystem::path> record_destination(const RepomdRecord& record,
                                                 std::string_view repo_name,
                                                 std::string_view repomd_url) {
    constexpr std::string_view kRepodataPrefix = "repodata/";
    if (!record.location_href.starts_with(kRepodataPrefix)) {
        return make_error(ErrorCode::Unsupported,
                          "record '" + record.type + "' at '" + record.location_href +
                              "' is not a file under repodata/",
                          std::string(repo_name));
    }
    if (record.location_base && !is_http_url(*record.location_base)) {
        return make_error(ErrorCode::Unsafe,
                          "record '" + record.type + "' has xml:base '" + *record.location_base +
                              "': only http and https URLs are accepted from upstream "
                              "metadata; refused",
                          std::string(repomd_url));
    }
    return safe_relative_path(std::string_view(record.location_href).substr(kRepodataPrefix.size()),
                              record.type);
}

std::vector<std::string> record_hrefs(std::string_view repomd_xml) {
    std::vector<std::string> hrefs;
    if (auto parsed = parse_repomd(repomd_xml, "repomd.xml")) {
        for (const RepomdRecord& record : parsed->records) {
            hrefs.push_back(record.location_href);
        }
    }
    std::sort(hrefs.begin(), hrefs.end());
    hrefs.erase(std::unique(hrefs.begin(), hrefs.end()), hrefs.end());
    return hrefs;
}

}  // namespace rpmirror
