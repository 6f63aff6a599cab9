// A small RAII wrapper over libxml2's SAX2 push parser, used by every XML reader in rpmirror
// (repomd.xml, metalink, primary.xml, comps, updateinfo ...).
//
// Documents are parsed as untrusted input: no DTD is loaded, nothing is fetched from the network
// or the filesystem, no entity is ever substituted, and a document that declares an entity
// (internal subset with <!ENTITY>, i.e. "billion laughs") or references one that is not one of the
// five predefined ones (&amp; &lt; &gt; &quot; &apos;) fails fast, in bounded memory, with an
// error naming the document and the line. libxml2's default size limits stay in force
// (XML_PARSE_HUGE is never set). A DOCTYPE without entity declarations (old comps.xml) is fine.
//
// This header does not include libxml2's headers, so users need not link against it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "rpmirror/util/error.hpp"

namespace rpmirror::xml {

struct Attribute {
    std::string_view local_name;  // without prefix ("base" for xml:base)
    std::string_view value;       // entities already resolved (&amp; -> &)
    // Namespace URI of a prefixed attribute ("http://www.w3.org/XML/1998/namespace" for
    // xml:base), empty for unprefixed ones. An addition to the agreed API.
    std::string_view namespace_uri = {};
};

// The namespace URI of the `xml:` prefix, for matching `xml:base` attributes.
inline constexpr std::string_view kXmlNamespace = "http://www.w3.org/XML/1998/namespace";

// Receives the events of one document. Implemented by each reader. All string_views are valid
// only during the call. Handlers may call PushParser::fail() to abort with their own error.
class SaxHandler {
  public:
    virtual ~SaxHandler() = default;
    virtual void start_element(std::string_view local_name, std::string_view namespace_uri,
                               std::span<const Attribute> attributes) = 0;
    virtual void end_element(std::string_view local_name, std::string_view namespace_uri) = 0;
    // Text content, CDATA included; may be called several times per text node.
    virtual void characters(std::string_view text) = 0;
};

// The depth inside an element a reader skips with everything it contains (one its format has
// nowhere there, as librepo's parsers skip them). A handler calls enter() first in start_element
// and leave() first in end_element, returning at once when they say so, and ignores characters()
// while skipping(): the text of the element around a skipped one goes on.
class SkippedElements {
  public:
    // Returns true iff the element starting now is skipped: it is inside a skipped one, or it is
    // not `expected` where it is.
    bool enter(bool expected) {
        if (depth_ > 0 || !expected) {
            ++depth_;
            return true;
        }
        return false;
    }
    // Returns true iff the element ending now was skipped.
    bool leave() {
        if (depth_ == 0) {
            return false;
        }
        --depth_;
        return true;
    }
    bool skipping() const { return depth_ > 0; }

  private:
    std::size_t depth_ = 0;
};

// Move-only owner of one libxml2 push-parser context (xmlParserCtxt) for one document.
// Not thread-safe: one PushParser per document per thread. Distinct PushParsers may be used on
// different threads concurrently (libxml2 is initialised once, thread-safely).
class PushParser {
  public:
    // Creates a parser delivering events to `handler`, which must outlive the parser (or the
    // parser must be moved along with it). `document_name` (a file name or URL) is used in errors.
    PushParser(SaxHandler& handler, std::string document_name);
    PushParser(PushParser&& other) noexcept;
    PushParser& operator=(PushParser&& other) noexcept;
    PushParser(const PushParser&) = delete;
    PushParser& operator=(const PushParser&) = delete;
    ~PushParser();

    // Parses the next `chunk` of the document (chunks may split anywhere, even inside a UTF-8
    // sequence). Returns Error{BadInput} iff the document so far is malformed, declares or
    // references an entity other than the predefined ones, or a handler called fail(); the error's
    // subject is the document name and its message is "line N: <what>" (so to_string() reads
    // "<document_name>: line N: <what>"), except for fail(), whose error is returned as given.
    // Once an error was returned, every later feed()/finish() returns the same error.
    Result<void> feed(std::span<const char> chunk);
    Result<void> feed(std::string_view chunk) { return feed(std::span<const char>(chunk)); }

    // Signals the end of the document. Returns the same errors as feed(), and Error{BadInput}
    // iff the document is truncated (no root element, or unclosed elements).
    Result<void> finish();

    // Aborts parsing with `error` (called by a handler from inside a callback, or between feeds);
    // the parser stops at once and no further events are delivered. The first error wins.
    void fail(Error error);

    // Returns the line the parser is at (1-based), for handlers' messages.
    long line() const;

    // Returns the namespace prefix of the element whose start_element or end_element is being
    // delivered ("rpm" for <rpm:entry>), "" for an unprefixed element and outside those calls.
    // For readers that, like librepo's SAX1 parsers, take only unprefixed names as theirs.
    std::string_view element_prefix() const;

    // Returns the document name given at construction.
    const std::string& document_name() const;

    // Convenience for handlers: fails with Error{BadInput}, subject = document name, message =
    // "line <line()>: <what>".
    void fail_at_line(std::string_view what);

    struct Impl;  // public only so the C callbacks can reach it; not part of the API

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace rpmirror::xml
