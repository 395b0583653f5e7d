# bash completion for resplock(1). Installed as share/bash-completion/completions/resplock.
# The commands and options are those of `resplock --help`; the test docs.cli_reference checks that
# they are the same sets, so a new option or command must be added here too.

# Whether option $1 takes a value (the next word, or after '=').
_resplock_takes_value() {
    case $1 in
    -u | --url | --password-file | --ttl | --wait | --timeout | --owner | --once-per | \
        --replicas | --limit | --cacert | --cert | --key | --tls-server-name)
        return 0
        ;;
    esac
    return 1
}

_resplock() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev= prev2=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    ((COMP_CWORD > 1)) && prev2=${COMP_WORDS[COMP_CWORD - 2]}

    local commands="acquire release extend status run"
    local options="-u --url --password-file --ttl --wait --timeout --owner --no-client-name"
    options+=" --fence --once-per --wake --fair --replicas --limit --cacert --cert --key"
    options+=" --tls-server-name --insecure-skip-tls-verify -h --help --version"
    local schemes="redis:// rediss:// redis-sentinel:// rediss-sentinel://"

    # The command and how many operands it has so far. After `run KEY --`, the rest is a command
    # line of its own: complete it as one.
    local i w command= operands=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $command == run && $w == -- && $operands -ge 1 ]]; then
            if declare -F _command_offset >/dev/null; then
                _command_offset $((i + 1))
            elif ((i + 1 == COMP_CWORD)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return 0
        fi
        if [[ $w == -* ]]; then
            # bash splits --opt=value into three words when '=' breaks words.
            if [[ ${COMP_WORDS[i + 1]-} == = ]]; then
                i=$((i + 2))
            elif [[ $w != *=* ]] && _resplock_takes_value "$w"; then
                i=$((i + 1))
            fi
        elif [[ -z $command ]]; then
            command=$w
        else
            operands=$((operands + 1))
        fi
    done

    # The value of an option: --opt VALUE, --opt=VALUE (one word or three).
    local opt= value=$cur
    if [[ $cur == --*=* ]]; then
        opt=${cur%%=*}
        value=${cur#*=}
    elif [[ $cur == = ]] && _resplock_takes_value "$prev"; then
        opt=$prev
        value=
    elif [[ $prev == = ]] && _resplock_takes_value "$prev2"; then
        opt=$prev2
    elif _resplock_takes_value "$prev"; then
        opt=$prev
    fi
    case $opt in
    -u | --url)
        mapfile -t COMPREPLY < <(compgen -W "$schemes" -- "$value")
        compopt -o nospace 2>/dev/null || true
        return 0
        ;;
    --password-file | --cacert | --cert | --key)
        mapfile -t COMPREPLY < <(compgen -f -- "$value")
        compopt -o filenames 2>/dev/null || true
        return 0
        ;;
    --ttl | --wait | --timeout | --once-per)
        mapfile -t COMPREPLY < <(compgen -W "1500ms 30s 5m 2h" -- "$value")
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
    else
        COMPREPLY=()
    fi
    return 0
}
complete -F _resplock resplock
