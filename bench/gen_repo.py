#!/usr/bin/env python3
"""Builds a deterministic RPM repository for the download benchmark (bench/download).

    bench/gen_repo.py --profile {quick,full} [--out DIR]
    bench/gen_repo.py --count N --total-bytes B [--seed S] --out DIR

Profiles: quick = 200 packages, ~210 MB; full = 2,000 packages, ~3.2 GB. Package sizes are drawn
from a log-normal distribution (median 250 KB, sigma 1.9, like a distribution's package set),
clipped to [4 KiB, 120 MiB] and scaled to the total. Every package is a real noarch RPM (built by
rpmbuild, uncompressed payload of incompressible bytes) so that createrepo_c and `dnf reposync`
accept the repository.

Output (default ~/.cache/rpmirror-bench/download/<profile>):
  repo/Packages/<letter>/<name>-1.0-1.noarch.rpm, repo/repodata/   the repository
  manifest.tsv    one line per package: href, size, sha256 (what the downloader is asked for)
  .stamp          the parameters; a directory with the same stamp is reused as is
"""
import argparse
import hashlib
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

PROFILES = {"quick": (200, 210 * 10**6), "full": (2000, 3200 * 10**6)}
BATCH = 400  # subpackages per rpmbuild run
EPOCH = "1700000000"


def plan(count, total, seed):
    rng = random.Random(f"rpmirror-download-bench/{seed}")
    raw = [rng.lognormvariate(math.log(250_000), 1.9) for _ in range(count)]
    low, high = 4096, 120 * 2**20
    sizes = raw
    for _ in range(50):  # scale to the total, re-clipping until it converges
        factor = total / sum(sizes)
        sizes = [min(high, max(low, s * factor)) for s in sizes]
        if abs(sum(sizes) - total) < 4096:
            break
    letters = "abcdefghijklmnopqrstuvwxyz"
    packages = []
    for index, size in enumerate(sizes):
        stem = "".join(rng.choice(letters) for _ in range(rng.randint(3, 8)))
        packages.append({"name": f"{stem}-bench{index:05d}", "size": int(size), "index": index})
    return packages


def write_payload(path, size, key):
    rng = random.Random(key)
    with open(path, "wb") as out:
        left = size
        while left:
            chunk = min(left, 1 << 20)
            out.write(rng.randbytes(chunk))
            left -= chunk


def build_batch(work, batch, number):
    payload = os.path.join(work, f"payload{number}")
    for package in batch:
        target = os.path.join(payload, "usr/share/rpmirror-bench", package["name"] + ".bin")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        write_payload(target, package["size"], f"payload/{package['index']}")
    lines = [
        "%define _binary_payload w0.ufdio",
        "%define debug_package %{nil}",
        "%define __os_install_post %{nil}",
        "%define _build_id_links none",
        f"Name: rpmirror-bench-batch{number}",
        "Version: 1.0",
        "Release: 1",
        "Summary: download benchmark batch",
        "License: MIT",
        "BuildArch: noarch",
        "AutoReqProv: no",
        "%description",
        "Benchmark batch.",
    ]
    for package in batch:
        lines += [f"%package -n {package['name']}", f"Summary: benchmark package {package['name']}",
                  f"%description -n {package['name']}", "Benchmark payload.",
                  f"%files -n {package['name']}",
                  f"/usr/share/rpmirror-bench/{package['name']}.bin"]
    lines += ["%install", "mkdir -p %{buildroot}", f"cp -al {payload}/. %{{buildroot}}/"]
    spec = os.path.join(work, f"batch{number}.spec")
    with open(spec, "w") as f:
        f.write("\n".join(lines) + "\n")
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH)
    subprocess.run(
        ["rpmbuild", "-bb", "--quiet", "--define", f"_topdir {work}/top{number}",
         "--define", f"_rpmdir {work}/rpms", "--define", "_buildhost rpmirror-bench",
         "--define", "use_source_date_epoch_as_buildtime 1",
         "--define", "clamp_mtime_to_source_date_epoch 1", spec],
        check=True, env=env, stdout=subprocess.DEVNULL)
    shutil.rmtree(payload)
    shutil.rmtree(f"{work}/top{number}", ignore_errors=True)


def generate(out, count, total, seed):
    stamp = f"v1 count={count} total={total} seed={seed}"
    stamp_path = os.path.join(out, ".stamp")
    if os.path.exists(stamp_path) and open(stamp_path).read().strip() == stamp:
        print(f"gen_repo: {out} is up to date", file=sys.stderr)
        return
    packages = plan(count, total, seed)
    print(f"gen_repo: building {count} packages, {sum(p['size'] for p in packages) / 1e6:.0f} MB "
          f"of payload in {out}", file=sys.stderr, flush=True)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with tempfile.TemporaryDirectory(dir=out, prefix=".work") as work:
        for number, start in enumerate(range(0, count, BATCH)):
            build_batch(work, packages[start:start + BATCH], number)
        repo = os.path.join(out, "repo")
        manifest = []
        for package in packages:
            name = package["name"]
            rpm = f"{name}-1.0-1.noarch.rpm"
            href = f"Packages/{name[0]}/{rpm}"
            os.makedirs(os.path.join(repo, os.path.dirname(href)), exist_ok=True)
            os.rename(os.path.join(work, "rpms", "noarch", rpm), os.path.join(repo, href))
            digest = hashlib.sha256()
            with open(os.path.join(repo, href), "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
            manifest.append(f"{href}\t{os.path.getsize(os.path.join(repo, href))}\t"
                            f"{digest.hexdigest()}")
    subprocess.run(["createrepo_c", "--quiet", "--revision", EPOCH,
                    "--set-timestamp-to-revision", repo], check=True)
    with open(os.path.join(out, "manifest.tsv"), "w") as f:
        f.write("\n".join(manifest) + "\n")
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=sorted(PROFILES))
    parser.add_argument("--count", type=int)
    parser.add_argument("--total-bytes", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.profile:
        count, total = PROFILES[args.profile]
    elif args.count and args.total_bytes and args.out:
        count, total = args.count, args.total_bytes
    else:
        parser.error("give --profile, or --count, --total-bytes and --out")
    base = os.environ.get("BENCH_DATA", os.path.expanduser("~/.cache/rpmirror-bench"))
    out = args.out or os.path.join(base, "download", args.profile)
    generate(out, count, total, args.seed)
    print(out)


if __name__ == "__main__":
    main()
