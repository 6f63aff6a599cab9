// --dedupe on an s3:// destination (see dedupe/s3_dedupe.hpp).
#include "dedupe/s3_dedupe.hpp"

#include <map>
#include <tuple>

#include "store/mirror_store.hpp"
#include "util/text.hpp"

namespace rpmirror::dedupe {

namespace {

// A package of a sibling, by (checksum type, digest, size).
using Identity = std::tuple<ChecksumType, std::string, std::uint64_t>;
struct Source {
    s3::S3Location repo;
    std::string key;
    s3::StoredObject object;
};

}  // namespace

S3DedupeOutcome copy_from_siblings(s3::S3Client& client, const s3::S3Location& repo,
                                   std::span<const S3Wanted> wanted, std::string_view acl) {
    S3DedupeOutcome outcome;
    if (wanted.empty() || repo.prefix.empty()) {
        return outcome;
    }
    // "pub/fedora/" -> "pub/"; "fedora/" -> "" (the bucket's root).
    const std::string own = repo.prefix.substr(0, repo.prefix.size() - 1);
    const std::size_t slash = own.rfind('/');
    const std::string parent = slash == std::string::npos ? "" : own.substr(0, slash + 1);
    auto siblings = client.list_prefixes(repo.bucket, parent);
    if (!siblings) {
        outcome.note = "--dedupe: " + siblings.error().to_string();
        return outcome;
    }
    std::map<Identity, Source> sources;
    for (const std::string& prefix : *siblings) {
        if (prefix == repo.prefix) {
            continue;
        }
        const s3::S3Location sibling{repo.bucket, prefix};
        auto state = s3::load_state(client, sibling);
        if (!state) {
            outcome.note = "--dedupe: " + state.error().to_string();
            return outcome;
        }
        if (!*state) {
            continue;  // not a repository rpmirror synced
        }
        for (const auto& [key, object] : (*state)->objects) {
            if (store::is_package_key(key)) {
                sources.try_emplace(
                    {object.checksum_type, text::to_lower(object.digest), object.size},
                    Source{sibling, key, object});
            }
        }
    }
    std::vector<s3::StoredCopy> copies;
    std::vector<std::size_t> indices;  // of `wanted`, per copy
    for (std::size_t index = 0; index < wanted.size(); ++index) {
        const S3Wanted& package = wanted[index];
        const auto found =
            sources.find({package.checksum_type, text::to_lower(package.digest), package.size});
        if (found != sources.end()) {
            const Source& source = found->second;
            copies.push_back({source.repo, source.key, source.object, repo, package.key});
            indices.push_back(index);
        }
    }
    auto results = s3::copy_stored_all(client.config(), copies, acl);
    for (std::size_t item = 0; item < copies.size(); ++item) {
        auto& copied = results[item];
        if (!copied && copied.error().code == ErrorCode::Corrupt) {
            ++outcome.fallbacks;
            continue;
        }
        if (!copied) {
            if (outcome.note.empty()) {
                outcome.note = "--dedupe: " + copied.error().to_string();
            }
            continue;
        }
        outcome.copied_bytes += wanted[indices[item]].size;
        outcome.copied.push_back({indices[item], std::move(*copied),
                                  s3::object_url(copies[item].from.bucket,
                                                 copies[item].from.key(copies[item].from_key))});
    }
    return outcome;
}

}  // namespace rpmirror::dedupe
