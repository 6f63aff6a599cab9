// Whole-document XML editing (util/xml_tree.hpp).
#include "util/xml_tree.hpp"

#include <limits>

namespace rpmirror::xml {

Result<Document> read_tree(std::string_view text, std::string_view root, std::string_view what,
                           std::string_view display_name) {
    const std::string name(display_name);
    // As every XML reader here (util/xml.hpp): no entity is ever declared or substituted.
    if (text.find("<!ENTITY") != std::string_view::npos) {
        return make_error(ErrorCode::Unsafe, "declares an XML entity: refused", name);
    }
    if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        return make_error(ErrorCode::Unsafe, "is too large to rewrite", name);
    }
    Document doc(xmlReadMemory(text.data(), static_cast<int>(text.size()), name.c_str(), nullptr,
                               XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    const xmlNode* top = doc ? xmlDocGetRootElement(doc.get()) : nullptr;
    if (top == nullptr || !is_element(top, root)) {
        return make_error(ErrorCode::BadInput,
                          "is not " + std::string(what) + " (<" + std::string(root) + ">)", name);
    }
    return doc;
}

Result<std::string> write_tree(xmlDoc* doc, std::string_view display_name) {
    xmlChar* text = nullptr;
    int size = 0;
    xmlDocDumpMemoryEnc(doc, &text, &size, "UTF-8");
    if (text == nullptr) {
        return make_error(ErrorCode::Io, "cannot write the trimmed document",
                          std::string(display_name));
    }
    std::string out(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
    xmlFree(text);
    return out;
}

bool is_element(const xmlNode* node, std::string_view name) {
    return node->type == XML_ELEMENT_NODE &&
           std::string_view(reinterpret_cast<const char*>(node->name)) == name;
}

xmlNode* child_element(xmlNode* parent, std::string_view name) {
    for (xmlNode* child = parent->children; child != nullptr; child = child->next) {
        if (is_element(child, name)) {
            return child;
        }
    }
    return nullptr;
}

std::string element_text(const xmlNode* node) {
    std::string text;
    for (const xmlNode* child = node->children; child != nullptr; child = child->next) {
        if (child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) {
            text += reinterpret_cast<const char*>(child->content);
        }
    }
    const std::size_t begin = text.find_first_not_of(" \t\r\n");
    const std::size_t end = text.find_last_not_of(" \t\r\n");
    return begin == std::string::npos ? std::string() : text.substr(begin, end + 1 - begin);
}

std::string attribute(const xmlNode* node, const char* name) {
    std::string value;
    for (const xmlAttr* attr = node->properties; attr != nullptr; attr = attr->next) {
        if (std::string_view(reinterpret_cast<const char*>(attr->name)) == name &&
            attr->children != nullptr && attr->children->content != nullptr) {
            value = reinterpret_cast<const char*>(attr->children->content);
        }
    }
    return value;
}

void remove_node(xmlNode* node) {
    if (xmlNode* before = node->prev; before != nullptr && xmlIsBlankNode(before) != 0) {
        xmlUnlinkNode(before);
        xmlFreeNode(before);
    }
    xmlUnlinkNode(node);
    xmlFreeNode(node);
}

}  // namespace rpmirror::xml
