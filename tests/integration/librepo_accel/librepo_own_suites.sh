#!/usr/bin/env bash
# librepo's own tests, run against the librepo installed here, without and with the accelerator
# (librpmirror-librepo-accel.so) preloaded in every mode:
#   - its C checksum suite (tests/test_checksum.c, the `check` framework), built here against the
#     system's librepo.so.0 with the headers of the same source;
#   - its Python suite (tests/python, Flask mock server) with Debian's python3-librepo.
# The sources are Debian's source package of the very librepo version installed, fetched at test
# time through a private apt configuration (deb-src entries made from the system's own apt
# sources); nothing of librepo is kept in this project. A missing tool or an unreachable archive
# fails the test.
#
# Every serving mode must pass both suites exactly as librepo alone does, with calls served by
# the accelerator (its log). Mode `deferred` trades librepo's promise that a cache entry exists
# when the call returns for no flush per file: its C suite must fail, and only in
# test_cached_checksum_matches (the proof that the suite sees what `full` keeps).
#
# Then the same suites against librepo built here from that source with other compilers and
# flags (other build-ids: served after the accelerator's run-time self-check), and against one
# patched to compare digests differently (refused by the self-check).
#
# usage: librepo_own_suites.sh ACCEL_LIBRARY WORK_DIR
set -euo pipefail
trap 'echo "FAIL: $0: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR

[[ -f $1 ]] || { echo "FAIL: no accelerator library at $1" >&2; exit 1; }
accel=$(realpath "$1")  # the suites run in other directories
work=$(realpath -m "$2")
python=/usr/bin/python3  # Debian's, which has python3-librepo (not a pyenv shim)
for tool in apt-get dpkg-source dpkg-query gcc pkg-config "$python"; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/deps)" >&2; exit 1; }
done
pkg-config --exists check glib-2.0 || { echo "FAIL: check or glib-2.0 headers missing (scripts/deps)" >&2; exit 1; }
"$python" -c 'import librepo, flask, xattr, gpg' || { echo "FAIL: python3-librepo, python3-flask, python3-xattr or python3-gpg missing (scripts/deps)" >&2; exit 1; }

version=$(dpkg-query -W -f '${Version}' librepo0)
upstream=${version%-*}
upstream=${upstream#*:}
mkdir -p "$work"
source_dir=$work/librepo-$version

fetch_source() {
  local apt=$work/apt
  rm -rf "$apt" && mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/download"
  # The system's own archives, as deb-src.
  local found=0
  for file in /etc/apt/sources.list.d/*.sources; do
    [[ -f $file ]] || continue
    sed -e 's/^Types:.*/Types: deb-src/' "$file" >"$apt/sources/$(basename "$file")"
    found=1
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $file ]] || continue
    grep -E '^deb ' "$file" | sed -e 's/^deb /deb-src /' >"$apt/sources/$(basename "$file" .list).list" || true
    found=1
  done
  ((found)) || { echo "FAIL: no apt sources in /etc/apt to take deb-src entries from" >&2; exit 1; }
  cat >"$apt/apt.conf" <<EOF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$apt/sources";
Dir::State::Lists "$apt/lists";
Dir::Cache "$apt/cache";
Debug::NoLocking "true";
APT::Sandbox::User "root";
EOF
  export APT_CONFIG=$apt/apt.conf
  apt-get update -qq || { echo "FAIL: apt-get update of the deb-src entries failed" >&2; exit 1; }
  (cd "$apt/download" && apt-get source -qq --download-only "librepo=$version") ||
    { echo "FAIL: apt-get source librepo=$version failed" >&2; exit 1; }
  rm -rf "$source_dir.tmp"
  dpkg-source -x "$apt/download"/librepo_*.dsc "$source_dir.tmp" >/dev/null
  mv "$source_dir.tmp" "$source_dir"
  unset APT_CONFIG
}
[[ -d $source_dir ]] || fetch_source
echo "librepo $version sources: $source_dir"

