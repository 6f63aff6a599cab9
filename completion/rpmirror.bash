# bash completion for rpmirror(1)                                        -*- shell-script -*-
# Installed as share/bash-completion/completions/rpmirror (bash-completion loads it on demand).
# Completes subcommands, their options, the fixed values of options that have them, repository
# ids (--repo, --enablerepo, --disablerepo: the sections of the .repo files of the reposdirs,
# honouring --reposdir, -c/--config and --installroot on the line) and job names (--job: the
# sections of rpmirror.conf and conf.d/*.conf, honouring --config-file on the line).

# The options of each command (tests/docs/bash_completion_test.sh checks that every option the
# command's --help lists is here).
_rpmirror_repo_source_opts='--repofrompath -c --config --reposdir --varsdir --setopt --releasever
  --basearch --forcearch -x --exclude --excludepkgs --disableexcludes --disable-excludes
  --installroot'
_rpmirror_state_opts='--state-dir --wait-lock'
_rpmirror_s3_opts='--s3-endpoint --s3-region --s3-profile --s3-addressing'
_rpmirror_sync_opts="-h --help --repo --repoid --enablerepo --disablerepo --nogpgcheck --refresh
  -C --cacheonly -4 -6 -y --assumeyes --assumeno --noplugins --enableplugin --disableplugin
  -d --debuglevel -e --errorlevel --color $_rpmirror_repo_source_opts -p --download-path
  --norepopath --metadata-path --download-metadata --upstream-metadata --sign-key --download-policy --prefetch --publish-partial --delete
  --force-delete -n --newest-only --keep-versions -a --arch --source --remote-time -m --downloadcomps
  --safe-write-path --upstream-layout --mirror-url --keep-releases --flatten-hrefs --treeinfo --skip-bad-images --dedupe --dedupe-dir -u --urls --min-buildtime --advisories --advisory-severity --as-of -g --gpgcheck
  --packages --packages-file --with-dependencies --no-weak-dependencies --installed-base --modules --closure-repos
  --gpgcheck-keys -j --parallel -q --quiet -v --verbose --no-cache --zchunk --connections-per-file --segment-min-size --json $_rpmirror_state_opts --snapshot --keep-snapshots
  --snapshot-dir --config-file --job --parallel-jobs --max-per-host --shard --metrics-file --on-change
  --s3-endpoint --s3-region --s3-profile --s3-addressing --s3-spool-dir --s3-spool-size --s3-parallel
  --s3-part-size --s3-acl"
_rpmirror_verify_opts="-h --help -p --download-path --repo --repoid --remote --extra --no-cache
  --repair -j --threads --safe-write-path -q --quiet --json -a --arch --source -n --newest-only
  --keep-versions --min-buildtime --all-packages $_rpmirror_state_opts $_rpmirror_repo_source_opts
  $_rpmirror_s3_opts"
_rpmirror_checksum_opts='-h --help -t --type -j --parallel -c --check --no-cache -q --quiet'
_rpmirror_diff_opts="-h --help --repo --repoid -p --download-path --snapshot-dir --json -q --quiet
  $_rpmirror_repo_source_opts $_rpmirror_s3_opts"
_rpmirror_exec_opts='-h --help --mode --prefetch'
_rpmirror_export_opts="-h --help -p --download-path --repo --repoid --config-file --job -o --output
  --base --chunk-size --format --sign-key --snapshot-dir --copy --keep-exports --state-dir -q --quiet
  $_rpmirror_s3_opts"
_rpmirror_import_opts="-h --help -p --download-path --keyring --state-dir -q --quiet $_rpmirror_s3_opts"
_rpmirror_serve_opts='-h --help --config-file --job --listen --grace --cache-max-size'
_rpmirror_snapshot_common_opts="-h --help --repo --repoid -p --download-path --norepopath
  --snapshot-dir $_rpmirror_state_opts $_rpmirror_s3_opts"
_rpmirror_snapshot_create_opts="$_rpmirror_snapshot_common_opts --name --copy --no-cache
  --keep-snapshots"
_rpmirror_snapshot_list_opts="$_rpmirror_snapshot_common_opts --json"
_rpmirror_snapshot_publish_opts="$_rpmirror_snapshot_common_opts --as"
_rpmirror_snapshot_remove_opts="$_rpmirror_snapshot_common_opts"

