#!/usr/bin/env python3
"""Generates three synthetic RPM repositories whose packages need each other, for the closure
benchmark (bench/closure --synthetic N).

    bench/gen_closure.py [--packages N] [--names K] [--seed S] OUTDIR

Writes OUTDIR/{base,appstream,extra}/repodata/ (primary.xml.gz and its repomd.xml, with the
checksums and sizes dnf checks) holding N packages in all (base about half, appstream a third,
extra the rest), and OUTDIR/names.txt: K names of applications in appstream and extra to
install. No package file exists: the benchmark asks both tools for URLs only.

The dependency web has the shapes of a distribution's: components are numbered and each needs
only earlier ones, so base is self-contained, appstream needs base and extra needs both; libraries
provide sonames (`libNAME.so.M()(64bit)`; a fifth also as i686 builds providing the 32-bit
soname: multilib), applications provide `/usr/bin/NAME` (listed in primary, as createrepo_c
lists /usr/bin); everything needs a few of 100 core libraries, a library half the time one of
the 300 before it (chains), an application one to three libraries from anywhere; besides, versioned requires (`NAME >= V`), file requires, virtual provides offered by
two or three packages (alternatives), rich dependencies (`(A or B)`, `(A if B)`) and Recommends.
Each name has one to three versions, and every version's requirements are satisfiable, so the
newest is what a solver picks. Deterministic for a given seed.
"""
import argparse
import gzip
import hashlib
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_primary import WORDS  # noqa: E402  (the same names as the primary benchmark's)

REPOS = (("base", 0.50), ("appstream", 0.35), ("extra", 0.15))


class Component:
    def __init__(self, index, name, kind, repo, versions, major):
        self.index, self.name, self.kind, self.repo = index, name, kind, repo
        self.versions, self.major = versions, major
        self.requires, self.recommends, self.provides = [], [], []
        self.multilib = False


def entry(name, flags=None, ver=None):
    if flags is None:
        return f'      <rpm:entry name="{name}"/>\n'
    return f'      <rpm:entry name="{name}" flags="{flags}" epoch="0" ver="{ver}"/>\n'


def soname(component, bits64=True):
    return f"lib{component.name}.so.{component.major}" + ("()(64bit)" if bits64 else "")


def plan(rng, total):
    """The components, their versions and their dependencies: about `total` packages."""
    components, libs, apps, virtuals = [], [], [], []
    packages = 0
    boundaries = []
    share = 0.0
    for repo, fraction in REPOS:
        share += fraction
        boundaries.append((repo, int(total * share)))
    while packages < total:
        repo = next(r for r, bound in boundaries if packages < bound or r == "extra")
        index = len(components)
        kind = rng.choices(["lib", "app", "data"], weights=[4, 5, 1])[0]
        if index < 100:
            kind = "lib"  # the core libraries every package needs some of
        versions = rng.choice([1, 1, 1, 2, 3])
        c = Component(index, f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{index}", kind, repo,
                      versions, rng.randint(0, 9))
        c.multilib = kind == "lib" and repo == "base" and rng.random() < 0.2
        if kind == "lib":
            c.provides.append(entry(soname(c)))
        if kind == "app":
            c.provides.append(entry(f"/usr/bin/{c.name}"))
            if rng.random() < 0.05:  # an alternative: a virtual provide two or three offer
                if virtuals and rng.random() < 0.6:
                    virtual = rng.choice(virtuals)
                else:
                    virtual = f"virtual-{c.name}"
                    virtuals.append(virtual)
                c.provides.append(entry(virtual))
        # Every package needs a few of the core libraries (the first 100 components: a C
        # library and its like), and a library one more from the last 300 with probability one
        # half (chains, which end soon, as in a distribution); an application needs one to three
        # libraries from anywhere.
        core = libs[:100]
        if core and kind != "data":
            for lib in rng.sample(core, min(len(core), rng.randint(1, 3))):
                c.requires.append(entry(soname(lib)))
        if len(libs) > 100:
            if kind == "lib" and rng.random() < 0.5:
                c.requires.append(entry(soname(rng.choice(libs[100:][-300:]))))
            elif kind == "app":
                for _ in range(rng.randint(1, 3)):
                    c.requires.append(entry(soname(rng.choice(libs[100:]))))
        earlier = components[-2000:] if components else []
        if earlier and rng.random() < 0.1:
            other = rng.choice(earlier)
            c.requires.append(entry(other.name, "GE", f"{other.major}.0"))
        if apps and rng.random() < 0.05:
            c.requires.append(entry(f"/usr/bin/{rng.choice(apps).name}"))
        if virtuals and rng.random() < 0.05:
            c.requires.append(entry(rng.choice(virtuals[:-1] or virtuals)))
        if len(apps) > 2 and rng.random() < 0.05:
            a, b = rng.sample(apps, 2)
            c.requires.append(entry(f"({a.name} or {b.name})"))
        if len(apps) > 2 and rng.random() < 0.05:
            a, b = rng.sample(apps, 2)
            c.requires.append(entry(f"({a.name} if {b.name})"))
        if apps and rng.random() < 0.05:
            c.recommends.append(entry(rng.choice(apps).name))
        components.append(c)
        (libs if kind == "lib" else apps if kind == "app" else []).append(c)
        packages += versions * (2 if c.multilib else 1)
    return components


