// comps.xml for a filtered mirror (rpmirror/filtered_metadata.hpp): groups and environments
// trimmed to what the mirror can install.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "rpmirror/filtered_metadata.hpp"

namespace rpmirror {

namespace {

struct CompsDocFree {
    void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

bool comps_element_named(const xmlNode* node, std::string_view name) {
    return node->type == XML_ELEMENT_NODE &&
           std::string_view(reinterpret_cast<const char*>(node->name)) == name;
}

// The first child element of `parent` named `name`, or nullptr.
xmlNode* comps_child(xmlNode* parent, std::string_view name) {
    for (xmlNode* child = parent->children; child != nullptr; child = child->next) {
        if (comps_element_named(child, name)) {
            return child;
        }
    }
    return nullptr;
}

std::string comps_text(const xmlNode* node) {
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

std::string comps_attribute(const xmlNode* node, const char* name) {
    std::string value;
    for (const xmlAttr* attribute = node->properties; attribute != nullptr;
         attribute = attribute->next) {
        if (std::string_view(reinterpret_cast<const char*>(attribute->name)) == name &&
            attribute->children != nullptr && attribute->children->content != nullptr) {
            value = reinterpret_cast<const char*>(attribute->children->content);
        }
    }
    return value;
}

// Removes `node` and the indentation before it.
void comps_remove(xmlNode* node) {
    if (xmlNode* before = node->prev; before != nullptr && xmlIsBlankNode(before) != 0) {
        xmlUnlinkNode(before);
        xmlFreeNode(before);
    }
    xmlUnlinkNode(node);
    xmlFreeNode(node);
}

// Removes the <groupid> children of `list` (a <grouplist> or <optionlist>) naming a group of
// `dropped`. Returns how many it removed.
int remove_group_ids(xmlNode* list, const std::set<std::string>& dropped) {
    int removed = 0;
    for (xmlNode* child = list == nullptr ? nullptr : list->children; child != nullptr;) {
        xmlNode* next = child->next;
        if (comps_element_named(child, "groupid") && dropped.contains(comps_text(child))) {
            comps_remove(child);
            ++removed;
        }
        child = next;
    }
    return removed;
}

bool has_element(const xmlNode* list, std::string_view name) {
    for (const xmlNode* child = list == nullptr ? nullptr : list->children; child != nullptr;
         child = child->next) {
        if (comps_element_named(child, name)) {
            return true;
        }
    }
    return false;
}

}  // namespace

Result<std::optional<TrimmedComps>> trim_comps_xml(
    std::string_view xml, const std::unordered_set<std::string>& filtered_out,
    std::string_view display_name) {
    // As every XML reader here (util/xml.hpp): no entity is ever declared or substituted.
    if (xml.find("<!ENTITY") != std::string_view::npos) {
        return make_error(ErrorCode::Unsafe, "declares an XML entity: refused",
                          std::string(display_name));
    }
    if (xml.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        return make_error(ErrorCode::Unsafe, "is too large to rewrite", std::string(display_name));
    }
    const std::string name(display_name);
    const std::unique_ptr<xmlDoc, CompsDocFree> doc(
        xmlReadMemory(xml.data(), static_cast<int>(xml.size()), name.c_str(), nullptr,
                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
    xmlNode* root = doc ? xmlDocGetRootElement(doc.get()) : nullptr;
    if (root == nullptr || !comps_element_named(root, "comps")) {
        return make_error(ErrorCode::BadInput, "is not a comps document (<comps>)", name);
    }
    TrimmedComps trimmed;
    std::set<std::string> dropped_groups;
    bool changed = false;
    // Groups: without a mandatory package the mirror filtered out, the group cannot be
    // installed from it: left out. Its other packages the mirror lacks are left out of it.
    for (xmlNode* group = root->children; group != nullptr;) {
        xmlNode* next = group->next;
        if (!comps_element_named(group, "group")) {
            group = next;
            continue;
        }
        xmlNode* id = comps_child(group, "id");
        const std::string group_id = id == nullptr ? std::string() : comps_text(id);
        xmlNode* packages = comps_child(group, "packagelist");
        std::string missing;
        for (xmlNode* req = packages == nullptr ? nullptr : packages->children; req != nullptr;
             req = req->next) {
            const std::string type = comps_attribute(req, "type");
            if (comps_element_named(req, "packagereq") && (type.empty() || type == "mandatory") &&
                filtered_out.contains(comps_text(req))) {
                missing = comps_text(req);
                break;
            }
        }
        if (!missing.empty()) {
            trimmed.left_out.push_back(fmt::format(
                "group {}: its mandatory package {} is not mirrored", group_id, missing));
            dropped_groups.insert(group_id);
            comps_remove(group);
            changed = true;
            group = next;
            continue;
        }
        for (xmlNode* req = packages == nullptr ? nullptr : packages->children; req != nullptr;) {
            xmlNode* after = req->next;
            if (comps_element_named(req, "packagereq") && filtered_out.contains(comps_text(req))) {
                comps_remove(req);
                changed = true;
            }
            req = after;
        }
        group = next;
    }
    // Environments need every group of their <grouplist>; optional groups just go. Categories
    // lose the groups left out, and go when none is left.
    for (xmlNode* node = root->children; node != nullptr;) {
        xmlNode* next = node->next;
        if (comps_element_named(node, "environment")) {
            xmlNode* groups = comps_child(node, "grouplist");
            if (remove_group_ids(groups, dropped_groups) > 0) {
                xmlNode* id = comps_child(node, "id");
                trimmed.left_out.push_back(
                    fmt::format("environment {}: one of its groups is left out",
                                id == nullptr ? std::string() : comps_text(id)));
                comps_remove(node);
                changed = true;
            } else if (remove_group_ids(comps_child(node, "optionlist"), dropped_groups) > 0) {
                changed = true;
            }
        } else if (comps_element_named(node, "category")) {
            xmlNode* groups = comps_child(node, "grouplist");
            if (remove_group_ids(groups, dropped_groups) > 0) {
                changed = true;
                if (!has_element(groups, "groupid")) {
                    comps_remove(node);
                }
            }
        }
        node = next;
    }
    if (!changed) {
        return std::optional<TrimmedComps>();
    }
    xmlChar* text = nullptr;
    int size = 0;
    xmlDocDumpMemoryEnc(doc.get(), &text, &size, "UTF-8");
    if (text == nullptr) {
        return make_error(ErrorCode::Io, "cannot write the trimmed comps document", name);
    }
    trimmed.xml.assign(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
    xmlFree(text);
    return std::optional<TrimmedComps>(std::move(trimmed));
}

}  // namespace rpmirror
