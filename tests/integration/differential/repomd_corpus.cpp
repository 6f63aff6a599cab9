#include "repomd_corpus.hpp"

#include <functional>

#include "checksum/hasher.hpp"
#include "rpmirror/checksum/checksum.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test::differential {

namespace {

using D = Disagreement;

RepomdCase quirk(std::string name, const std::function<void(RepomdSpec&)>& change,
                 std::set<Disagreement> expected = {}) {
    RepomdCase result{std::move(name), createrepo_like(), std::nullopt, std::move(expected)};
    change(result.spec);
    return result;
}

void each_record(RepomdSpec& spec, const std::function<void(RecordSpec&)>& change) {
    for (RecordSpec& record : spec.records) {
        change(record);
    }
}

}  // namespace

std::string RecordSpec::content() const {
    // A few hundred bytes that differ per record, so every digest differs.
    std::string text = "<!-- the " + type + " record of a differential-test repository -->\n";
    while (text.size() < 300) {
        text += type + " ";
    }
    return text + "\n";
}

std::string RepomdSpec::render() const {
    std::string xml = declaration + "<repomd" + root_attributes + ">\n";
    if (revision_element) {
        xml += "  " + *revision_element + "\n";
    }
    xml += tags + before;
    for (const RecordSpec& record : records) {
        const std::string content = record.content();
        const auto type = parse_checksum_type(record.checksum_type.value_or("sha256"));
        const std::string digest =
            hash_bytes(type ? *type : ChecksumType::Sha256, std::string_view(content));
        xml += record.has_type ? "  <data type=\"" + record.type + "\">\n" : "  <data>\n";
        if (record.has_checksum) {
            xml += "    <checksum" +
                   (record.checksum_type ? " type=\"" + *record.checksum_type + "\"" : "") + ">" +
                   record.digest_text.value_or(digest) + "</checksum>\n";
        }
        if (record.open_checksum_type) {
            const auto open_type = parse_checksum_type(*record.open_checksum_type);
            xml += "    <open-checksum type=\"" + *record.open_checksum_type + "\">" +
                   (open_type ? hash_bytes(*open_type, std::string_view(content)) : digest) +
                   "</open-checksum>\n";
        }
        if (record.has_location) {
            xml += "    <location" +
                   (record.xml_base ? " xml:base=\"" + *record.xml_base + "\"" : "") + " href=\"" +
                   (record.href.empty() ? "repodata/" + record.type + ".xml" : record.href) +
                   "\"/>\n";
        }
        if (record.timestamp) {
            xml += "    <timestamp>" + *record.timestamp + "</timestamp>\n";
        }
        if (record.has_size) {
            xml +=
                "    <size>" + record.size.value_or(std::to_string(content.size())) + "</size>\n";
        }
        if (record.has_open_size) {
            xml += "    <open-size>" + record.open_size.value_or(std::to_string(content.size())) +
                   "</open-size>\n";
        }
        if (record.database_version) {
            xml += "    <database_version>" + *record.database_version + "</database_version>\n";
        }
        xml += record.extra + "  </data>\n";
    }
    xml += "</repomd>\n";
    if (crlf) {
        xml = replace_all(xml, "\n", "\r\n");
    }
    return bom ? "\xEF\xBB\xBF" + xml : xml;
}

RepomdSpec createrepo_like() {
    RepomdSpec spec;
    for (const char* type : {"primary", "filelists", "other", "primary_db", "filelists_db",
                             "other_db", "group", "group_gz", "updateinfo", "modules"}) {
        RecordSpec record;
        record.type = type;
        if (record.type.ends_with("_db")) {
            record.database_version = "10";
        }
        if (record.type != "group") {  // createrepo_c writes no open-checksum for plain comps
            record.open_checksum_type = "sha256";
        } else {
            record.has_open_size = false;
        }
        spec.records.push_back(std::move(record));
    }
    return spec;
}

std::string write_repository(const RepomdCase& repomd_case,
                             const std::filesystem::path& directory) {
    const std::string document = repomd_case.document.value_or(repomd_case.spec.render());
    TempDir::write_at(directory / "repodata" / "repomd.xml", document);
    for (const RecordSpec& record : repomd_case.spec.records) {
        if (record.write_file && record.has_location) {
            TempDir::write_at(directory / (record.href.empty() ? "repodata/" + record.type + ".xml"
                                                               : record.href),
                              record.content());
        }
    }
    return document;
}

