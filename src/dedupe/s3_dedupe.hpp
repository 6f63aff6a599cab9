// Transitional: the bucket sync's call of --dedupe (sync/s3_sync.cpp, being moved onto the store
// by another change), in its old words, forwarded to the one implementation over the store
// (dedupe/siblings.hpp). Nothing here decides anything: remove this header once s3_sync.cpp
// calls dedupe::copy_from_siblings with its ObjectStore.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dedupe/siblings.hpp"
#include "s3/client.hpp"
#include "s3/mirror_state.hpp"
#include "util/text.hpp"

namespace rpmirror::dedupe {

using S3Wanted = Wanted;

struct S3Copied {
    std::size_t index = 0;    // into the wanted list
    s3::StoredObject object;  // the copy, as the repository's state records it
    std::string source;       // s3://BUCKET/KEY it was copied from
};

struct S3DedupeOutcome {
    std::vector<S3Copied> copied;
    std::uint64_t copied_bytes = 0;
    std::size_t fallbacks = 0;
    std::string note;
};

// copy_from_siblings (dedupe/siblings.hpp) for the repository `repo` (its prefix ends in '/') of
// the bucket `client` talks to, the copies given `acl`.
inline S3DedupeOutcome copy_from_siblings(s3::S3Client& client, const s3::S3Location& repo,
                                          std::span<const S3Wanted> wanted, std::string_view acl) {
    std::string key = repo.prefix;
    while (key.ends_with('/')) {
        key.pop_back();
    }
    const auto bucket = store::s3_object_store(client.config(), s3::S3Location{repo.bucket, ""});
    store::CopyOptions options;
    options.acl = std::string(acl);
    SiblingOutcome outcome = copy_from_siblings(*bucket, key, wanted, options);
    S3DedupeOutcome result;
    result.copied_bytes = outcome.copied_bytes;
    result.fallbacks = outcome.fallbacks;
    result.note = std::move(outcome.note);
    for (Copied& copied : outcome.copied) {
        const Wanted& package = wanted[copied.index];
        result.copied.push_back({copied.index,
                                 {copied.object.size, copied.object.version, package.checksum_type,
                                  text::to_lower(package.digest)},
                                 std::move(copied.source)});
    }
    return result;
}

}  // namespace rpmirror::dedupe
