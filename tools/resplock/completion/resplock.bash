# bash completion for resplock(1). Installed as share/bash-completion/completions/resplock.
# The commands and options are those of `resplock --help`; the test docs.cli_reference checks that
# they are the same sets, so a new option or command must be added here too.

# Whether option $1 takes a value (the next word, or after '=').
_resplock_takes_value() {
    case $1 in
    -u | --url | --password-file | --ttl | --wait | --timeout | --owner | --once-per | \
        --replicas | --limit | --cacert | --cert | --key | --tls-server-name | -w | \
        --wait-seconds | -E | --conflict-exit-code | -c | --command | --max)
        return 0
        ;;
    esac
    return 1
}

# Readline replaces only the text after the last word-break character (':' and '=' among them),
# so each reply loses the part of the current word $1 up to that character.
_resplock_trim() {
    local word=$1 keep= j
    for ((j = ${#word} - 1; j >= 0; j--)); do
        if [[ ${COMP_WORDBREAKS-} == *"${word:j:1}"* ]]; then
            keep=${word:0:j+1}
            break
        fi
    done
    [[ -n $keep ]] || return 0
    for j in "${!COMPREPLY[@]}"; do
        COMPREPLY[j]=${COMPREPLY[j]#"$keep"}
    done
}

_resplock() {
    # The words as the shell will pass them (split at blanks only, unlike COMP_WORDS, which also
    # splits at ':' and '=': redis://h is one word here).
    local line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -r -a words <<<"$line"
    [[ -z $line || $line == *[[:space:]] ]] && words+=("")
    local cword=$((${#words[@]} - 1))
    local cur=${words[cword]} prev=
    ((cword > 0)) && prev=${words[cword - 1]}

    local commands="acquire release extend status run list help"
    local options="-u --url --password-file --ttl --wait -w --wait-seconds -n --nonblock"
    options+=" -E --conflict-exit-code -c --command --timeout --owner --no-client-name"
    options+=" --fence --once-per --wake --fair --replicas --limit --cacert --cert --key"
    options+=" --tls-server-name --insecure-skip-tls-verify --json --verbose --max -h --help"
    options+=" --version"
    local schemes="redis:// rediss:// redis-sentinel:// rediss-sentinel://"

    # The command and how many operands it has so far. After `run KEY --`, the rest is a command
    # line of its own: complete it as one.
    local i w command= operands=0
    for ((i = 1; i < cword; i++)); do
        w=${words[i]}
        if [[ $command == run && $w == -- && $operands -ge 1 ]]; then
            # The same "--" in COMP_WORDS, which _command_offset counts in.
            local j=$i
            while ((j < COMP_CWORD)) && [[ ${COMP_WORDS[j]} != -- ]]; do j=$((j + 1)); done
            if declare -F _command_offset >/dev/null; then
                _command_offset $((j + 1))
            elif ((i + 1 == cword)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return 0
        fi
        if [[ $w == -* ]]; then
            if [[ $w != *=* ]] && _resplock_takes_value "$w"; then
                i=$((i + 1))
            fi
        elif [[ -z $command ]]; then
            command=$w
        else
            operands=$((operands + 1))
        fi
    done

    # The value of an option: --opt VALUE or --opt=VALUE (the replies then carry "--opt=").
    local opt= value=$cur before=
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        value=${cur#*=}
        before=$opt=
    elif _resplock_takes_value "$prev"; then
        opt=$prev
    fi
    case $opt in
    -u | --url)
        mapfile -t COMPREPLY < <(compgen -P "$before" -W "$schemes" -- "$value")
        _resplock_trim "$cur"
        compopt -o nospace 2>/dev/null || true
        return 0
        ;;
    --password-file | --cacert | --cert | --key)
        mapfile -t COMPREPLY < <(compgen -P "$before" -f -- "$value")
        _resplock_trim "$cur"
        compopt -o filenames 2>/dev/null || true
        return 0
        ;;
    --ttl | --wait | --timeout | --once-per)
        mapfile -t COMPREPLY < <(compgen -P "$before" -W "1500ms 30s 5m 2h" -- "$value")
        _resplock_trim "$cur"
        return 0
        ;;
    ?*)
        COMPREPLY=()
        return 0
        ;;
    esac

    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    elif [[ -z $command ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    elif [[ $command == run && $operands -eq 1 ]]; then
        COMPREPLY=(--)
    elif [[ $command == help && $operands -eq 0 ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    else
        COMPREPLY=()
    fi
    return 0
}
complete -F _resplock resplock
