// The command-line options of an s3:// destination (sync, reposync, job mode; verify uses the
// store settings): --s3-endpoint, --s3-region, --s3-profile, --s3-addressing, and for a sync
// --s3-spool-dir, --s3-spool-size, --s3-parallel, --s3-part-size, --s3-acl.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "rpmirror/sync/sync_options.hpp"
#include "rpmirror/util/error.hpp"

namespace rpmirror::cli {

struct S3Args {
    std::string endpoint;
    std::string region;
    std::string profile;
    std::string addressing;  // "", "path" or "virtual"
    std::string spool_dir;
    std::string spool_size = "512M";
    unsigned parallel = 4;
    std::string part_size = "64M";
    std::string acl;
};

// Registers the store settings (--s3-endpoint, --s3-region, --s3-profile, --s3-addressing) on
// `app`; with `transfer`, also --s3-spool-dir, --s3-spool-size, --s3-parallel, --s3-part-size
// and --s3-acl.
void add_s3_options(CLI::App& app, S3Args& args, bool transfer);

// Returns the store settings the user gave (each unset one left to the environment, ~/.aws).
s3::S3Overrides s3_overrides(const S3Args& args);

// Copies the store settings and the transfer options into `options`. Returns Error{BadInput}
// naming --s3-part-size iff it is not a size of at least 5M, naming --s3-spool-size iff it is not
// a size of at least the part size.
Result<void> apply_s3_options(const S3Args& args, SyncOptions& options);

}  // namespace rpmirror::cli
