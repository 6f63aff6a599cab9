#!/usr/bin/env bash
# scripts/dnf-ci-sources, the writer of the dnf-ci fixture sources (tests/data/dnf-ci/README.md).
#
#   tests/integration/dnf_ci_sources_test.sh SOURCE_DIR
#
#   1. tests/data/dnf-ci/repos.txt gives the eleven repositories, each with its targets file, and
#      the specs rpmspec reads as the described packages (a family expands, epochs and noarch
#      hold, a subpackage without the source's name);
#   2. a description with a malformed line: exit 1, the message names file, line number and
#      line, and OUTDIR does not appear (nor OUTDIR.part);
#   3. an existing OUTDIR: exit 1, left as it was.
set -euo pipefail

(($# == 1)) || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
src=$(realpath -e -- "$1")
tool=$src/scripts/dnf-ci-sources
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rpmirror-dnf-ci-sources.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
  [[ $2 == "$3" ]] || fail "$1: expected '$2', got '$3'"
}

# 1. The real description.
"$tool" "$src/tests/data/dnf-ci/repos.txt" "$tmp/sources"
expect_eq "repositories" \
  "dnf-ci-fedora dnf-ci-fedora-modular dnf-ci-multicontext-hybrid-multiversion-modular dnf-ci-rich dnf-ci-thirdparty-updates reposync reposync-gpg reposync-newest-modular setopt setopt.ext simple-base" \
  "$(cd "$tmp/sources" && ls | tr '\n' ' ' | sed 's/ $//')"
for repo in "$tmp"/sources/*/; do
  [[ -s $repo/arches ]] || fail "$repo has no arches file"
  while read -r spec _; do
    [[ -f $repo/$spec ]] || fail "$repo/arches names $spec, which was not written"
  done <"$repo/arches"
done
expect_eq "lz4's targets" "lz4-1.7.5-2.fc26.spec i686 x86_64" \
  "$(grep '^lz4-' "$tmp/sources/dnf-ci-fedora/arches")"
query() {
  rpmspec -q --target=x86_64 --qf '%{name}-%{epochnum}:%{version}-%{release}.%{arch}\n' "$@" 2>&1
}
expect_eq "nodejs 11 (an epoch, a noarch subpackage)" \
  "nodejs-1:11.0.0-1.module_2311+8d497411.x86_64 nodejs-devel-1:11.0.0-1.module_2311+8d497411.x86_64 nodejs-docs-1:11.0.0-1.module_2311+8d497411.noarch npm-1:11.0.0-1.module_2311+8d497411.x86_64" \
  "$(query "$tmp/sources/dnf-ci-fedora-modular/nodejs-11.0.0-1.module_2311+8d497411.spec" | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "glibc's langpack family" 196 \
  "$(query "$tmp/sources/dnf-ci-fedora/glibc-2.28-9.fc29.spec" | grep -c '^glibc-langpack-')"
expect_eq "a family member's dependency" "(glibc and langpacks-de)" \
  "$(rpmspec -q --qf '[%{SUPPLEMENTS}\n]' --target=x86_64 "$tmp/sources/dnf-ci-fedora/glibc-2.28-9.fc29.spec" 2>/dev/null | grep -F 'langpacks-de)')"
expect_eq "CQRlib-extension's dependencies" "CQRlib SuperRipper" \
  "$(rpmspec -q --requires "$tmp/sources/dnf-ci-thirdparty-updates/CQRlib-extension-1.6-2.spec" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
grep -q '<packagereq type="conditional" requires="filesystem-content">wget</packagereq>' \
  "$tmp/sources/dnf-ci-thirdparty-updates/comps.xml" || fail "comps.xml lacks the conditional wget"
[[ ! -e $tmp/sources/simple-base/comps.xml && ! -e $tmp/sources/simple-base/modules.yaml ]] ||
  fail "simple-base has groups or modules it does not describe"
# The module documents read back (libmodulemd is what dnf reads them with; python3 here).
python3 - "$tmp/sources/dnf-ci-multicontext-hybrid-multiversion-modular/modules.yaml" <<'PY' ||
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
streams = sorted((d['data']['name'], d['data']['stream'], d['data']['version'], d['data']['context'])
                 for d in docs if d['document'] == 'modulemd')
assert streams[0] == ('nodejs', '5', 30, '6c81f848'), streams
assert all(isinstance(s[1], str) for s in streams), streams
assert ('postgresql', '9.8', 20180816142114, '9c81f899') in streams, streams
PY
  fail "the multicontext modules.yaml does not hold the described streams"

# 2. Malformed lines.
check_malformed() {
  local label=$1 text=$2 line=$3
  printf '%s\n' "$text" >"$tmp/bad.txt"
  rm -rf -- "$tmp/out" "$tmp/out.part"
  local rc=0
  "$tool" "$tmp/bad.txt" "$tmp/out" 2>"$tmp/err" || rc=$?
  expect_eq "$label: exit code" 1 "$rc"
  grep -qF "$tmp/bad.txt:$line:" "$tmp/err" || fail "$label: no '$tmp/bad.txt:$line:' in: $(cat "$tmp/err")"
  [[ ! -e $tmp/out && ! -e $tmp/out.part ]] || fail "$label: output left behind"
}
check_malformed "a package before a repo" "source a 1-1" 1
check_malformed "an unknown keyword" $'repo r\n  source a 1-1\n    pakage a' 3
check_malformed "a version without release" $'repo r\n  source a 1.0' 2
check_malformed "a dependency before a package" $'repo r\n  source a 1-1\n    requires: b' 3
check_malformed "n: on a plain package" $'repo r\n  source a 1-1\n    package a\n      n: x y' 4
check_malformed "a module without context" $'repo r\n  module m:s:1 x86_64' 2
check_malformed "a module requirement without stream" $'repo r\n  module m:s:1:c x86_64\n    requires: platform' 3

# 3. OUTDIR exists.
mkdir "$tmp/existing"
touch "$tmp/existing/keep"
rc=0
"$tool" "$src/tests/data/dnf-ci/repos.txt" "$tmp/existing" 2>"$tmp/err" || rc=$?
expect_eq "existing OUTDIR: exit code" 1 "$rc"
grep -qF "$tmp/existing exists" "$tmp/err" || fail "existing OUTDIR: message: $(cat "$tmp/err")"
expect_eq "existing OUTDIR: left as it was" keep "$(ls "$tmp/existing")"

if ((failures > 0)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "dnf-ci-sources: all checks passed"
