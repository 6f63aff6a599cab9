#!/usr/bin/env python3
"""The user documentation is true to the tree and to the program:

- every relative link of README.md and doc/*.md names a file or directory inside the project
  (never outside it), and an anchor (#...) names a heading of the file it points at;
- every document the scripts (scripts/*) and the documents name in their text ("see
  doc/s3.md") exists;
- every `rpmirror ...` command line of README.md's code blocks parses: each subcommand exists
  and each option is one that `rpmirror [SUBCOMMAND...] --help` lists (tests/docs/help_options.sh
  reads the lists, as the man page and completion tests do).

Then it checks itself: a planted README with a link out of the project, a missing file, a missing
anchor, a script naming a missing document, an unknown subcommand and an unknown option must give six
failures.

Usage: links_and_commands_test.py RPMIRROR_BINARY SOURCE_DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def fenced_blocks(text):
    """Yields (first line number, lines) of each ``` fenced block of `text`."""
    lines = text.split("\n")
    inside, start, block = False, 0, []
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            if inside:
                yield start, block
                block = []
            else:
                start = number + 1
            inside = not inside
        elif inside:
            block.append(line)


def prose(text):
    """`text` without its fenced blocks and inline code spans (links there are examples)."""
    kept, inside = [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            inside = not inside
            kept.append("")
        else:
            kept.append("" if inside else line)
    return re.sub(r"`[^`\n]*`", "", "\n".join(kept))


def slug(heading):
    """The anchor GitHub gives a heading."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](url): text
    heading = heading.strip().lower()
    heading = "".join(c for c in heading if c.isalnum() or c in "-_ ")
    return heading.replace(" ", "-")


def anchors(path, cache={}):
    """The anchors of the Markdown file `path`: its headings' slugs (repeats get -1, -2, ...)."""
    if path not in cache:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found, seen = set(), {}
        inside = False
        for line in text.split("\n"):
            if line.lstrip().startswith("```"):
                inside = not inside
                continue
            match = None if inside else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if match:
                base = slug(match.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
        found.update(re.findall(r'<a\s+(?:name|id)="([^"]+)"', text))
        cache[path] = found
    return cache[path]


LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", re.MULTILINE)


def check_links(root, files):
    """Returns the failures of the links of `files` (paths relative to `root`)."""
    failures = []
    real_root = os.path.realpath(root)
    for name in files:
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            text = prose(f.read())
        targets = [(m.start(), m.group(1)) for m in LINK.finditer(text)]
        targets += [(m.start(), m.group(1)) for m in REFERENCE.finditer(text)]
        for offset, target in sorted(targets):
            line = text.count("\n", 0, offset) + 1
            where = f"{name}:{line}: link '{target}'"
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, man: ...
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (
                path if not file_part else os.path.join(os.path.dirname(path), file_part)
            )
            real = os.path.realpath(resolved)
            if real != real_root and not real.startswith(real_root + os.sep):
                failures.append(f"{where}: points outside the project ({real})")
                continue
            if not os.path.exists(real):
                failures.append(f"{where}: no such file or directory ({real})")
                continue
            if anchor and real.endswith(".md") and anchor not in anchors(real):
                failures.append(
                    f"{where}: {os.path.relpath(real, real_root)} has no heading "
                    f"with the anchor #{anchor}"
                )
    return failures


def check_mentions(root, files):
    """Returns the failures of the doc/....md paths `files` mention that do not exist."""
    failures = []
    for name in files:
        with open(os.path.join(root, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for match in re.finditer(r"(?<![\w/.])doc/[\w./-]*\w\.md\b", text):
            if text[max(match.start() - 2, 0) : match.start()] == "](":
                continue  # a link: check_links' (relative to the file, not the root)
            if not os.path.isfile(os.path.join(root, match.group(0))):
                line = text.count("\n", 0, match.start()) + 1
                failures.append(f"{name}:{line}: names {match.group(0)}, which does not exist")
    return failures


def scripts(root):
    directory = os.path.join(root, "scripts")
    if not os.path.isdir(directory):
        return []
    return sorted(
        os.path.join("scripts", n)
        for n in os.listdir(directory)
        if os.path.isfile(os.path.join(directory, n))
    )


def help_lists(binary, function, path, cache={}):
    """What help_options.sh's `function` prints for `rpmirror PATH... --help`, as a set."""
    key = (function, tuple(path))
    if key not in cache:
        script = f'source "$1"; shift; {function} "$@"'
        result = subprocess.run(
            ["bash", "-c", script, "bash", os.path.join(HERE, "help_options.sh"), binary]
            + list(path),
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"FAIL: rpmirror {' '.join(path)} --help: {result.stderr.strip()}")
        cache[key] = set(result.stdout.split())
    return cache[key]


# Words that may come before the command in a shell line: `sudo rpmirror`, `xargs -0 rpmirror`.
PREFIXES = {"sudo", "xargs", "time", "nice", "exec", "env", "command"}


def rpmirror_arguments(tokens):
    """The argument lists of every rpmirror command of one shell line's tokens."""
    commands, segment = [], []
    for token in tokens + [";"]:
        if token in {";", "|", "&&", "||", "&", "(", ")"}:
            while segment and (
                segment[0] in PREFIXES
                or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", segment[0])
                or (segment[0].startswith("-") and len(segment) > 1)
            ):
                segment.pop(0)
            if segment and os.path.basename(segment[0]) == "rpmirror":
                commands.append(segment[1:])
            segment = []
        else:
            segment.append(token)
    return commands


def check_command(binary, arguments):
    """Returns what is wrong with `rpmirror ARGUMENTS` (None iff it parses)."""
    path = []
    for token in arguments:
        if token == "--":
            return None  # the rest is the command's (exec)
        if token.startswith("-") and len(token) > 1:
            known = set()
            for depth in range(len(path) + 1):
                known |= help_lists(binary, "help_options", path[:depth])
            name = token.split("=", 1)[0]
            if not token.startswith("--"):
                name = token[:2]  # -j4, -qn: the first letter is the option
            if name not in known:
                return f"'rpmirror {' '.join(path)} --help' lists no option {name}"
            continue
        subcommands = help_lists(binary, "help_subcommands", path)
        if subcommands:
            if token not in subcommands:
                return (
                    f"'rpmirror {' '.join(path)}' has no subcommand '{token}' "
                    f"(it has: {', '.join(sorted(subcommands))})"
                )
            path.append(token)
    if not path:
        return "no subcommand"
    if help_lists(binary, "help_subcommands", path):
        return f"'rpmirror {' '.join(path)}' needs a subcommand"
    return None


def check_commands(binary, root, name):
    """Returns the failures of the rpmirror command lines in the code blocks of `name`."""
    failures, count = [], 0
    with open(os.path.join(root, name), encoding="utf-8") as f:
        text = f.read()
    for start, block in fenced_blocks(text):
        number, pending, pending_start = start - 1, "", start
        for line in block:
            number += 1
            if not pending:
                pending_start = number
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            logical, pending = pending + line, ""
            if "rpmirror" not in logical:
                continue
            try:
                lexer = shlex.shlex(logical, posix=True, punctuation_chars=";&|()")
                lexer.whitespace_split = True
                lexer.commenters = "#"
                tokens = list(lexer)
            except ValueError:
                continue  # not shell (an INI or JSON line)
            for arguments in rpmirror_arguments(tokens):
                count += 1
                problem = check_command(binary, arguments)
                if problem:
                    failures.append(
                        f"{name}:{pending_start}: rpmirror {' '.join(arguments)}: {problem}"
                    )
    return failures, count


def documents(root):
    names = ["README.md"]
    names += sorted(
        os.path.join("doc", n) for n in os.listdir(os.path.join(root, "doc")) if n.endswith(".md")
    )
    return names


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    binary, root = sys.argv[1], os.path.abspath(sys.argv[2])
    names = documents(root)
    failures = check_links(root, names)
    failures += check_mentions(root, names + scripts(root))
    command_failures, count = check_commands(binary, root, "README.md")
    failures += command_failures
    if count < 20:
        failures.append(f"README.md: only {count} rpmirror command lines found: the reader is broken")
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    print(
        f"{len(names)} documents' links, the documents they and {len(scripts(root))} scripts "
        f"name, and {count} command lines of README.md checked"
    )

    # The checks can fail: a planted project with one mistake of each kind.
    with tempfile.TemporaryDirectory() as planted:
        os.makedirs(os.path.join(planted, "doc"))
        with open(os.path.join(planted, "doc", "a.md"), "w") as f:
            f.write("# A title\n")
        os.makedirs(os.path.join(planted, "scripts"))
        with open(os.path.join(planted, "scripts", "s"), "w") as f:
            f.write("# see doc/a.md and doc/pending/s3.md\n")
        with open(os.path.join(planted, "README.md"), "w") as f:
            f.write(
                "[out](../outside.md) [gone](doc/missing.md) [anchor](doc/a.md#no-such)\n"
                "[fine](doc/a.md#a-title) [web](https://example.org/x)\n"
                "```sh\nrpmirror synk -p x\nrpmirror sync --no-such-option\n"
                "rpmirror sync -p /srv/m --repo x  # fine\n```\n"
            )
        planted_failures = check_links(planted, documents(planted))
        planted_failures += check_mentions(planted, documents(planted) + scripts(planted))
        planted_failures += check_commands(binary, planted, "README.md")[0]
        if len(planted_failures) != 6:
            failures.append(
                "the planted mistakes gave "
                + str(len(planted_failures))
                + " failures, not 6: "
                + "; ".join(planted_failures)
            )
            print(f"FAIL: {failures[-1]}", file=sys.stderr)
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
