// The one way the small JSON documents rpmirror keeps in a bucket (the state object, the lease)
// are read: a JSON object, or a BadInput error naming the object.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rpmirror/util/error.hpp"

namespace rpmirror::s3 {

// Parses `json` as a JSON object. Returns Error{BadInput} "not a JSON object" with subject
// `subject` (the object's s3:// URL) iff it is not valid JSON or not an object.
inline Result<nlohmann::json> parse_json_object(std::string_view json, const std::string& subject) {
    nlohmann::json document = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded() || !document.is_object()) {
        return make_error(ErrorCode::BadInput, "not a JSON object", subject);
    }
    return document;
}

}  // namespace rpmirror::s3
