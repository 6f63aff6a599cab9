// The catalogue of files rpmirror wrote beneath a root (sync/catalogue.hpp).
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

Catalogue Catalogue::load(const std::filesystem::path& state_dir, const std::filesystem::path& root,
                          std::string_view name) {
    Catalogue catalogue(sync_state_path(state_dir, root / std::string(name)), root);
    if (auto state = read_sync_state(catalogue.path_)) {
        for (SyncStateFile& file : state->files) {
            std::string key = file.relative_path.generic_string();
            catalogue.files_.emplace(std::move(key), std::move(file));
        }
    }
    return catalogue;
}

void Catalogue::record(const std::vector<std::filesystem::path>& relative) {
    for (const std::filesystem::path& path : relative) {
        const std::filesystem::path normal = path.lexically_normal();
        if (auto file = stat_for_state(root_, normal)) {
            files_[normal.generic_string()] = std::move(*file);
        }
    }
}

bool Catalogue::holds(const std::string& relative) const {
    const auto found = files_.find(relative);
    if (found == files_.end()) {
        return false;
    }
    const auto now = stat_for_state(root_, relative);
    return now && now->size == found->second.size && now->mtime_ns == found->second.mtime_ns &&
           now->inode == found->second.inode && now->ctime_ns == found->second.ctime_ns;
}

Result<std::vector<std::string>> Catalogue::collect(const std::set<std::string>& referenced,
                                                    std::vector<std::string>& warnings) {
    std::vector<std::string> removed;
    for (auto it = files_.begin(); it != files_.end();) {
        if (referenced.contains(it->first)) {
            ++it;
            continue;
        }
        if (holds(it->first)) {
            auto outcome = fs::remove_beneath(root_, it->first, false);
            if (!outcome) {
                return tl::unexpected(std::move(outcome.error()));
            }
            if (*outcome == fs::Removal::Removed) {
                removed.push_back(it->first);
                const std::filesystem::path parent = std::filesystem::path(it->first).parent_path();
                if (!parent.empty()) {
                    (void)fs::remove_empty_directory_beneath(root_, parent);
                }
            }
        } else if (stat_for_state(root_, it->first)) {
            warnings.push_back((root_ / it->first).string() +
                               ": nothing lists it any more, but it changed since rpmirror wrote "
                               "it: left in place");
        }
        it = files_.erase(it);
    }
    return removed;
}

void Catalogue::vouch(CacheTrust& trust) const {
    SyncState state;
    for (const auto& [key, file] : files_) {
        state.files.push_back(file);
    }
    vouch_for_state(trust, state);
}

Result<void> Catalogue::save() const {
    SyncState state;
    for (const auto& [key, file] : files_) {
        state.files.push_back(file);
    }
    return write_sync_state(path_, state);
}

}  // namespace rpmirror
