#include "util/xml.hpp"

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <optional>
#include <vector>

namespace rpmirror::xml {

namespace {

// xmlParseChunk takes an int size; larger chunks are fed in pieces of this many bytes.
constexpr std::size_t kMaxChunk = 64 * 1024 * 1024;

struct ParserCtxtDeleter {
    void operator()(xmlParserCtxt* ctxt) const {
        // libxml2 builds a "SAX compatibility" document to hold entity declarations when it
        // meets one (before our handler stops it); the context does not own it.
        if (ctxt->myDoc != nullptr) {
            xmlFreeDoc(ctxt->myDoc);
            ctxt->myDoc = nullptr;
        }
        xmlFreeParserCtxt(ctxt);
    }
};
using ParserCtxtPtr = std::unique_ptr<xmlParserCtxt, ParserCtxtDeleter>;

std::string_view view(const xmlChar* text) {
    return text == nullptr ? std::string_view()
                           : std::string_view(reinterpret_cast<const char*>(text));
}

void init_libxml2_once() {
    static std::once_flag once;
    std::call_once(once, [] { xmlInitParser(); });
}

}  // namespace

struct PushParser::Impl {
    SaxHandler* handler = nullptr;
    std::string document_name;
    ParserCtxtPtr ctxt;
    std::optional<Error> error;
    bool finished = false;
    std::vector<Attribute> attributes;        // scratch, reused per element
    std::vector<std::string> decoded_values;  // scratch for attribute values holding "&#38;"
    std::string_view element_prefix;          // of the element being delivered

    long current_line() const {
        if (ctxt != nullptr && ctxt->input != nullptr) {
            return ctxt->input->line;
        }
        return 0;
    }

    // Records `what` as the error at `line` (first error wins) and stops the parser.
    void fail_with(Error failure) {
        if (!error) {
            error = std::move(failure);
        }
        if (ctxt != nullptr && ctxt->instate != XML_PARSER_EOF) {
            xmlStopParser(ctxt.get());
        }
    }
    void fail_at(long line, std::string_view what) {
        fail_with(Error{ErrorCode::BadInput,
                        "line " + std::to_string(line) + ": " + std::string(what), document_name,
                        0});
    }
    bool active() const { return !error; }

    static Impl* self(void* user_data) { return static_cast<Impl*>(user_data); }

    static void on_start_element(void* user_data, const xmlChar* local_name, const xmlChar* prefix,
                                 const xmlChar* uri, int /*nb_namespaces*/,
                                 const xmlChar** /*namespaces*/, int nb_attributes,
                                 int /*nb_defaulted*/, const xmlChar** attributes) {
        Impl* impl = self(user_data);
        if (!impl->active()) {
            return;
        }
        impl->attributes.clear();
        impl->decoded_values.clear();
        const auto count = static_cast<std::size_t>(std::max(nb_attributes, 0));
        impl->decoded_values.reserve(count);  // no reallocation: views into it stay valid
        for (std::size_t index = 0; index < count; ++index) {
            // Five pointers per attribute: localname, prefix, URI, value, end.
            const xmlChar* const* fields = attributes + index * 5;
            const char* begin = reinterpret_cast<const char*>(fields[3]);
            const char* end = reinterpret_cast<const char*>(fields[4]);
            std::string_view value(begin, static_cast<std::size_t>(end - begin));
            // Without entity substitution libxml2 hands a literal '&' (from &amp; or &#38;) over
            // as the text "&#38;"; no other '&' can occur (other entity references fail the
            // parse), so replacing every "&#38;" by "&" restores the value exactly.
            if (value.find('&') != std::string_view::npos) {
                std::string decoded;
                decoded.reserve(value.size());
                for (std::size_t pos = 0; pos < value.size();) {
                    if (value.compare(pos, 5, "&#38;") == 0) {
                        decoded += '&';
                        pos += 5;
                    } else {
                        decoded += value[pos];
                        ++pos;
                    }
                }
                impl->decoded_values.push_back(std::move(decoded));
                value = impl->decoded_values.back();
            }
            impl->attributes.push_back(Attribute{view(fields[0]), value, view(fields[2])});
        }
        impl->element_prefix = view(prefix);
        impl->handler->start_element(view(local_name), view(uri), impl->attributes);
        impl->element_prefix = {};
    }

    static void on_end_element(void* user_data, const xmlChar* local_name, const xmlChar* prefix,
                               const xmlChar* uri) {
        Impl* impl = self(user_data);
        if (impl->active()) {
            impl->element_prefix = view(prefix);
            impl->handler->end_element(view(local_name), view(uri));
            impl->element_prefix = {};
        }
    }

    static void on_characters(void* user_data, const xmlChar* text, int length) {
        Impl* impl = self(user_data);
        if (impl->active() && length > 0) {
            impl->handler->characters(std::string_view(reinterpret_cast<const char*>(text),
                                                       static_cast<std::size_t>(length)));
        }
    }

    static void on_entity_decl(void* user_data, const xmlChar* name, int /*type*/,
                               const xmlChar* /*public_id*/, const xmlChar* /*system_id*/,
                               xmlChar* /*content*/) {
        Impl* impl = self(user_data);
        impl->fail_at(impl->current_line(), "declares entity '" + std::string(view(name)) +
                                                "' (entity declarations are not allowed)");
    }

