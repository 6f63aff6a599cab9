// Writing repomd.xml, beside its parser (metadata/repomd.cpp): the text of a repomd.xml for
// new records (private; the publish stage's filtered metadata uses it).
#pragma once

#include <string>
#include <vector>

#include "metadata/metadata.hpp"

namespace rpmirror {

// Returns a repomd.xml listing `upstream`'s revision and tags and then `records` (in order),
// each with every field it has, in createrepo_c's layout.
std::string repomd_document(const Repomd& upstream, const std::vector<RepomdRecord>& records);

}  // namespace rpmirror
