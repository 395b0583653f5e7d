#!/usr/bin/env bash
# Runs one resplock executable in an otherwise empty root directory (chroot): the root holds the
# executable as /resplock and an /etc/hosts that maps the made-up name redis-host to 127.0.0.1,
# nothing else (no /lib, no loader, no /dev, /proc or resolv.conf). Meant to run under with_redis
# (REDIS_PORT names the throwaway redis-server on 127.0.0.1).
#   run_in_root.sh BINARY tls|notls       the static tool: --version says static and the TLS it
#                                         has; acquire, status, a busy second acquire, release
#                                         with a wrong and then the right token, status again,
#                                         each with its exit code, against redis-host:REDIS_PORT;
#                                         with tls, the same over rediss:// against a TLS-only
#                                         redis-server the script starts (the CA a file in the
#                                         root), and an unrelated CA refused
#   run_in_root.sh --expect-no-start BINARY
#                                         the check itself: BINARY (a dynamically linked build)
#                                         must not even start in that root (chroot exits 127:
#                                         its program interpreter is missing)
# A 32-bit ARM executable runs under QEMU's user-mode emulator, which the root must then hold
# too: qemu-arm-static alone when installed, else qemu-arm with its x86-64 libraries and loader in
# /.emu. The ARM program still finds no ARM file but itself: no ARM loader, no ARM library, and
# every path it opens (/etc/hosts) is looked up in the root.
# Runs as root, or through `unshare -r` (a user namespace) when not root; exits 77 with a SKIPPED
# line when neither can chroot, or the emulator or the executable is missing. Exits 1 on any
# failed check, never 77 for one (77 is also the tool's "authentication refused").
set -euo pipefail

expect_no_start=0
if [ "${1:-}" = "--expect-no-start" ]; then
    expect_no_start=1
    shift
fi
binary=${1:?usage: run_in_root.sh [--expect-no-start] BINARY [tls|notls]}
want_tls=${2:-}

skip() {
    echo "SKIPPED: $1"
    exit 77
}
failures=0
fail() {
    echo "FAILED: $1"
    failures=$((failures + 1))
}

[ -f "$binary" ] || skip "$binary not built (scripts/static.sh)"
root=$(mktemp -d "${TMPDIR:-/tmp}/resplock-root.XXXXXX")
tls_pid=
cleanup() {
    if [ -n "$tls_pid" ]; then kill "$tls_pid" 2>/dev/null || true; fi
    rm -rf "$root" "$root.certs" "$root.err"
}
trap cleanup EXIT
mkdir "$root/etc"
cp "$binary" "$root/resplock"
printf '127.0.0.1 redis-host\n' >"$root/etc/hosts"

if [ "$(id -u)" -eq 0 ]; then
    in_root=(chroot "$root")
elif unshare -r true 2>/dev/null; then
    in_root=(unshare -r chroot "$root")
else
    skip "not root, and no user namespaces for chroot"
fi

# The emulator for an ARM executable, inside the root.
run=(/resplock)
if file -b "$binary" | grep -q ', ARM,'; then
    mkdir "$root/.emu"
    if command -v qemu-arm-static >/dev/null; then
        cp "$(command -v qemu-arm-static)" "$root/.emu/qemu-arm"
        run=(/.emu/qemu-arm /resplock)
    elif command -v qemu-arm >/dev/null; then
        qemu=$(command -v qemu-arm)
        cp "$qemu" "$root/.emu/qemu-arm"
        loader=
        while read -r lib; do
            cp "$lib" "$root/.emu/"
            case "$lib" in */ld-linux*) loader=/.emu/$(basename "$lib") ;; esac
        done < <(ldd "$qemu" | grep -o '/[^ ]*')
        [ -n "$loader" ] || skip "cannot find qemu-arm's loader"
        run=("$loader" --library-path /.emu /.emu/qemu-arm /resplock)
    else
        skip "qemu-arm not installed (scripts/install-deps.sh targets)"
    fi
fi

# tool ARGS...: runs the tool in the root; sets out, err and code.
tool() {
    code=0
    out=$("${in_root[@]}" "${run[@]}" "$@" 2>"$root.err") || code=$?
    err=$(cat "$root.err")
    rm -f "$root.err"
}
# expect CODE WHAT: checks the last run's exit code.
expect() {
    if [ "$code" -ne "$1" ]; then
        fail "$2: exit $code, expected $1 (stdout: '$out', stderr: '$err')"
        return 1
    fi
}

if ((expect_no_start)); then
    tool --version
    if [ "$code" -eq 127 ]; then
        echo "ok: $(basename "$binary") does not start in the empty root (exit 127: $err)"
        exit 0
    fi
    echo "FAILED: $(basename "$binary") ran in the empty root (exit $code, stdout '$out'); the" \
        "root is not empty, or the binary is static"
    exit 1
fi

port=${REDIS_PORT:?run under with_redis}
url=redis://redis-host:$port
key="static:$(basename "$binary"):$$"

