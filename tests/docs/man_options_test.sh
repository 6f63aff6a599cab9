#!/usr/bin/env bash
# Every option `rpmirror --help`, `rpmirror sync --help`, `verify --help` and `checksum --help`
# list has an entry of its own in the OPTIONS section of the corresponding built man page, and every
# subcommand of `rpmirror --help` in rpmirror(1)'s COMMANDS section.
# Usage: man_options_test.sh RPMIRROR_BINARY MAN_SOURCE_DIR MAN_BUILD_DIR
set -euo pipefail
binary=$1 source_dir=$2 build_dir=$3
source "$(dirname "$0")/help_options.sh"

# The text of one section (.SH NAME) of a built page, roff escapes and fonts removed; with a third
# argument "terms", only the terms of its definition lists (scdoc puts ".RS 4" after a term).
section_text() {
  local page=$1 section=$2 terms=${3:-}
  [[ -f $page ]] || { echo "FAIL: $page was not built (from $source_dir)" >&2; exit 1; }
  awk -v want="$section" -v terms="$terms" '
    /^\.SH / { sub(/^\.SH "?/, ""); sub(/"$/, ""); in_section = ($0 == want); previous = ""; next }
    in_section && terms == "" { print }
    in_section && terms != "" && $0 == ".RS 4" { print previous }
    { previous = $0 }' "$page" |
    sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\(aq/'"'"'/g'
}

failures=0
check_page() {
  local subcommand=$1 page=$2 text option count=0
  text=$(section_text "$build_dir/$page" OPTIONS terms)
  [[ -n $text ]] || { echo "FAIL: $page has no OPTIONS section with option entries" >&2; failures=$((failures + 1)); return; }
  while IFS= read -r option; do
    count=$((count + 1))
    # The option as a word of its own: not a prefix of a longer option (--repo / --repofrompath).
    if ! grep -qE -- "(^|[^[:alnum:]_-])${option}([^[:alnum:]_-]|$)" <<<"$text"; then
      echo "FAIL: 'rpmirror ${subcommand:+$subcommand }--help' lists $option, but no entry of the OPTIONS section of $page (doc/man/$page.scd) names it" >&2
      failures=$((failures + 1))
    fi
  done < <(help_options "$binary" $subcommand)
  if ((count < 2)); then
    echo "FAIL: found only $count option(s) in 'rpmirror $subcommand --help': the help parser is broken" >&2
    failures=$((failures + 1))
  fi
  echo "$page: $count options of 'rpmirror ${subcommand:+$subcommand }--help' checked"
}

check_page "" rpmirror.1
check_page sync rpmirror-sync.1
check_page verify rpmirror-verify.1
check_page checksum rpmirror-checksum.1
check_page export rpmirror-export.1
check_page import rpmirror-import.1
check_page serve rpmirror-serve.1

commands=$(section_text "$build_dir/rpmirror.1" COMMANDS terms)
subcommand_count=0
while IFS= read -r subcommand; do
  subcommand_count=$((subcommand_count + 1))
  if ! grep -qE "(^|[^[:alnum:]_-])${subcommand}([^[:alnum:]_-]|$)" <<<"$commands"; then
    echo "FAIL: 'rpmirror --help' lists the command $subcommand, rpmirror.1's COMMANDS section does not" >&2
    failures=$((failures + 1))
  fi
done < <(help_subcommands "$binary")
if ((subcommand_count < 6)); then
  echo "FAIL: found only $subcommand_count subcommands in 'rpmirror --help'" >&2
  failures=$((failures + 1))
fi
echo "rpmirror.1: $subcommand_count commands checked"

# Every page is there and has the sections a man page needs.
for page in rpmirror.1 rpmirror-sync.1 rpmirror-verify.1 rpmirror-checksum.1 rpmirror-serve.1 \
  rpmirror-export.1 rpmirror-import.1 \
  rpmirror.conf.5; do
  for section in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    if [[ -z $(section_text "$build_dir/$page" "$section") ]]; then
      echo "FAIL: $page has no $section section" >&2
      failures=$((failures + 1))
    fi
  done
done

((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
echo "PASS"
