#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/temp_dir.hpp"
#include "util/xml.hpp"

namespace rpmirror::xml {
namespace {

// Records every event as one line of text, so two parses can be compared exactly.
class RecordingHandler : public SaxHandler {
  public:
    void start_element(std::string_view local_name, std::string_view namespace_uri,
                       std::span<const Attribute> attributes) override {
        flush_text();
        events += "start " + std::string(local_name) + " {" + std::string(namespace_uri) + "}";
        for (const Attribute& attribute : attributes) {
            events += " " + std::string(attribute.local_name) + "{" +
                      std::string(attribute.namespace_uri) + "}=[" + std::string(attribute.value) +
                      "]";
        }
        events += "\n";
        if (parser != nullptr) {
            lines.push_back(parser->line());
            if (fail_on == local_name) {
                parser->fail(Error{ErrorCode::BadInput,
                                   "handler refused <" + std::string(local_name) + ">",
                                   "handler-subject", 0});
            }
        }
    }
    void end_element(std::string_view local_name, std::string_view /*namespace_uri*/) override {
        flush_text();
        events += "end " + std::string(local_name) + "\n";
    }
    void characters(std::string_view text) override {
        text_ += text;
        all_text += text;
    }

    std::string events;
    std::string all_text;
    std::vector<long> lines;
    PushParser* parser = nullptr;
    std::string fail_on;