tool --version
if expect 0 "--version"; then
    case "$out" in "resplock "*) ;; *) fail "--version: '$out'" ;; esac
    grep -qx 'linked: static' <<<"$out" || fail "--version does not say 'linked: static': '$out'"
    case "$want_tls" in
    tls) grep -q '^TLS: mbedTLS [0-9]' <<<"$out" || fail "--version names no mbedTLS: '$out'" ;;
    notls) grep -q '^TLS: none' <<<"$out" || fail "--version does not say 'TLS: none': '$out'" ;;
    esac
fi

tool --url "$url" --ttl 60000 acquire "$key"
expect 0 "acquire" || true
token=$out
[ -n "$token" ] || fail "acquire printed no token"
if command -v redis-cli >/dev/null; then
    stored=$(redis-cli -h 127.0.0.1 -p "$port" GET "$key" 2>&1) || true
    [ "$stored" = "$token" ] || fail "the server holds '$stored' for $key, acquire printed '$token'"
fi

tool --url "$url" status "$key"
expect 0 "status while held" && { case "$out" in "held "*) ;; *) fail "status: '$out'" ;; esac; }

tool --url "$url" --wait 0 acquire "$key"
expect 75 "a second acquire while held" || true

tool --url "$url" release "$key" "not-the-token"
expect 1 "release with a wrong token" || true

tool --url "$url" release "$key" "$token"
expect 0 "release" || true

tool --url "$url" status "$key"
expect 1 "status after release" && { [ "$out" = free ] || fail "status after release: '$out'"; }

# With TLS: the same over rediss:// against a TLS-only redis-server of our own (certificates made
# here by openssl, the server's for redis-host), the CA given as a file in the root; a CA that did
# not sign the server's certificate must be refused (77). Skipped, with a line, when openssl or a
# TLS-capable redis-server is missing.
tls_round() {
    local certs=$root.certs tls_port pid
    mkdir "$certs"
    local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    local ca_ext=(-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign")
    printf 'subjectAltName=DNS:redis-host\nextendedKeyUsage=serverAuth\n' >"$certs/server.ext"
    if ! (cd "$certs" &&
        openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 2 -subj /CN=static-ca \
            "${ca_ext[@]}" &&
        openssl req -x509 "${ec[@]}" -keyout other.key -out other.crt -days 2 -subj /CN=other-ca \
            "${ca_ext[@]}" &&
        openssl req -new "${ec[@]}" -keyout server.key -out server.csr -subj /CN=redis-host &&
        openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -set_serial 2 -days 2 \
            -extfile server.ext -out server.crt) >"$certs/openssl.log" 2>&1; then
        echo "SKIPPED (TLS round): openssl could not make certificates"
        return 0
    fi
    cp "$certs/ca.crt" "$root/ca.crt"
    cp "$certs/other.crt" "$root/other.crt"
    tls_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    redis-server --port 0 --tls-port "$tls_port" --bind 127.0.0.1 --save '' --appendonly no \
        --tls-cert-file "$certs/server.crt" --tls-key-file "$certs/server.key" \
        --tls-ca-cert-file "$certs/ca.crt" --tls-auth-clients no >"$certs/redis.log" 2>&1 &
    pid=$!
    tls_pid=$pid
    local up=0
    for _ in $(seq 50); do
        if ! kill -0 "$pid" 2>/dev/null; then break; fi
        if (exec 3<>"/dev/tcp/127.0.0.1/$tls_port") 2>/dev/null; then
            up=1
            break
        fi
        sleep 0.1
    done
    if ((!up)); then
        echo "SKIPPED (TLS round): no TLS redis-server ($(tail -n 1 "$certs/redis.log"))"
        return 0
    fi
    # A handshake under qemu-arm takes seconds (mbedTLS's elliptic curves, emulated).
    local tls_url=rediss://redis-host:$tls_port tls_key=$key:tls
    local timeout=(--timeout 30000)
    tool "${timeout[@]}" --url "$tls_url" --cacert /other.crt --ttl 60000 acquire "$tls_key"
    expect 77 "rediss:// with a CA that did not sign the server's certificate" || true
    tool "${timeout[@]}" --url "$tls_url" --cacert /ca.crt --ttl 60000 acquire "$tls_key"
    expect 0 "acquire over rediss://" || true
    local tls_token=$out
    tool "${timeout[@]}" --url "$tls_url" --cacert /ca.crt status "$tls_key"
    expect 0 "status over rediss:// while held" || true
    tool "${timeout[@]}" --url "$tls_url" --cacert /ca.crt release "$tls_key" "$tls_token"
    expect 0 "release over rediss://" || true
    tool "${timeout[@]}" --url "$tls_url" --cacert /ca.crt status "$tls_key"
    expect 1 "status over rediss:// after release" || true
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    tls_pid=
    echo "TLS round done: rediss://redis-host:$tls_port with /ca.crt from the root"
}
if [ "$want_tls" = tls ]; then
    if command -v openssl >/dev/null && command -v python3 >/dev/null; then
        tls_round
    else
        echo "SKIPPED (TLS round): openssl or python3 not installed"
    fi
fi

if ((failures)); then
    echo "$failures check(s) failed for $(basename "$binary") in the empty root"
    exit 1
fi
echo "ok: $(basename "$binary") took and released $key on redis-host:$port from the empty root"
