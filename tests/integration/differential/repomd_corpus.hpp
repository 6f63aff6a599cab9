// The repomd.xml corpus of the differential test: repositories (repomd.xml and the files its
// records name) written by the test, with the quirks real repositories have and mutations of a
// createrepo_c-like baseline. Nothing here is copied from another project.
#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "differential.hpp"

namespace rpmirror::test::differential {

// One <data> record and the file it names.
struct RecordSpec {
    std::string type = "primary";
    bool has_type = true;                 // false: <data> without a type attribute
    std::string href;                     // "" = "repodata/<type>.xml"
    std::optional<std::string> xml_base;  // xml:base on <location>
    bool has_location = true;
    bool write_file = true;  // false: the file the record names does not exist
    std::optional<std::string> checksum_type = "sha256";  // nullopt: <checksum> without type
    bool has_checksum = true;
    std::optional<std::string> digest_text;  // the text of <checksum>; default: the file's digest
    std::optional<std::string> open_checksum_type;  // when set: an <open-checksum> of the file
    std::optional<std::string> timestamp = "1700000000";
    std::optional<std::string> size;  // default: the file's size; "" with has_size = false
    bool has_size = true;
    std::optional<std::string> open_size;  // default: the file's size (records are not compressed)
    bool has_open_size = true;
    std::optional<std::string> database_version;
    std::string extra;            // raw XML inside <data>, after the fields
    std::string content() const;  // the file's bytes
};

struct RepomdSpec {
    std::string declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    std::string root_attributes =
        " xmlns=\"http://linux.duke.edu/metadata/repo\""
        " xmlns:rpm=\"http://linux.duke.edu/metadata/rpm\"";
    std::optional<std::string> revision_element = "<revision>1700000000</revision>";
    std::string tags;    // raw XML after the revision (<tags>...</tags>)
    std::string before;  // raw XML before the first record
    std::vector<RecordSpec> records;
    bool bom = false;
    bool crlf = false;

    std::string render() const;  // repomd.xml's bytes
};

struct RepomdCase {
    std::string name;
    RepomdSpec spec;
    std::optional<std::string> document;  // replaces spec.render() (mutations of the bytes)
    std::set<Disagreement> expected;
};

// The records createrepo_c writes (primary, filelists, other, the sqlite ones, group, group_gz,
// updateinfo, modules) with sha256 checksums, sizes and timestamps.
RepomdSpec createrepo_like();

// The quirk cases (each names the real-world tool or habit it stands for) and the mutations.
std::vector<RepomdCase> repomd_quirks();
std::vector<RepomdCase> repomd_mutations();

// Writes `repomd_case` as a repository under `directory` (repodata/repomd.xml and the record
// files) and returns the repomd.xml bytes.
std::string write_repository(const RepomdCase& repomd_case, const std::filesystem::path& directory);

}  // namespace rpmirror::test::differential
