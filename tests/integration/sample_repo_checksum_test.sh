#!/usr/bin/env bash
# Integration test for `rpmirror checksum` against a real RPM repository.
#
#   tests/integration/sample_repo_checksum_test.sh RPMIRROR_BINARY SOURCE_DIR
#
# Builds the sample repository (scripts/make-sample-repo) in a temporary directory and
# uses the sha256 list taken from its repodata/primary.xml as the reference:
#   1. `checksum -t sha256 FILES` prints exactly what sha256sum prints;
#   2. `checksum -c LIST` (and `-c -` on stdin) reports every package OK, exit 0;
#   3. after flipping one byte of one package: exactly that package FAILED, exit 1
#      (also with --no-cache, so a digest cache cannot hide the corruption);
#   4. after deleting another package: it is reported "FAILED open or read", exit 1;
#   5. a list holding only a malformed line: non-zero exit.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 RPMIRROR_BINARY SOURCE_DIR" >&2
  exit 2
fi
rpmirror=$(realpath -e -- "$1")
src=$(realpath -e -- "$2")
[[ -x $rpmirror ]] || { echo "FAIL: $rpmirror is not executable" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmirror-sample-test.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

# run CMD...: runs CMD with stdout/stderr captured in $tmp/out and $tmp/err, status in $rc.
rc=0
run() {
  set +e
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
}

fail() {
  echo "FAIL: $*" >&2
  echo "--- stdout of the last command ---" >&2
  cat "$tmp/out" >&2 || true
  echo "--- stderr of the last command ---" >&2
  cat "$tmp/err" >&2 || true
  exit 1
}

check() { echo "check: $*"; }
ok() { echo "  ok: $*"; }

# count_lines REGEX: how many lines of the last stdout match the extended REGEX.
count_lines() { grep -cE -- "$1" "$tmp/out" || true; }

expect_rc() {
  [[ $rc -eq $1 ]] || fail "expected exit status $1, got $rc"
}

# Flips every bit of the byte in the middle of FILE, in place (size and name unchanged).
flip_byte() {
  local file=$1 size offset byte
  size=$(stat -c %s -- "$file")
  offset=$((size / 2))
  byte=$(od -An -tu1 -j "$offset" -N1 -- "$file" | tr -d ' ')
  # shellcheck disable=SC2059 # the format string is the octal escape being built
  printf "\\$(printf '%03o' $((byte ^ 0xff)))" \
    | dd of="$file" bs=1 seek="$offset" count=1 conv=notrunc status=none
}

# --- build the sample repository ------------------------------------------------------
echo "building the sample repository in $tmp/repo"
if ! "$src/scripts/make-sample-repo" --checksum-list "$tmp/list.sha256" "$tmp/repo" \
  >"$tmp/make.log" 2>&1; then
  cat "$tmp/make.log" >&2
  echo "FAIL: scripts/make-sample-repo failed" >&2
  exit 1
fi

shopt -s nullglob
specs=("$src"/tests/data/specs/*.spec)
shopt -u nullglob
n=${#specs[@]}
((n >= 3)) || { echo "FAIL: expected at least 3 specs, found $n" >&2; exit 1; }
list_lines=$(wc -l <"$tmp/list.sha256")
((list_lines == n)) || { echo "FAIL: checksum list has $list_lines lines, expected $n" >&2; exit 1; }

# Relative paths in the list resolve against the repository root.
cd "$tmp/repo"
mapfile -t packages < <(awk '{ print $2 }' "$tmp/list.sha256")
corrupted=${packages[0]}
deleted=${packages[1]}

# --- 1. digest output is byte-identical to sha256sum ----------------------------------
mapfile -t all_files < <(find Packages repodata -type f | sort)
# Include an empty file: zero-length input is an easy edge case to get wrong (e.g. mmap).
: >empty-file
all_files+=(empty-file)
check "checksum -t sha256 on ${#all_files[@]} files matches sha256sum byte for byte"
sha256sum -- "${all_files[@]}" >"$tmp/expected"
run "$rpmirror" checksum -t sha256 "${all_files[@]}"
expect_rc 0
cmp -s "$tmp/expected" "$tmp/out" \
  || fail "output differs from sha256sum: $(diff "$tmp/expected" "$tmp/out" | head -5)"
rm -f empty-file
ok "identical output"

# --- 2. every package verifies --------------------------------------------------------
check "checksum -c on the intact repository: $n packages OK, exit 0"
run "$rpmirror" checksum -c "$tmp/list.sha256"
expect_rc 0
[[ $(count_lines ': OK$') -eq $n ]] || fail "expected $n ': OK' lines"
[[ $(wc -l <"$tmp/out") -eq $n ]] || fail "expected exactly $n output lines"
for package in "${packages[@]}"; do
  grep -qxF -- "$package: OK" "$tmp/out" || fail "no '$package: OK' line"
done
ok "$n OK lines"

check "checksum -c - reads the list from stdin"
run "$rpmirror" checksum -c - <"$tmp/list.sha256"
expect_rc 0
[[ $(count_lines ': OK$') -eq $n ]] || fail "expected $n ': OK' lines"
ok "$n OK lines"

# --- 3. one corrupted package ---------------------------------------------------------
flip_byte "$corrupted"
for cache_flag in "" --no-cache; do
  check "checksum ${cache_flag:+$cache_flag }-c after flipping a byte of $corrupted: exactly it FAILED, exit 1"
  run "$rpmirror" checksum ${cache_flag:+"$cache_flag"} -c "$tmp/list.sha256"
  expect_rc 1
  [[ $(count_lines ': FAILED$') -eq 1 ]] || fail "expected exactly one ': FAILED' line"
  grep -qxF -- "$corrupted: FAILED" "$tmp/out" || fail "no '$corrupted: FAILED' line"
  [[ $(count_lines ': OK$') -eq $((n - 1)) ]] || fail "expected $((n - 1)) ': OK' lines"
  grep -q 'WARNING: ' "$tmp/err" || fail "no WARNING: summary on stderr"
  ok "1 FAILED, $((n - 1)) OK, exit 1"
done

# --- 4. a missing package -------------------------------------------------------------
rm -f -- "$deleted"
check "checksum -c after deleting $deleted: 'FAILED open or read', exit 1"
run "$rpmirror" checksum -c "$tmp/list.sha256"
expect_rc 1
grep -qxF -- "$deleted: FAILED open or read" "$tmp/out" || fail "no '$deleted: FAILED open or read' line"
[[ $(count_lines ': FAILED open or read$') -eq 1 ]] || fail "expected exactly one 'FAILED open or read' line"
grep -qxF -- "$corrupted: FAILED" "$tmp/out" || fail "no '$corrupted: FAILED' line"
[[ $(count_lines ': OK$') -eq $((n - 2)) ]] || fail "expected $((n - 2)) ': OK' lines"
grep -qF -- "$deleted" "$tmp/err" || fail "stderr does not name the missing file"
ok "missing file reported, corrupted file still FAILED, $((n - 2)) OK"

# --- 5. a malformed list --------------------------------------------------------------
check "checksum -c on a list with only a malformed line: non-zero exit"
echo "this is not a checksum line" >"$tmp/malformed.sha256"
run "$rpmirror" checksum -c "$tmp/malformed.sha256"
((rc != 0)) || fail "expected a non-zero exit status, got 0"
((rc < 128)) || fail "killed by a signal (exit status $rc)"
[[ -s $tmp/err ]] || fail "no error message on stderr"
ok "exit status $rc"

echo "PASS: sample repository checksum test ($n packages)"
