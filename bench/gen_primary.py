#!/usr/bin/env python3
"""Generates a synthetic RPM repository's metadata for bench/primary.

    bench/gen_primary.py [--packages N] [--seed S] OUTDIR

Writes OUTDIR/primary.xml (plain) and one loadable repository per compression:
OUTDIR/{gz,xz,zst}/repodata/{repomd.xml,<sha256>-primary.xml.<ext>}, each with a repomd.xml
carrying checksum, open-checksum, size and open-size so dnf (librepo/libsolv) can load it.

Entries imitate createrepo_c's output with realistic field sizes: a summary, a description of a
few hundred bytes, ~10 provides and ~12 requires, a few <file> entries, a sourcerpm and a header
range, giving about 1.8 KB of XML per package (~180 MB for 100,000 packages). Names repeat with
several versions and arches, as in a real repository. Deterministic for a given seed.
"""
import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys
import time
from xml.sax.saxutils import escape

WORDS = (
    "lib devel python3 perl ruby golang rust java node qt gtk kde gnome x11 wayland mesa vulkan "
    "ssl crypto curl xml json yaml http server client daemon tools utils common data doc docs "
    "plugin plugins core base extra contrib static headers runtime cli gui fonts icons theme "
    "audio video codec image compress archive network storage kernel firmware driver boot"
).split()
TEXT = (
    "the a an of to and for with without from into over under this that package provides library "
    "support implementation command line tool utilities functions interface application program "
    "files data configuration development documentation used by allows users developers system "
    "network fast simple small portable secure modern standard compatible version release format"
).split()
ARCHES = ["x86_64"] * 6 + ["noarch"] * 3 + ["i686"]
LICENSES = ["MIT", "GPL-2.0-or-later", "LGPL-2.1-or-later", "BSD-3-Clause", "Apache-2.0", "MPL-2.0"]
GROUPS = ["Unspecified", "Development/Libraries", "System Environment/Base", "Applications/System"]
DIRS = ["/usr/bin", "/usr/lib64", "/usr/share/doc", "/usr/share/man/man1", "/etc", "/usr/libexec"]


def sentence(rng, words):
    return " ".join(rng.choices(TEXT, k=words)).capitalize() + "."


def package_xml(rng, name, arch, epoch, version, release, build_time):
    checksum = "%064x" % rng.getrandbits(256)
    size = rng.randint(8_000, 40_000_000)
    filename = f"{name}-{version}-{release}.{arch}.rpm"
    description = " ".join(sentence(rng, rng.randint(6, 12)) for _ in range(rng.randint(2, 3)))
    out = [
        '<package type="rpm">\n',
        f"  <name>{name}</name>\n",
        f"  <arch>{arch}</arch>\n",
        f'  <version epoch="{epoch}" ver="{version}" rel="{release}"/>\n',
        f'  <checksum type="sha256" pkgid="YES">{checksum}</checksum>\n',
        f"  <summary>{escape(sentence(rng, rng.randint(5, 10)))}</summary>\n",
        f"  <description>{escape(description)}</description>\n",
        "  <packager>Build System &lt;builder@example.invalid&gt;</packager>\n",
        f"  <url>https://example.invalid/{name}</url>\n",
        f'  <time file="{build_time + 3600}" build="{build_time}"/>\n',
        f'  <size package="{size}" installed="{size * 3}" archive="{size * 3 + 1024}"/>\n',
        f'  <location href="Packages/{name[0]}/{filename}"/>\n',
        "  <format>\n",
        f"    <rpm:license>{rng.choice(LICENSES)}</rpm:license>\n",
        "    <rpm:vendor>Example Project</rpm:vendor>\n",
        f"    <rpm:group>{rng.choice(GROUPS)}</rpm:group>\n",
        "    <rpm:buildhost>builder-01.example.invalid</rpm:buildhost>\n",
        f"    <rpm:sourcerpm>{name}-{version}-{release}.src.rpm</rpm:sourcerpm>\n",
        f'    <rpm:header-range start="4504" end="{rng.randint(6000, 90000)}"/>\n',
        "    <rpm:provides>\n",
    ]
    out.append(f'      <rpm:entry name="{name}" flags="EQ" epoch="{epoch}" ver="{version}" rel="{release}"/>\n')
    if arch != "noarch":
        out.append(f'      <rpm:entry name="{name}(x86-64)" flags="EQ" epoch="{epoch}" ver="{version}" rel="{release}"/>\n')
    for _ in range(rng.randint(2, 5)):
        out.append(f'      <rpm:entry name="{rng.choice(WORDS)}-{rng.choice(WORDS)}.so.{rng.randint(0, 9)}()(64bit)"/>\n')
    out.append("    </rpm:provides>\n    <rpm:requires>\n")
    for _ in range(rng.randint(5, 8)):
        if rng.random() < 0.4:
            out.append(f'      <rpm:entry name="{rng.choice(WORDS)}-{rng.choice(WORDS)}" flags="GE" epoch="0" ver="{rng.randint(1, 9)}.{rng.randint(0, 20)}"/>\n')
        else:
            out.append(f'      <rpm:entry name="lib{rng.choice(WORDS)}.so.{rng.randint(0, 9)}()(64bit)"/>\n')
    out.append("    </rpm:requires>\n")
    for _ in range(rng.randint(1, 3)):
        out.append(f"    <file>{rng.choice(DIRS)}/{name}-{rng.choice(WORDS)}</file>\n")
    out.append("  </format>\n</package>\n")
    return "".join(out)


