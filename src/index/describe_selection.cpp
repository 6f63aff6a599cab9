// A selection in the words of the command line: what verify reports a mirror was synced with,
// and what a mirror's source record says it was (index/index.hpp).
#include <fmt/format.h>

#include "index/index.hpp"

namespace rpmirror {

std::string describe_selection(const SelectionOptions& selection) {
    std::vector<std::string> words;
    const auto joined = [](const std::vector<std::string>& items) {
        std::string text;
        for (const std::string& item : items) {
            text += (text.empty() ? "" : ",") + item;
        }
        return text;
    };
    if (selection.only_nevras) {
        // The closure replaces every other filter.
        return fmt::format("--with-dependencies ({} package(s))", selection.only_nevras->size());
    }
    if (selection.source_only) {
        words.push_back("--source");
    } else if (!selection.arches.empty()) {
        words.push_back("--arch " + joined(selection.arches));
    }
    if (selection.newest_only) {
        words.push_back(selection.keep_versions > 1
                            ? fmt::format("--keep-versions {}", selection.keep_versions)
                            : std::string("--newest-only"));
    }
    if (selection.min_build_time) {
        words.push_back(fmt::format("--min-buildtime {}", *selection.min_build_time));
    }
    if (!selection.include_globs.empty()) {
        words.push_back("includepkgs=" + joined(selection.include_globs));
    }
    if (!selection.exclude_globs.empty()) {
        words.push_back("excludepkgs=" + joined(selection.exclude_globs));
    }
    if (words.empty()) {
        return "every package";
    }
    std::string text;
    for (const std::string& word : words) {
        text += (text.empty() ? "" : " ") + word;
    }
    return text;
}

}  // namespace rpmirror
