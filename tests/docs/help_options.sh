# Sourced by the docs tests: help_options BINARY [SUBCOMMAND...] prints every option name that
# `rpmirror [SUBCOMMAND...] --help` lists, one per line (long and short forms, e.g. -p and
# --download-path). An option line of CLI11's help is indented by exactly two spaces and starts
# with '-'; its first word holds the names, separated by commas ("-x,--exclude,--excludepkgs").
# Description lines are indented further and never count.
help_options() {
  local binary=$1 help line names name
  local pattern='^  (-[^[:space:]]+)'
  shift
  help=$("$binary" "$@" --help) || { echo "FAIL: $binary $* --help failed" >&2; return 1; }
  while IFS= read -r line; do
    [[ $line =~ $pattern ]] || continue
    names=${BASH_REMATCH[1]}
    local IFS=,
    for name in $names; do
      [[ $name == -* ]] && printf '%s\n' "$name"
    done
    unset IFS
  done <<<"$help"
}

# help_subcommands BINARY [SUBCOMMAND...]: the subcommand names (and aliases) that
# `rpmirror [SUBCOMMAND...] --help` lists (none for a command without subcommands).
help_subcommands() {
  local binary=$1 in_section=0 line names name
  local pattern='^  ([a-z][a-z, ]*[a-z])  '
  shift
  while IFS= read -r line; do
    if [[ $line == Subcommands:* ]]; then in_section=1; continue; fi
    [[ $line =~ ^[^[:space:]] ]] && in_section=0
    ((in_section)) || continue
    [[ $line =~ $pattern ]] || continue
    names=${BASH_REMATCH[1]}
    for name in ${names//,/ }; do printf '%s\n' "$name"; done
  done < <("$binary" "$@" --help)
}