  private:
    void flush_text() {
        if (!text_.empty()) {
            events += "text [" + text_ + "]\n";
            text_.clear();
        }
    }
    std::string text_;
};

Result<void> parse_all(RecordingHandler& handler, std::string_view document,
                       std::string name = "test.xml") {
    PushParser parser(handler, std::move(name));
    handler.parser = &parser;
    auto fed = parser.feed(document);
    auto result = fed ? parser.finish() : fed;
    handler.parser = nullptr;
    return result;
}

const char kRichDocument[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" "
    "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n"
    "  <revision>1704067200</revision>\n"
    "  <data type=\"primary\">\n"
    "    <location xml:base=\"https://example.com/a&amp;b/\" href=\"p&#38;q+r~s\"/>\n"
    "    <rpm:note>caf\xc3\xa9 \xe2\x82\xac &lt;x&gt; &amp; &#x41;<![CDATA[<raw & "
    "cdata>]]></rpm:note>\n"
    "  </data>\n"
    "</repomd>\n";

TEST(Xml, WellFormedDocumentDeliversNamespacesAttributesAndText) {
    RecordingHandler handler;
    ASSERT_TRUE(parse_all(handler, kRichDocument));
    EXPECT_NE(handler.events.find("start repomd {http://linux.duke.edu/metadata/repo}\n"),
              std::string::npos)
        << handler.events;
    EXPECT_NE(handler.events.find("start data {http://linux.duke.edu/metadata/repo} "
                                  "type{}=[primary]\n"),
              std::string::npos);
    // Predefined entities and character references in attributes come back as plain '&'.
    EXPECT_NE(handler.events.find("start location {http://linux.duke.edu/metadata/repo} "
                                  "base{http://www.w3.org/XML/1998/namespace}=[https://example.com/"
                                  "a&b/] href{}=[p&q+r~s]\n"),
              std::string::npos)
        << handler.events;
    EXPECT_NE(handler.events.find("start note {http://linux.duke.edu/metadata/rpm}\n"
                                  "text [caf\xc3\xa9 \xe2\x82\xac <x> & A<raw & cdata>]\n"
                                  "end note\n"),
              std::string::npos)
        << handler.events;
    EXPECT_NE(handler.events.find("text [1704067200]\nend revision\n"), std::string::npos);
    // line() is the line of the element being reported.
    ASSERT_EQ(handler.lines.size(), 5U);
    EXPECT_EQ(handler.lines[0], 2);
    EXPECT_EQ(handler.lines[1], 3);
    EXPECT_EQ(handler.lines[3], 5);
}

TEST(Xml, ChunkedByteByByteEqualsOneShot) {
    RecordingHandler one_shot;
    ASSERT_TRUE(parse_all(one_shot, kRichDocument));

    RecordingHandler byte_wise;
    PushParser parser(byte_wise, "bytes.xml");
    const std::string_view document = kRichDocument;
    for (const char& byte : document) {
        ASSERT_TRUE(parser.feed(std::span<const char>(&byte, 1)));
    }
    ASSERT_TRUE(parser.finish());
    EXPECT_EQ(byte_wise.events, one_shot.events);
    EXPECT_EQ(byte_wise.all_text, one_shot.all_text);
}

TEST(Xml, MalformedDocumentNamesDocumentAndLine) {
    RecordingHandler handler;
    const auto result = parse_all(handler, "<a>\n<b>\n</a>\n", "repodata/repomd.xml");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::BadInput);
    EXPECT_EQ(result.error().subject, "repodata/repomd.xml");
    EXPECT_EQ(result.error().message.rfind("line 3: ", 0), 0U) << result.error().message;
    EXPECT_NE(result.error().message.find("mismatch"), std::string::npos) << result.error().message;
    EXPECT_EQ(result.error().to_string().rfind("repodata/repomd.xml: line 3: ", 0), 0U);
}

TEST(Xml, ErrorIsStickyAcrossLaterFeeds) {
    RecordingHandler handler;
    PushParser parser(handler, "sticky.xml");
    const auto first = parser.feed(std::string_view("<a></b>"));
    ASSERT_FALSE(first);
    const auto second = parser.feed(std::string_view("<c/>"));
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().message, first.error().message);
    EXPECT_FALSE(parser.finish());
}

TEST(Xml, BillionLaughsFailsAtTheFirstEntityDeclaration) {
    std::string document = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n<!ENTITY lol \"lol\">\n";
    for (int level = 1; level <= 9; ++level) {
        document += "<!ENTITY lol" + std::to_string(level) + " \"";
        for (int copy = 0; copy < 10; ++copy) {
            document += "&lol" + (level == 1 ? std::string() : std::to_string(level - 1)) + ";";
        }
        document += "\">\n";
    }
    document += "]>\n<lolz>&lol9;</lolz>\n";
    RecordingHandler handler;
    const auto result = parse_all(handler, document, "laughs.xml");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::BadInput);
    EXPECT_EQ(result.error().subject, "laughs.xml");
    EXPECT_EQ(result.error().message,
              "line 3: declares entity 'lol' (entity declarations are not allowed)");
    EXPECT_EQ(handler.all_text.find("lol"), std::string::npos);
    EXPECT_TRUE(handler.events.empty()) << handler.events;
}

TEST(Xml, ExternalEntityDeclarationFailsWithoutReadingTheFile) {
    RecordingHandler handler;
    const auto result = parse_all(handler,
                                  "<?xml version=\"1.0\"?>\n"
                                  "<!DOCTYPE foo [\n"
                                  "  <!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n"
                                  "]>\n<foo>&xxe;</foo>\n",
                                  "xxe.xml");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message,
              "line 3: declares entity 'xxe' (entity declarations are not allowed)");
    EXPECT_EQ(handler.all_text.find("root"), std::string::npos);
}

TEST(Xml, ParameterEntityDeclarationFails) {
    RecordingHandler handler;
    const auto result = parse_all(handler,
                                  "<!DOCTYPE foo [\n<!ENTITY % pe SYSTEM \"file:///etc/passwd\">\n"
                                  "%pe;\n]>\n<foo/>\n");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message,
              "line 2: declares entity 'pe' (entity declarations are not allowed)");
}