# --- the C checksum suite ----------------------------------------------------------------------
build=$work/c-build
rm -rf "$build" && mkdir -p "$build/librepo"
IFS=. read -r major minor patch <<<"$upstream"
sed -e "s/@LIBREPO_MAJOR@/$major/g; s/@LIBREPO_MINOR@/$minor/g; s/@LIBREPO_PATCH@/$patch/g" \
  "$source_dir/librepo/version.h.in" >"$build/librepo/version.h"
# Only the checksum suite: a runner of our own around librepo's suite function.
cat >"$build/main.c" <<'EOF'
#define _GNU_SOURCE
#include <check.h>
#include <glib.h>
#include <stdlib.h>

#include "fixtures.h"
#include "test_checksum.h"
#include "testsys.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        return 2;
    }
    test_globals.testdata_dir = g_strconcat(argv[1], "/", NULL);
    test_globals.tmpdir = g_strdup(UNITTEST_DIR);
    if (mkdtemp(test_globals.tmpdir) == NULL) {
        return 2;
    }
    SRunner *runner = srunner_create(checksum_suite());
    srunner_run_all(runner, CK_NORMAL);
    const int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
EOF
# awk reads to the end: an early exit would kill ldconfig with SIGPIPE, and pipefail would end
# this script without a word (it did, now and then).
librepo_so=$(/sbin/ldconfig -p | awk '/librepo\.so\.0 / && !found {print $NF; found = 1}')
[[ -n $librepo_so ]] || { echo "FAIL: librepo.so.0 not found by ldconfig" >&2; exit 1; }
# shellcheck disable=SC2046
suite=$build/checksum_suite  # run_c's; the lower-case variant below has its own
gcc -std=gnu11 -w -o "$suite" -I"$build" -I"$source_dir" -I"$source_dir/tests" \
  $(pkg-config --cflags glib-2.0 check) \
  "$source_dir/tests/test_checksum.c" "$source_dir/tests/fixtures.c" "$source_dir/tests/testsys.c" \
  "$build/main.c" "$librepo_so" $(pkg-config --libs glib-2.0 check)

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

run_c() {  # MODE (empty: librepo alone) -> output in $build/c-MODE.out, returns the status
  local mode=$1 out=$build/c-${1:-librepo}.out
  rm -f "$build/c-$mode.log"
  if [[ -z $mode ]]; then
    "$suite" "$source_dir/tests/test_data" >"$out" 2>&1
  else
    LD_PRELOAD=$accel RPMIRROR_LIBREPO_ACCEL=$mode RPMIRROR_LIBREPO_ACCEL_LOG=$build/c-$mode.log \
      "$suite" "$source_dir/tests/test_data" >"$out" 2>&1
  fi
}
run_python() {  # MODE (empty: librepo alone)
  local mode=$1 out=$build/python-${1:-librepo}.out
  rm -f "$build/python-$mode.log"
  if [[ -z $mode ]]; then
    (cd "$source_dir/tests/python" && "$python" -m unittest discover -s . >"$out" 2>&1)
  else
    (cd "$source_dir/tests/python" &&
      LD_PRELOAD=$accel RPMIRROR_LIBREPO_ACCEL=$mode RPMIRROR_LIBREPO_ACCEL_LOG=$build/python-$mode.log \
        "$python" -m unittest discover -s . >"$out" 2>&1)
  fi
}
ran_tests() { grep -Eo '^Ran [0-9]+ tests' "$1" | grep -Eo '[0-9]+'; }

run_c "" || { cat "$build/c-librepo.out" >&2; fail "librepo's C checksum suite fails without the accelerator"; }
run_python "" || { tail -30 "$build/python-librepo.out" >&2; fail "librepo's Python suite fails without the accelerator"; }
python_total=$(ran_tests "$build/python-librepo.out" || echo 0)
echo "librepo alone: C checksum suite $(tail -1 "$build/c-librepo.out"); Python suite: $python_total tests"

