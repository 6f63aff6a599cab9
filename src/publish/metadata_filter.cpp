// MetadataFilter (publish/filtered_metadata.hpp): one metadata document streamed through,
// only whole <package> (or <update>, <group>...) spans of what the mirror lacks dropped.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "metadata/text.hpp"
#include "publish/filtered_metadata.hpp"
#include "util/text.hpp"
#include "util/xml_scanner.hpp"

namespace rpmirror {

namespace {

using metadata_detail::to_lower;
using xml_scan::attribute;
using xml_scan::Markup;
using xml_scan::read_markup;
using xml_scan::unescape;

}  // namespace

// ---------------------------------------------------------------------------------------------
// MetadataFilter

struct MetadataFilter::Impl {
    Kind kind;
    std::string name;
    std::uint64_t expected = 0;
    // primary: (pkgid, href) -> how many; filelists/other: pkgid -> how many primary kept.
    std::map<std::pair<std::string, std::string>, std::size_t> wanted_primary;
    std::map<std::string, std::size_t, std::less<>> wanted_pkgid;
    // primary: (pkgid, href) -> the href to publish instead (KeptPackage::published_href).
    std::map<std::pair<std::string, std::string>, std::string> new_href;

    std::string buffer;      // unconsumed input
    std::size_t scan = 0;    // offset in `buffer` up to which markup was read
    int depth = 0;           // element depth at `scan`
    bool root_seen = false;  // the root start tag was written
    bool in_package = false;
    bool header_done = false;  // the bytes before the first <package> were written
    bool any_kept = false;
    std::size_t package_begin = 0;  // offset in buffer of the current package's lead
    std::size_t lead_begin = 0;     // offset of whitespace before the current package
    std::string pkgid;
    std::string href;
    bool in_checksum = false;
    bool checksum_is_pkgid = false;
    std::size_t checksum_text_begin = 0;
    // The raw value of the current package's <location href="...">: offsets in buffer.
    std::size_t href_begin = 0;
    std::size_t href_end = 0;
    const std::string* replacement = nullptr;  // keep()'s: the href to write instead
    std::uint64_t kept = 0;

    // Decides whether the finished package is kept.
    bool keep() {
        replacement = nullptr;
        if (kind == Kind::Primary) {
            const std::pair<std::string, std::string> key{to_lower(pkgid), href};
            const auto found = wanted_primary.find(key);
            if (found == wanted_primary.end() || found->second == 0) {
                return false;
            }
            --found->second;
            if (const auto renamed = new_href.find(key); renamed != new_href.end()) {
                replacement = &renamed->second;
            }
            return true;
        }
        const auto found = wanted_pkgid.find(to_lower(pkgid));
        if (found == wanted_pkgid.end() || found->second == 0) {
            return false;
        }
        --found->second;
        return true;
    }

    Error bad(std::string what) const {
        return Error{ErrorCode::BadInput, std::move(what), name, 0};
    }

