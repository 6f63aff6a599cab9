// The options of an s3:// destination (see s3_options.hpp).
#include "s3_options.hpp"

#include "rpmirror/config/config.hpp"

namespace rpmirror::cli {

void add_s3_options(CLI::App& app, S3Args& args, bool transfer) {
    app.add_option("--s3-endpoint", args.endpoint,
                   "S3 endpoint URL, e.g. http://127.0.0.1:7480 (default: AWS_ENDPOINT_URL, the "
                   "profile's endpoint_url, AWS)");
    app.add_option("--s3-region", args.region, "S3 region (default: AWS_REGION, the profile's)");
    app.add_option("--s3-profile", args.profile, "profile of ~/.aws/credentials and config");
    app.add_option("--s3-addressing", args.addressing,
                   "path (http://HOST/BUCKET/KEY: Ceph, MinIO) or virtual (AWS)")
        ->check(CLI::IsMember({"path", "virtual"}));
    if (!transfer) {
        return;
    }
    app.add_option("--s3-spool-dir", args.spool_dir,
                   "where packages wait between download and upload (default: a fresh directory "
                   "in /dev/shm, i.e. memory; $TMPDIR with a warning if /dev/shm is not a tmpfs)");
    app.add_option("--s3-spool-size", args.spool_size,
                   "at most this many bytes of packages wait in the spool at once (default: "
                   "512M, at least --s3-part-size; a larger package passes alone)");
    app.add_option("--s3-parallel", args.parallel, "concurrent uploads (default: 4)")
        ->check(CLI::Range(1, 64));
    app.add_option("--s3-part-size", args.part_size,
                   "objects larger than this are uploaded in parts of this size (default: 64M, "
                   "at least 5M)");
    app.add_option("--s3-acl", args.acl,
                   "canned ACL of every object, e.g. public-read (so the gateway serves the "
                   "mirror to dnf over plain HTTP)");
}

s3::S3Overrides s3_overrides(const S3Args& args) {
    s3::S3Overrides overrides;
    if (!args.endpoint.empty()) {
        overrides.endpoint = args.endpoint;
    }
    if (!args.region.empty()) {
        overrides.region = args.region;
    }
    if (!args.profile.empty()) {
        overrides.profile = args.profile;
    }
    if (!args.addressing.empty()) {
        overrides.path_style = args.addressing == "path";
    }
    return overrides;
}

Result<void> apply_s3_options(const S3Args& args, SyncOptions& options) {
    options.s3 = s3_overrides(args);
    options.s3_spool_dir = args.spool_dir;
    options.s3_parallel = args.parallel;
    options.s3_acl = args.acl;
    const auto part_size = parse_byte_size(args.part_size);
    if (!part_size || *part_size < 5ULL * 1024 * 1024) {
        return make_error(ErrorCode::BadInput,
                          "'" + args.part_size + "' is not a size of at least 5M",
                          "--s3-part-size");
    }
    options.s3_part_size = *part_size;
    const auto spool_size = parse_byte_size(args.spool_size);
    if (!spool_size || *spool_size < *part_size) {
        return make_error(ErrorCode::BadInput,
                          "'" + args.spool_size + "' is not a size of at least --s3-part-size (" +
                              args.part_size + ")",
                          "--s3-spool-size");
    }
    options.s3_spool_size = *spool_size;
    return {};
}

}  // namespace rpmirror::cli
