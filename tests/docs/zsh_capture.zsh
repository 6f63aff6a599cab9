# zsh -f zsh_capture.zsh FPATH_DIR 'COMMAND LINE' DUMP: the matches zsh's completion system offers
# for the cursor at the end of the line, one per line. Drives a real interactive zsh in a pseudo-
# terminal (zsh/zpty): compinit with FPATH_DIR first in $fpath and its dump file DUMP (written by
# the first call, read by the next: compinit scanning every completion function takes 2 s), the
# line typed, then TAB. Every
# match goes through compadd, which prints it; the output is read up to the NUL markers that
# compprefuncs and comppostfuncs print (a blocking read, no sleep), then the shell exits.
zmodload zsh/zpty || { print -u2 "FAIL: zsh/zpty not available"; exit 1 }
zpty capture zsh -f -i
zpty -w capture "fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -d ${(q)3}"
zpty -w capture "PROMPT= ; RPROMPT= ; TERM=dumb"
zpty -w capture "bindkey '^I' complete-word"
zpty -w capture "null-line () { echo -E - \$'\\0' }"
zpty -w capture "compprefuncs=( null-line )"
zpty -w capture "comppostfuncs=( null-line exit )"
zpty -w capture "zstyle ':completion:*' list-grouped false"
zpty -w capture "zstyle ':completion:*' insert-tab false"
zpty -w capture 'compadd () { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do print -r -- "HIT:$h"; done; builtin compadd "$@" }'
zpty -w capture "$2"$'\t'
zpty -r capture REPLY $'*\0*\0' || { print -u2 "FAIL: no completion output from zsh"; exit 1 }
print -r -- "$REPLY" | tr -d '\r' | grep -a '^HIT:' | sed 's/^HIT://'
zpty -d capture