    // Processes the markup complete in `buffer`, appending output to `out`, and drops the
    // consumed prefix.
    Result<void> process(std::string& out) {
        std::size_t consumed = 0;  // bytes of `buffer` already written or dropped
        while (true) {
            const std::size_t lt = buffer.find('<', scan);
            if (lt == std::string::npos) {
                scan = buffer.size();
                break;
            }
            const auto markup = read_markup(buffer, lt);
            if (!markup) {
                scan = lt;
                break;
            }
            scan = markup->end;
            if (markup->kind == Markup::Kind::Other) {
                continue;
            }
            const std::string_view tag(buffer.data() + markup->begin, markup->end - markup->begin);
            if (markup->kind == Markup::Kind::Open) {
                if (!root_seen) {
                    // The root element: packages="N" becomes the kept count.
                    std::size_t offset = 0;
                    out.append(buffer, consumed, markup->begin - consumed);
                    if (auto count = attribute(tag, "packages", &offset)) {
                        out.append(tag.substr(0, offset));
                        out += std::to_string(expected);
                        out.append(tag.substr(offset + count->size()));
                    } else {
                        out.append(tag);
                    }
                    consumed = markup->end;
                    root_seen = true;
                    if (!markup->self_closing) {
                        ++depth;
                    }
                    continue;
                }
                if (depth == 1 && markup->name == "package") {
                    if (!header_done) {
                        // The header (root tag through the whitespace before the first
                        // package) is written as it is.
                        out.append(buffer, consumed, markup->begin - consumed);
                        lead_begin = markup->begin;
                        header_done = true;
                    } else {
                        lead_begin = consumed;
                    }
                    consumed = lead_begin;
                    package_begin = markup->begin;
                    in_package = true;
                    pkgid.clear();
                    href_begin = href_end = 0;
                    href.clear();
                    if (kind != Kind::Primary) {
                        if (auto id = attribute(tag, "pkgid")) {
                            pkgid = *id;
                        }
                    }
                } else if (in_package && kind == Kind::Primary && depth == 2) {
                    if (markup->name == "checksum" && !markup->self_closing) {
                        const auto is_pkgid = attribute(tag, "pkgid");
                        checksum_is_pkgid = !is_pkgid || *is_pkgid == "YES";
                        in_checksum = true;
                        checksum_text_begin = markup->end;
                    } else if (markup->name == "location") {
                        std::size_t offset = 0;
                        if (auto value = attribute(tag, "href", &offset)) {
                            href = unescape(*value);
                            href_begin = markup->begin + offset;
                            href_end = href_begin + value->size();
                        }
                    }
                }
                if (!markup->self_closing) {
                    ++depth;
                }
                continue;
            }
            // A close tag.
            --depth;
            if (in_checksum && depth == 2 && markup->name == "checksum") {
                in_checksum = false;
                if (checksum_is_pkgid && pkgid.empty()) {
                    pkgid = text::trim(std::string_view(buffer.data() + checksum_text_begin,
                                                        markup->begin - checksum_text_begin));
                }
            } else if (in_package && depth == 1 && markup->name == "package") {
                in_package = false;
                if (pkgid.empty()) {
                    return tl::unexpected(bad("a <package> without a pkgid"));
                }
                if (keep()) {
                    // The lead before the first kept package went out with the header.
                    const std::size_t from = any_kept ? lead_begin : package_begin;
                    if (replacement != nullptr && href_end > href_begin && href_begin >= from) {
                        out.append(buffer, from, href_begin - from);
                        out += xml_scan::escape(*replacement);
                        out.append(buffer, href_end, markup->end - href_end);
                    } else {
                        out.append(buffer, from, markup->end - from);
                    }
                    any_kept = true;
                    ++kept;
                }
                consumed = markup->end;
            } else if (depth == 0) {
                // The root's end: the tail after the last package is written as it is.
                out.append(buffer, consumed, markup->end - consumed);
                consumed = markup->end;
            }
        }
        // Between packages the pending bytes (whitespace) stay in the buffer: they are written
        // only before a kept package or the root's end.
        if (!root_seen) {
            out.append(buffer, consumed, scan - consumed);
            consumed = scan;
        }
        if (in_package) {
            consumed = std::min(consumed, any_kept ? lead_begin : package_begin);
        }
        buffer.erase(0, consumed);
        scan -= consumed;
        lead_begin -= std::min(lead_begin, consumed);
        package_begin -= std::min(package_begin, consumed);
        checksum_text_begin -= std::min(checksum_text_begin, consumed);
        href_begin -= std::min(href_begin, consumed);
        href_end -= std::min(href_end, consumed);
        return {};
    }
};

MetadataFilter::MetadataFilter(Kind kind, std::span<const KeptPackage> kept, std::string name)
    : impl_(std::make_unique<Impl>()) {
    impl_->kind = kind;
    impl_->name = std::move(name);
    impl_->expected = kept.size();
    for (const KeptPackage& package : kept) {
        const std::string id = to_lower(package.pkgid);
        ++impl_->wanted_primary[{id, package.location_href}];
        ++impl_->wanted_pkgid[id];
        if (!package.published_href.empty()) {
            impl_->new_href[{id, package.location_href}] = package.published_href;
        }
    }
}

MetadataFilter::~MetadataFilter() = default;

Result<void> MetadataFilter::feed(std::string_view chunk, std::string& out) {
    impl_->buffer.append(chunk);
    return impl_->process(out);
}

Result<std::uint64_t> MetadataFilter::finish(std::string& out) {
    if (auto processed = impl_->process(out); !processed) {
        return tl::unexpected(std::move(processed.error()));
    }
    if (!impl_->root_seen || impl_->in_package || impl_->depth != 0) {
        return tl::unexpected(impl_->bad("the document ends before its root element is closed"));
    }
    out.append(impl_->buffer);  // whitespace after the root
    impl_->buffer.clear();
    return impl_->kept;
}

}  // namespace rpmirror
