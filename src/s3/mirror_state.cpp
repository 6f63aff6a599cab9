// The state object of an s3:// mirror (see s3/mirror_state.hpp).
#include "s3/mirror_state.hpp"

#include <filesystem>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "checksum/hasher.hpp"
#include "s3/config.hpp"
#include "s3/json_object.hpp"
#include "util/parallel.hpp"

namespace rpmirror::s3 {

namespace {

constexpr int kVersion = 1;

}  // namespace

std::string to_json(const MirrorState& state) {
    nlohmann::json objects = nlohmann::json::object();
    for (const auto& [key, object] : state.objects) {
        objects[key] = {{"size", object.size},
                        {"etag", object.etag},
                        {"checksum_type", std::string(checksum_type_name(object.checksum_type))},
                        {"digest", object.digest}};
    }
    const nlohmann::json document = {{"version", kVersion},
                                     {"repomd_sha256", state.repomd_sha256},
                                     {"fingerprint", state.fingerprint},
                                     {"objects", std::move(objects)},
                                     {"previous_records", state.previous_records},
                                     {"acl", state.acl},
                                     {"signatures_checked", state.signatures_checked},
                                     {"selection", state.selection},
                                     {"publishing", state.publishing}};
    return document.dump();
}

Result<MirrorState> parse_state(std::string_view json, std::string_view shown) {
    const std::string subject(shown);
    auto parsed = parse_json_object(json, subject);
    if (!parsed) {
        return tl::unexpected(std::move(parsed.error()));
    }
    const nlohmann::json& document = *parsed;
    try {
        if (document.at("version").get<int>() != kVersion) {
            return make_error(ErrorCode::BadInput,
                              "state version " + document.at("version").dump() + " is not 1",
                              subject);
        }
        MirrorState state;
        state.repomd_sha256 = document.at("repomd_sha256").get<std::string>();
        state.fingerprint = document.at("fingerprint").get<std::string>();
        for (const auto& [key, value] : document.at("objects").items()) {
            StoredObject object;
            object.size = value.at("size").get<std::uint64_t>();
            object.etag = value.at("etag").get<std::string>();
            auto type = parse_checksum_type(value.at("checksum_type").get<std::string>());
            if (!type) {
                return make_error(ErrorCode::BadInput,
                                  "object " + key + ": " + type.error().message, subject);
            }
            object.checksum_type = *type;
            object.digest = value.at("digest").get<std::string>();
            state.objects.emplace(key, std::move(object));
        }
        state.previous_records = document.at("previous_records").get<std::vector<std::string>>();
        state.acl = document.value("acl", std::string());
        state.signatures_checked = document.value("signatures_checked", std::string());
        state.selection = document.value("selection", std::string());
        state.publishing = document.value("publishing", std::string());
        return state;
    } catch (const nlohmann::json::exception& e) {
        return make_error(ErrorCode::BadInput, std::string("malformed state: ") + e.what(),
                          subject);
    }
}

Result<std::optional<MirrorState>> load_state(S3Client& client, const S3Location& repo,
                                              std::string_view state_key) {
    const std::string key = repo.key(state_key);
    auto body = client.get_object(repo.bucket, key);
    if (!body) {
        if (body.error().code == ErrorCode::NotFound &&
            body.error().message.find("NoSuchBucket") == std::string::npos) {
            return std::optional<MirrorState>();
        }
        return tl::unexpected(std::move(body.error()));
    }
    auto state = parse_state(*body, object_url(repo.bucket, key));
    if (!state) {
        return std::optional<MirrorState>();
    }
    return std::optional<MirrorState>(std::move(*state));
}

Result<void> store_state(S3Client& client, const S3Location& repo, const MirrorState& state,
                         std::string_view key) {
    PutOptions options;
    options.content_type = "application/json";
    auto put = client.put_object(repo.bucket, repo.key(key), to_json(state), options);
    if (!put) {
        return tl::unexpected(std::move(put.error()));
    }
    return {};
}

std::string key_relative_to(const S3Location& repo, std::string_view root_prefix,
                            std::string_view key) {
    if (key.starts_with(repo.prefix)) {
        return std::string(key.substr(repo.prefix.size()));
    }
    // The repository's directory beneath the root ("al2023/core/guids/G/x86_64").
    const std::filesystem::path inner(
        repo.prefix.substr(root_prefix.size(), repo.prefix.size() - root_prefix.size() - 1));
    return std::filesystem::path(key.substr(root_prefix.size()))
        .lexically_relative(inner)
        .generic_string();
}

Result<std::map<std::string, ListedObject>> list_mirror(S3Client& client, const S3Location& repo,
                                                        std::size_t* requests) {
    return list_mirror_within(client, repo, repo.prefix, requests);
}

Result<std::map<std::string, ListedObject>> list_mirror_within(S3Client& client,
                                                               const S3Location& repo,
                                                               std::string_view root_prefix,
                                                               std::size_t* requests) {
    std::map<std::string, ListedObject> objects;
    auto listed = client.list_objects(
        repo.bucket, std::string(root_prefix), [&](const ListedObject& object) -> Result<void> {
            objects.emplace(key_relative_to(repo, root_prefix, object.key), object);
            return {};
        });
    if (!listed) {
        return tl::unexpected(std::move(listed.error()));
    }
    if (requests != nullptr) {
        *requests = *listed;
    }
    return objects;
}

bool still_matches(const StoredObject& stored, const ListedObject& listed) {
    return stored.size == listed.size && !stored.etag.empty() && stored.etag == listed.etag;
}

namespace {

// The SHA-256 `stored` vouches for: its digest, or (an object only listed) the x-amz-meta-sha256
// stored with `key` of `from`; empty iff there is none.
Result<std::string> sha256_of(S3Client& client, const S3Location& from, std::string_view key,
                              const StoredObject& stored) {
    if (!stored.digest.empty()) {
        return stored.checksum_type == ChecksumType::Sha256 ? stored.digest : std::string();
    }
    auto head = client.head_object(from.bucket, from.key(key));
    if (!head) {
        return tl::unexpected(std::move(head.error()));
    }
    const auto sha256 = head->metadata.find("sha256");
    return sha256 == head->metadata.end() ? std::string() : sha256->second;
}

}  // namespace

Result<StoredObject> copy_stored(S3Client& client, const S3Location& from,
                                 std::string_view from_key, const StoredObject& expected,
                                 const S3Location& to, std::string_view to_key,
                                 std::string_view acl) {
    auto copied =
        client.copy_object(to.bucket, to.key(to_key), from.bucket, from.key(from_key), acl);
    if (!copied) {
        return tl::unexpected(std::move(copied.error()));
    }
    StoredObject made = expected;
    made.etag = *copied;
    if (*copied == expected.etag) {
        return made;
    }
    if (expected.etag.find('-') != std::string::npos) {
        auto sha256 = sha256_of(client, from, from_key, expected);
        auto head = client.head_object(to.bucket, to.key(to_key));
        if (!sha256 || !head) {
            return tl::unexpected(!sha256 ? sha256.error() : head.error());
        }
        const auto stored = head->metadata.find("sha256");
        if (!sha256->empty() && head->size == expected.size && stored != head->metadata.end() &&
            stored->second == *sha256) {
            return made;
        }
    }
    (void)client.delete_object(to.bucket, to.key(to_key));
    return make_error(ErrorCode::Corrupt, "changed since it was recorded (copy refused)",
                      object_url(from.bucket, from.key(from_key)));
}

std::vector<Result<StoredObject>> copy_stored_all(const S3Config& config,
                                                  std::span<const StoredCopy> copies,
                                                  std::string_view acl, unsigned parallel) {
    std::vector<Result<StoredObject>> results(copies.size(),
                                              make_error(ErrorCode::Interrupted, "not copied"));
    for_each_index_in_parallel(copies.size(), std::max(parallel, 1U), [&] {
        return [&, client = std::make_shared<S3Client>(config)](std::size_t index) {
            const StoredCopy& copy = copies[index];
            results[index] = copy_stored(*client, copy.from, copy.from_key, copy.expected, copy.to,
                                         copy.to_key, acl);
        };
    });
    return results;
}

}  // namespace rpmirror::s3