    static xmlEntity* on_get_entity(void* user_data, const xmlChar* name) {
        // Only called for entities other than the five predefined ones.
        Impl* impl = self(user_data);
        impl->fail_at(impl->current_line(), "references entity '&" + std::string(view(name)) +
                                                ";' (only the predefined entities are allowed)");
        return nullptr;
    }

    static xmlEntity* on_get_parameter_entity(void* user_data, const xmlChar* name) {
        Impl* impl = self(user_data);
        impl->fail_at(impl->current_line(), "references parameter entity '%" +
                                                std::string(view(name)) +
                                                ";' (entities are not allowed)");
        return nullptr;
    }

    static xmlParserInput* on_resolve_entity(void* user_data, const xmlChar* /*public_id*/,
                                             const xmlChar* system_id) {
        Impl* impl = self(user_data);
        impl->fail_at(impl->current_line(), "references external resource '" +
                                                std::string(view(system_id)) +
                                                "' (external entities are not allowed)");
        return nullptr;
    }

    static void on_structured_error(void* user_data, xmlError* xml_error) {
        Impl* impl = self(user_data);
        if (xml_error == nullptr || xml_error->level < XML_ERR_ERROR || impl->error) {
            return;
        }
        // A namespace error (an undeclared prefix, "xmlns:rpm" bound twice) leaves the document
        // well-formed XML 1.0; librepo and libsolv read repository metadata without namespace
        // processing and accept it, so it is not a reason to refuse one here either. The element
        // then arrives with its whole qualified name ("rpm:foo") as its local name.
        if (xml_error->domain == XML_FROM_NAMESPACE) {
            return;
        }
        std::string message = xml_error->message != nullptr ? xml_error->message : "malformed XML";
        while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
            message.pop_back();
        }
        const long line = xml_error->line > 0 ? xml_error->line : impl->current_line();
        impl->fail_at(line, message);
    }
};

PushParser::PushParser(SaxHandler& handler, std::string document_name)
    : impl_(std::make_unique<Impl>()) {
    init_libxml2_once();
    impl_->handler = &handler;
    impl_->document_name = std::move(document_name);

    xmlSAXHandler sax{};
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = &Impl::on_start_element;
    sax.endElementNs = &Impl::on_end_element;
    sax.characters = &Impl::on_characters;
    sax.ignorableWhitespace = &Impl::on_characters;
    sax.cdataBlock = &Impl::on_characters;
    sax.entityDecl = &Impl::on_entity_decl;
    sax.getEntity = &Impl::on_get_entity;
    sax.getParameterEntity = &Impl::on_get_parameter_entity;
    sax.resolveEntity = &Impl::on_resolve_entity;
    sax.serror = &Impl::on_structured_error;
    // Left null on purpose: externalSubset (never load the external DTD), internalSubset,
    // unparsedEntityDecl, notationDecl, attributeDecl, elementDecl (nothing to do with them).

    // The context copies `sax`; userData is our Impl, which never moves.
    impl_->ctxt.reset(xmlCreatePushParserCtxt(&sax, impl_.get(), nullptr, 0, nullptr));
    if (impl_->ctxt == nullptr) {
        throw std::bad_alloc();
    }
    // NONET; and not NOENT (no substitution), DTDLOAD, DTDATTR, DTDVALID, XINCLUDE or HUGE.
    xmlCtxtUseOptions(impl_->ctxt.get(), XML_PARSE_NONET);
}

PushParser::PushParser(PushParser&& other) noexcept = default;
PushParser& PushParser::operator=(PushParser&& other) noexcept = default;
PushParser::~PushParser() = default;

Result<void> PushParser::feed(std::span<const char> chunk) {
    Impl& impl = *impl_;
    if (impl.error) {
        return tl::unexpected(*impl.error);
    }
    if (impl.finished) {
        return tl::unexpected(Error{ErrorCode::BadInput, "data after the end of the document",
                                    impl.document_name, 0});
    }
    while (!chunk.empty()) {
        const std::size_t piece = std::min(chunk.size(), kMaxChunk);
        const int status = xmlParseChunk(impl.ctxt.get(), chunk.data(), static_cast<int>(piece), 0);
        if (impl.error) {
            return tl::unexpected(*impl.error);
        }
        if (status != 0 || impl.ctxt->wellFormed == 0) {
            impl.fail_at(impl.current_line(), "malformed XML");
            return tl::unexpected(*impl.error);
        }
        chunk = chunk.subspan(piece);
    }
    return {};
}

Result<void> PushParser::finish() {
    Impl& impl = *impl_;
    if (impl.error) {
        return tl::unexpected(*impl.error);
    }
    if (!impl.finished) {
        impl.finished = true;
        const int status = xmlParseChunk(impl.ctxt.get(), nullptr, 0, 1);
        if (impl.error) {
            return tl::unexpected(*impl.error);
        }
        if (status != 0 || impl.ctxt->wellFormed == 0) {
            impl.fail_at(impl.current_line(), "truncated or malformed XML");
            return tl::unexpected(*impl.error);
        }
    }
    return {};
}

void PushParser::fail(Error error) {
    impl_->fail_with(std::move(error));
}

void PushParser::fail_at_line(std::string_view what) {
    impl_->fail_at(impl_->current_line(), what);
}

long PushParser::line() const {
    return impl_->current_line();
}

std::string_view PushParser::element_prefix() const {
    return impl_->element_prefix;
}

const std::string& PushParser::document_name() const {
    return impl_->document_name;
}

}  // namespace rpmirror::xml