TEST(Xml, ExternalDtdIsNeverLoadedSoItsEntitiesCannotBeReferenced) {
    test::TempDir dir;
    const auto dtd = dir.write("entities.dtd", "<!ENTITY secret \"TOP-SECRET\">\n");
    const std::string document = "<?xml version=\"1.0\"?>\n<!DOCTYPE foo SYSTEM \"file://" +
                                 dtd.string() + "\">\n<foo>\n&secret;</foo>\n";
    RecordingHandler handler;
    const auto result = parse_all(handler, document, "dtd.xml");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message,
              "line 4: references entity '&secret;' (only the predefined entities are allowed)");
    EXPECT_EQ(handler.all_text.find("TOP-SECRET"), std::string::npos);
}

TEST(Xml, UndeclaredEntityReferenceWithoutDoctypeFails) {
    RecordingHandler handler;
    const auto result = parse_all(handler, "<a>\n<b x=\"&nope;\"/></a>", "attr.xml");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message,
              "line 2: references entity '&nope;' (only the predefined entities are allowed)");
}

TEST(Xml, DoctypeWithoutEntitiesIsAccepted) {
    // Old comps.xml files carry a DOCTYPE naming a DTD that is never fetched.
    RecordingHandler handler;
    ASSERT_TRUE(parse_all(handler,
                          "<?xml version=\"1.0\"?>\n"
                          "<!DOCTYPE comps PUBLIC \"-//Red Hat, Inc.//DTD Comps info//EN\" "
                          "\"http://127.0.0.1:9/comps.dtd\">\n<comps><group/></comps>\n"));
    EXPECT_EQ(handler.events, "start comps {}\nstart group {}\nend group\nend comps\n");
}

TEST(Xml, TruncatedDocumentFailsOnFinish) {
    RecordingHandler handler;
    PushParser parser(handler, "truncated.xml");
    ASSERT_TRUE(parser.feed(std::string_view("<metadata>\n  <package>\n    <name>fo")));
    const auto result = parser.finish();
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().code, ErrorCode::BadInput);
    EXPECT_EQ(result.error().subject, "truncated.xml");
    EXPECT_EQ(result.error().message.rfind("line 3: ", 0), 0U) << result.error().message;
}

TEST(Xml, EmptyDocumentFailsOnFinish) {
    RecordingHandler handler;
    PushParser parser(handler, "empty.xml");
    const auto result = parser.finish();
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().subject, "empty.xml");
}

TEST(Xml, HandlerFailStopsParsingAndIsReturnedAsGiven) {
    RecordingHandler handler;
    handler.fail_on = "b";
    const auto result = parse_all(handler, "<a>\n<b>text</b>\n<c/>\n</a>\n");
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().message, "handler refused <b>");
    EXPECT_EQ(result.error().subject, "handler-subject");
    // Nothing after the failing event is delivered.
    EXPECT_EQ(handler.events, "start a {}\ntext [\n]\nstart b {}\n");
    EXPECT_EQ(handler.all_text, "\n");
}

TEST(Xml, FailFromEveryEventPositionStopsCleanly) {
    // Fails at the N-th event for every N: under ASan this checks that stopping libxml2 from
    // inside any callback (start, end, text, CDATA, attribute with entities) is memory-safe.
    class CountingHandler : public SaxHandler {
      public:
        void start_element(std::string_view, std::string_view,
                           std::span<const Attribute>) override {
            event();
        }
        void end_element(std::string_view, std::string_view) override { event(); }
        void characters(std::string_view) override { event(); }
        void event() {
            ++events_seen;
            if (events_seen == fail_at) {
                parser->fail(Error{ErrorCode::BadInput, "stop", "counting", 0});
            }
        }
        PushParser* parser = nullptr;
        int fail_at = 0;
        int events_seen = 0;
    };
    int total_events = 0;
    {
        CountingHandler handler;
        PushParser parser(handler, "count.xml");
        handler.parser = &parser;
        ASSERT_TRUE(parser.feed(std::string_view(kRichDocument)));
        ASSERT_TRUE(parser.finish());
        total_events = handler.events_seen;
    }
    ASSERT_GT(total_events, 10);
    for (int fail_at = 1; fail_at <= total_events; ++fail_at) {
        CountingHandler handler;
        handler.fail_at = fail_at;
        PushParser parser(handler, "count.xml");
        handler.parser = &parser;
        auto result = parser.feed(std::string_view(kRichDocument));
        if (result) {
            result = parser.finish();
        }
        ASSERT_FALSE(result) << "fail_at " << fail_at;
        EXPECT_EQ(result.error().message, "stop");
        EXPECT_EQ(handler.events_seen, fail_at);
    }
}

