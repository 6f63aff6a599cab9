// What a mirror remembers of where it came from: each sync that publishes a repository records the
// repository's resolved source where the mirror keeps its sync state (a directory's: beside its
// state file in the state directory, <state_dir>/repos/<name>-<hash>.source.repo; a bucket's: the
// object <repository>/.rpmirror/source.repo), as a `.repo` file a user reads and dnf understands.
// `verify --repair`, `verify --remote` and `sync --repo ID` use it when no .repo file or
// --repofrompath defines ID; a source the configuration gives wins (the record is then not read).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"
#include "rpmirror/config/config.hpp"
#include "rpmirror/s3/s3.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_store.hpp"
#include "store/object_store.hpp"

namespace rpmirror::store {

// The record's key in a bucket, relative to its repository's prefix. Beneath `.rpmirror/`: never a
// package, never listed, copied or deleted with the mirror's files.
inline constexpr std::string_view kSourceRecordKey = ".rpmirror/source.repo";

// A repository's source as its mirror recorded it.
struct RecordedSource {
    RepoConfig config;   // defined_at: the record and the line of its section
    std::string record;  // the record's name for messages ("/srv/mirror/fedora/.rpmirror/...")
    // The selection the last sync made with, in the words of the command line ("--arch x86_64
    // --newest-only", "every package"); "" iff the record does not say.
    std::string selection;
    // The secrets the record does not hold (write_repo_section's `left_out`): a repository
    // that needs them is given with -c/--repofrompath instead.
    std::vector<std::string> left_out;
};

// Where `rpmirror sync` looks for records: its -p (a directory or s3://BUCKET/PREFIX), each
// repository <-p>/<id> (the root itself with --norepopath).
struct SourceLookup {
    std::string download_path = ".";
    std::filesystem::path state_dir;  // a directory's state directory ("" = the default)
    bool norepopath = false;
    std::optional<s3::S3Overrides> s3;
};

// For each of `patterns` (--repo) that is a repo id (no glob character) and names no repository
// of `repos` (the configuration, which wins), the repository its mirror records, appended to
// `repos`; `notes` gets a line for each (where it came from, the secrets it lacks, the selection
// of its last sync) and for a record of another repository id (ignored). A repository with no
// record is left to the caller's error (select_repos: "Unknown repo"). Returns the error naming
// the record (and its line) iff one is there but cannot be read or parsed; `repos` is then
// unchanged.
Result<void> add_recorded_sources(std::vector<RepoConfig>& repos,
                                  std::span<const std::string> patterns, const SourceLookup& where,
                                  std::vector<std::string>& notes);

// The end of the message for a repository with neither a configured source nor a record: where
// a sync of this version records one (`record`: the record's name).
std::string no_recorded_source(std::string_view record);

// The record, written and read over the store, once for a directory and a bucket: the text, its
// write at a sync's publication, its read.

// The record of `repo`, synced with `selection`: comments saying what it is, the selection in
// the words of the command line and the secrets left out, then `repo`'s .repo section
// (write_repo_section).
std::string source_record_text(const RepoConfig& repo, const RecordedSelection& selection);

// Where a repository's record is kept: its store's place for the record "source.repo" of the
// repository (MirrorStore::record_of): on disk beside the sync state file in the state directory,
// sync_state_path(state_dir, root) with ".source.repo" for ".json" (the mirror's tree holds only
// what a client reads); in a bucket the object .rpmirror/source.repo beside the state object.
RecordPlace source_record_place(MirrorStore& store);

// Stores the record at `key` of `objects`, replacing the one there atomically. The store's error
// naming the key iff it cannot be stored.
Result<void> write_source_record(ObjectStore& objects, std::string_view key, const RepoConfig& repo,
                                 const RecordedSelection& selection);

// As above, at the place of the mirror `store` (a sync's, after it published).
Result<void> write_source_record(MirrorStore& store, const RepoConfig& repo,
                                 const RecordedSelection& selection);

// What read_source_record found.
struct SourceRecordRead {
    std::string record;                    // the record's name (there or not), for messages
    std::optional<RecordedSource> source;  // set iff a record of the repository is there
    // Set iff a record is there of another repository id (ignored): the sentence saying so.
    std::string ignored;
};

// Reads the record at `key` of `objects` of the repository `id`. No record: neither `source`
// nor `ignored` set. Error{BadInput} naming the record and the line iff it is not one record of
// a repository (a line that does not parse, a value its key refuses, a key rpmirror does not
// know or given twice, no section or several); the store's error iff it cannot be read.
Result<SourceRecordRead> read_source_record(ObjectStore& objects, std::string_view key,
                                            std::string_view id);

// As above, at the place of the mirror `store`.
Result<SourceRecordRead> read_source_record(MirrorStore& store, std::string_view id);

}  // namespace rpmirror::store