# Options that take a value (the next word is that value, not an option or a positional).
_rpmirror_value_opts=' --repo --repoid --enablerepo --disablerepo --enableplugin --disableplugin
  -d --debuglevel -e --errorlevel --color --repofrompath -c --config --reposdir --varsdir
  --setopt --releasever --basearch --forcearch -x --exclude --excludepkgs --disableexcludes
  --disable-excludes --installroot -p --download-path --metadata-path --sign-key --download-policy
  --prefetch --keep-versions -a --arch --safe-write-path --dedupe --dedupe-dir --min-buildtime
  --advisories --advisory-severity --as-of --gpgcheck-keys -j --parallel --zchunk --connections-per-file --segment-min-size --json --state-dir --keep-snapshots --snapshot-dir --config-file --job --parallel-jobs
  --max-per-host --shard --metrics-file --on-change --threads -t --type --mode --name --as
  --s3-endpoint --s3-region --s3-profile --s3-addressing --s3-spool-dir --s3-spool-size --s3-parallel
  --s3-part-size --s3-acl '

# The values of option $1 given on the words before the cursor ("--opt value" and "--opt=value"),
# one per line; $2... are other spellings of the option.
_rpmirror_values_of() {
    local i word option
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        for option in "$@"; do
            if [[ $word == "$option" ]] && ((i + 1 < cword)); then
                printf '%s\n' "${words[i + 1]}"
            elif [[ $word == "$option="* ]]; then
                printf '%s\n' "${word#"$option="}"
            fi
        done
    done
}

# Section names of INI files (not [main]), one per line.
_rpmirror_ini_sections() {
    local file
    for file in "$@"; do
        [[ -f $file && -r $file ]] || continue
        sed -n 's/^[[:space:]]*\[\([^]]*\)\][[:space:]]*$/\1/p' "$file" 2>/dev/null
    done | while IFS= read -r section; do
        [[ $section == main ]] || printf '%s\n' "$section"
    done
}

