#!/usr/bin/env bash
# spec_test.sh SOURCE_DIR: rpmirror.spec parses (`rpmspec -P`), names the project's version and
# everything it installs, and builds a source RPM (`rpmbuild -bs`) from a tarball of the tree (the
# files git knows or would add, as `git archive` of a commit of it would hold; without git, the
# tree but its build directories).
set -euo pipefail
source_dir=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "spec_test: FAILED: $*" >&2
  exit 1
}

spec=$source_dir/rpmirror.spec
version=$(sed -n 's/^project(rpmirror VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
[[ -n $version ]] || fail "no project(rpmirror VERSION ...) in $source_dir/CMakeLists.txt"

echo "== rpmspec -P $spec"
rpmspec -P "$spec" >"$tmp/parsed" 2>"$tmp/parse.err" || {
  cat "$tmp/parse.err"
  fail "rpmspec -P"
}
[[ ! -s $tmp/parse.err ]] || fail "rpmspec -P warned: $(cat "$tmp/parse.err")"
grep -qx "Version: *$version" "$tmp/parsed" || fail "the spec's Version is not $version (CMakeLists.txt)"
# Every file the design installs, in its package.
expect_in_files() {
  local package=$1
  shift
  local section
  section=$(awk -v want="%files${package:+ $package}" '
    /^%files/ { on = ($0 == want) ; next }
    /^%(changelog|package|description|pre|post|preun|postun|prep|build|install|check)/ { on = 0 }
    on' "$tmp/parsed")
  for path in "$@"; do
    grep -qF -- "$path" <<<"$section" || fail "%files${package:+ $package} lacks $path"
  done
}
expect_in_files "" /usr/bin/rpmirror /rpmirror/librpmirror-librepo-accel.so \
  /usr/share/man/man1/rpmirror.1 /usr/share/man/man1/rpmirror-sync.1 \
  /usr/share/man/man1/rpmirror-verify.1 /usr/share/man/man1/rpmirror-checksum.1 \
  /usr/share/man/man5/rpmirror.conf.5 /usr/share/bash-completion/completions/rpmirror \
  /usr/share/zsh/site-functions/_rpmirror /usr/lib/systemd/system/rpmirror-sync.service \
  /usr/lib/systemd/system/rpmirror-sync.timer /usr/lib/systemd/system/rpmirror-serve.service \
  /usr/lib/systemd/system/rpmirror-serve.socket \
  /usr/share/man/man1/rpmirror-serve.1 /usr/share/man/man1/rpmirror-export.1 \
  /usr/share/man/man1/rpmirror-import.1 /usr/lib/sysusers.d/rpmirror.conf \
  "%config(noreplace) /etc/rpmirror/rpmirror.conf"
expect_in_files libs /librpmirror.so.0 "/librpmirror.so.$version"
expect_in_files devel /usr/include/rpmirror/ /librpmirror.so /librpmirror.a /cmake/rpmirror/ \
  /pkgconfig/rpmirror.pc

echo "== tarball of the tree, rpmbuild -bs"
mkdir -p "$tmp/SOURCES"
if git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) >"$tmp/files"
else
  # A tree without git (a Debian package build's copy): everything but build directories.
  (cd "$source_dir" && find . -mindepth 1 -maxdepth 1 ! -name 'build*' ! -name 'obj-*' -printf '%P\0') \
    >"$tmp/files"
fi
tar -C "$source_dir" --null -T "$tmp/files" --transform "s,^,rpmirror-$version/," \
  -czf "$tmp/SOURCES/rpmirror-$version.tar.gz"
rpmbuild -bs --define "_topdir $tmp" --define "_sourcedir $tmp/SOURCES" "$spec" >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log"
  fail "rpmbuild -bs"
}
srpm=$(find "$tmp/SRPMS" -name "rpmirror-$version-1*.src.rpm")
[[ -f $srpm ]] || fail "rpmbuild -bs wrote no rpmirror-$version-1*.src.rpm: $(cat "$tmp/build.log")"
rpm -qpl "$srpm" 2>/dev/null | sort >"$tmp/contents"
diff <(printf '%s\n' "rpmirror-$version.tar.gz" rpmirror.spec) "$tmp/contents" ||
  fail "the source RPM holds other files than the tarball and the spec"
rpm -qpR "$srpm" 2>/dev/null | awk '{ print $1 }' >"$tmp/requires"
for br in cmake gcc-c++ libcurl-devel openssl-devel rpm-devel libmodulemd-devel expected-devel; do
  grep -qxF "$br" "$tmp/requires" || fail "the source RPM does not BuildRequire $br"
done
# The tarball is the tree: the spec in it is this one, the CMakeLists.txt is there.
tar -xzf "$tmp/SOURCES/rpmirror-$version.tar.gz" -C "$tmp" "rpmirror-$version/rpmirror.spec" \
  "rpmirror-$version/CMakeLists.txt"
cmp -s "$spec" "$tmp/rpmirror-$version/rpmirror.spec" || fail "the tarball's rpmirror.spec differs"
echo "== spec_test: ok ($(basename "$srpm"))"
