#!/usr/bin/env bash
# install_test.sh BUILD_DIR LIBDIR: `cmake --install`s BUILD_DIR into a temporary prefix, checks
# what it installed, then builds tests/install/consumer against that prefix four ways (CMake
# package: rpmirror::rpmirror and rpmirror::rpmirror_static; pkg-config: shared and --static)
# and runs each on a file, comparing with sha256sum. Environment: CXX (default c++) and
# RPMIRROR_CONSUMER_FLAGS (the build's sanitizer flags, for compiling and linking the consumer).
set -euo pipefail
build_dir=$1
libdir=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cxx=${CXX:-c++}
read -r -a consumer_flags <<<"${RPMIRROR_CONSUMER_FLAGS:-}"

fail() {
  echo "install_test: FAILED: $*" >&2
  exit 1
}

echo "== cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$tmp/install.log" || {
  cat "$tmp/install.log"
  fail "cmake --install"
}

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")
[[ -n $version ]] || fail "no CMAKE_PROJECT_VERSION in $build_dir/CMakeCache.txt"
for file in bin/rpmirror "$libdir/librpmirror.so.$version" "$libdir/librpmirror.a" \
  include/rpmirror/checksum/checksum.hpp include/rpmirror/util/error.hpp \
  "$libdir/cmake/rpmirror/rpmirrorConfig.cmake" "$libdir/cmake/rpmirror/rpmirrorConfigVersion.cmake" \
  "$libdir/cmake/rpmirror/rpmirrorTargets.cmake" "$libdir/pkgconfig/rpmirror.pc" \
  "$libdir/rpmirror/librpmirror-librepo-accel.so"; do
  [[ -f $prefix/$file ]] || fail "$prefix/$file was not installed"
done
[[ $(readlink "$prefix/$libdir/librpmirror.so.0") == "librpmirror.so.$version" ]] ||
  fail "$libdir/librpmirror.so.0 is not a link to librpmirror.so.$version"
[[ $(readlink "$prefix/$libdir/librpmirror.so") == librpmirror.so.0 ]] ||
  fail "$libdir/librpmirror.so is not a link to librpmirror.so.0"
soname=$(readelf -d "$prefix/$libdir/librpmirror.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == librpmirror.so.0 ]] || fail "SONAME is '$soname', not librpmirror.so.0"
"$prefix/bin/rpmirror" --version | grep -qx "rpmirror $version" || fail "installed rpmirror --version"

# The file to hash: one with a known digest.
head -c 100000 /dev/urandom >"$tmp/data"
expected=$(sha256sum "$tmp/data")

# check_consumer NAME BINARY NEEDS_SHARED: runs BINARY on the data file and on a missing file.
check_consumer() {
  local name=$1 binary=$2 needs_shared=$3
  local output
  output=$("$binary" "$tmp/data") || fail "$name: consumer exited $?"
  [[ $output == "$expected" ]] || fail "$name: printed '$output', sha256sum printed '$expected'"
  if "$binary" "$tmp/missing" 2>"$tmp/error"; then
    fail "$name: a missing file did not fail"
  fi
  grep -q "$tmp/missing" "$tmp/error" || fail "$name: the error does not name the file: $(cat "$tmp/error")"
  if readelf -d "$binary" | grep -q 'NEEDED.*\[librpmirror\.so\.0\]'; then
    [[ $needs_shared == yes ]] || fail "$name: linked against librpmirror.so.0, not librpmirror.a"
  else
    [[ $needs_shared == no ]] || fail "$name: not linked against librpmirror.so.0"
  fi
  echo "== $name: ok"
}

for target in rpmirror::rpmirror rpmirror::rpmirror_static; do
  dir=$tmp/cmake-${target#rpmirror::}
  echo "== find_package(rpmirror), $target"
  cmake -S "$here/consumer" -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="${consumer_flags[*]}" \
    -DCMAKE_EXE_LINKER_FLAGS="${consumer_flags[*]}" -DRPMIRROR_TARGET="$target" >"$dir.log" 2>&1 || {
    cat "$dir.log"
    fail "configure the consumer with $target"
  }
  cmake --build "$dir" >>"$dir.log" 2>&1 || {
    cat "$dir.log"
    fail "build the consumer with $target"
  }
  shared=yes
  [[ $target == *_static ]] && shared=no
  check_consumer "find_package $target" "$dir/consumer" "$shared"
done

# pkg-config: the .pc names the configured prefix; point it at the temporary one.
pc=(pkg-config --define-variable=prefix="$prefix")
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
[[ $("${pc[@]}" --modversion rpmirror) == "$version" ]] || fail "pkg-config --modversion rpmirror"
echo "== pkg-config, shared"
read -r -a flags <<<"$("${pc[@]}" --cflags --libs rpmirror)"
"$cxx" -std=c++20 "${consumer_flags[@]}" -o "$tmp/pc-shared" "$here/consumer/main.cpp" "${flags[@]}" ||
  fail "c++ consumer \$(pkg-config --cflags --libs rpmirror)"
LD_LIBRARY_PATH=$prefix/$libdir check_consumer "pkg-config shared" "$tmp/pc-shared" yes
echo "== pkg-config --static (librpmirror.a, shared system libraries)"
# librpmirror.a with the system's shared libraries: rpmirror's own Libs + Libs.private (depth 2:
# rpmirror alone, not its requirements' private libraries, which only static builds of them need)
# and the Libs of its Requires.private. -l:librpmirror.a takes the archive although
# librpmirror.so is beside it; --whole-archive links every object of it, so a library missing from
# the .pc fails here even if this program does not need it.
read -r -a flags <<<"$("${pc[@]}" --static --maximum-traverse-depth=2 --cflags --libs rpmirror)"
static_flags=()
for flag in "${flags[@]}"; do
  if [[ $flag == -lrpmirror ]]; then
    static_flags+=(-Wl,--whole-archive -l:librpmirror.a -Wl,--no-whole-archive)
  else
    static_flags+=("$flag")
  fi
done
read -r -a requires <<<"$("${pc[@]}" --print-requires-private rpmirror | tr '\n' ' ')"
read -r -a more <<<"$("${pc[@]}" --libs "${requires[@]}")"
"$cxx" -std=c++20 "${consumer_flags[@]}" -o "$tmp/pc-static" "$here/consumer/main.cpp" \
  "${static_flags[@]}" "${more[@]}" ||
  fail "c++ consumer with librpmirror.a, \$(pkg-config --static --libs rpmirror) and its Requires.private"
check_consumer "pkg-config --static" "$tmp/pc-static" no
echo "== install_test: ok"