# Repository ids of the dnf configuration the line names: --reposdir (repeatable, comma
# lists), else reposdir= of [main] of -c/--config (default /etc/dnf/dnf.conf), else dnf's
# defaults; beneath --installroot as dnf 4 reads them; plus the ids of --repofrompath.
_rpmirror_repo_ids() {
    local root config dirs=() dir value
    root=$(_rpmirror_values_of --installroot | tail -n 1)
    while IFS= read -r value; do
        dirs+=(${value//,/ })
    done < <(_rpmirror_values_of --reposdir)
    if ((${#dirs[@]} == 0)); then
        config=$(_rpmirror_values_of -c --config | tail -n 1)
        [[ -n $config ]] || config=${root%/}/etc/dnf/dnf.conf
        config=${config/#\~/$HOME}
        if [[ -r $config ]]; then
            value=$(sed -n '/^[[:space:]]*\[main\]/,/^[[:space:]]*\[/{s/^[[:space:]]*reposdir[[:space:]]*=[[:space:]]*//p}' "$config" | tail -n 1)
            [[ -n $value ]] && dirs=(${value//,/ })
        fi
    fi
    if ((${#dirs[@]} == 0)); then
        dirs=("${root%/}/etc/yum.repos.d" "${root%/}/etc/yum/repos.d" "${root%/}/etc/distro.repos.d")
    fi
    for dir in "${dirs[@]}"; do
        dir=${dir/#\~/$HOME}
        _rpmirror_ini_sections "$dir"/*.repo
    done
    _rpmirror_values_of --repofrompath | sed -n 's/,.*//p'
}

# Job names: the sections of --config-file on the line (default /etc/rpmirror/rpmirror.conf)
# and of the conf.d/*.conf files beside it.
_rpmirror_job_names() {
    local config
    config=$(_rpmirror_values_of --config-file | tail -n 1)
    [[ -n $config ]] || config=/etc/rpmirror/rpmirror.conf
    config=${config/#\~/$HOME}
    _rpmirror_ini_sections "$config" "$(dirname -- "$config")"/conf.d/*.conf
}

# Repository directories of a mirror (verify --repo): <-p DIR>/<id>/repodata/repomd.xml.
_rpmirror_mirror_ids() {
    local base repomd
    base=$(_rpmirror_values_of -p --download-path | tail -n 1)
    [[ -n $base ]] || base=.
    base=${base/#\~/$HOME}
    for repomd in "$base"/*/repodata/repomd.xml; do
        [[ -f $repomd ]] || continue
        repomd=${repomd%/repodata/repomd.xml}
        printf '%s\n' "${repomd##*/}"
    done
}

# Snapshot names of the repository on the line (snapshot publish/remove).
_rpmirror_snapshot_names() {
    local base repo entry
    repo=$(_rpmirror_values_of --repo --repoid | tail -n 1)
    [[ -n $repo ]] || return 0
    base=$(_rpmirror_values_of --snapshot-dir | tail -n 1)
    [[ -n $base ]] || base=$(_rpmirror_values_of -p --download-path | tail -n 1)
    [[ -n $base ]] || base=.
    base=${base/#\~/$HOME}
    for entry in "$base/snapshots/$repo"/*/; do
        [[ -d $entry ]] || continue
        entry=${entry%/}
        printf '%s\n' "${entry##*/}"
    done
}

# COMPREPLY from a newline-separated list, matching the current word (a comma list: its last
# element, as for --repo a,b).
_rpmirror_reply_list() {
    local list=$1 prefix='' last=$cur
    if [[ $cur == *,* ]]; then
        prefix=${cur%,*},
        last=${cur##*,}
    fi
    local IFS=$'\n'
    COMPREPLY=($(compgen -P "$prefix" -W "$list" -- "$last"))
}

_rpmirror() {
    local cur prev words cword split=false
    if declare -F _init_completion >/dev/null; then
        _init_completion -s || return
    else
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        if [[ $cur == --*=* ]]; then
            prev=${cur%%=*}
            cur=${cur#*=}
            split=true
        fi
    fi

    # The subcommand (and snapshot's action): the first words that are not options or values.
    local i word command='' action='' command_index=0
    for ((i = 1; i < cword; i++)); do
        word=${words[i]}
        if [[ $word == -- ]]; then
            break
        elif [[ $word == -* ]]; then
            [[ $word != *=* && $_rpmirror_value_opts == *" $word "* ]] && ((i++))
        elif [[ -z $command ]]; then
            command=$word
            command_index=$i
        elif [[ $command == snapshot && -z $action ]]; then
            action=$word
        fi
    done

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-h --help --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W 'sync reposync verify checksum diff snapshot exec export import serve' -- "$cur"))
        fi
        return
    fi

    # exec: after `--`, complete the command and its arguments.
    if [[ $command == exec ]]; then
        for ((i = command_index + 1; i < cword; i++)); do
            if [[ ${words[i]} == -- ]]; then
                if declare -F _command_offset >/dev/null; then
                    _command_offset $((i + 1))
                else
                    COMPREPLY=($(compgen -c -- "$cur"))
                fi
                return
            fi
        done
    fi

    # The value of an option.
    case $prev in
        --repo | --repoid)
            if [[ $command == verify ]]; then
                _rpmirror_reply_list "$(_rpmirror_mirror_ids; _rpmirror_repo_ids)"
            else
                _rpmirror_reply_list "$(_rpmirror_repo_ids)"
            fi
            return
            ;;
        --enablerepo | --disablerepo)
            _rpmirror_reply_list "$(_rpmirror_repo_ids)"
            return
            ;;
        --disableexcludes | --disable-excludes)
            _rpmirror_reply_list "$(printf '%s\n' all main; _rpmirror_repo_ids)"
            return
            ;;
        --job)
            _rpmirror_reply_list "$(_rpmirror_job_names)"
            return
            ;;
        --gpgcheck-keys)
            COMPREPLY=($(compgen -W 'rpmdb repo' -- "$cur"))
            return
            ;;
        --zchunk)
            COMPREPLY=($(compgen -W 'on off' -- "$cur"))
            return
            ;;
        --download-policy)
            COMPREPLY=($(compgen -W 'immediate on-demand streamed' -- "$cur"))
            return
            ;;
        --prefetch)
            # sync's takes a value (exec's is a flag, completed as any option below).
            if [[ $command == sync || $command == reposync ]]; then
                COMPREPLY=($(compgen -W 'newest closure' -- "$cur"))
                return
            fi
            ;;
        --mode)
            COMPREPLY=($(compgen -W 'off plain buffer mmap nofsync full deferred' -- "$cur"))
            return
            ;;
        --format)
            COMPREPLY=($(compgen -W 'importable syncable' -- "$cur"))
            return
            ;;
        -t | --type)
            COMPREPLY=($(compgen -W 'md5 sha1 sha224 sha256 sha384 sha512' -- "$cur"))
            return
            ;;
        --color)
            COMPREPLY=($(compgen -W 'always never auto' -- "$cur"))
            return
            ;;
        --s3-addressing)
            COMPREPLY=($(compgen -W 'path virtual' -- "$cur"))
            return
            ;;
        --dedupe)
            COMPREPLY=($(compgen -W 'hardlink reflink off' -- "$cur"))
            return
            ;;
        --advisories)
            _rpmirror_reply_list "$(printf '%s\n' security bugfix enhancement newpackage)"
            return
            ;;
        --advisory-severity)
            _rpmirror_reply_list "$(printf '%s\n' Low Moderate Important Critical)"
            return
            ;;
        -a | --arch | --forcearch | --basearch)
            _rpmirror_reply_list "$(printf '%s\n' x86_64 aarch64 ppc64le s390x i686 noarch src)"
            return
            ;;
        -p | --download-path | --metadata-path | --reposdir | --varsdir | --installroot | \
            --state-dir | --safe-write-path | --snapshot-dir | --dedupe-dir | -o | --output | --base)
            if declare -F _filedir >/dev/null; then
                _filedir -d
            else
                COMPREPLY=($(compgen -d -- "$cur"))
            fi
            return
            ;;
        -c | --config | --config-file | --json | --metrics-file | --packages-file | --keyring)
            if declare -F _filedir >/dev/null; then
                _filedir
            else
                COMPREPLY=($(compgen -f -- "$cur"))
            fi
            return
            ;;
        --on-change)
            COMPREPLY=($(compgen -c -- "$cur"))
            return
            ;;
        --repofrompath | --setopt | --releasever | --sign-key | --keep-versions | -j | \
            --parallel | --threads | --min-buildtime | --as-of | --keep-snapshots | --keep-exports | --parallel-jobs | --packages | \
            --max-per-host | --shard | --name | --as | -x | --exclude | --excludepkgs | --enableplugin | \
            --disableplugin | -d | --debuglevel | -e | --errorlevel | --chunk-size | --listen | --grace | --cache-max-size)
            return # a free value
            ;;
    esac
    [[ $split == true ]] && return

    local options
    case $command in
        sync | reposync) options=$_rpmirror_sync_opts ;;
        verify) options=$_rpmirror_verify_opts ;;
        checksum) options=$_rpmirror_checksum_opts ;;
        diff) options=$_rpmirror_diff_opts ;;
        exec) options=$_rpmirror_exec_opts ;;
        export) options=$_rpmirror_export_opts ;;
        import) options=$_rpmirror_import_opts ;;
        serve) options=$_rpmirror_serve_opts ;;
        snapshot)
            case $action in
                create) options=$_rpmirror_snapshot_create_opts ;;
                list) options=$_rpmirror_snapshot_list_opts ;;
                publish) options=$_rpmirror_snapshot_publish_opts ;;
                remove) options=$_rpmirror_snapshot_remove_opts ;;
                '')
                    if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W '-h --help' -- "$cur"))
                    else
                        COMPREPLY=($(compgen -W 'create list publish remove' -- "$cur"))
                    fi
                    return
                    ;;
            esac
            ;;
        *) return ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
    fi
    # Positionals.
    case $command in
        import)
            if declare -F _filedir >/dev/null; then _filedir -d; else COMPREPLY=($(compgen -d -- "$cur")); fi
            ;;
        checksum | diff)
            if declare -F _filedir >/dev/null; then _filedir; else COMPREPLY=($(compgen -f -- "$cur")); fi
            ;;
        exec) COMPREPLY=($(compgen -W '--' -- "$cur")) ;;
        snapshot)
            [[ $action == publish || $action == remove ]] &&
                _rpmirror_reply_list "$(_rpmirror_snapshot_names)"
            ;;
    esac
} &&
    complete -F _rpmirror rpmirror

# ex: filetype=sh
