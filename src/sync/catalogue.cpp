// Owners of keys, and releases of an --upstream-layout root (sync/catalogue.hpp).
#include "sync/catalogue.hpp"

#include <vector>

#include "fs/beneath.hpp"
#include "fs/walk.hpp"

namespace rpmirror {

bool is_release_of(const std::filesystem::path& mine, const std::filesystem::path& tree) {
    const std::vector<std::filesystem::path> a(mine.begin(), mine.end());
    const std::vector<std::filesystem::path> b(tree.begin(), tree.end());
    if (a.size() != b.size() || a.size() < 2 || a.back() != b.back()) {
        return false;
    }
    std::size_t differing = 0;
    for (std::size_t i = 0; i + 1 < a.size(); ++i) {
        differing += a[i] != b[i] ? 1 : 0;
    }
    return differing == 1;
}

void Owners::add(const std::string& key, const std::string& owner) {
    owners_.emplace(key, owner);
}

std::optional<std::string> Owners::other_owner(const std::string& key,
                                               std::string_view claimant) const {
    if (fs::is_reserved_key(key)) {
        return std::string("rpmirror itself (its metadata, state, lease or downloads)");
    }
    const auto found = owners_.find(key);
    if (found == owners_.end() || found->second == claimant) {
        return std::nullopt;
    }
    return found->second;
}

Result<void> Owners::claim(const std::string& key, std::string_view claimant,
                           const std::string& shown) const {
    if (auto owner = other_owner(key, claimant)) {
        return make_error(ErrorCode::Unsafe,
                          "not written for " + std::string(claimant) + ": the key " + key +
                              " belongs to " + *owner + " (one owner per key)",
                          shown);
    }
    return {};
}

}  // namespace rpmirror