for mode in plain buffer mmap nofsync full; do
  run_c "$mode" || { cat "$build/c-$mode.out" >&2; fail "mode $mode: librepo's C checksum suite fails"; }
  run_python "$mode" || { tail -30 "$build/python-$mode.out" >&2; fail "mode $mode: librepo's Python suite fails"; }
  ran=$(ran_tests "$build/python-$mode.out" || echo 0)
  [[ $ran == "$python_total" ]] || fail "mode $mode: the Python suite ran $ran tests, not $python_total"
  c_served=$(grep -c '^served ' "$build/c-$mode.log" 2>/dev/null || true)
  python_served=$(grep -c '^served ' "$build/python-$mode.log" 2>/dev/null || true)
  ((c_served > 0)) || fail "mode $mode: no call of the C suite was served by the accelerator"
  ((python_served > 0)) || fail "mode $mode: no call of the Python suite was served by the accelerator"
  echo "mode $mode: both suites pass; calls served by the accelerator: C $c_served, Python $python_served"
done

# deferred: the one promise it does not keep, seen by librepo's own test.
if run_c deferred; then
  fail "mode deferred: the C checksum suite passed; it should see the entry missing at return"
elif ! grep -q 'test_cached_checksum_matches.*attr_ret != -1' "$build/c-deferred.out" ||
  ! grep -q 'Failures: 1,' "$build/c-deferred.out"; then
  cat "$build/c-deferred.out" >&2
  fail "mode deferred: the C checksum suite failed otherwise than in test_cached_checksum_matches"
else
  echo "mode deferred: the C checksum suite fails in test_cached_checksum_matches only, as documented"
fi
run_python deferred || { tail -30 "$build/python-deferred.out" >&2; fail "mode deferred: librepo's Python suite fails"; }

# --- other librepo builds ----------------------------------------------------------------------
# A build whose build-id is not listed (identity.cpp) is served only after the accelerator's
# run-time self-check (src/librepo_accel/preload/self_check.hpp) found its checksum functions the
# same as 1.14.5's. Builds of the same source with other compilers and flags (so other build-ids)
# must pass both suites under the accelerator with every call after the check served; a build
# whose checksum semantics were changed on purpose must be refused, every call left to it.
build_librepo() {  # NAME CC CFLAGS [SED-SCRIPT [FILE, default librepo/checksum.c]] -> the library's dir
  local name=$1 cc=$2 cflags=$3 patch=${4:-} file=${5:-librepo/checksum.c} src=$work/src-$1 out=$work/build-$1
  rm -rf "$src" "$out" && cp -a "$source_dir" "$src"
  if [[ -n $patch ]]; then
    sed -i -e "$patch" "$src/$file"
    ! cmp -s "$source_dir/$file" "$src/$file" ||
      { echo "FAIL: the patch '$patch' changed nothing in $file" >&2; exit 1; }
  fi
  { cmake -S "$src" -B "$out" -G Ninja -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" \
      -DENABLE_DOCS=OFF -DENABLE_TESTS=OFF -DENABLE_PYTHON=OFF -DWITH_ZCHUNK=OFF &&
    cmake --build "$out" --target librepo; } >"$out.log" 2>&1 ||
    { tail -30 "$out.log" >&2; echo "FAIL: building librepo ($name) failed" >&2; exit 1; }
  echo "$out/librepo"
}
build_id() { readelf -n "$1" | awk '/Build ID:/ {print $3}'; }
debian_id=$(build_id "$librepo_so")

