// The streaming primary.xml reader: a SAX handler that keeps, per <package>, only what
// mirroring needs and appends it to a PackageIndex when the package closes.
//
// Element matching is by local name at a fixed depth below <package> (and below <format> for
// <rpm:sourcerpm>), so an <rpm:entry name="..."> deep inside <format> never looks like <name>.
// Text is captured only inside <name>, <arch>, <checksum> and <rpm:sourcerpm>; every other
// event costs one depth check.
#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "index/index.hpp"
#include "util/text.hpp"
#include "util/xml.hpp"

namespace rpmirror {
namespace {

// Longer text in a captured element marks the package bad (libxml2 caps text nodes anyway).
constexpr std::size_t kMaxFieldLength = 64 * 1024;
// Upper bound for reserving records from packages="N" (a hostile N must not allocate).
constexpr std::uint64_t kMaxReservedPackages = 1'000'000;
// Typical bytes of strings per package, for reserving the arena.
constexpr std::size_t kReservedBytesPerPackage = 192;

enum class Field { None, Name, Arch, Checksum, SourceRpm };

template <typename Integer>
std::optional<Integer> parse_integer(std::string_view text) {
    Integer value{};
    const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (status != std::errc() || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

using text::trim;

// Value of each hex digit, 0xff for every other byte.
constexpr std::array<std::uint8_t, 256> kHexValues = [] {
    std::array<std::uint8_t, 256> values{};
    values.fill(0xff);
    for (int digit = 0; digit < 10; ++digit) {
        values['0' + digit] = static_cast<std::uint8_t>(digit);
    }
    for (int digit = 0; digit < 6; ++digit) {
        values['a' + digit] = values['A' + digit] = static_cast<std::uint8_t>(10 + digit);
    }
    return values;
}();

// Decodes `hex` (even length) into `bytes`. Returns false iff a character is not a hex digit.
bool decode_hex(std::string_view hex, std::vector<std::uint8_t>& bytes) {
    bytes.resize(hex.size() / 2);
    for (std::size_t position = 0; position < bytes.size(); ++position) {
        const std::uint8_t high = kHexValues[static_cast<unsigned char>(hex[2 * position])];
        const std::uint8_t low = kHexValues[static_cast<unsigned char>(hex[2 * position + 1])];
        if ((high | low) == 0xff) {
            return false;
        }
        bytes[position] = static_cast<std::uint8_t>(high << 4 | low);
    }
    return true;
}

// The fields of the <package> being read; reused across packages (no per-package allocation
// once the buffers have grown).
struct PackageFields {
    long start_line = 0;
    std::string name;
    std::string arch;
    bool has_version = false;
    std::string epoch;
    std::string version;
    std::string release;
    bool has_checksum = false;
    std::string earlier_checksum_problem;  // of a <checksum> before the last one
    std::string checksum_type;
    std::string checksum;
    bool has_size = false;
    std::string package_size;
    std::string build_time;
    std::string file_time;
    bool has_location = false;
    std::string href;
    std::string base;
    std::string source_rpm;
    bool field_too_long = false;

    void clear() {
        name.clear();
        arch.clear();
        has_version = false;
        epoch.clear();
        version.clear();
        release.clear();
        has_checksum = false;
        earlier_checksum_problem.clear();
        checksum_type.clear();
        checksum.clear();
        has_size = false;
        package_size.clear();
        build_time.clear();
        file_time.clear();
        has_location = false;
        href.clear();
        base.clear();
        source_rpm.clear();
        field_too_long = false;
    }
};

class PrimaryHandler final : public xml::SaxHandler {
  public:
    PrimaryHandler(std::string document_name, bool strict)
        : document_name_(std::move(document_name)), strict_(strict) {}

    void attach(xml::PushParser& parser) { parser_ = &parser; }

    PackageIndex& index() { return index_; }
    bool saw_root() const { return saw_root_; }

    void start_element(std::string_view local_name, std::string_view /*namespace_uri*/,
                       std::span<const xml::Attribute> attributes) override {
        ++depth_;
        if (capture_ != Field::None) {
            // An element inside a text field (<arch>x86<b/>_64</arch>): no text, as libsolv
            // reads it; createrepo never writes one.
            captured_text()->clear();
            capture_ = Field::None;
        }
        if (in_package_) {
            if (depth_ == package_depth_ + 1) {
                start_package_child(local_name, attributes);
            } else if (format_depth_ > 0 && depth_ == format_depth_ + 1 &&
                       local_name == "sourcerpm") {
                begin_capture(Field::SourceRpm);
            }
            return;
        }
        if (depth_ == 1) {
            start_root(local_name, attributes);
        } else if (depth_ == 2 && local_name == "package") {
            in_package_ = true;
            package_depth_ = depth_;
            ++package_elements_;
            fields_.clear();
            fields_.start_line = parser_->line();
        }
    }

    void end_element(std::string_view /*local_name*/, std::string_view /*namespace_uri*/) override {
        if (capture_ != Field::None && depth_ == capture_depth_) {
            capture_ = Field::None;
        }
        if (in_package_) {
            if (depth_ == format_depth_) {
                format_depth_ = 0;
            } else if (depth_ == package_depth_) {
                in_package_ = false;
                commit_package();
            }
        } else if (depth_ == 1) {
            end_root();
        }
        --depth_;
    }

    void characters(std::string_view text) override {
        std::string* target = captured_text();
        if (target == nullptr) {
            return;
        }
        if (target->size() + text.size() > kMaxFieldLength) {
            fields_.field_too_long = true;
            return;
        }
        target->append(text);
    }

  private:
    void start_root(std::string_view local_name, std::span<const xml::Attribute> attributes) {
        saw_root_ = true;
        if (local_name != "metadata") {
            parser_->fail_at_line(fmt::format(
                "the root element is <{}>, not <metadata>: this is not a primary.xml", local_name));
            return;
        }
        for (const xml::Attribute& attribute : attributes) {
            if (attribute.local_name == "packages") {
                declared_count_ = parse_integer<std::uint64_t>(attribute.value);
                if (declared_count_) {
                    const auto reserved = static_cast<std::size_t>(
                        std::min<std::uint64_t>(*declared_count_, kMaxReservedPackages));
                    index_.reserve(reserved, reserved * kReservedBytesPerPackage);
                }
            }
        }
        index_.set_declared_count(declared_count_);
    }

    void end_root() {
        if (declared_count_ && *declared_count_ != package_elements_) {
            report(parser_->line(),
                   fmt::format("<metadata packages=\"{}\"> but the document has {} <package> "
                               "elements",
                               *declared_count_, package_elements_),
                   std::string());
        }
    }

    // The text the field being captured collects into; nullptr iff none is.
    std::string* captured_text() {
        switch (capture_) {
            case Field::Name:
                return &fields_.name;
            case Field::Arch:
                return &fields_.arch;
            case Field::Checksum:
                return &fields_.checksum;
            case Field::SourceRpm:
                return &fields_.source_rpm;
            case Field::None:
                break;
        }
        return nullptr;
    }

    void begin_capture(Field field) {
        capture_ = field;
        capture_depth_ = depth_;
    }

    static std::string_view attribute(std::span<const xml::Attribute> attributes,
                                      std::string_view name, bool* present = nullptr) {
        for (const xml::Attribute& candidate : attributes) {
            if (candidate.local_name == name) {
                if (present != nullptr) {
                    *present = true;
                }
                return candidate.value;
            }
        }
        return {};
    }

    void start_package_child(std::string_view local_name,
                             std::span<const xml::Attribute> attributes) {
        // Ordered by frequency in createrepo_c's output; all single-character dispatch first.
        switch (local_name.empty() ? '\0' : local_name.front()) {
            case 'n':
                if (local_name == "name") {
                    fields_.name.clear();
                    begin_capture(Field::Name);
                }
                break;
            case 'a':
                if (local_name == "arch") {
                    fields_.arch.clear();
                    begin_capture(Field::Arch);
                }
                break;
            case 'v':
                if (local_name == "version") {
                    fields_.has_version = true;
                    fields_.epoch = attribute(attributes, "epoch");
                    fields_.version = attribute(attributes, "ver");
                    fields_.release = attribute(attributes, "rel");
                }
                break;
            case 'c':
                if (local_name == "checksum") {
                    // Of two <checksum> elements the last counts, as in libsolv, which
                    // refuses the package if an earlier one is no valid digest.
                    if (fields_.has_checksum && fields_.earlier_checksum_problem.empty()) {
                        fields_.earlier_checksum_problem =
                            checksum_problem(fields_).value_or(std::string());
                    }
                    fields_.has_checksum = true;
                    fields_.checksum_type = attribute(attributes, "type");
                    fields_.checksum.clear();
                    begin_capture(Field::Checksum);
                }
                break;
            case 't':
                if (local_name == "time") {
                    fields_.build_time = attribute(attributes, "build");
                    fields_.file_time = attribute(attributes, "file");
                }
                break;
            case 's':
                if (local_name == "size") {
                    bool present = false;
                    const std::string_view value = attribute(attributes, "package", &present);
                    if (present) {
                        fields_.has_size = true;
                        fields_.package_size = value;
                    }
                }
                break;
            case 'l':
                if (local_name == "location") {
                    fields_.has_location = true;
                    fields_.href = attribute(attributes, "href");
                    fields_.base.clear();
                    for (const xml::Attribute& candidate : attributes) {
                        if (candidate.local_name == "base" &&
                            (candidate.namespace_uri.empty() ||
                             candidate.namespace_uri == xml::kXmlNamespace)) {
                            fields_.base = candidate.value;
                        }
                    }
                }
                break;
            case 'f':
                if (local_name == "format") {
                    format_depth_ = depth_;
                }
                break;
            default:
                break;
        }
    }

    // Reports a problem: an error in strict mode, else an issue (and the package is skipped).
    // `skipped_label` names the package skipped ("<package>" when it has no name), "" iff none.
    void report(long line, std::string what, std::string skipped_label) {
        if (strict_) {
            parser_->fail(Error{ErrorCode::BadInput, fmt::format("line {}: {}", line, what),
                                document_name_, 0});
            return;
        }
        const bool is_package = !skipped_label.empty();
        if (is_package) {
            what += "; skipped";
        }
        index_.add_issue(IndexIssue{line,
                                    fmt::format("{}: line {}: {}", document_name_, line, what),
                                    std::move(skipped_label)});
    }

    // Parses the checksum of `fields` into last_type_ and digest_; returns what is wrong with it
    // (an unknown type, a digest that is not the type's hex digits), nullopt if nothing.
    std::optional<std::string> checksum_problem(const PackageFields& fields) {
        // Every package of a repository normally has the same type: parse it once.
        if (fields.checksum_type != last_type_name_) {
            last_type_name_ = fields.checksum_type;
            last_type_ = parse_checksum_type(fields.checksum_type);
        }
        if (!last_type_) {
            return fmt::format("has an unknown checksum type '{}'", fields.checksum_type);
        }
        const std::string_view hex = trim(fields.checksum);
        if (hex.size() != digest_hex_length(*last_type_) || !decode_hex(hex, digest_)) {
            return fmt::format("has a {} checksum that is not {} hex digits: '{}'",
                               checksum_type_name(*last_type_), digest_hex_length(*last_type_),
                               hex.substr(0, 160));
        }
        return std::nullopt;
    }

    void bad_package(std::string_view reason) {
        const std::string label = fields_.name.empty() ? std::string("<package>") : package_label();
        report(fields_.start_line,
               fields_.name.empty() ? fmt::format("{} {}", label, reason)
                                    : fmt::format("<package> '{}' {}", label, reason),
               label);
    }

    std::string package_label() const {
        std::string label = fields_.name;
        if (!fields_.version.empty()) {
            label += '-';
            if (!fields_.epoch.empty() && fields_.epoch != "0") {
                label += fields_.epoch;
                label += ':';
            }
            label += fields_.version;
            label += '-';
            label += fields_.release;
        }
        if (!fields_.arch.empty()) {
            label += '.';
            label += fields_.arch;
        }
        return label;
    }

    void commit_package() {
        PackageFields& fields = fields_;
        if (fields.field_too_long) {
            return bad_package(
                fmt::format("has a text field longer than {} bytes", kMaxFieldLength));
        }
        const std::string_view name = trim(fields.name);
        const std::string_view arch = trim(fields.arch);
        if (name.empty()) {
            return bad_package("without <name>");
        }
        if (arch.empty()) {
            return bad_package("without <arch>");
        }
        if (!fields.has_version || fields.version.empty()) {
            return bad_package("without <version ver=...>");
        }
        std::uint32_t epoch = 0;
        if (!fields.epoch.empty()) {
            const auto parsed = parse_integer<std::uint32_t>(fields.epoch);
            if (!parsed) {
                return bad_package(fmt::format("has a non-numeric epoch '{}'", fields.epoch));
            }
            epoch = *parsed;
        }
        if (!fields.has_checksum) {
            return bad_package("without <checksum>");
        }
        if (!fields.earlier_checksum_problem.empty()) {
            return bad_package(fields.earlier_checksum_problem);
        }
        if (auto problem = checksum_problem(fields)) {
            return bad_package(*problem);
        }
        const ChecksumType type = *last_type_;
        // Old createrepo wrote no <size>: such a package is verified by its checksum alone.
        const std::string_view size_text =
            fields.has_size ? trim(fields.package_size) : std::string_view();
        if (!size_text.empty() && size_text.front() == '-') {
            return bad_package(fmt::format("has a negative size '{}'", size_text));
        }
        const auto package_size = fields.has_size ? parse_integer<std::uint64_t>(size_text)
                                                  : std::optional<std::uint64_t>(kUnknownSize);
        if (!package_size && !size_text.empty() &&
            std::all_of(size_text.begin(), size_text.end(),
                        [](char digit) { return digit >= '0' && digit <= '9'; })) {
            return bad_package(fmt::format("has an absurd size '{}' (more than 2^53 bytes)",
                                           size_text.substr(0, 40)));
        }
        if (!package_size) {
            return bad_package(fmt::format("has a non-numeric size '{}'", size_text.substr(0, 40)));
        }
        if (fields.has_size && *package_size > kMaxPackageSize) {
            return bad_package(
                fmt::format("has an absurd size {} (more than 2^53 bytes)", *package_size));
        }
        // The build time selects packages (--as-of, --min-buildtime): one that is no 32-bit
        // decimal number fails the package. The file time decides nothing (libsolv ignores it):
        // one that is no number is taken as absent.
        std::int64_t build_time = 0;
        if (!fields.build_time.empty()) {
            const auto parsed = parse_integer<std::uint32_t>(fields.build_time);
            if (!parsed) {
                return bad_package(fmt::format("has a non-numeric <time build='{}'>",
                                               fields.build_time.substr(0, 40)));
            }
            build_time = *parsed;
        }
        const std::int64_t file_time =
            parse_integer<std::uint32_t>(fields.file_time).value_or(std::uint32_t{0});
        if (!fields.has_location || fields.href.empty()) {
            return bad_package("without <location href=...>");
        }

        PackageView package;
        package.name = name;
        package.arch = arch;
        package.epoch = epoch;
        package.version = fields.version;
        package.release = fields.release;
        package.checksum_type = type;
        package.digest = digest_;
        package.package_size = *package_size;
        package.build_time = build_time;
        package.file_time = file_time;
        package.location_href = fields.href;
        package.location_base = fields.base;
        package.source_rpm = trim(fields.source_rpm);
        if (auto added = index_.add(package); !added) {
            parser_->fail(
                Error{ErrorCode::BadInput,
                      fmt::format("line {}: {}", fields.start_line, added.error().to_string()),
                      document_name_, 0});
        }
    }

    std::string document_name_;
    bool strict_;
    xml::PushParser* parser_ = nullptr;
    PackageIndex index_;
    PackageFields fields_;
    std::vector<std::uint8_t> digest_;
    std::string last_type_name_ = "\n";  // never a type name, so the first package parses it
    Result<ChecksumType> last_type_ = ChecksumType::Sha256;
    int depth_ = 0;
    bool saw_root_ = false;
    bool in_package_ = false;
    int package_depth_ = 0;
    int format_depth_ = 0;
    Field capture_ = Field::None;
    int capture_depth_ = 0;
    std::uint64_t package_elements_ = 0;
    std::optional<std::uint64_t> declared_count_;
};

}  // namespace

struct PrimaryParser::State {
    PrimaryHandler handler;
    xml::PushParser parser;

    State(std::string document_name, bool strict)
        : handler(document_name, strict), parser(handler, document_name) {
        handler.attach(parser);
    }
};

PrimaryParser::PrimaryParser(std::string document_name, bool strict)
    : state_(std::make_unique<State>(std::move(document_name), strict)) {}
PrimaryParser::PrimaryParser(PrimaryParser&&) noexcept = default;
PrimaryParser& PrimaryParser::operator=(PrimaryParser&&) noexcept = default;
PrimaryParser::~PrimaryParser() = default;

Result<void> PrimaryParser::feed(std::span<const char> chunk) {
    return state_->parser.feed(chunk);
}

Result<PackageIndex> PrimaryParser::finish() {
    if (auto finished = state_->parser.finish(); !finished) {
        return tl::unexpected(finished.error());
    }
    PackageIndex index = std::move(state_->handler.index());
    index.shrink_to_fit();
    return index;
}

Result<PackageIndex> parse_primary_file(const std::filesystem::path& path,
                                        const PrimaryParseOptions& options) {
    const std::string name = options.display_name.empty() ? path.string() : options.display_name;
    // The decompressor names the file by its path: the subject is replaced by the display name.
    const auto named = [&name](Error error) {
        error.subject = name;
        return tl::unexpected(std::move(error));
    };
    PrimaryParser parser(name, options.strict);
    // Decompression runs on its own thread, parsing on this one (see decompress_file).
    bool parser_failed = false;
    auto streamed = decompress_file(path, options.decompress, [&](std::span<const char> chunk) {
        auto fed = parser.feed(chunk);
        parser_failed = !fed;
        return fed;
    });
    if (!streamed) {
        if (parser_failed) {
            return tl::unexpected(std::move(streamed.error()));
        }
        return named(std::move(streamed.error()));
    }
    return parser.finish();
}

}  // namespace rpmirror