def package_xml(rng, c, arch, version):
    checksum = "%064x" % rng.getrandbits(256)
    release = "1.el9"
    filename = f"{c.name}-{version}-{release}.{arch}.rpm"
    out = [
        '<package type="rpm">\n',
        f"  <name>{c.name}</name>\n",
        f"  <arch>{arch}</arch>\n",
        f'  <version epoch="0" ver="{version}" rel="{release}"/>\n',
        f'  <checksum type="sha256" pkgid="YES">{checksum}</checksum>\n',
        f"  <summary>{c.name} ({c.kind})</summary>\n",
        f"  <description>The {c.kind} {c.name}, version {version}.</description>\n",
        "  <packager>Build System</packager>\n",
        "  <url>https://example.invalid/</url>\n",
        '  <time file="1700000000" build="1700000000"/>\n',
        '  <size package="10000" installed="30000" archive="31000"/>\n',
        f'  <location href="Packages/{c.name[0]}/{filename}"/>\n',
        "  <format>\n",
        "    <rpm:license>MIT</rpm:license>\n",
        f"    <rpm:sourcerpm>{c.name}-{version}-{release}.src.rpm</rpm:sourcerpm>\n",
        '    <rpm:header-range start="4504" end="9000"/>\n',
        "    <rpm:provides>\n",
        f'      <rpm:entry name="{c.name}" flags="EQ" epoch="0" ver="{version}" rel="{release}"/>\n',
    ]
    if arch == "x86_64":
        out.append(f'      <rpm:entry name="{c.name}(x86-64)" flags="EQ" epoch="0" '
                   f'ver="{version}" rel="{release}"/>\n')
        out.extend(c.provides)
    elif arch == "i686":
        out.append(entry(soname(c, bits64=False)))
    else:
        out.extend(c.provides)
    out.append("    </rpm:provides>\n")
    requires = c.requires if arch != "i686" else []
    if requires:
        out.append("    <rpm:requires>\n")
        out.extend(requires)
        out.append("    </rpm:requires>\n")
    if c.recommends and arch != "i686":
        out.append("    <rpm:recommends>\n")
        out.extend(c.recommends)
        out.append("    </rpm:recommends>\n")
    if c.kind == "app" and arch != "i686":
        out.append(f"    <file>/usr/bin/{c.name}</file>\n")
    out.append("  </format>\n</package>\n")
    return "".join(out)


def write_repo(directory, packages_xml, count):
    repodata = os.path.join(directory, "repodata")
    os.makedirs(repodata, exist_ok=True)
    plain = ('<?xml version="1.0" encoding="UTF-8"?>\n'
             '<metadata xmlns="http://linux.duke.edu/metadata/common" '
             f'xmlns:rpm="http://linux.duke.edu/metadata/rpm" packages="{count}">\n'
             + "".join(packages_xml) + "</metadata>\n").encode()
    packed = gzip.compress(plain, compresslevel=6, mtime=0)
    digest = hashlib.sha256(packed).hexdigest()
    name = f"{digest}-primary.xml.gz"
    with open(os.path.join(repodata, name), "wb") as out:
        out.write(packed)
    now = int(time.time())
    with open(os.path.join(repodata, "repomd.xml"), "w", encoding="utf-8") as out:
        out.write(f"""<?xml version="1.0" encoding="UTF-8"?>
<repomd xmlns="http://linux.duke.edu/metadata/repo" xmlns:rpm="http://linux.duke.edu/metadata/rpm">
  <revision>{now}</revision>
  <data type="primary">
    <checksum type="sha256">{digest}</checksum>
    <open-checksum type="sha256">{hashlib.sha256(plain).hexdigest()}</open-checksum>
    <location href="repodata/{name}"/>
    <timestamp>{now}</timestamp>
    <size>{len(packed)}</size>
    <open-size>{len(plain)}</open-size>
  </data>
</repomd>
""")
    return len(plain)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=100_000)
    parser.add_argument("--names", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("outdir")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.time()
    components = plan(rng, args.packages)
    per_repo = {repo: [] for repo, _ in REPOS}
    for c in components:
        arch = "noarch" if c.kind == "data" else "x86_64"
        for v in range(c.versions):
            version = f"{c.major}.{v}"
            per_repo[c.repo].append(package_xml(rng, c, arch, version))
            if c.multilib:
                per_repo[c.repo].append(package_xml(rng, c, "i686", version))
    total = 0
    for repo, xml in per_repo.items():
        shutil.rmtree(os.path.join(args.outdir, repo), ignore_errors=True)
        size = write_repo(os.path.join(args.outdir, repo), xml, len(xml))
        total += len(xml)
        print(f"gen_closure: {repo}: {len(xml)} packages, primary {size / 1e6:.1f} MB",
              file=sys.stderr)
    candidates = [c.name for c in components if c.kind == "app" and c.repo != "base"]
    names = sorted(rng.sample(candidates, min(args.names, len(candidates))))
    with open(os.path.join(args.outdir, "names.txt"), "w", encoding="utf-8") as out:
        out.write("\n".join(names) + "\n")
    print(f"gen_closure: {total} packages, {len(names)} names, {time.time() - started:.1f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
