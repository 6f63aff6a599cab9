#!/usr/bin/env bash
# Drives completion/rpmirror.bash in a real bash with bash-completion loaded, as readline would:
# COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT set, _rpmirror called, COMPREPLY asserted.
# Also: every option each command's --help lists is offered (so the completion cannot go stale).
# Usage: bash_completion_test.sh RPMIRROR_BINARY COMPLETION_FILE
set -uo pipefail
binary=$(realpath -- "$1") completion=$(realpath -- "$2")
source "$(dirname "$0")/help_options.sh"

bash_completion=/usr/share/bash-completion/bash_completion
if [[ ! -r $bash_completion ]]; then
  echo "FAIL: $bash_completion missing: install the Debian package bash-completion (scripts/deps)" >&2
  exit 1
fi
# bash-completion's own script expects an interactive-like shell; it only defines functions.
source "$bash_completion"
source "$completion"
if [[ $(complete -p rpmirror 2>/dev/null) != *"-F _rpmirror rpmirror"* ]]; then
  echo "FAIL: $completion does not register _rpmirror for rpmirror" >&2
  exit 1
fi

temp=$(mktemp -d)
trap 'rm -rf "$temp"' EXIT
cd "$temp" || exit 1

# Installed as share/bash-completion/completions/rpmirror, bash-completion loads it on demand.
mkdir -p xdg/bash-completion/completions
cp "$completion" xdg/bash-completion/completions/rpmirror
loaded=$(XDG_DATA_DIRS="$temp/xdg" bash -c 'source "$1"; __load_completion rpmirror && complete -p rpmirror' \
  _ "$bash_completion" 2>&1)
if [[ $loaded != *"-F _rpmirror rpmirror"* ]]; then
  echo "FAIL: bash-completion does not load share/bash-completion/completions/rpmirror on demand: $loaded" >&2
  exit 1
fi