def generate(path, packages, seed):
    rng = random.Random(seed)
    base_time = 1_600_000_000
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.write('<metadata xmlns="http://linux.duke.edu/metadata/common" '
                  f'xmlns:rpm="http://linux.duke.edu/metadata/rpm" packages="{packages}">\n')
        written = 0
        serial = 0
        while written < packages:
            serial += 1
            name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{serial}"
            arch = rng.choice(ARCHES)
            epoch = 1 if rng.random() < 0.05 else 0
            major = rng.randint(0, 12)
            versions = min(rng.choice([1, 1, 1, 2, 3, 5]), packages - written)
            for index in range(versions):
                version = f"{major}.{index}.{rng.randint(0, 30)}"
                release = f"{rng.randint(1, 20)}.fc40"
                build = base_time + rng.randint(0, 100_000_000)
                out.write(package_xml(rng, name, arch, epoch, version, release, build))
                written += 1
        out.write("</metadata>\n")


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_repo(repo_dir, plain, compressed, ext):
    repodata = os.path.join(repo_dir, "repodata")
    os.makedirs(repodata, exist_ok=True)
    digest = sha256_file(compressed)
    name = f"{digest}-primary.xml.{ext}"
    shutil.move(compressed, os.path.join(repodata, name))
    now = int(time.time())
    repomd = f"""<?xml version="1.0" encoding="UTF-8"?>
<repomd xmlns="http://linux.duke.edu/metadata/repo" xmlns:rpm="http://linux.duke.edu/metadata/rpm">
  <revision>{now}</revision>
  <data type="primary">
    <checksum type="sha256">{digest}</checksum>
    <open-checksum type="sha256">{sha256_file(plain)}</open-checksum>
    <location href="repodata/{name}"/>
    <timestamp>{now}</timestamp>
    <size>{os.path.getsize(os.path.join(repodata, name))}</size>
    <open-size>{os.path.getsize(plain)}</open-size>
  </data>
</repomd>
"""
    with open(os.path.join(repodata, "repomd.xml"), "w", encoding="utf-8") as out:
        out.write(repomd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("outdir")
    args = parser.parse_args()

    os.makedirs(args.outdir, exist_ok=True)
    plain = os.path.join(args.outdir, "primary.xml")
    started = time.time()
    generate(plain, args.packages, args.seed)
    print(f"gen_primary: {args.packages} packages, {os.path.getsize(plain) / 1e6:.1f} MB "
          f"in {time.time() - started:.1f} s", file=sys.stderr)

    compressors = {
        "gz": ["gzip", "-6", "-n", "-c"],
        "xz": ["xz", "-6", "-T0", "-c"],
        "zst": ["zstd", "-q", "-10", "-T0", "-c"],
    }
    for ext, command in compressors.items():
        repo_dir = os.path.join(args.outdir, ext)
        shutil.rmtree(repo_dir, ignore_errors=True)
        compressed = os.path.join(args.outdir, f"primary.xml.{ext}")
        with open(compressed, "wb") as out:
            subprocess.run(command + [plain], stdout=out, check=True)
        write_repo(repo_dir, plain, compressed, ext)
        print(f"gen_primary: wrote {repo_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
