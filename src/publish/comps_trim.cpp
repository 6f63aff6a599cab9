// comps.xml for a filtered mirror (publish/filtered_metadata.hpp): groups and environments
// trimmed to what the mirror can install.
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "publish/filtered_metadata.hpp"
#include "util/xml_tree.hpp"

namespace rpmirror {

namespace {

// Removes the <groupid> children of `list` (a <grouplist> or <optionlist>) naming a group of
// `dropped`. Returns how many it removed.
int remove_group_ids(xmlNode* list, const std::set<std::string>& dropped) {
    int removed = 0;
    for (xmlNode* child = list == nullptr ? nullptr : list->children; child != nullptr;) {
        xmlNode* next = child->next;
        if (xml::is_element(child, "groupid") && dropped.contains(xml::element_text(child))) {
            xml::remove_node(child);
            ++removed;
        }
        child = next;
    }
    return removed;
}

bool has_element(const xmlNode* list, std::string_view name) {
    for (const xmlNode* child = list == nullptr ? nullptr : list->children; child != nullptr;
         child = child->next) {
        if (xml::is_element(child, name)) {
            return true;
        }
    }
    return false;
}

}  // namespace

Result<std::optional<TrimmedComps>> trim_comps_xml(
    std::string_view document, const std::unordered_set<std::string>& filtered_out,
    std::string_view display_name) {
    auto doc = xml::read_tree(document, "comps", "a comps document", display_name);
    if (!doc) {
        return tl::unexpected(std::move(doc.error()));
    }
    xmlNode* root = xmlDocGetRootElement(doc->get());
    TrimmedComps trimmed;
    std::set<std::string> dropped_groups;
    bool changed = false;
    // Groups: without a mandatory package the mirror filtered out, the group cannot be
    // installed from it: left out. Its other packages the mirror lacks are left out of it.
    for (xmlNode* group = root->children; group != nullptr;) {
        xmlNode* next = group->next;
        if (!xml::is_element(group, "group")) {
            group = next;
            continue;
        }
        xmlNode* id = xml::child_element(group, "id");
        const std::string group_id = id == nullptr ? std::string() : xml::element_text(id);
        xmlNode* packages = xml::child_element(group, "packagelist");
        std::string missing;
        for (xmlNode* req = packages == nullptr ? nullptr : packages->children; req != nullptr;
             req = req->next) {
            const std::string type = xml::attribute(req, "type");
            if (xml::is_element(req, "packagereq") && (type.empty() || type == "mandatory") &&
                filtered_out.contains(xml::element_text(req))) {
                missing = xml::element_text(req);
                break;
            }
        }
        if (!missing.empty()) {
            trimmed.left_out.push_back(fmt::format(
                "group {}: its mandatory package {} is not mirrored", group_id, missing));
            dropped_groups.insert(group_id);
            xml::remove_node(group);
            changed = true;
            group = next;
            continue;
        }
        for (xmlNode* req = packages == nullptr ? nullptr : packages->children; req != nullptr;) {
            xmlNode* after = req->next;
            if (xml::is_element(req, "packagereq") &&
                filtered_out.contains(xml::element_text(req))) {
                xml::remove_node(req);
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
        if (xml::is_element(node, "environment")) {
            xmlNode* groups = xml::child_element(node, "grouplist");
            if (remove_group_ids(groups, dropped_groups) > 0) {
                xmlNode* id = xml::child_element(node, "id");
                trimmed.left_out.push_back(
                    fmt::format("environment {}: one of its groups is left out",
                                id == nullptr ? std::string() : xml::element_text(id)));
                xml::remove_node(node);
                changed = true;
            } else if (remove_group_ids(xml::child_element(node, "optionlist"), dropped_groups) >
                       0) {
                changed = true;
            }
        } else if (xml::is_element(node, "category")) {
            xmlNode* groups = xml::child_element(node, "grouplist");
            if (remove_group_ids(groups, dropped_groups) > 0) {
                changed = true;
                if (!has_element(groups, "groupid")) {
                    xml::remove_node(node);
                }
            }
        }
        node = next;
    }
    if (!changed) {
        return std::optional<TrimmedComps>();
    }
    auto text = xml::write_tree(doc->get(), display_name);
    if (!text) {
        return tl::unexpected(std::move(text.error()));
    }
    trimmed.xml = std::move(*text);
    return std::optional<TrimmedComps>(std::move(trimmed));
}

}  // namespace rpmirror
