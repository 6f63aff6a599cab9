#!/usr/bin/env bash
# The library's areas (src/<area>/ with include/rpmirror/<area>/) depend on each other one way:
# scripts/check-layers passes on the tree, and fails, naming the edge and the file, on a copy of
# the tree with one back edge planted (the lowest area including the highest).
set -euo pipefail
root=$1
checker="$root/scripts/check-layers"

order=$("$checker" "$root" --order)
echo "$order"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/src" "$root/include" "$work/"
lowest=$(awk 'NR == 1 {print $2}' <<<"$order")
highest=$(awk 'END {print $NF}' <<<"$order")
planted="$work/src/$lowest/planted.cpp"
echo "#include \"$highest/anything.hpp\"" >"$planted"
status=0
"$checker" "$work" 2>"$work/err" || status=$?
if ((status != 1)); then
  echo "FAIL: check-layers exited $status on a tree where $lowest includes $highest" >&2
  exit 1
fi
grep -q "$lowest -> $highest: src/$lowest/planted.cpp" "$work/err" || {
  echo "FAIL: check-layers did not name the planted edge:" >&2
  cat "$work/err" >&2
  exit 1
}

# A public header outside every area is refused too.
rm "$planted"
echo '#include "rpmirror/flat.hpp"' >"$planted"
if "$checker" "$work" 2>"$work/err"; then
  echo "FAIL: check-layers accepted a public header outside every area" >&2
  exit 1
fi
grep -q "rpmirror/flat.hpp" "$work/err"
echo "layers: acyclic; a planted back edge ($lowest -> $highest) and a flat public header are refused"
