// Command-line options that say which S3-compatible store an s3:// destination is in
// (--s3-endpoint, --s3-region, --s3-profile, --s3-addressing). Shared by sync/reposync, verify and
// job mode; the rest (credentials, defaults) comes from the environment and ~/.aws
// (s3::resolve_config).
#pragma once

#include <CLI/CLI.hpp>

#include "rpmirror/s3.hpp"

namespace rpmirror::cli {

// Registers --s3-endpoint URL, --s3-region REGION, --s3-profile NAME and
// --s3-addressing path|virtual on `app`, storing what is given into `overrides` (which must
// outlive the parse); options not given leave their field unset.
void add_s3_options(CLI::App& app, s3::S3Overrides& overrides);

}  // namespace rpmirror::cli
