// A recorded selection (rpmirror/plan.hpp) as JSON: one format for the local state file and the
// state object of a mirror in a bucket (s3/mirror_state.hpp keeps it as text), read by verify.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rpmirror/plan.hpp"

namespace rpmirror {

nlohmann::json selection_to_json(const RecordedSelection& selection);
// Throws nlohmann::json::exception iff `recorded` is not what selection_to_json writes.
RecordedSelection selection_from_json(const nlohmann::json& recorded);

// The same as one line of text, and back: nullopt iff `text` is not such a document.
std::string selection_to_text(const RecordedSelection& selection);
std::optional<RecordedSelection> selection_from_text(std::string_view text);

}  // namespace rpmirror