std::vector<RepomdCase> repomd_quirks() {
    std::vector<RepomdCase> cases;
    const auto add = [&cases](RepomdCase repomd_case) { cases.push_back(std::move(repomd_case)); };

    add(quirk("createrepo_c", [](RepomdSpec&) {}));
    // The yum-era Python createrepo: fractional timestamps, no open-size, sha (= sha1).
    add(quirk("yum_createrepo_fractional_timestamps", [](RepomdSpec& spec) {
        each_record(spec, [](RecordSpec& record) {
            record.timestamp = "1355315696.84";
            record.checksum_type = "sha";
            record.open_checksum_type = "sha";
            record.has_open_size = false;
        });
    }));
    add(quirk("no_timestamps", [](RepomdSpec& spec) {
        each_record(spec, [](RecordSpec& record) { record.timestamp.reset(); });
    }));
    add(quirk("no_sizes", [](RepomdSpec& spec) {
        each_record(spec, [](RecordSpec& record) {
            record.has_size = false;
            record.has_open_size = false;
        });
    }));
    for (const char* type : {"sha", "sha1", "md5", "sha224", "sha384", "sha512", "SHA256"}) {
        add(quirk(std::string("checksum_type_") + type, [type](RepomdSpec& spec) {
            each_record(spec, [type](RecordSpec& record) {
                record.checksum_type = type;
                record.open_checksum_type = type;
            });
        }));
    }
    add(quirk("uppercase_digests",
              [](RepomdSpec& spec) {
                  each_record(spec, [](RecordSpec& record) {
                      record.digest_text =
                          upper(hash_bytes(ChecksumType::Sha256, record.content()));
                  });
              },
              {D::UppercaseDigest}));
    add(quirk("xml_base_https", [](RepomdSpec& spec) {
        each_record(spec, [](RecordSpec& record) { record.xml_base = "https://cdn.example/r/"; });
    }));
    add(quirk("xml_base_file_url",
              [](RepomdSpec& spec) { spec.records[0].xml_base = "file:///etc/"; },
              {D::UnsafeXmlBase}));
    add(quirk("empty_revision",
              [](RepomdSpec& spec) { spec.revision_element = "<revision></revision>"; }));
    add(quirk("self_closed_revision",
              [](RepomdSpec& spec) { spec.revision_element = "<revision/>"; }));
    add(quirk("no_revision", [](RepomdSpec& spec) { spec.revision_element.reset(); }));
    add(quirk("tags", [](RepomdSpec& spec) {
        spec.tags =
            "  <tags>\n    <content>binary-x86_64</content>\n    <repo>fedora</repo>\n"
            "    <distro cpeid=\"cpe:/o:fedoraproject:fedora:40\">Fedora 40</distro>\n"
            "    <distro>No CPE</distro>\n    <content/>\n  </tags>\n";
    }));
    add(quirk("extra_namespaces", [](RepomdSpec& spec) {
        spec.root_attributes += " xmlns:suse=\"http://novell.com/package/metadata/suse/common\"";
        spec.before = "  <suse:keywords><suse:k>x</suse:k></suse:keywords>\n";
        spec.records[0].extra =
            "    <suse:extension type=\"x\"><size>5</size></suse:extension>\n"
            "    <checksum xmlns=\"http://linux.duke.edu/metadata/repo\" type=\"sha256\">" +
            hash_bytes(ChecksumType::Sha256, spec.records[0].content()) + "</checksum>\n";
    }));
    add(quirk("prefixed_data_is_not_a_record", [](RepomdSpec& spec) {
        spec.before =
            "  <rpm:data type=\"extension\"><location href=\"repodata/none.xml\"/></rpm:data>\n";
    }));
    add(quirk("undeclared_prefix", [](RepomdSpec& spec) {
        spec.records[1].extra = "    <suse:keywords>x</suse:keywords>\n";
    }));
    add(quirk("unknown_record_types", [](RepomdSpec& spec) {
        for (const char* type : {"appdata", "productid", "susedata", "deltainfo", "prestodelta",
                                 "other_zck_but_plain", "x-vendor.data"}) {
            RecordSpec record;
            record.type = type;
            spec.records.push_back(record);
        }
    }));
    add(quirk("crlf", [](RepomdSpec& spec) { spec.crlf = true; }));
    add(quirk("utf8_bom", [](RepomdSpec& spec) { spec.bom = true; }));
    add(quirk("utf8_bom_crlf_no_declaration", [](RepomdSpec& spec) {
        spec.bom = true;
        spec.crlf = true;
        spec.declaration.clear();
    }));
    add(quirk("latin1_declared", [](RepomdSpec& spec) {
        spec.declaration = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n";
        spec.tags = "  <tags><repo>caf\xE9</repo></tags>\n";
    }));
    add(quirk("comments_pi_and_cdata", [](RepomdSpec& spec) {
        spec.before = "  <!-- generated by hand -->\n  <?vendor note?>\n";
        spec.records[0].digest_text =
            "<![CDATA[" + hash_bytes(ChecksumType::Sha256, spec.records[0].content()) + "]]>";
    }));
    add(quirk("long_revision", [](RepomdSpec& spec) {
        spec.revision_element = "<revision>" + std::string(100'000, '7') + "</revision>";
    }));
    add(quirk("long_type_and_deep_href", [](RepomdSpec& spec) {
        RecordSpec record;
        record.type = std::string(5000, 't');
        record.href = "repodata/" + replace_all(std::string(30, 'd'), "d", "dir/") + "x.xml";
        spec.records.push_back(record);
    }));
    add(quirk("href_segment_over_255_bytes", [](RepomdSpec& spec) {
        spec.records[0].href = "repodata/" + std::string(300, 'p') + ".xml";
        spec.records[0].write_file = false;  // no file system holds such a name
    }));
    add(quirk(
        "pretty_printed_values",
        [](RepomdSpec& spec) {
            spec.revision_element = "<revision>\n    1700000000\n  </revision>";
            spec.records[0].digest_text =
                "\n      " + hash_bytes(ChecksumType::Sha256, spec.records[0].content()) + "\n    ";
            spec.records[0].size = "\n  " + std::to_string(spec.records[0].content().size()) + "\n";
        },
        {D::PaddedDigest, D::TrimmedText}));
    add(quirk("duplicate_record_type", [](RepomdSpec& spec) {
        RecordSpec record;
        record.type = "primary";
        record.href = "repodata/primary-again.xml";
        spec.records.push_back(record);
    }));
    add(quirk("data_without_type", [](RepomdSpec& spec) { spec.records[2].has_type = false; }));
    add(quirk("no_records", [](RepomdSpec& spec) { spec.records.clear(); }));
    add(quirk("numbers_as_librepo_reads_them", [](RepomdSpec& spec) {
        spec.records[0].timestamp = "1355315696.84abc";
        spec.records[1].timestamp = "yesterday";
        spec.records[2].database_version = "10.0";
        spec.records[3].database_version = "";
        spec.records[4].open_size = "n/a";
    }));
    add(quirk("zero_padded_size",
              [](RepomdSpec& spec) {
                  spec.records[0].size = "0" + std::to_string(spec.records[0].content().size());
              },
              {D::NumberBase}));
    add(quirk("negative_size", [](RepomdSpec& spec) { spec.records[0].size = "-1"; },
              {D::NegativeSize}));
    add(quirk("size_mismatch", [](RepomdSpec& spec) { spec.records[0].size = "7"; },
              {D::SizeMismatch}));
    add(quirk("record_without_checksum",
              [](RepomdSpec& spec) { spec.records[0].has_checksum = false; }, {D::Unverifiable}));
    add(quirk("record_outside_repodata",
              [](RepomdSpec& spec) { spec.records[0].href = "metadata/primary.xml"; },
              {D::OutsideRepodata}));
    // Both refuse these.
    add(quirk("unknown_checksum_type",
              [](RepomdSpec& spec) { spec.records[0].checksum_type = "blake2b"; }));
    add(quirk("checksum_without_type",
              [](RepomdSpec& spec) { spec.records[0].checksum_type.reset(); }));
    add(quirk("wrong_digest",
              [](RepomdSpec& spec) { spec.records[0].digest_text = std::string(64, '0'); }));
    add(quirk("short_digest", [](RepomdSpec& spec) { spec.records[0].digest_text = "abc"; }));
    add(quirk("href_traversal", [](RepomdSpec& spec) {
        spec.records[0].href = "repodata/../../primary.xml";
        spec.records[0].write_file = false;
    }));
    add(quirk("missing_file", [](RepomdSpec& spec) { spec.records[0].write_file = false; }));
    add(quirk("record_without_location",
              [](RepomdSpec& spec) { spec.records[0].has_location = false; }));
    add(quirk("location_without_href", [](RepomdSpec& spec) {
        spec.records[0].has_location = false;
        spec.records[0].extra = "    <location/>\n";
    }));
    add(RepomdCase{"root_is_not_repomd", {}, "<?xml version=\"1.0\"?>\n<metadata/>\n", {}});
    add(RepomdCase{"empty_document", {}, "", {}});
    add(quirk("not_utf8_undeclared",
              [](RepomdSpec& spec) { spec.tags = "  <tags><repo>caf\xE9</repo></tags>\n"; }));
    // librepo (no entity substitution either) refuses it as an undefined entity.
    add(quirk("entity_declaration", [](RepomdSpec& spec) {
        spec.declaration += "<!DOCTYPE repomd [<!ENTITY rev \"1700000000\">]>\n";
        spec.revision_element = "<revision>&rev;</revision>";
    }));
    return cases;
}

std::vector<RepomdCase> repomd_mutations() {
    std::vector<RepomdCase> cases;
    const auto add = [&cases](std::string name, const std::function<void(RepomdSpec&)>& change,
                              std::set<Disagreement> expected = {}) {
        cases.push_back(quirk("mutation_" + std::move(name), change, std::move(expected)));
    };

    // Cut anywhere before its end, a document is refused by both.
    const std::string baseline = createrepo_like().render();
    for (std::size_t eighth = 1; eighth < 8; ++eighth) {
        cases.push_back(RepomdCase{"mutation_truncated_" + std::to_string(eighth) + "_of_8",
                                   createrepo_like(),
                                   baseline.substr(0, baseline.size() * eighth / 8),
                                   {}});
    }

    // Every number of a record replaced by text librepo's strtoll reads in its own way. Sizes
    // are checked by rpmirror against the file (primary's open-size too, when it decompresses
    // it), never by librepo.
    const std::vector<std::string> numbers = {
        "", "abc", "1.5", " 7 ", "-3", "1e3", "99999999999999999999", "+12"};
    for (std::size_t index = 0; index < numbers.size(); ++index) {
        const std::string& number = numbers[index];
        const std::string suffix = std::to_string(index);
        const std::set<Disagreement> as_size =
            number.empty() || number == "abc" ? std::set<Disagreement>{}
            : number == "-3"                  ? std::set<Disagreement>{D::NegativeSize}
                                              : std::set<Disagreement>{D::SizeMismatch};
        add("timestamp_" + suffix,
            [number](RepomdSpec& spec) { spec.records[0].timestamp = number; });
        add(
            "size_" + suffix, [number](RepomdSpec& spec) { spec.records[0].size = number; },
            as_size);
        add(
            "open_size_" + suffix,
            [number](RepomdSpec& spec) { spec.records[0].open_size = number; }, as_size);
        add("database_version_" + suffix,
            [number](RepomdSpec& spec) { spec.records[3].database_version = number; });
    }

    // Each element and attribute of a record left out.
    add("no_checksum", [](RepomdSpec& spec) { spec.records[0].has_checksum = false; },
        {D::Unverifiable});
    add("no_open_checksum", [](RepomdSpec& spec) { spec.records[0].open_checksum_type.reset(); });
    add("no_location", [](RepomdSpec& spec) { spec.records[0].has_location = false; });
    add("no_timestamp", [](RepomdSpec& spec) { spec.records[0].timestamp.reset(); });
    add("no_size", [](RepomdSpec& spec) { spec.records[0].has_size = false; });
    add("no_open_size", [](RepomdSpec& spec) { spec.records[0].has_open_size = false; });
    add("no_data_type", [](RepomdSpec& spec) { spec.records[0].has_type = false; });
    add("no_checksum_type", [](RepomdSpec& spec) { spec.records[0].checksum_type.reset(); });

    // One digit of a digest changed: the file does not match.
    for (const std::size_t position : {0U, 31U, 63U}) {
        add("digest_digit_" + std::to_string(position), [position](RepomdSpec& spec) {
            std::string digest = hash_bytes(ChecksumType::Sha256, spec.records[0].content());
            digest[position] = digest[position] == '0' ? '1' : '0';
            spec.records[0].digest_text = digest;
        });
    }

    // hrefs that name the same file in another spelling.
    add("href_dot_segment",
        [](RepomdSpec& spec) { spec.records[0].href = "repodata/./primary.xml"; });
    add("href_empty_segment",
        [](RepomdSpec& spec) { spec.records[0].href = "repodata//primary.xml"; }, {D::UnsafeHref});
    return cases;
}

}  // namespace rpmirror::test::differential
