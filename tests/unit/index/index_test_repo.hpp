// The real repository the index tests read: built once per ctest run by a fixture (or once per
// test process outside ctest) by
// scripts/make-index-test-repo (rpmbuild + createrepo_c), its primary.xml recompressed with the
// gzip, xz, zstd and bzip2 command-line tools.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "support/source_tree.hpp"
#include "support/temp_dir.hpp"

namespace rpmirror::test {

inline void run_or_throw(const std::string& command) {
    if (std::system(command.c_str()) != 0) {
        throw std::runtime_error("command failed: " + command);
    }
}

inline std::string quote(const std::filesystem::path& path) {
    // Appended, not "'" + path.string(): GCC 12 at -O3 warns (-Wrestrict, a known false positive)
    // about operator+(const char*, std::string&&).
    std::string quoted = "'";
    quoted.append(path.string()).append("'");
    return quoted;
}

class IndexTestRepo {
  public:
    // Returns the repository, building it on first use.
    static const IndexTestRepo& get() {
        static const std::unique_ptr<IndexTestRepo> repo(new IndexTestRepo());
        return *repo;
    }

    const std::filesystem::path& repo_dir() const { return repo_; }
    // primary.xml uncompressed, and recompressed into primary.xml.{gz,xz,zst,bz2}.
    std::filesystem::path primary(std::string_view suffix) const {
        return dir_ / ("primary.xml" + std::string(suffix));
    }
    const std::string& primary_xml() const { return xml_; }
    const std::filesystem::path& scratch() const { return dir_.path(); }

  private:
    IndexTestRepo() : repo_(prebuilt_test_repo("index-repo").value_or(dir_ / "repo")) {
        if (!prebuilt_test_repo("index-repo")) {
            run_or_throw((source_root() / "scripts/make-index-test-repo").string() + " " +
                         quote(repo_) + " 2>" + quote(dir_ / "build.log"));
        }
        std::filesystem::path gz;
        for (const auto& entry : std::filesystem::directory_iterator(repo_ / "repodata")) {
            const std::string name = entry.path().filename().string();
            if (name.ends_with("-primary.xml.gz")) {
                gz = entry.path();
            }
        }
        if (gz.empty()) {
            throw std::runtime_error("createrepo_c wrote no primary.xml.gz");
        }
        const auto plain = primary("");
        run_or_throw("gzip -dc " + quote(gz) + " > " + quote(plain));
        run_or_throw("gzip -9nc " + quote(plain) + " > " + quote(primary(".gz")));
        run_or_throw("xz -c " + quote(plain) + " > " + quote(primary(".xz")));
        run_or_throw("zstd -q -c " + quote(plain) + " > " + quote(primary(".zst")));
        run_or_throw("bzip2 -c " + quote(plain) + " > " + quote(primary(".bz2")));
        xml_ = read_file(plain);
    }

    TempDir dir_;
    std::filesystem::path repo_;
    std::string xml_;
};

}  // namespace rpmirror::test
