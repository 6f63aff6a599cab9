// Who owns the keys beneath a destination's root, and which trees of an --upstream-layout root are
// releases of one repository. (What rpmirror stored beneath a root outside any repository's own
// directory is a StoredRecord: sync/stored_record.hpp.)
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror {

// --keep-releases: true iff `tree` is another release of the repository at `mine` (both
// relative to the layout root, generic form): as many directories, the same last one (the
// architecture), and exactly one other that differs (the release's GUID). `guids/G2/x86_64` is a
// release of `guids/G1/x86_64`; `guids/G1/aarch64` is not.
bool is_release_of(const std::filesystem::path& mine, const std::filesystem::path& tree);

// Who owns each key beneath a destination's root: every key has one owner (a repository's
// packages, a tree's images, a layout's blobs, rpmirror's own names: fs::is_reserved_key), and
// a writer claims a key before it writes it. Keys are '/'-separated and lexically normal.
class Owners {
  public:
    // Records `owner` ("repository addons/HA", ...) as the owner of `key`; the first owner
    // recorded for a key keeps it.
    void add(const std::string& key, const std::string& owner);

    // The owner of `key` other than `claimant`: rpmirror itself for a reserved name, the owner
    // recorded for it, or nullopt iff `claimant` may write it.
    std::optional<std::string> other_owner(const std::string& key, std::string_view claimant) const;

    // Error{Unsafe} naming the key and both owners iff another owns `key`; `shown` is the key
    // as the user sees it (the full path).
    Result<void> claim(const std::string& key, std::string_view claimant,
                       const std::string& shown) const;

    // Every key recorded (reserved names are a rule, not a list: not among them).
    const std::map<std::string, std::string>& keys() const { return owners_; }

  private:
    std::map<std::string, std::string> owners_;
};

}  // namespace rpmirror
