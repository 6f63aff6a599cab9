// Whole-document XML editing for the small records a filtered mirror trims (comps, updateinfo):
// libxml2's tree, read as every XML reader here reads (util/xml.hpp: no network, no entity ever
// declared or substituted), edited in place, written out again. Untouched elements keep their
// attributes, text and order.
#pragma once

#include <libxml/parser.h>
#include <libxml/tree.h>

#include <memory>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror::xml {

struct DocFree {
    void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using Document = std::unique_ptr<xmlDoc, DocFree>;

// Reads `text` as a document whose root element is `root`. Returns Error{Unsafe} naming
// `display_name` iff it declares an entity or is over 2 GiB, Error{BadInput} "is not <what>"
// iff it is not XML or its root is another element.
Result<Document> read_tree(std::string_view text, std::string_view root, std::string_view what,
                           std::string_view display_name);

// Writes `doc` out as UTF-8. Returns Error{Io} naming `display_name` iff libxml2 cannot.
Result<std::string> write_tree(xmlDoc* doc, std::string_view display_name);

// True iff `node` is an element named `name`.
bool is_element(const xmlNode* node, std::string_view name);

// The first child element of `parent` named `name`, or nullptr.
xmlNode* child_element(xmlNode* parent, std::string_view name);

// The text of `node` (its text and CDATA children), without leading and trailing whitespace.
std::string element_text(const xmlNode* node);

// The value of attribute `name` of `node`, "" iff it has none.
std::string attribute(const xmlNode* node, const char* name);

// Removes `node` from its document with the indentation before it, and frees it.
void remove_node(xmlNode* node);

}  // namespace rpmirror::xml