for variant in "gcc-O1 gcc -O1" "clang-O2 clang -O2"; do
  read -r name cc cflags <<<"$variant"
  lib=$(build_librepo "$name" "$cc" "$cflags")
  id=$(build_id "$lib/librepo.so.0")
  [[ -n $id && $id != "$debian_id" ]] || fail "$name: build-id '$id' is not another build's"
  for mode in plain buffer mmap nofsync full; do
    LD_LIBRARY_PATH=$lib run_c "$mode" ||
      { cat "$build/c-$mode.out" >&2; fail "$name, mode $mode: librepo's C checksum suite fails"; }
    grep -q "^self-check same calls=[0-9]* librepo=$lib/librepo.so.0 (build-id $id)" "$build/c-$mode.log" ||
      fail "$name, mode $mode: no passed self-check of $lib/librepo.so.0 in the log: $(grep self-check "$build/c-$mode.log")"
    served=$(grep -c '^served ' "$build/c-$mode.log" || true)
    ((served > 0)) || fail "$name, mode $mode: no call of the C suite was served"
    ! grep -q '^fallthrough .* librepo-differs' "$build/c-$mode.log" || fail "$name, mode $mode: calls were refused"
  done
  LD_LIBRARY_PATH=$lib run_python full || { tail -30 "$build/python-full.out" >&2; fail "$name: librepo's Python suite fails under the accelerator"; }
  ran=$(ran_tests "$build/python-full.out" || echo 0)
  [[ $ran == "$python_total" ]] || fail "$name: the Python suite ran $ran tests, not $python_total"
  python_served=$(grep -c '^served ' "$build/python-full.log" || true)
  ((python_served > 0)) || fail "$name: no call of the Python suite was served"
  echo "librepo built with $cc $cflags (build-id $id): self-checked; both suites pass; C suite served in every mode, Python suite $python_served calls"
done

# librepo 1.19.0 changed XATTR_CHKSUM_PREFIX to "user.librepo.checksum." and nothing else of its
# checksum code: this source with that change is served with the lower-case names, and librepo's
# C suite, built with that header, passes.
lib=$(build_librepo lowercase gcc -O2 's/"user\.Librepo\.checksum\."/"user.librepo.checksum."/' \
  librepo/xattr_internal.h)
suite=$build/checksum_suite-lowercase
# shellcheck disable=SC2046
gcc -std=gnu11 -w -o "$suite" -I"$build" -I"$work/src-lowercase" -I"$work/src-lowercase/tests" \
  $(pkg-config --cflags glib-2.0 check) "$work/src-lowercase/tests/test_checksum.c" \
  "$work/src-lowercase/tests/fixtures.c" "$work/src-lowercase/tests/testsys.c" "$build/main.c" \
  "$lib/librepo.so.0" $(pkg-config --libs glib-2.0 check)
LD_LIBRARY_PATH=$lib run_c full || { cat "$build/c-full.out" >&2; fail "lower-case prefix: librepo's C checksum suite fails under the accelerator"; }
grep -q '^self-check same calls=21 .* xattrs=user\.librepo\.checksum\.\*' "$build/c-full.log" ||
  fail "lower-case prefix: not served with the lower-case names: $(grep self-check "$build/c-full.log")"
grep -q '^served ' "$build/c-full.log" || fail "lower-case prefix: no call was served"
suite=$build/checksum_suite
echo "librepo with 1.19's lower-case xattr names: self-checked, served with them; its C suite passes"

# Patched: an upper-case digest matches (strcasecmp where 1.14.5 compares exactly).
lib=$(build_librepo patched gcc -O2 \
  's/\*matches = (strcmp(expected, checksum)) ? FALSE : TRUE;/*matches = (g_ascii_strcasecmp(expected, checksum)) ? FALSE : TRUE;/')
LD_LIBRARY_PATH=$lib run_c full || { cat "$build/c-full.out" >&2; fail "patched librepo: its C checksum suite fails with the accelerator loaded"; }
grep -q '^self-check different calls=[0-9]* .*lr_checksum_fd_compare sha256, upper-case expected digest' "$build/c-full.log" ||
  fail "patched librepo: the self-check did not find the upper-case match: $(grep self-check "$build/c-full.log")"
grep -q "does not behave as librepo 1.14.5 (or 1.19) in its checksum functions" "$build/c-full.out" ||
  fail "patched librepo: no warning on stderr"
! grep -q '^served ' "$build/c-full.log" || fail "patched librepo: calls were served"
grep -q '^fallthrough .* librepo-differs' "$build/c-full.log" || fail "patched librepo: no call was left to it"
echo "patched librepo (upper-case digests match): refused by the self-check; every call left to librepo"

((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
echo "PASS"
