// A repository's source record (rpmirror/store/source_record.hpp) written and read over the
// store, once for a directory and a bucket: the text, its write at a sync's publication, its read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "rpmirror/config/config.hpp"
#include "rpmirror/plan/plan.hpp"
#include "rpmirror/store/source_record.hpp"
#include "rpmirror/util/error.hpp"
#include "store/mirror_store.hpp"
#include "store/object_store.hpp"

namespace rpmirror::store {

// The record of `repo`, synced with `selection`: comments saying what it is, the selection in
// the words of the command line and the secrets left out, then `repo`'s .repo section
// (write_repo_section).
std::string source_record_text(const RepoConfig& repo, const RecordedSelection& selection);

// Where a repository's record is kept: where its kind of store keeps sync state
// (MirrorStore::visit). On disk beside the sync state file in the state directory,
// sync_state_path(state_dir, root) with ".source.repo" for ".json" (the mirror's tree holds only
// what a client reads); in a bucket the object .rpmirror/source.repo beside the state object.
struct RecordPlace {
    std::unique_ptr<ObjectStore> objects;
    std::string key;
};
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