# complete LINE: COMPREPLY for the cursor at the end of LINE (a trailing space starts a new word).
complete_line() {
  local line=$1
  read -r -a COMP_WORDS <<<"$line"
  [[ $line == *' ' ]] && COMP_WORDS+=('')
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE=$line
  COMP_POINT=${#line}
  COMPREPLY=()
  _rpmirror rpmirror "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

failures=0
# expect LINE WORD...: each WORD is offered for LINE. expect_not LINE WORD...: none is.
expect() {
  local line=$1 word
  shift
  complete_line "$line"
  for word in "$@"; do
    if ! grep -qxF -- "$word" <<<"$(printf '%s\n' "${COMPREPLY[@]}")"; then
      echo "FAIL: '$line<TAB>' does not offer '$word' (offered: ${COMPREPLY[*]:-nothing})" >&2
      failures=$((failures + 1))
    fi
  done
}
expect_not() {
  local line=$1 word
  shift
  complete_line "$line"
  for word in "$@"; do
    if grep -qxF -- "$word" <<<"$(printf '%s\n' "${COMPREPLY[@]}")"; then
      echo "FAIL: '$line<TAB>' offers '$word' (offered: ${COMPREPLY[*]})" >&2
      failures=$((failures + 1))
    fi
  done
}
expect_exactly() {
  local line=$1 expected actual
  shift
  complete_line "$line"
  expected=$(printf '%s\n' "$@" | sort)
  actual=$(printf '%s\n' "${COMPREPLY[@]}" | sort)
  if [[ $expected != "$actual" ]]; then
    echo "FAIL: '$line<TAB>' offers '${COMPREPLY[*]}', expected '$*'" >&2
    failures=$((failures + 1))
  fi
}

# Subcommands, and every subcommand `rpmirror --help` lists.
expect_exactly 'rpmirror sy' sync
expect_exactly 'rpmirror ver' verify
mapfile -t subcommands < <(help_subcommands "$binary")
if ((${#subcommands[@]} < 6)); then
  echo "FAIL: found only ${#subcommands[@]} subcommands in 'rpmirror --help'" >&2
  exit 1
fi
expect 'rpmirror ' "${subcommands[@]}"
expect 'rpmirror --' --help --version

# Options.
expect_exactly 'rpmirror sync --download-m' --download-metadata
expect 'rpmirror reposync --new' --newest-only
expect 'rpmirror checksum -' -t --type -c --check
expect_not 'rpmirror checksum --' --download-path
expect 'rpmirror serve --' --listen --config-file --job --grace
expect 'rpmirror snapshot ' create list publish remove
expect 'rpmirror ' export import
expect 'rpmirror export --' --base --chunk-size --sign-key
expect 'rpmirror import --' --keyring
expect 'rpmirror snapshot publish --' --as --repo
expect_not 'rpmirror snapshot list --' --as

# Fixed values.
expect_exactly 'rpmirror sync --gpgcheck-keys ' rpmdb repo
expect_exactly 'rpmirror sync --gpgcheck-keys=r' rpmdb repo
expect_exactly 'rpmirror exec --mode no' nofsync
expect 'rpmirror checksum -t ' md5 sha1 sha224 sha256 sha384 sha512
expect 'rpmirror sync -a x86_64,no' x86_64,noarch

# Repository ids from the reposdir named on the line (two .repo files, [main] never offered).
mkdir -p repos other-repos
printf '[main]\ngpgcheck=1\n\n[baseos]\nbaseurl=http://x/\n[baseos-source]\nbaseurl=http://x/src\n' >repos/a.repo
printf '[updates]\nmirrorlist=http://x/list\n' >repos/b.repo
printf '[elsewhere]\nbaseurl=http://y/\n' >other-repos/c.repo
expect_exactly 'rpmirror sync --reposdir repos --repo ' baseos baseos-source updates
expect_exactly 'rpmirror sync --reposdir=repos --repo upd' updates
expect_exactly 'rpmirror sync --reposdir repos --enablerepo baseos-' baseos-source
expect_exactly 'rpmirror sync --reposdir repos --disablerepo=u' updates
expect_exactly 'rpmirror sync --reposdir repos --repo baseos,u' baseos,updates
expect 'rpmirror sync --reposdir repos --reposdir other-repos --repo ' baseos updates elsewhere
expect 'rpmirror sync --reposdir repos --disableexcludes ' all main baseos
expect 'rpmirror sync --reposdir repos --repofrompath local,/srv/x --repo ' local baseos
# ... and from -c: the reposdir of its [main].
printf '[main]\nreposdir=%s\n' "$temp/other-repos" >dnf.conf
expect_exactly 'rpmirror sync -c dnf.conf --repo ' elsewhere
expect_exactly 'rpmirror verify --config=dnf.conf --repo ' elsewhere
# verify --repo also offers the repositories of the mirror under -p.
mkdir -p mirror/fedora/repodata && : >mirror/fedora/repodata/repomd.xml
expect 'rpmirror verify -p mirror --reposdir repos --repo ' fedora baseos

# Job names from the configuration file on the line and its conf.d/.
mkdir -p etc/conf.d
printf '[main]\ndestination = /srv/mirror\n\n[alma9-baseos]\nbaseurl = http://x/\n\n[alma9-appstream]\nrepo = appstream\n' >etc/rpmirror.conf
printf '[fedora-updates]\nmetalink = http://x/\n' >etc/conf.d/10-fedora.conf
expect_exactly 'rpmirror sync --config-file etc/rpmirror.conf --job ' alma9-baseos alma9-appstream fedora-updates
expect_exactly 'rpmirror sync --config-file=etc/rpmirror.conf --job alma9-b' alma9-baseos
expect_exactly 'rpmirror sync --config-file etc/rpmirror.conf --job=fed' fedora-updates

# Snapshot names of the repository on the line.
mkdir -p mirror/snapshots/fedora/20261130T214000Z mirror/snapshots/fedora/before-upgrade
expect_exactly 'rpmirror snapshot remove -p mirror --repo fedora ' 20261130T214000Z before-upgrade

# Every option each command's --help lists is offered after '-'.
check_all_options() {
  local line=$1 option count=0
  shift
  while IFS= read -r option; do
    count=$((count + 1))
    expect "$line -" "$option"
  done < <(help_options "$binary" "$@")
  if ((count < 2)); then
    echo "FAIL: found only $count option(s) in 'rpmirror $* --help'" >&2
    failures=$((failures + 1))
  fi
  echo "'$line': $count options of --help offered"
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
