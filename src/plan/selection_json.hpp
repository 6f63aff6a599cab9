// A recorded selection and publishing (plan/plan.hpp) as JSON: one format for the local
// state file and the state object of a mirror in a bucket (s3/mirror_state.hpp keeps them as
// text), read by verify and its --repair.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plan/plan.hpp"

namespace rpmirror {

nlohmann::json selection_to_json(const RecordedSelection& selection);
// Throws nlohmann::json::exception iff `recorded` is not what selection_to_json writes.
RecordedSelection selection_from_json(const nlohmann::json& recorded);

// The same as one line of text, and back: nullopt iff `text` is not such a document.
std::string selection_to_text(const RecordedSelection& selection);
std::optional<RecordedSelection> selection_from_text(std::string_view text);

nlohmann::json publishing_to_json(const RecordedPublishing& publishing);
// Throws nlohmann::json::exception iff `recorded` is not what publishing_to_json writes.
RecordedPublishing publishing_from_json(const nlohmann::json& recorded);
std::string publishing_to_text(const RecordedPublishing& publishing);
std::optional<RecordedPublishing> publishing_from_text(std::string_view text);

}  // namespace rpmirror
