// Metalink 3.0 documents as MirrorManager serves them (see src/metadata/metadata.hpp).
#include <algorithm>
#include <map>

#include "checksum/hasher.hpp"
#include "metadata/metadata.hpp"
#include "metadata/text.hpp"
#include "util/xml.hpp"

namespace rpmirror {

namespace {

using metadata_detail::parse_leading_integer;
using metadata_detail::to_lower;
using metadata_detail::trim;

constexpr std::string_view kRepomdSuffix = "repodata/repomd.xml";

// Returns the checksum type a metalink hash `type` attribute names ("sha256", "SHA-256", "md5"),
// or nullopt iff it is not one rpmirror knows.
std::optional<ChecksumType> metalink_hash_type(std::string_view name) {
    std::string normalized = to_lower(name);
    std::erase(normalized, '-');
    auto parsed = parse_checksum_type(normalized);
    return parsed ? std::optional<ChecksumType>(*parsed) : std::nullopt;
}

// Returns the scheme of `url` ("https"), or "" iff it has none.
std::string url_scheme(std::string_view url) {
    const std::size_t colon = url.find("://");
    return colon == std::string_view::npos ? std::string() : to_lower(url.substr(0, colon));
}

class MetalinkHandler : public xml::SaxHandler {
  public:
    void start_element(std::string_view local_name, std::string_view /*namespace_uri*/,
                       std::span<const xml::Attribute> attributes) override {
        // An element where a metalink has none (a <verification> straight inside <alternates>,
        // a <data> inside a <url>) is skipped with everything it contains, as librepo's parser
        // skips it; the text of the element around it goes on.
        if (skipped_.enter(stack_.empty() || expected(stack_.back(), local_name))) {
            return;
        }
        stack_.emplace_back(local_name);
        // (Taken after the push: a view taken before it would dangle when the vector grows.)
        const std::string_view parent =
            stack_.size() >= 2 ? std::string_view(stack_[stack_.size() - 2]) : std::string_view();
        text_.clear();
        if (stack_.size() == 1) {
            if (local_name != "metalink") {
                parser->fail_at_line("root element is <" + std::string(local_name) +
                                     ">, not <metalink>");
            }
            return;
        }
        if (local_name == "file" && parent == "files") {
            // librepo refuses a metalink with a nameless <file>, whatever else it lists.
            if (!has_attribute(attributes, "name")) {
                parser->fail_at_line("<file> without a name attribute");
                return;
            }
            in_repomd_file_ = !found_repomd_file_ && attribute(attributes, "name") == "repomd.xml";
            if (in_repomd_file_) {
                found_repomd_file_ = true;
                file_line_ = parser->line();
                file_depth_ = stack_.size();
            }
            return;
        }
        if (!in_repomd_file_) {
            return;
        }
        if (local_name == "alternate" && parent == "alternates") {
            metalink_.alternates.emplace_back();
            in_alternate_ = true;
        } else if (local_name == "hash" && parent == "verification") {
            hash_type_ = std::string(attribute(attributes, "type"));
        } else if (local_name == "url" && parent == "resources") {
            url_ = MetalinkUrl{};
            url_.protocol = std::string(attribute(attributes, "protocol"));
            url_.location = std::string(attribute(attributes, "location"));
            // As librepo: read with strtoll; a value outside 0..100 (or no number) is ignored.
            const auto preference = parse_leading_integer(attribute(attributes, "preference"));
            if (preference && *preference >= 0 && *preference <= 100) {
                url_.preference = static_cast<int>(*preference);
            }
        }
    }

    void end_element(std::string_view local_name, std::string_view /*namespace_uri*/) override {
        if (skipped_.leave()) {
            return;
        }
        const std::string_view parent =
            stack_.size() >= 2 ? std::string_view(stack_[stack_.size() - 2]) : std::string_view();
        if (in_repomd_file_) {
            finish_element(local_name, parent);
            if (local_name == "file" && stack_.size() == file_depth_) {
                in_repomd_file_ = false;
            }
        }
        stack_.pop_back();
        text_.clear();
    }

    void characters(std::string_view text) override {
        if (!skipped_.skipping() && in_repomd_file_ && text_.size() < kMaxTextBytes) {
            text_ += text;
        }
    }

    xml::PushParser* parser = nullptr;
    Metalink metalink_;
    bool found_repomd_file_ = false;
    long file_line_ = 0;

  private:
    static constexpr std::size_t kMaxTextBytes = 64 * 1024;

    // True iff a metalink has an element `name` inside `parent` (by local name: MirrorManager
    // writes <mm0:timestamp>, <mm0:alternates>); anything else is skipped.
    static bool expected(std::string_view parent, std::string_view name) {
        struct Child {
            std::string_view parent;
            std::string_view name;
        };
        static constexpr Child kChildren[] = {
            {"metalink", "files"},      {"files", "file"},        {"file", "timestamp"},
            {"file", "size"},           {"file", "verification"}, {"file", "alternates"},
            {"file", "resources"},      {"verification", "hash"}, {"alternates", "alternate"},
            {"alternate", "timestamp"}, {"alternate", "size"},    {"alternate", "verification"},
            {"resources", "url"}};
        return std::any_of(std::begin(kChildren), std::end(kChildren), [&](const Child& child) {
            return child.parent == parent && child.name == name;
        });
    }

    static std::string_view attribute(std::span<const xml::Attribute> attributes,
                                      std::string_view name) {
        for (const xml::Attribute& attribute : attributes) {
            if (attribute.local_name == name && attribute.namespace_uri.empty()) {
                return attribute.value;
            }
        }
        return {};
    }

    static bool has_attribute(std::span<const xml::Attribute> attributes, std::string_view name) {
        return std::any_of(attributes.begin(), attributes.end(), [&](const xml::Attribute& found) {
            return found.local_name == name && found.namespace_uri.empty();
        });
    }

