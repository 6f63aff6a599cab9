// A program outside the project, built against an installed rpmirror
// (tests/install/install_test.sh): prints the sha256 of each file named on the command line, as
// sha256sum does.
#include <cstdio>

#include "rpmirror/checksum/checksum.hpp"

int main(int argc, char** argv) {
    int status = 0;
    for (int i = 1; i < argc; ++i) {
        const auto digest = rpmirror::hash_file(argv[i], rpmirror::ChecksumType::Sha256);
        if (!digest) {
            std::fprintf(stderr, "consumer: %s\n", digest.error().to_string().c_str());
            status = 1;
            continue;
        }
        std::printf("%s  %s\n", digest->hex.c_str(), argv[i]);
    }
    return status;
}
