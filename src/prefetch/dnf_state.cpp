// What dnf keeps on disk that decides a prefetch (prefetch/dnf_state.hpp).
#include "prefetch/dnf_state.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fs/beneath.hpp"
#include "fs/durable.hpp"
#include "metadata/metadata.hpp"
#include "util/ini.hpp"
#include "util/text.hpp"
#include "util/xml_tree.hpp"

namespace rpmirror {

std::set<std::string> expired_repo_ids(const std::filesystem::path& cachedir) {
    std::set<std::string> ids;
    std::ifstream file(cachedir / "expired_repos.json");
    if (!file) {
        return ids;
    }
    const nlohmann::json listed = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
    if (listed.is_array()) {
        for (const nlohmann::json& id : listed) {
            if (id.is_string()) {
                ids.insert(id.get<std::string>());
            }
        }
    }
    return ids;
}

bool metadata_is_fresh(const std::filesystem::path& repo_cache, std::int64_t expire_seconds,
                       const std::string& repo_file) {
    const std::filesystem::path index = repo_cache / "repodata" / "repomd.xml";
    auto text = fs::read_file(index);
    if (!text) {
        return false;
    }
    auto repomd = parse_repomd(*text, index.string());
    if (!repomd) {
        return false;
    }
    const RepomdRecord* primary = repomd->find("primary");
    struct stat st {};
    if (primary == nullptr || ::stat((repo_cache / primary->location_href).c_str(), &st) != 0) {
        return false;
    }
    struct stat defined {};
    if (!repo_file.empty() && ::stat(repo_file.c_str(), &defined) == 0 &&
        fs::timespec_ns(defined.st_mtim) > fs::timespec_ns(st.st_mtim)) {
        return false;
    }
    const auto age = std::chrono::system_clock::now().time_since_epoch() -
                     std::chrono::seconds(st.st_mtim.tv_sec);
    return expire_seconds < 0 ||
           std::chrono::duration_cast<std::chrono::seconds>(age).count() <= expire_seconds;
}

std::vector<std::string> enabled_module_streams(const std::filesystem::path& installroot,
                                                std::vector<std::string>& warnings) {
    std::vector<std::string> streams;
    const std::filesystem::path directory = installroot / "etc/dnf/modules.d";
    std::error_code error;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
        if (entry.path().extension() == ".module") {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const std::filesystem::path& file : files) {
        auto text = fs::read_file(file);
        auto sections =
            text ? ini::parse_ini(*text, file.string())
                 : Result<std::vector<ini::IniSection>>(tl::unexpected(std::move(text.error())));
        if (!sections) {
            warnings.push_back(fmt::format("{}; its module streams count as not enabled",
                                           sections.error().to_string()));
            continue;
        }
        for (const ini::IniSection& section : *sections) {
            std::string name = section.name;
            std::string stream;
            std::string state;
            for (const ini::IniEntry& entry : section.entries) {
                if (entry.key == "name") {
                    name = entry.value;
                } else if (entry.key == "stream") {
                    stream = entry.value;
                } else if (entry.key == "state") {
                    state = entry.value;
                }
            }
            if (state == "enabled" && !stream.empty()) {
                streams.push_back(name + ":" + stream);
            }
        }
    }
    return streams;
}

Result<void> add_group_packages(const std::string& text, const std::string& shown,
                                const std::vector<std::string>& groups,
                                std::set<std::string>& packages, std::set<std::string>& found) {
    auto document = xml::read_tree(text, "comps", "a comps document", shown);
    if (!document) {
        return tl::unexpected(std::move(document.error()));
    }
    for (xmlNode* group = xmlDocGetRootElement(document->get())->children; group != nullptr;
         group = group->next) {
        if (!xml::is_element(group, "group")) {
            continue;
        }
        std::string id;
        std::string name;
        xmlNode* list = nullptr;
        for (xmlNode* child = group->children; child != nullptr; child = child->next) {
            if (xml::is_element(child, "id")) {
                id = std::string(text::trim(xml::element_text(child)));
            } else if (xml::is_element(child, "name") && xml::attribute(child, "lang").empty()) {
                name = std::string(text::trim(xml::element_text(child)));
            } else if (xml::is_element(child, "packagelist")) {
                list = child;
            }
        }
        bool matched = false;
        for (const std::string& wanted : groups) {
            if (wanted == id || (!name.empty() && text::to_lower(wanted) == text::to_lower(name))) {
                found.insert(wanted);
                matched = true;
            }
        }
        for (xmlNode* req = list == nullptr || !matched ? nullptr : list->children; req != nullptr;
             req = req->next) {
            const std::string type = xml::attribute(req, "type");
            if (xml::is_element(req, "packagereq") &&
                (type.empty() || type == "mandatory" || type == "default")) {
                packages.insert(std::string(text::trim(xml::element_text(req))));
            }
        }
    }
    return {};
}

}  // namespace rpmirror