    MetalinkFileVersion& version() {
        return in_alternate_ ? metalink_.alternates.back() : metalink_.repomd;
    }

    void finish_element(std::string_view local_name, std::string_view parent) {
        const bool in_version = parent == "file" || (parent == "alternate" && in_alternate_);
        const std::string_view text = trim(text_);
        if (local_name == "alternate") {
            in_alternate_ = false;
        } else if (local_name == "timestamp" && in_version) {
            // Numbers as librepo reads them (parse_leading_integer): "1641000000.5" is
            // 1641000000, and text without digits is no value rather than a refusal.
            version().timestamp = parse_leading_integer(text);
        } else if (local_name == "size" && in_version) {
            const auto value = parse_leading_integer(text);
            version().size = value && *value >= 0
                                 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(*value))
                                 : std::nullopt;
        } else if (local_name == "hash" && parent == "verification") {
            const auto type = metalink_hash_type(hash_type_);
            if (!type) {
                return;  // unknown hash types are ignored
            }
            if (!is_valid_hex_digest(*type, text)) {
                if (in_alternate_) {
                    return;  // an alternate is only a fallback: a hash that is none is dropped
                }
                parser->fail_at_line("<hash type=\"" + hash_type_ + "\"> \"" + std::string(text) +
                                     "\" is not a " + std::string(checksum_type_name(*type)) +
                                     " digest");
                return;
            }
            version().hashes.push_back(MetalinkHash{*type, to_lower(text)});
        } else if (local_name == "url" && parent == "resources") {
            url_.url = std::string(text);
            if (url_.url.empty()) {
                return;  // librepo skips an empty <url> too
            }
            // As librepo (lr_lrmirrorlist_append_metalink): the base is the URL without a trailing
            // "repodata/repomd.xml", or the whole URL when it has none. What is fetched from it
            // is checked against the metalink's hashes either way.
            url_.base_url = url_.url.ends_with(kRepomdSuffix)
                                ? url_.url.substr(0, url_.url.size() - kRepomdSuffix.size())
                                : url_.url;
            if (url_.protocol.empty()) {
                url_.protocol = url_scheme(url_.url);
            }
            metalink_.urls.push_back(std::move(url_));
        }
    }

    std::vector<std::string> stack_;
    xml::SkippedElements skipped_;
    std::string text_;
    bool in_repomd_file_ = false;
    std::size_t file_depth_ = 0;
    bool in_alternate_ = false;
    std::string hash_type_;
    MetalinkUrl url_;
};

}  // namespace

std::vector<std::string> Metalink::base_urls() const {
    std::vector<std::string> bases;
    for (const MetalinkUrl& url : urls) {
        const std::string scheme = url_scheme(url.url);
        if (scheme == "http" || scheme == "https" || scheme == "ftp" || scheme == "file") {
            bases.push_back(url.base_url);
        }
    }
    return bases;
}

Result<Metalink> parse_metalink(std::string_view document, std::string_view name) {
    MetalinkHandler handler;
    if (auto parsed = metadata_detail::parse_xml_document(handler, document, name); !parsed) {
        return tl::unexpected(parsed.error());
    }

    const std::string subject(name);
    if (!handler.found_repomd_file_) {
        return make_error(ErrorCode::BadInput, "metalink has no <file name=\"repomd.xml\">",
                          subject);
    }
    Metalink metalink = std::move(handler.metalink_);
    if (metalink.repomd.hashes.empty()) {
        return make_error(ErrorCode::BadInput,
                          "line " + std::to_string(handler.file_line_) +
                              ": <file name=\"repomd.xml\"> has no hash of a known type "
                              "(md5, sha1, sha224, sha256, sha384, sha512)",
                          subject);
    }
    // An alternate without a usable hash could only be checked by size: drop it.
    std::erase_if(metalink.alternates,
                  [](const MetalinkFileVersion& version) { return version.hashes.empty(); });
    if (metalink.urls.empty()) {
        return make_error(ErrorCode::BadInput, "metalink lists no mirrors (no <url>)", subject);
    }
    std::stable_sort(metalink.urls.begin(), metalink.urls.end(),
                     [](const MetalinkUrl& left, const MetalinkUrl& right) {
                         return left.preference > right.preference;
                     });
    return metalink;
}

Result<void> verify_repomd_against_metalink(std::span<const std::byte> repomd_bytes,
                                            const Metalink& metalink) {
    std::map<ChecksumType, std::string> digests;  // computed once per type
    const auto digest_of = [&](ChecksumType type) -> const std::string& {
        auto found = digests.find(type);
        if (found == digests.end()) {
            found = digests.emplace(type, hash_bytes(type, repomd_bytes)).first;
        }
        return found->second;
    };
    const auto matches = [&](const MetalinkFileVersion& version) {
        if (version.hashes.empty()) {
            return false;
        }
        if (version.size && *version.size != repomd_bytes.size()) {
            return false;
        }
        return std::all_of(
            version.hashes.begin(), version.hashes.end(),
            [&](const MetalinkHash& hash) { return digest_of(hash.type) == to_lower(hash.hex); });
    };
    if (matches(metalink.repomd) ||
        std::any_of(metalink.alternates.begin(), metalink.alternates.end(), matches)) {
        return {};
    }
    return make_error(ErrorCode::Corrupt,
                      "matches neither the metalink's current entry nor any of its " +
                          std::to_string(metalink.alternates.size()) + " alternates (size " +
                          std::to_string(repomd_bytes.size()) + ", sha256 " +
                          digest_of(ChecksumType::Sha256) + ")",
                      "repomd.xml");
}

}  // namespace rpmirror
