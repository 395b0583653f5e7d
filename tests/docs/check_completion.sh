#!/usr/bin/env bash
# Test docs.cli_completion: the bash completion, sourced in bash, gives the expected COMPREPLY
# for typical command lines; the zsh completion passes zsh's syntax check and, loaded with
# compinit, is the completion zsh uses for resplock.
#   check_completion.sh BASH_COMPLETION ZSH_COMPLETION
set -euo pipefail

bash_file=$(realpath "$1")
zsh_file=$(realpath "$2")
failed=0
passed=0

# expect "WORDS" "EXPECTED" [match]: completes the last word of WORDS (an empty last word: a
# trailing space); EXPECTED is COMPREPLY, sorted and joined by spaces; match 'has' only checks
# that EXPECTED's words are among the replies.
expect() {
    local line=$1 expected=$2 mode=${3:-equal} got
    if ! got=$(
        bash --norc --noprofile -c '
            set -eu
            source "$1"
            read -r -a COMP_WORDS <<<"$2"
            [[ $2 == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_LINE=$2
            COMP_POINT=${#COMP_LINE}
            _resplock resplock "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            printf "%s\n" "${COMPREPLY[@]}" | LC_ALL=C sort | tr "\n" " " | sed "s/ $//"
        ' _ "$bash_file" "$line"
    ); then
        failed=$((failed + 1))
        echo "FAIL: '$line': the completion function failed"
        return
    fi
    local ok=0
    if [[ $mode == has ]]; then
        ok=1
        for w in $expected; do [[ " $got " == *" $w "* ]] || ok=0; done
    elif [[ $got == "$expected" ]]; then
        ok=1
    fi
    if ((ok)); then
        passed=$((passed + 1))
        echo "ok: '$line' -> $got"
    else
        failed=$((failed + 1))
        echo "FAIL: '$line' -> '$got', expected $([[ $mode == has ]] && echo "among them ")'$expected'"
    fi
}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/certs"
touch "$scratch/certs/ca.pem" "$scratch/certs/client.pem"
cd "$scratch"

expect "resplock ac" "acquire"
expect "resplock " "acquire extend help list release run status"
expect "resplock help r" "release run"
expect "resplock -w 5 -n l" "list"
expect "resplock --max 5 list --j" "--json"
expect "resplock --u" "--url"
expect "resplock -" "--url -u --ttl --version" has
expect "resplock --url r" "redis-sentinel:// redis:// rediss-sentinel:// rediss://"
expect "resplock --url rediss" "rediss-sentinel:// rediss://"
expect "resplock -u redis-s" "redis-sentinel://"
expect "resplock --url=r" "redis-sentinel:// redis:// rediss-sentinel:// rediss://"
# A URL holds ':', where readline splits words: the words are read at blanks, and a reply is only
# what follows the last ':' or '='.
expect "resplock --url redis://h:6379 ac" "acquire"
expect "resplock --url=rediss://h:6380 --ttl 30s re" "release"
expect "resplock --url redis:" "//"
expect "resplock --cacert certs/" "certs/ca.pem certs/client.pem"
expect "resplock --key=certs/c" "certs/ca.pem certs/client.pem"
expect "resplock --ttl 3" "30s"
expect "resplock --ttl 30s st" "status"
expect "resplock --url redis://h run job " "--"
expect "resplock run job -- ech" "echo" has
expect "resplock --wait 1m run job -- printf" "printf" has
expect "resplock release job " ""

if command -v zsh >/dev/null; then
    if zsh -n "$zsh_file"; then
        passed=$((passed + 1))
        echo "ok: zsh -n $zsh_file"
    else
        failed=$((failed + 1))
        echo "FAIL: zsh -n $zsh_file"
    fi
    # compinit over a folder holding only _resplock: zsh must bind resplock to it.
    mkdir -p "$scratch/zfunc"
    cp "$zsh_file" "$scratch/zfunc/_resplock"
    bound=$(HOME=$scratch zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit;
        compinit -u -d "$1/.zcompdump"; print -r -- ${_comps[resplock]-}' _ "$scratch/zfunc")
    if [[ $bound == _resplock ]]; then
        passed=$((passed + 1))
        echo "ok: compinit binds resplock to _resplock"
    else
        failed=$((failed + 1))
        echo "FAIL: compinit binds resplock to '$bound', not _resplock"
    fi
else
    echo "SKIPPED: zsh checks (zsh is not installed; scripts/install-deps.sh test installs it)"
fi

echo "$passed passed, $failed failed"
((failed == 0))
