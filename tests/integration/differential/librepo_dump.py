#!/usr/bin/python3
"""What librepo (python3-librepo, the library dnf downloads with) makes of each document of a
corpus: the other half of rpmirror's differential test (test_differential_*.cpp).

    librepo_dump.py MANIFEST OUTPUT

MANIFEST is a JSON list of cases, {"name": ..., "kind": "repomd" | "metalink" | "mirrorlist",
"path": ...}: for "repomd", `path` is a repository directory holding repodata/repomd.xml and the
files its records name; for the others, the file itself. OUTPUT receives a JSON object, one entry
per case name:

  repomd:     {"parse": {"ok": bool, "error": str, "repomd": {...}},   # the parser alone
               "verify": {"ok": bool, "error": str}}                    # every record checked
  metalink:   {"ok": bool, "error": str, "metalink": {...}, "mirrors": [...],
               "verify": {"ok": bool, "error": str}}  # repomd.xml fetched through it, checked
  mirrorlist: {"ok": bool, "error": str, "mirrors": [...]}

"parse" reads repomd.xml as a local repository with no record wanted (yumdlist = []), so only
librepo's XML parser runs; "verify" wants every record and checks each file's checksum, as
librepo does for the metadata dnf downloads. Exits 2 when librepo cannot be imported: the test
must fail then, not skip.
"""

import json
import os
import sys

try:
    import librepo
except ImportError as error:  # the package is python3-librepo (scripts/deps)
    sys.stderr.write("librepo_dump.py: cannot import librepo (python3-librepo): %s\n" % error)
    sys.exit(2)


def failure(error):
    # LibrepoException carries (code, message, general message); OSError its own args.
    if isinstance(error, librepo.LibrepoException) and len(error.args) >= 2:
        return str(error.args[1])
    return "%s: %s" % (type(error).__name__, error)


def local_handle(repository):
    handle = librepo.Handle()
    handle.repotype = librepo.YUMREPO
    handle.urls = [repository]
    handle.local = True
    handle.destdir = repository
    return handle


def repomd_case(repository):
    parse = {"ok": False, "error": "", "repomd": None}
    handle = local_handle(repository)
    handle.yumdlist = []
    handle.checksum = False
    result = librepo.Result()
    try:
        handle.perform(result)
        parse["ok"] = True
        parse["repomd"] = result.yum_repomd
    except (librepo.LibrepoException, OSError) as error:
        parse["error"] = failure(error)

    verify = {"ok": False, "error": ""}
    handle = local_handle(repository)
    handle.checksum = True
    try:
        handle.perform(librepo.Result())
        verify["ok"] = True
    except (librepo.LibrepoException, OSError) as error:
        verify["error"] = failure(error)
    return {"parse": parse, "verify": verify}


def list_handle(kind, path, destdir):
    handle = librepo.Handle()
    handle.repotype = librepo.YUMREPO
    handle.destdir = destdir
    if kind == "metalink":
        handle.metalinkurl = "file://" + path
    else:
        handle.mirrorlisturl = "file://" + path
    return handle


def metalink_verify(path):
    # repomd.xml fetched from the metalink's mirrors (the case lists its repository first, as a
    # file:// URL) and checked against the metalink's hashes, as dnf fetches it.
    destdir = path + ".download"
    os.makedirs(destdir, exist_ok=True)
    handle = list_handle("metalink", path, destdir)
    handle.yumdlist = []
    handle.checksum = True
    try:
        handle.perform(librepo.Result())
        return {"ok": True, "error": ""}
    except (librepo.LibrepoException, OSError) as error:
        return {"ok": False, "error": failure(error)}


def mirrors_case(kind, path):
    os.makedirs(path + ".librepo", exist_ok=True)
    handle = list_handle(kind, path, path + ".librepo")
    handle.fetchmirrors = True
    outcome = {"ok": False, "error": "", "metalink": None, "mirrors": []}
    try:
        handle.perform(librepo.Result())
        outcome["ok"] = True
        try:
            outcome["mirrors"] = handle.mirrors or []
        except SystemError:
            # python3-librepo cannot hand back a mirror that is not UTF-8 (its getinfo fails);
            # librepo itself read the list: the verdict stands, the mirrors are unknown (null).
            outcome["mirrors"] = None
        if kind == "metalink":
            outcome["metalink"] = handle.metalink
    except (librepo.LibrepoException, OSError) as error:
        outcome["error"] = failure(error)
    if kind == "metalink":
        outcome["verify"] = metalink_verify(path)
    return outcome


def run_case(case):
    if case["kind"] == "repomd":
        return repomd_case(case["path"])
    return mirrors_case(case["kind"], case["path"])


def isolated(case):
    # Each case in a child process: librepo crashes on some hostile documents (the random
    # mutations find them), and a crash is librepo's verdict on that document, not the end of the
    # run. A crashed case reads as refused, with "crashed": the signal.
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        try:
            body = json.dumps(run_case(case), ensure_ascii=True)
        except BaseException as error:  # reported to the parent, never raised past the fork
            body = json.dumps({"error": "librepo_dump.py: %s: %s" % (type(error).__name__, error)})
        with os.fdopen(writer, "w", encoding="utf-8", errors="surrogateescape") as stream:
            stream.write(body)
        os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "r", encoding="utf-8", errors="surrogateescape") as stream:
        body = stream.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        signal = os.WTERMSIG(status)
        refused = {"ok": False, "error": "librepo crashed (signal %d)" % signal}
        if case["kind"] == "repomd":
            return {"parse": dict(refused, repomd=None), "verify": refused, "crashed": signal}
        return dict(refused, metalink=None, mirrors=[], verify=refused, crashed=signal)
    result = json.loads(body)
    if "error" in result and len(result) == 1:
        raise RuntimeError("%s: %s" % (case["name"], result["error"]))
    return result


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: librepo_dump.py MANIFEST OUTPUT\n")
        return 2
    with open(sys.argv[1], encoding="utf-8") as stream:
        cases = json.load(stream)
    results = {}
    for case in cases:
        results[case["name"]] = isolated(case)
    # surrogateescape: librepo hands back bytes that are not UTF-8 as such; keep them visible.
    with open(sys.argv[2], "w", encoding="utf-8", errors="surrogateescape") as stream:
        json.dump(results, stream, ensure_ascii=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
