// Lexical safety checks for hrefs from repository metadata (see safe_relative_path).
#include <algorithm>
#include <cstdio>

#include "metadata/metadata.hpp"

namespace rpmirror {

namespace {

// Returns `href` fit for a message: control bytes as \xNN, cut after 200 bytes.
std::string display_href(std::string_view href) {
    constexpr std::size_t kMaxShown = 200;
    std::string shown;
    for (std::size_t index = 0; index < href.size() && index < kMaxShown; ++index) {
        const auto byte = static_cast<unsigned char>(href[index]);
        if (byte < 0x20 || byte == 0x7f) {
            char escaped[5];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            shown += escaped;
        } else {
            shown += href[index];
        }
    }
    if (href.size() > kMaxShown) {
        shown += "...";
    }
    return shown;
}

// Returns true iff `segment` is "." or ".." spelled with percent-encoded dots ("%2e%2e", ".%2E"):
// never a real package name, only an attempt at an escape through a server or tool that decodes.
bool is_encoded_dot_segment(std::string_view segment) {
    std::size_t dots = 0;
    bool encoded = false;
    while (!segment.empty()) {
        if (segment.front() == '.') {
            segment.remove_prefix(1);
        } else if (segment.size() >= 3 && segment.substr(0, 2) == "%2" &&
                   (segment[2] == 'e' || segment[2] == 'E')) {
            segment.remove_prefix(3);
            encoded = true;
        } else {
            return false;
        }
        ++dots;
    }
    return encoded && dots <= 2;
}

// A path lexically normalized relative to some directory: `ups` leading "..", then `segments`.
struct LexicalPath {
    std::size_t ups = 0;
    std::vector<std::string> segments;
};

// One component of an absolute path; the repository root's components are symbolic (unknown
// names, index into the root) unless the policy gives the root.
struct Component {
    bool is_symbolic = false;
    std::size_t symbol = 0;
    std::string name;
    bool operator==(const Component&) const = default;
};

LexicalPath normalize(const std::filesystem::path& path) {
    LexicalPath result;
    for (const auto& part : path.relative_path()) {
        const std::string name = part.string();
        if (name.empty() || name == ".") {
            continue;
        }
        if (name == "..") {
            if (result.segments.empty()) {
                ++result.ups;
            } else {
                result.segments.pop_back();
            }
        } else {
            result.segments.push_back(name);
        }
    }
    return result;
}

// Returns the components of the repository root: the real ones if known, else `depth` symbols.
std::vector<Component> root_components(const PathPolicy& policy, std::size_t depth) {
    std::vector<Component> root;
    if (policy.repo_root && policy.repo_root->is_absolute()) {
        const LexicalPath normalized = normalize(*policy.repo_root);
        for (const std::string& name : normalized.segments) {
            root.push_back(Component{false, 0, name});
        }
        return root;
    }
    for (std::size_t index = 0; index < depth; ++index) {
        root.push_back(Component{true, index, {}});
    }
    return root;
}

// Returns the absolute components of `path` relative to `root`, or nullopt iff it climbs above
// the filesystem root.
std::optional<std::vector<Component>> absolute_components(const std::vector<Component>& root,
                                                          const LexicalPath& path) {
    if (path.ups > root.size()) {
        return std::nullopt;
    }
    std::vector<Component> components(root.begin(), root.end() - static_cast<long>(path.ups));
    for (const std::string& name : path.segments) {
        components.push_back(Component{false, 0, name});
    }
    return components;
}

// Returns true iff `href` (normalized, relative to the root) lies strictly inside the policy's
// safe write path.
bool inside_safe_write_path(const LexicalPath& href, const PathPolicy& policy) {
    if (!policy.safe_write_path) {
        return false;
    }
    const std::filesystem::path& allowed = *policy.safe_write_path;
    const LexicalPath allowed_relative = normalize(allowed);
    const std::size_t depth = std::max(href.ups, allowed_relative.ups) + 1;
    const std::vector<Component> root = root_components(policy, depth);
    std::optional<std::vector<Component>> allowed_components;
    if (allowed.is_absolute()) {
        allowed_components.emplace();
        for (const std::string& name : allowed_relative.segments) {
            allowed_components->push_back(Component{false, 0, name});
        }
    } else {
        allowed_components = absolute_components(root, allowed_relative);
    }
    const auto href_components = absolute_components(root, href);
    if (!allowed_components || !href_components ||
        href_components->size() <= allowed_components->size()) {
        return false;
    }
    return std::equal(allowed_components->begin(), allowed_components->end(),
                      href_components->begin());
}

// An href that climbs out of the root and straight back into it ("../x86_64/Packages/a.rpm" from
// ".../x86_64") names a file inside the root: its climb is cancelled when the absolute root is
// known, so that it gets the same relative path as "Packages/a.rpm".
void cancel_climb_back(LexicalPath& href, const PathPolicy& policy) {
    if (href.ups == 0 || !policy.repo_root || !policy.repo_root->is_absolute()) {
        return;
    }
    const LexicalPath root = normalize(*policy.repo_root);
    if (href.ups > root.segments.size() || href.segments.size() <= href.ups) {
        return;
    }
    if (std::equal(root.segments.end() - static_cast<long>(href.ups), root.segments.end(),
                   href.segments.begin())) {
        href.segments.erase(href.segments.begin(),
                            href.segments.begin() + static_cast<long>(href.ups));
        href.ups = 0;
    }
}

}  // namespace

Result<std::filesystem::path> safe_relative_path(std::string_view href,
                                                 std::string_view package_name_for_errors,
                                                 const PathPolicy& policy) {
    const auto unsafe = [&](std::string_view reason) {
        return make_error(ErrorCode::Unsafe,
                          "href '" + display_href(href) + "' " + std::string(reason),
                          std::string(package_name_for_errors));
    };
    if (href.empty()) {
        return make_error(ErrorCode::Unsafe, "empty href", std::string(package_name_for_errors));
    }
    if (href.size() > kMaxPathBytes) {
        return unsafe("is longer than " + std::to_string(kMaxPathBytes) + " bytes");
    }
    for (const char c : href) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte == 0) {
            return unsafe("contains a NUL byte");
        }
        if (byte < 0x20 || byte == 0x7f) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", byte);
            return unsafe("contains control character " + std::string(hex));
        }
    }
    if (href.front() == '/') {
        return unsafe("is an absolute path");
    }
    if (href.back() == '/') {
        return unsafe("ends with '/'");
    }

    LexicalPath normalized;
    std::string_view rest = href;
    while (true) {
        const std::size_t slash = rest.find('/');
        const std::string_view segment = rest.substr(0, slash);
        if (segment.empty()) {
            return unsafe("has an empty path segment");
        }
        if (segment.size() > kMaxPathSegmentBytes) {
            return unsafe("has a path segment longer than " + std::to_string(kMaxPathSegmentBytes) +
                          " bytes");
        }
        if (is_encoded_dot_segment(segment)) {
            return unsafe("has a percent-encoded '.' or '..' segment");
        }
        if (segment == "..") {
            if (normalized.segments.empty()) {
                ++normalized.ups;
            } else {
                normalized.segments.pop_back();
            }
        } else if (segment != ".") {
            normalized.segments.emplace_back(segment);
        }
        if (slash == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(slash + 1);
    }
    if (normalized.segments.empty()) {
        return unsafe(normalized.ups == 0 ? "names the repository root, not a file"
                                          : "escapes the repository root");
    }
    cancel_climb_back(normalized, policy);
    if (policy.file_name_only) {
        return std::filesystem::path(normalized.segments.back());
    }
    if (normalized.ups > 0 && policy.flatten) {
        normalized.ups = 0;
    }
    if (normalized.ups > 0 && !inside_safe_write_path(normalized, policy)) {
        if (!policy.safe_write_path) {
            return unsafe("escapes the repository root");
        }
        return unsafe("escapes the repository root and is not inside safe_write_path '" +
                      policy.safe_write_path->string() + "'");
    }
    std::filesystem::path result;
    for (std::size_t up = 0; up < normalized.ups; ++up) {
        result /= "..";
    }
    for (const std::string& segment : normalized.segments) {
        result /= segment;
    }
    return result;
}

}  // namespace rpmirror