TEST(Xml, FailAtLineNamesDocumentAndCurrentLine) {
    class FailingHandler : public SaxHandler {
      public:
        void start_element(std::string_view local_name, std::string_view,
                           std::span<const Attribute>) override {
            if (local_name == "package") {
                parser->fail_at_line("<package> without <checksum>");
            }
        }
        void end_element(std::string_view, std::string_view) override {}
        void characters(std::string_view) override {}
        PushParser* parser = nullptr;
    };
    FailingHandler handler;
    PushParser parser(handler, "primary.xml");
    handler.parser = &parser;
    const auto result = parser.feed(std::string_view("<metadata>\n\n<package/></metadata>"));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().to_string(), "primary.xml: line 3: <package> without <checksum>");
}

TEST(Xml, MovedParserKeepsParsing) {
    RecordingHandler handler;
    PushParser first(handler, "moved.xml");
    ASSERT_TRUE(first.feed(std::string_view("<a><b>")));
    PushParser second(std::move(first));
    ASSERT_TRUE(second.feed(std::string_view("x</b></a>")));
    ASSERT_TRUE(second.finish());
    EXPECT_EQ(handler.events, "start a {}\nstart b {}\ntext [x]\nend b\nend a\n");
    EXPECT_EQ(second.document_name(), "moved.xml");
}

// The prefix of each element, as the readers that follow librepo (unprefixed names only) see it.
TEST(Xml, ElementPrefixIsKnownDuringItsStartAndEndEvents) {
    class PrefixHandler : public SaxHandler {
      public:
        void start_element(std::string_view local_name, std::string_view,
                           std::span<const Attribute>) override {
            seen += "<" + std::string(parser->element_prefix()) + "|" + std::string(local_name);
        }
        void end_element(std::string_view local_name, std::string_view) override {
            seen += ">" + std::string(parser->element_prefix()) + "|" + std::string(local_name);
        }
        void characters(std::string_view) override { seen += parser->element_prefix(); }
        PushParser* parser = nullptr;
        std::string seen;
    };
    PrefixHandler handler;
    PushParser parser(handler, "prefix.xml");
    handler.parser = &parser;
    ASSERT_TRUE(parser.feed(
        std::string_view("<a xmlns=\"urn:a\" xmlns:rpm=\"urn:rpm\"><rpm:b>text</rpm:b><c/></a>")));
    ASSERT_TRUE(parser.finish());
    EXPECT_EQ(handler.seen, "<|a<rpm|b>rpm|b<|c>|c>|a");
}

// librepo and libsolv parse without namespace processing: an undeclared prefix is well-formed
// XML to them, and to this parser too. The element keeps its qualified name.
TEST(Xml, UndeclaredPrefixIsNotAnError) {
    RecordingHandler handler;
    const auto result = parse_all(handler, "<a><suse:b>x</suse:b></a>");
    ASSERT_TRUE(result) << result.error().to_string();
    EXPECT_NE(handler.events.find("start "), std::string::npos);
    EXPECT_NE(handler.events.find("b {}"), std::string::npos) << handler.events;
    EXPECT_NE(handler.events.find("text [x]"), std::string::npos);
}

}  // namespace
}  // namespace rpmirror::xml
