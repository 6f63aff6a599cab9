// `rpmirror reposync`'s package lines, as dnf 4.14's MultiFileProgressMeter prints them on a pipe.
#include <gtest/gtest.h>

#include "report/report.hpp"
#include "rpmirror/report/report.hpp"

namespace rpmirror {
namespace {

TEST(DnfLines, NumbersAsDnfFormatNumber) {
    EXPECT_EQ(format_dnf_number(335), "335  ");
    EXPECT_EQ(format_dnf_number(0), "0  ");
    EXPECT_EQ(format_dnf_number(6581), "6.4 k");
    EXPECT_EQ(format_dnf_number(63'488), "62 k");
    EXPECT_EQ(format_dnf_number(3'145'728), "3.0 M");
    EXPECT_EQ(format_dnf_number(4.2 * 1024 * 1024 + 0.5), "4.2 M");
}

TEST(DnfLines, DownloadedLineIsPaddedTo79Columns) {
    PackageEvent event;
    event.kind = PackageEvent::Kind::Downloaded;
    event.file_name = "rpmirror-sample-docs-1.0-1.noarch.rpm";
    event.done = 1;
    event.total = 5;
    event.bytes = 63'488;
    event.seconds = 0.0145;
    const std::string line = format_dnf_package_line(event);
    EXPECT_EQ(line.size(), 79U);
    EXPECT_TRUE(line.starts_with("(1/5): rpmirror-sample-docs-1.0-1.noarch.rpm    ")) << line;
    EXPECT_TRUE(line.ends_with(" MB/s |  62 kB     00:00    ")) << line;
    event.total = 1;  // one file: no counter, as dnf
    EXPECT_TRUE(
        format_dnf_package_line(event).starts_with("rpmirror-sample-docs-1.0-1.noarch.rpm "));
}

TEST(DnfLines, StatusLines) {
    PackageEvent event;
    event.file_name = "rpmirror-sample-tiny-1.0-1.noarch.rpm";
    event.kind = PackageEvent::Kind::AlreadyPresent;
    EXPECT_EQ(format_dnf_package_line(event),
              "[SKIPPED] rpmirror-sample-tiny-1.0-1.noarch.rpm: Already downloaded            ");
    event.kind = PackageEvent::Kind::Failed;
    event.mirrors_exhausted = true;
    EXPECT_EQ(format_dnf_package_line(event),
              "[FAILED] rpmirror-sample-tiny-1.0-1.noarch.rpm: No more mirrors to try - All "
              "mirrors were already tried without success");
    event.mirrors_exhausted = false;
    event.reason = "cannot write the download: No space left on device";
    EXPECT_EQ(format_dnf_package_line(event),
              "[FAILED] rpmirror-sample-tiny-1.0-1.noarch.rpm: cannot write the download: No space "
              "left on device");
    event.kind = PackageEvent::Kind::MirrorFailed;
    event.http_status = 404;
    event.url = "http://127.0.0.1/Packages/rpmirror-sample-tiny-1.0-1.noarch.rpm";
    EXPECT_EQ(format_dnf_package_line(event),
              "[MIRROR] rpmirror-sample-tiny-1.0-1.noarch.rpm: Status code: 404 for " + event.url);
}

}  // namespace
}  // namespace rpmirror
