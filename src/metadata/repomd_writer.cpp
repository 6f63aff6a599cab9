// Writing repomd.xml (metadata/repomd_writer.hpp): the document for a list of records.
#include "metadata/repomd_writer.hpp"

#include <string_view>

#include <fmt/format.h>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "util/xml_scanner.hpp"

namespace rpmirror {

namespace {

using xml_scan::escape;

void append_record(std::string& xml, const RepomdRecord& record) {
    xml += fmt::format("  <data type=\"{}\">\n", escape(record.type));
    xml += fmt::format("    <checksum type=\"{}\">{}</checksum>\n",
                       checksum_type_name(record.checksum.type), record.checksum.hex);
    if (record.open_checksum) {
        xml +=
            fmt::format("    <open-checksum type=\"{}\">{}</open-checksum>\n",
                        checksum_type_name(record.open_checksum->type), record.open_checksum->hex);
    }
    if (record.header_checksum) {
        xml += fmt::format("    <header-checksum type=\"{}\">{}</header-checksum>\n",
                           checksum_type_name(record.header_checksum->type),
                           record.header_checksum->hex);
    }
    if (record.location_base) {
        xml += fmt::format("    <location xml:base=\"{}\" href=\"{}\"/>\n",
                           escape(*record.location_base), escape(record.location_href));
    } else {
        xml += fmt::format("    <location href=\"{}\"/>\n", escape(record.location_href));
    }
    if (record.timestamp) {
        xml += fmt::format("    <timestamp>{}</timestamp>\n", *record.timestamp);
    }
    if (record.size) {
        xml += fmt::format("    <size>{}</size>\n", *record.size);
    }
    if (record.open_size) {
        xml += fmt::format("    <open-size>{}</open-size>\n", *record.open_size);
    }
    if (record.header_size) {
        xml += fmt::format("    <header-size>{}</header-size>\n", *record.header_size);
    }
    if (record.database_version) {
        xml +=
            fmt::format("    <database_version>{}</database_version>\n", *record.database_version);
    }
    xml += "  </data>\n";
}
}  // namespace

std::string repomd_document(const Repomd& upstream, const std::vector<RepomdRecord>& records) {
    std::string xml =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<repomd xmlns=\"http://linux.duke.edu/metadata/repo\" "
        "xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\">\n";
    if (upstream.revision) {
        xml += fmt::format("  <revision>{}</revision>\n", escape(*upstream.revision));
    }
    if (!upstream.content_tags.empty() || !upstream.repo_tags.empty() ||
        !upstream.distro_tags.empty()) {
        xml += "  <tags>\n";
        for (const std::string& tag : upstream.content_tags) {
            xml += fmt::format("    <content>{}</content>\n", escape(tag));
        }
        for (const std::string& tag : upstream.repo_tags) {
            xml += fmt::format("    <repo>{}</repo>\n", escape(tag));
        }
        for (const RepomdDistroTag& tag : upstream.distro_tags) {
            if (tag.cpeid.empty()) {
                xml += fmt::format("    <distro>{}</distro>\n", escape(tag.name));
            } else {
                xml += fmt::format("    <distro cpeid=\"{}\">{}</distro>\n", escape(tag.cpeid),
                                   escape(tag.name));
            }
        }
        xml += "  </tags>\n";
    }
    for (const RepomdRecord& record : records) {
        append_record(xml, record);
    }
    xml += "</repomd>\n";
    return xml;
}

}  // namespace rpmirror
