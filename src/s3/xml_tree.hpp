// S3's XML responses (error bodies, listings, multipart results) read into a small element tree.
// Responses are small (a listing page of 1000 keys is a few hundred KB), so a tree is simpler
// than a streaming reader per response type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rpmirror/util/error.hpp"

namespace rpmirror::s3 {

struct XmlNode {
    std::string name;  // local name, namespace dropped
    std::string text;  // the element's own text
    std::vector<XmlNode> children;

    // Returns the first child named `child_name`, or nullptr iff none.
    const XmlNode* child(std::string_view child_name) const;
    // Returns the text of the first child named `child_name`, or "" iff none.
    std::string child_text(std::string_view child_name) const;
};

// Parses `document` (named `document_name` in errors) with src/util/xml's hardened parser.
// Returns the root element; Error{BadInput} naming the document iff it is malformed.
Result<XmlNode> parse_xml_tree(std::string_view document, const std::string& document_name);

}  // namespace rpmirror::s3
