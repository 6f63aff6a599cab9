#!/usr/bin/env bash
# completion/_rpmirror in a real zsh: `zsh -n` passes, the file loads under compinit and is
# registered for rpmirror, and, driving an interactive zsh in a pseudo-terminal
# (tests/docs/zsh_capture.zsh), TAB offers the subcommands, options, fixed values, repository
# ids of a temporary reposdir, job names of a temporary configuration file, and every option
# each command's --help lists.
# Usage: zsh_completion_test.sh RPMIRROR_BINARY COMPLETION_FILE
set -uo pipefail
binary=$(realpath -- "$1") completion=$(realpath -- "$2")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/help_options.sh"

if ! command -v zsh >/dev/null; then
  echo "FAIL: zsh missing: install the Debian package zsh (scripts/deps)" >&2
  exit 1
fi
temp=$(mktemp -d)
trap 'rm -rf "$temp"' EXIT
mkdir -p "$temp/fpath" && cp "$completion" "$temp/fpath/_rpmirror"
cd "$temp" || exit 1

failures=0
if ! zsh -n "$completion"; then
  echo "FAIL: zsh -n $completion" >&2
  failures=$((failures + 1))
fi
loaded=$(zsh -f -c 'fpath=(fpath $fpath); autoload -Uz compinit && compinit -u -D &&
  autoload +X _rpmirror && print -r -- "${_comps[rpmirror]}"' 2>&1)
if [[ $loaded != _rpmirror ]]; then
  echo "FAIL: under compinit, rpmirror is not completed by _rpmirror: $loaded" >&2
  failures=$((failures + 1))
fi

# expect LINE WORD...: each WORD is among the matches for LINE; expect_exactly: the matches are
# exactly the WORDs.
matches() { zsh -f "$here/zsh_capture.zsh" "$temp/fpath" "$1" "$temp/zcompdump"; }
expect() {
  local line=$1 offered word
  shift
  offered=$(matches "$line")
  for word in "$@"; do
    if ! grep -qxF -- "$word" <<<"$offered"; then
      echo "FAIL: zsh: '$line<TAB>' does not offer '$word' (offered: $(tr '\n' ' ' <<<"$offered"))" >&2
      failures=$((failures + 1))
    fi
  done
}
expect_exactly() {
  local line=$1 offered expected
  shift
  offered=$(matches "$line" | sort -u)
  expected=$(printf '%s\n' "$@" | sort -u)
  if [[ $offered != "$expected" ]]; then
    echo "FAIL: zsh: '$line<TAB>' offers '$(tr '\n' ' ' <<<"$offered")', expected '$*'" >&2
    failures=$((failures + 1))
  fi
}

mapfile -t subcommands < <(help_subcommands "$binary")
if ((${#subcommands[@]} < 6)); then
  echo "FAIL: found only ${#subcommands[@]} subcommands in 'rpmirror --help'" >&2
  exit 1
fi
expect 'rpmirror ' "${subcommands[@]}"
expect_exactly 'rpmirror ver' verify
expect 'rpmirror snapshot ' create list publish remove
expect_exactly 'rpmirror sync --gpgcheck-keys ' rpmdb repo
expect_exactly 'rpmirror exec --mode ' off plain buffer mmap nofsync full deferred

mkdir -p repos etc/conf.d
printf '[main]\ngpgcheck=1\n\n[baseos]\nbaseurl=http://x/\n[updates]\nbaseurl=http://x/u\n' >repos/a.repo
expect_exactly 'rpmirror sync --reposdir repos --repo ' baseos updates
mkdir -p other-repos && printf '[elsewhere]\nbaseurl=http://y/\n' >other-repos/c.repo
printf '[main]\nreposdir=%s\n' "$temp/other-repos" >dnf.conf
expect_exactly 'rpmirror verify -c dnf.conf --repo ' elsewhere
mkdir -p mirror/snapshots/fedora/20261130T214000Z mirror/snapshots/fedora/before-upgrade
expect_exactly 'rpmirror snapshot remove -p mirror --repo fedora ' 20261130T214000Z before-upgrade
printf '[main]\ndestination = /srv/mirror\n\n[alma9-baseos]\nbaseurl = http://x/\n' >etc/rpmirror.conf
printf '[fedora-updates]\nmetalink = http://x/\n' >etc/conf.d/10-fedora.conf
expect_exactly 'rpmirror sync --config-file etc/rpmirror.conf --job ' alma9-baseos fedora-updates

# Every option each command's --help lists.
check_all_options() {
  local line=$1 options
  shift
  mapfile -t options < <(help_options "$binary" "$@")
  if ((${#options[@]} < 2)); then
    echo "FAIL: found only ${#options[@]} option(s) in 'rpmirror $* --help'" >&2
    failures=$((failures + 1))
  fi
  expect "$line -" "${options[@]}"
  echo "zsh: '$line': ${#options[@]} options of --help checked"
}
for subcommand in "${subcommands[@]}"; do
  [[ $subcommand == snapshot ]] && continue
  check_all_options "rpmirror $subcommand" "$subcommand"
done
for action in create list publish remove; do
  check_all_options "rpmirror snapshot $action" snapshot "$action"
done

((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
echo PASS
