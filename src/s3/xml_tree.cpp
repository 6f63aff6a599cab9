#include "s3/xml_tree.hpp"

#include "util/xml.hpp"

namespace rpmirror::s3 {

namespace {

class TreeBuilder final : public xml::SaxHandler {
  public:
    void start_element(std::string_view local_name, std::string_view,
                       std::span<const xml::Attribute>) override {
        if (stack_.empty()) {
            root_.name = std::string(local_name);
            stack_.push_back(&root_);
            return;
        }
        XmlNode& parent = *stack_.back();
        parent.children.push_back(XmlNode{std::string(local_name), {}, {}});
        stack_.push_back(&parent.children.back());
    }
    void end_element(std::string_view, std::string_view) override { stack_.pop_back(); }
    void characters(std::string_view text) override {
        if (!stack_.empty()) {
            stack_.back()->text += text;
        }
    }
    XmlNode take() { return std::move(root_); }

  private:
    XmlNode root_;
    // Pointers into root_'s tree: only the last element of each children vector is pointed to
    // while it may still grow, and a parent's vector only grows when its child is closed.
    std::vector<XmlNode*> stack_;
};

}  // namespace

const XmlNode* XmlNode::child(std::string_view child_name) const {
    for (const XmlNode& node : children) {
        if (node.name == child_name) {
            return &node;
        }
    }
    return nullptr;
}

std::string XmlNode::child_text(std::string_view child_name) const {
    const XmlNode* node = child(child_name);
    return node == nullptr ? std::string() : node->text;
}

Result<XmlNode> parse_xml_tree(std::string_view document, const std::string& document_name) {
    TreeBuilder builder;
    xml::PushParser parser(builder, document_name);
    if (auto fed = parser.feed(document); !fed) {
        return tl::unexpected(fed.error());
    }
    if (auto finished = parser.finish(); !finished) {
        return tl::unexpected(finished.error());
    }
    return builder.take();
}

}  // namespace rpmirror::s3
