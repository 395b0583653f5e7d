#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/resp (raw server replies),
tests/fuzz/corpus/lock, tests/fuzz/corpus/quorum, tests/fuzz/corpus/semaphore,
tests/fuzz/corpus/cluster and tests/fuzz/corpus/sentinel (inputs in the formats described at the
top of fuzz_lock.cpp, fuzz_quorum.cpp, fuzz_semaphore.cpp, fuzz_cluster.cpp and
fuzz_sentinel.cpp). The files are committed; rerun this after changing a seed, and keep each file
tiny. Inputs a fuzz run found that are worth keeping are committed as they were
saved (regress_* files this script does not write); it never deletes them."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

RESP = {
    "simple_ok": b"+OK\r\n",
    "simple_empty": b"+\r\n",
    "error_err": b"-ERR unknown command 'FOO'\r\n",
    "error_noscript": b"-NOSCRIPT No matching script. Please use EVAL.\r\n",
    "error_oom": b"-OOM command not allowed when used memory > 'maxmemory'.\r\n",
    "error_readonly": b"-READONLY You can't write against a read only replica.\r\n",
    "integer_one": b":1\r\n",
    "integer_min": b":-9223372036854775808\r\n",
    "integer_max": b":9223372036854775807\r\n",
    "integer_overflow": b":9223372036854775808\r\n",
    "integer_20_digits": b":00000000000000000001\r\n",
    "integer_empty": b":\r\n",
    "bulk": b"$3\r\nfoo\r\n",
    "bulk_empty": b"$0\r\n\r\n",
    "bulk_binary_crlf": b"$4\r\n\r\n\r\n\r\n",
    "bulk_nil": b"$-1\r\n",
    "bulk_minus_zero": b"$-0\r\n\r",
    "bulk_minus_two": b"$-2\r\n",
    "bulk_minus_zero_one": b"$-01\r\n",
    "bulk_max_len_header": b"$65536\r\n",
    "bulk_over_limit": b"$65537\r\n",
    "bulk_short_payload": b"$5\r\nabc\r\n",
    "bulk_bad_terminator": b"$3\r\nfooXY",
    "array_empty": b"*0\r\n",
    "array_nil": b"*-1\r\n",
    "array_query_reply": b"*2\r\n$32\r\n000102030405060708090a0b0c0d0e0f\r\n:29987\r\n",
    "array_query_free": b"*2\r\n$-1\r\n:-2\r\n",
    "array_nested": b"*2\r\n*2\r\n:1\r\n+a\r\n*1\r\n$1\r\nx\r\n",
    "array_depth_8": b"*1\r\n" * 7 + b"*0\r\n",
    "array_depth_9": b"*1\r\n" * 8 + b"*0\r\n",
    "array_16": b"*16\r\n" + b":1\r\n" * 16,
    "array_17": b"*17\r\n",
    "array_huge_count": b"*4294967295\r\n",
    "array_too_many_values": b"*8\r\n" + b"+x\r\n" * 8,
    "bad_type_byte": b"!3\r\nfoo\r\n",
    "cr_without_lf": b"+OK\rX\n",
    "lf_only": b"+OK\n",
    "trailing_bytes": b"+OK\r\n+OK\r\n",
    "partial_header": b"*2\r\n$3\r\nfo",
}

TOKEN0 = b"000102030405060708090a0b0c0d0e0f"  # the mock's first token


def u16(v):
    return struct.pack("<H", v)


def cfg(flags=0, timeout=100, buf=3, key=1):
    """flags 1 password, 3 user and password, 4 SELECT; timeout 1 + 20 * timeout ms; buf 0..3."""
    return bytes([flags, timeout, buf, key])


def acquire(ttl=1000):
    return b"\x00" + u16(ttl)


def try_acquire(ttl, wait_ms):
    return b"\x01" + u16(ttl) + bytes([wait_ms // 4])


RELEASE = b"\x02"
QUERY = b"\x04"
CLOSE = b"\x0f"
RANDOM_FAILS = b"\x07"


def extend(ttl=1000):
    return b"\x03" + u16(ttl)


def adopt(token):
    return b"\x05" + bytes([len(token)]) + token


def advance(ms):
    return b"\x06" + u16(ms)


# Server side: what the next connect/send/recv does.
CONNECT = b"\x00"
REFUSED = b"\x06"
CONNECT_TIMEOUT = b"\x05"
SEND = b"\x00"
SEND_CLOSED = b"\xf1"
RECV_TIMEOUT = b"\x04"
RECV_CLOSED = b"\x06"


def reply(data, chunk=0):
    return bytes([chunk << 3, len(data)]) + data


def delay(ms):
    return bytes([5, (ms - 1) // 8])


def rt(data, chunk=0):
    """One round trip on an open connection: the request is accepted, `data` comes back."""
    return SEND + reply(data, chunk)


def owner(result):
    return rt(b":%d\r\n" % result)


OK = b"+OK\r\n"
NIL = b"$-1\r\n"
NOSCRIPT = b"-NOSCRIPT No matching script. Please use EVAL.\r\n"


# Lock's calls with AcquireOptions (op 7 with b >> 4 = 1, 2, 3), each followed by OPTS.
def opts(fence=False, wake=False, null_fence=False, once=None):
    """once: None (no interval), a u16 of ms, "max" (max_ttl_ms) or "over" (max_ttl_ms + 1)."""
    b = (1 if fence else 0) | (2 if wake else 0) | (4 if null_fence else 0)
    if once is None:
        return bytes([b])
    if once == "max":
        return bytes([b | 2 << 3])
    if once == "over":
        return bytes([b | 3 << 3])
    return bytes([b | 1 << 3]) + u16(once)


def acquire_opts(options, ttl=1000):
    return b"\x17" + options + u16(ttl)


def try_acquire_opts(options, ttl, wait_ms):
    return b"\x27" + options + u16(ttl) + bytes([wait_ms // 4])


def release_opts(options):
    return b"\x37" + options


def fence_number(n):
    """The acquire script's grant with a fence: the number's digits in a bulk string."""
    digits = b"%d" % n
    return b"$%d\r\n%s\r\n" % (len(digits), digits)


def busy_pttl(ms):
    """The acquire script's busy reply: {PTTL}."""
    return b"*1\r\n:%d\r\n" % ms


FENCE = opts(fence=True)
WAKE = opts(wake=True)

LOCK = {
    "acquire_release": cfg() + acquire() + CONNECT + rt(OK) + RELEASE + owner(1),
    "acquire_busy": cfg() + acquire() + CONNECT + rt(NIL),
    "acquire_chunked": cfg() + acquire() + CONNECT + rt(OK, chunk=1) + RELEASE + owner(1),
    "acquire_trailing_bytes": cfg() + acquire() + CONNECT + rt(OK + OK),
    "acquire_wrong_reply": cfg() + acquire() + CONNECT + rt(b":1\r\n"),
    "acquire_other_simple_string": cfg() + acquire() + CONNECT + rt(b"+QUEUED\r\n") + RELEASE
    + owner(1),
    "acquire_reply_lost": cfg() + acquire() + CONNECT + SEND + RECV_TIMEOUT + RELEASE + CONNECT
    + owner(1),
    "acquire_closed": cfg() + acquire() + CONNECT + SEND + RECV_CLOSED,
    "acquire_send_closed": cfg() + acquire() + CONNECT + SEND_CLOSED,
    "acquire_refused": cfg() + acquire() + REFUSED,
    "acquire_connect_timeout": cfg() + acquire() + CONNECT_TIMEOUT,
    "acquire_delayed": cfg() + acquire() + CONNECT + SEND + delay(300) + reply(OK),
    "acquire_oom": cfg() + acquire() + CONNECT + rt(b"-OOM command not allowed\r\n"),
    "acquire_readonly": cfg() + acquire() + CONNECT
    + rt(b"-READONLY You can't write against a read only replica.\r\n"),
    "acquire_random_fails": cfg() + RANDOM_FAILS + acquire() + RANDOM_FAILS + acquire()
    + CONNECT + rt(OK),
    "acquire_ttl_invalid": cfg() + acquire(0) + acquire(0xFFFE) + acquire(1000) + CONNECT
    + rt(OK),
    "acquire_twice": cfg() + acquire() + CONNECT + rt(OK) + acquire(),
    "acquire_key_too_long": cfg(key=129) + acquire() + RELEASE + QUERY,
    "acquire_small_buffer": cfg(buf=0) + acquire() + CONNECT,
    "release_too_large_reply": cfg(buf=1) + acquire() + CONNECT + rt(OK) + RELEASE
    + rt(b"$220\r\n" + b"x" * 220 + b"\r\n"),
    "try_acquire_wait": cfg() + try_acquire(1000, 100) + CONNECT + rt(NIL) + rt(b":40\r\n")
    + rt(NIL) + rt(b":-2\r\n") + rt(OK),
    "try_acquire_gives_up": cfg() + try_acquire(1000, 20) + CONNECT
    + (rt(NIL) + rt(b":5000\r\n")) * 3 + rt(NIL),
    "try_acquire_reconnects": cfg() + try_acquire(1000, 200) + REFUSED + REFUSED + CONNECT
    + rt(OK),
    "release_noscript": cfg() + acquire() + CONNECT + rt(OK) + RELEASE + rt(NOSCRIPT) + owner(1),
    "release_not_owner": cfg() + acquire() + CONNECT + rt(OK) + RELEASE + owner(-1),
    "release_other_integer": cfg() + acquire() + CONNECT + rt(OK) + RELEASE + owner(2) + RELEASE
    + owner(1),
    "release_expired": cfg() + acquire() + CONNECT + rt(OK) + advance(2000) + RELEASE + owner(0),
    "release_wrongtype": cfg() + acquire() + CONNECT + rt(OK) + RELEASE
    + rt(b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    "release_lost": cfg() + acquire() + CONNECT + rt(OK) + RELEASE + SEND + RECV_CLOSED,
    "extend_ok": cfg() + acquire() + CONNECT + rt(OK) + advance(500) + extend(2000) + owner(1)
    + RELEASE + owner(1),
    "extend_noscript": cfg() + acquire() + CONNECT + rt(OK) + extend(2000) + rt(NOSCRIPT)
    + owner(1),
    "extend_not_owner": cfg() + acquire() + CONNECT + rt(OK) + extend() + owner(-1),
    "extend_gone": cfg() + acquire() + CONNECT + rt(OK) + extend() + owner(0),
    "extend_after_local_expiry": cfg() + acquire(100) + CONNECT + rt(OK) + advance(200)
    + extend(100),
    "extend_times_out": cfg(timeout=50) + acquire(300) + CONNECT + rt(OK) + extend(300) + SEND
    + RECV_TIMEOUT,
    "adopt_extend_release": cfg() + adopt(TOKEN0) + extend(5000) + CONNECT + owner(1) + RELEASE
    + owner(1),
    "adopt_invalid": cfg() + adopt(b"") + adopt(b"x" * 41) + RELEASE,
    "query_mine": cfg() + acquire() + CONNECT + rt(OK) + QUERY
    + rt(b"*2\r\n$32\r\n" + TOKEN0 + b"\r\n:990\r\n"),
    "query_other": cfg() + QUERY + CONNECT + rt(b"*2\r\n$5\r\nother\r\n:-1\r\n"),
    "query_free": cfg() + QUERY + CONNECT + rt(b"*2\r\n$-1\r\n:-2\r\n"),
    "query_malformed": cfg() + QUERY + CONNECT + rt(b"*2\r\n:1\r\n:2\r\n") + QUERY
    + rt(b"*1\r\n$-1\r\n"),
    "auth_ok": cfg(flags=1) + acquire() + CONNECT + rt(OK) + rt(OK),
    "auth_user_select": cfg(flags=7) + acquire() + CONNECT + rt(OK) + rt(OK) + rt(OK),
    "auth_wrongpass": cfg(flags=3) + acquire() + CONNECT
    + rt(b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"),
    "auth_loading": cfg(flags=1) + try_acquire(1000, 40) + CONNECT
    + rt(b"-LOADING Redis is loading the dataset in memory\r\n") + CONNECT + rt(OK) + rt(OK),
    "select_error": cfg(flags=4) + acquire() + CONNECT + rt(b"-ERR DB index is out of range\r\n"),
    # Found by fuzzing. A busy attempt, a PTTL that uses up the wait, then one more attempt:
    # try_acquire took the wait plus two calls (lock.hpp/README promise the wait plus one).
    "regress_try_acquire_wait_bound": cfg(timeout=2) + try_acquire(1000, 4) + CONNECT + rt(NIL)
    + SEND + delay(33) + reply(b":-2\r\n") + SEND + RECV_TIMEOUT,
    # Found by fuzzing. An error reply to the handshake's SELECT came back as the command's own
    # status: WRONGTYPE made release() report not_owner and forget the token, unsent.
    "regress_select_wrongtype_release": cfg(flags=4) + adopt(TOKEN0) + RELEASE + CONNECT
    + rt(b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    "close_between_calls": cfg() + acquire() + CONNECT + rt(OK) + CLOSE + RELEASE + CONNECT
    + owner(1),
    # Lock's calls with AcquireOptions.
    "options_fence_release": cfg() + acquire_opts(FENCE) + CONNECT
    + rt(fence_number(1799999999999999)) + RELEASE + owner(1),
    "options_fence_noscript": cfg() + acquire_opts(FENCE) + CONNECT + rt(NOSCRIPT)
    + rt(fence_number(7)),
    "options_fence_int64_max": cfg() + acquire_opts(FENCE) + CONNECT
    + rt(fence_number(9223372036854775807)) + RELEASE + owner(1),
    "options_fence_past_int64_max": cfg() + acquire_opts(FENCE) + CONNECT
    + rt(fence_number(9223372036854775808)) + RELEASE + owner(1),
    "options_fence_integer": cfg() + acquire_opts(FENCE) + CONNECT + rt(b":7\r\n") + RELEASE
    + owner(1),
    "options_once": cfg() + acquire_opts(opts(once=60000)) + CONNECT + rt(b":0\r\n"),
    "options_fence_once_busy": cfg() + acquire_opts(opts(fence=True, once=60000)) + CONNECT
    + rt(busy_pttl(59000)),
    "options_fence_zero": cfg() + acquire_opts(FENCE) + CONNECT + rt(fence_number(0)) + RELEASE
    + owner(1),
    "options_not_a_number": cfg() + acquire_opts(opts(once=500)) + CONNECT + rt(b"+OK\r\n"),
    "options_error_after_set": cfg() + acquire_opts(FENCE) + CONNECT
    + rt(b"-NOPERM this user has no permissions to run the 'time' command\r\n") + RELEASE
    + owner(1),
    "options_reply_lost": cfg() + acquire_opts(FENCE) + CONNECT + SEND + RECV_TIMEOUT,
    "options_too_large": cfg(buf=1) + acquire_opts(opts(fence=True, once="max")),
    "options_invalid": cfg() + acquire_opts(opts(fence=True, null_fence=True))
    + acquire_opts(opts(once="over")) + try_acquire_opts(FENCE, 0, 40),
    "options_wait_pttl": cfg() + try_acquire_opts(FENCE, 1000, 100) + CONNECT
    + rt(busy_pttl(3)) + rt(busy_pttl(-2)) + rt(fence_number(2)),
    "options_wake_blpop": cfg() + try_acquire_opts(WAKE, 1000, 400) + CONNECT
    + rt(busy_pttl(5000)) + SEND + delay(5) + reply(b"*-1\r\n") + rt(b":0\r\n")
    + release_opts(WAKE) + rt(b":1\r\n"),
    "options_wake_woken": cfg() + try_acquire_opts(opts(fence=True, wake=True), 1000, 400)
    + CONNECT + rt(busy_pttl(5000)) + rt(b"*2\r\n$6\r\nk:wake\r\n$1\r\n1\r\n")
    + rt(fence_number(3)),
    "options_wake_noperm": cfg() + try_acquire_opts(WAKE, 1000, 400) + CONNECT
    + rt(busy_pttl(5000)) + rt(b"-NOPERM this user has no permissions to run the 'blpop'\r\n")
    + rt(busy_pttl(5000)) + rt(b":0\r\n"),
    "options_wake_near_expiry": cfg() + try_acquire_opts(WAKE, 1000, 400) + CONNECT
    + rt(busy_pttl(50)) + rt(b":0\r\n"),
    "options_wake_near_deadline": cfg() + try_acquire_opts(WAKE, 1000, 100) + CONNECT
    + rt(busy_pttl(-1)) + rt(busy_pttl(-1)) + rt(b":0\r\n"),
    "options_wake_blpop_lost": cfg(timeout=5) + try_acquire_opts(WAKE, 1000, 800) + CONNECT
    + rt(busy_pttl(5000)) + SEND + RECV_TIMEOUT + CONNECT + rt(b":0\r\n"),
    "options_release_wake_noscript": cfg() + acquire_opts(FENCE) + CONNECT
    + rt(fence_number(1)) + release_opts(WAKE) + rt(NOSCRIPT) + rt(b":1\r\n"),
    "options_release_wake_answers": cfg() + acquire_opts(FENCE) + CONNECT + rt(fence_number(1))
    + release_opts(WAKE) + rt(b":2\r\n") + release_opts(WAKE) + rt(b":-1\r\n"),
    "options_release_without_wake": cfg() + acquire_opts(opts(once=1000)) + CONNECT
    + rt(b":0\r\n") + release_opts(FENCE) + owner(1),
    # Found by fuzzing. Without a fence the acquire script's grant is exactly 0, but any integer
    # was taken as one: ":5" made a once-per acquisition report ok and hold the lock.
    "regress_options_nonzero_without_fence": cfg() + acquire_opts(opts(once=60000)) + CONNECT
    + rt(b":5\r\n"),
}


# The quorum lock: each server's events are read when the lock reaches it (sends to all servers
# in order, then reads in order).
def qcfg(five=False, flags=0, timeout=100, buf=3, key=1):
    """flags 2 password, 4 SELECT; timeout 1 + 20 * timeout ms; buf 0..3."""
    return bytes([(1 if five else 0) | flags, timeout, buf, key])


def extend_wait(ttl=1000, wait_ms=None):
    """extend TTL WAIT (None: no wait given)."""
    return b"\x03" + u16(ttl) + bytes([255 if wait_ms is None else wait_ms // 4])


def sends(n, connect=()):
    """A request sent to each of n servers, connecting first to those listed in `connect`."""
    return b"".join((CONNECT if i in connect else b"") + SEND for i in range(n))


def replies(*events):
    """What each server does in turn when read: bytes (a reply) or an event (RECV_TIMEOUT...)."""
    return b"".join(e if e in (RECV_TIMEOUT, RECV_CLOSED) else reply(e) for e in events)


ALL3 = (0, 1, 2)
ALL5 = (0, 1, 2, 3, 4)
MINE3 = b"*2\r\n$32\r\n" + TOKEN0 + b"\r\n:900\r\n"
HELD3 = sends(3, ALL3) + replies(OK, OK, OK)

QUORUM = {
    "acquire_release": qcfg() + acquire() + HELD3 + RELEASE + sends(3)
    + replies(b":1\r\n", b":1\r\n", b":1\r\n"),
    "acquire_majority": qcfg() + acquire() + sends(3, ALL3) + replies(OK, NIL, OK),
    "acquire_minority_lost": qcfg() + acquire() + sends(3, ALL3) + replies(OK, RECV_TIMEOUT, NIL)
    + SEND + CONNECT + SEND + SEND + replies(b":1\r\n", b":1\r\n", b":-1\r\n"),
    "acquire_busy_five": qcfg(five=True) + acquire() + sends(5, ALL5)
    + replies(NIL, OK, NIL, NIL, OK) + sends(5) + replies(*[b":-1\r\n"] * 5),
    "acquire_refused": qcfg() + acquire() + REFUSED + CONNECT + SEND + REFUSED
    + replies(OK) + REFUSED + SEND + REFUSED + replies(b":1\r\n"),
    "acquire_too_late": qcfg() + acquire(10) + sends(3, ALL3) + delay(9) + replies(OK, OK, OK)
    + sends(3) + replies(b":1\r\n", b":1\r\n", b":1\r\n"),
    "try_acquire_busy_then_held": qcfg() + try_acquire(1000, 200) + sends(3, ALL3)
    + replies(NIL, NIL, OK) + sends(3) + replies(b":-1\r\n", b":-1\r\n", b":1\r\n")
    + sends(3) + replies(OK, OK, OK),
    "extend_ok": qcfg() + acquire() + HELD3 + advance(300) + extend_wait(2000) + sends(3)
    + replies(b":1\r\n", b":0\r\n", b":1\r\n"),
    "extend_noscript_one": qcfg() + acquire() + HELD3 + extend_wait(2000, 100) + sends(3)
    + replies(b":1\r\n", NOSCRIPT, b":1\r\n") + SEND + replies(b":1\r\n"),
    "extend_lost_majority": qcfg() + acquire() + HELD3 + extend_wait(2000) + sends(3)
    + replies(b":0\r\n", b":-1\r\n", b":1\r\n"),
    "extend_unconfirmed": qcfg() + acquire() + HELD3 + extend_wait(2000) + sends(3)
    + replies(b":1\r\n", RECV_TIMEOUT, RECV_CLOSED) + RELEASE + SEND + CONNECT + SEND + CONNECT
    + SEND + replies(b":1\r\n", b":1\r\n", b":0\r\n"),
    "extend_after_expiry": qcfg() + acquire() + HELD3 + advance(2000) + extend_wait(2000),
    "release_minority": qcfg() + acquire() + HELD3 + RELEASE + sends(3)
    + replies(b":1\r\n", RECV_TIMEOUT, RECV_CLOSED),
    "release_noscript_two": qcfg(five=True) + acquire() + sends(5, ALL5) + replies(*[OK] * 5)
    + RELEASE + sends(5) + replies(b":1\r\n", NOSCRIPT, b":1\r\n", NOSCRIPT, b":0\r\n")
    + SEND + SEND + replies(b":1\r\n", b":1\r\n"),
    "query_other": qcfg() + QUERY + sends(3, ALL3)
    + replies(b"*2\r\n$5\r\nother\r\n:500\r\n", b"*2\r\n$-1\r\n:-2\r\n",
              b"*2\r\n$5\r\nother\r\n:300\r\n"),
    "query_mine": qcfg() + acquire() + HELD3 + QUERY + sends(3)
    + replies(MINE3, MINE3, b"*2\r\n$-1\r\n:-2\r\n"),
    "query_noscript_malformed": qcfg() + QUERY + sends(3, ALL3)
    + replies(NOSCRIPT, b"*2\r\n:1\r\n:2\r\n", b"*2\r\n$5\r\nother\r\n:-1\r\n") + SEND
    + replies(b"*2\r\n$5\r\nother\r\n:-1\r\n"),
    "adopt_extend_release": qcfg() + adopt(TOKEN0) + extend_wait(5000) + sends(3, ALL3)
    + replies(b":1\r\n", b":1\r\n", b":1\r\n") + RELEASE + sends(3)
    + replies(b":1\r\n", b":1\r\n", b":1\r\n"),
    "invalid_key": qcfg(key=0) + acquire() + adopt(TOKEN0) + RELEASE + QUERY,
    "auth_select": qcfg(flags=6) + acquire()
    + b"".join(CONNECT + SEND + reply(OK) + SEND + reply(OK) + SEND for _ in range(3))
    + replies(OK, OK, OK),
    "close_one_server": qcfg() + acquire() + HELD3 + b"\x1f" + RELEASE + SEND + CONNECT + SEND
    + SEND + replies(b":1\r\n", b":1\r\n", b":1\r\n"),
    "random_fails": qcfg() + RANDOM_FAILS + acquire() + RANDOM_FAILS + acquire() + HELD3,
}


# fuzz_semaphore: config, then ops as fuzz_lock's but for the semaphore's calls (see
# fuzz_semaphore.cpp); the server's events as the calls need them.
def scfg(flags=0, timeout=100, buf=3, key=1, fair=False, limit=1):
    """flags 1 password, 3 user and password, 4 SELECT; limit 1, 3 or 0 (refused); buf 0..3 (3:
    semaphore_buffer_min())."""
    bits = {1: 0, 3: 1, 0: 3}[limit] << 4
    return bytes([flags | (8 if fair else 0) | bits, timeout, buf, key])


def s_acquire(ttl=1000, null_fence=False):
    return bytes([8 if null_fence else 0]) + u16(ttl)


def s_try_acquire(ttl, wait_ms, null_fence=False):
    return bytes([9 if null_fence else 1]) + u16(ttl) + bytes([wait_ms // 4])


HOLDERS = b"\x05"


def s_adopt(token):
    return b"\x17" + bytes([len(token)]) + token


def s_owner(label):
    return b"\x27" + bytes([len(label)]) + label


def grant(ms, number=1795778052223229):
    """The script's grant: {fencing number, ms the lease has left}."""
    digits = b"%d" % number
    return b"*2\r\n$%d\r\n%s\r\n:%d\r\n" % (len(digits), digits, ms)


def busy(ms):
    """The script's busy answer: the ms until the earliest lease ends (-1: none lives)."""
    return b":%d\r\n" % ms


def handoff(number, token=TOKEN0):
    """BLPOP's reply on a fair waiter's own list ({k}:f:TOKEN for key "k"): its fencing number."""
    name = b"{k}:f:" + token
    digits = b"%d" % number
    return b"*2\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(name), name, len(digits), digits)


def page(*leases):
    """A page of holders(): label, ms, label, ms..."""
    out = b"*%d\r\n" % (2 * len(leases))
    for label, ms in leases:
        out += b"$%d\r\n%s\r\n:%d\r\n" % (len(label), label, ms)
    return out


WOKEN = b"*2\r\n$8\r\n{k}:wake\r\n$1\r\n1\r\n"
SCRIPT_ERROR = (b"-ERR Error running script (call to f_x): @user_script:1: ERR value is not an "
                b"integer\r\n")
SEM_HELD = scfg() + s_acquire() + CONNECT + rt(grant(1000))

SEMAPHORE = {
    "acquire_release": SEM_HELD + RELEASE + owner(1),
    "acquire_null_fence": scfg() + s_acquire(null_fence=True) + CONNECT + rt(grant(1000))
    + RELEASE + owner(1),
    "acquire_limit3_fair": scfg(limit=3, fair=True) + s_acquire() + CONNECT + rt(grant(990))
    + RELEASE + owner(1),
    "acquire_busy": scfg() + s_acquire() + CONNECT + rt(busy(5000)),
    "acquire_busy_none_lives": scfg() + s_acquire() + CONNECT + rt(busy(-1)),
    "acquire_busy_below": scfg() + s_acquire() + CONNECT + rt(busy(-2)) + RELEASE + owner(1),
    "acquire_grant_ttl_zero": scfg() + s_acquire() + CONNECT + rt(grant(0)) + RELEASE + owner(1),
    # A grant of 50 s to an attempt of 1 s: the script never answers so. Semaphore::attempt takes
    # the reply's ms as the validity (see grant_bounded_by_ttl in fuzz_semaphore.cpp).
    "acquire_grant_longer_than_ttl": scfg() + s_acquire() + CONNECT + rt(grant(50000))
    + RELEASE + owner(1),
    "acquire_grant_leading_zero": scfg() + s_acquire() + CONNECT
    + rt(b"*2\r\n$4\r\n0123\r\n:1000\r\n") + RELEASE + owner(1),
    "acquire_grant_empty_fence": scfg() + s_acquire() + CONNECT
    + rt(b"*2\r\n$0\r\n\r\n:1000\r\n"),
    "acquire_grant_past_int64": scfg() + s_acquire() + CONNECT
    + rt(grant(1000, 12345678901234567890)),
    "acquire_grant_int64_max": scfg() + s_acquire() + CONNECT
    + rt(grant(1000, 9223372036854775807)) + RELEASE + owner(1),
    "acquire_grant_integer_fence": scfg() + s_acquire() + CONNECT
    + rt(b"*2\r\n:17\r\n:1000\r\n"),
    "acquire_grant_three": scfg() + s_acquire() + CONNECT
    + rt(b"*3\r\n$1\r\n1\r\n:1\r\n:1\r\n"),
    "acquire_grant_chunked": scfg() + s_acquire() + CONNECT + rt(grant(1000), chunk=3)
    + RELEASE + owner(1),
    "acquire_noscript": scfg() + s_acquire() + CONNECT + rt(NOSCRIPT) + rt(grant(1000)),
    "acquire_reply_lost": scfg() + s_acquire() + CONNECT + SEND + RECV_TIMEOUT + RELEASE
    + CONNECT + owner(1),
    "acquire_script_error": scfg() + s_acquire() + CONNECT + rt(SCRIPT_ERROR) + RELEASE
    + owner(1),
    "acquire_loading": scfg() + s_acquire() + CONNECT
    + rt(b"-LOADING Redis is loading the dataset in memory\r\n"),
    "acquire_small_buffer": scfg(buf=2) + s_acquire() + s_adopt(TOKEN0) + RELEASE,
    "acquire_twice": SEM_HELD + s_acquire(),
    "acquire_ttl_invalid": scfg() + s_acquire(0xFFF8) + s_acquire(0xFFFE) + s_acquire()
    + CONNECT + rt(grant(1000)),
    "acquire_random_fails": scfg() + RANDOM_FAILS + s_acquire() + RANDOM_FAILS + s_acquire()
    + CONNECT + rt(grant(1000)),
    "invalid_limit": scfg(limit=0) + s_acquire() + s_try_acquire(1000, 40) + QUERY + HOLDERS
    + s_adopt(TOKEN0) + RELEASE + extend(),
    "invalid_key": scfg(key=129) + s_acquire() + QUERY + HOLDERS,
    "auth_select": scfg(flags=7) + s_acquire() + CONNECT + rt(OK) + rt(OK) + rt(grant(1000)),
    "try_acquire_plain_woken": scfg(limit=3) + s_try_acquire(1000, 400) + CONNECT
    + rt(busy(5000)) + rt(WOKEN) + rt(grant(1000)),
    "try_acquire_plain_blpop_times_out": scfg() + s_try_acquire(1000, 400) + CONNECT
    + rt(busy(5000)) + SEND + delay(5) + reply(b"*-1\r\n") + rt(grant(1000)),
    "try_acquire_plain_gives_up": scfg() + s_try_acquire(1000, 20) + CONNECT
    + rt(busy(3)) * 7 + rt(busy(-1)),
    "try_acquire_plain_noperm": scfg() + s_try_acquire(1000, 400) + CONNECT + rt(busy(5000))
    + rt(b"-NOPERM this user has no permissions to run the 'blpop' command\r\n")
    + rt(busy(5000)) + rt(grant(1000)),
    "try_acquire_fair_handoff": scfg(fair=True) + s_try_acquire(1000, 400) + CONNECT
    + rt(busy(5000)) + rt(handoff(1795778052223230)) + RELEASE + owner(1),
    "try_acquire_fair_bad_handoff": scfg(fair=True) + s_try_acquire(1000, 400) + CONNECT
    + rt(busy(5000)) + rt(handoff(0)) + rt(grant(1000)),
    "try_acquire_fair_granted_on_refresh": scfg(fair=True, limit=3)
    + s_try_acquire(1000, 800) + CONNECT + rt(busy(300)) + SEND + delay(100)
    + reply(b"*-1\r\n") + rt(grant(1000)),
    "try_acquire_fair_leaves": scfg(fair=True) + s_try_acquire(1000, 40) + CONNECT
    + rt(busy(5000)) + rt(busy(5000)) + rt(busy(-1)),
    "try_acquire_fair_leave_granted": scfg(fair=True) + s_try_acquire(1000, 40) + CONNECT
    + rt(busy(5000)) + rt(busy(5000)) + rt(grant(960)) + RELEASE + owner(1),
    "try_acquire_fair_leave_lost": scfg(fair=True, timeout=5) + s_try_acquire(1000, 40)
    + CONNECT + rt(busy(5000)) + rt(busy(5000)) + SEND + RECV_TIMEOUT + RELEASE + CONNECT
    + owner(0),
    "release_expired": SEM_HELD + advance(2000) + RELEASE + owner(0),
    "release_minus_one": SEM_HELD + RELEASE + owner(-1),
    "release_other_integer": SEM_HELD + RELEASE + owner(2) + RELEASE + owner(1),
    "release_wrongtype": SEM_HELD + RELEASE
    + rt(b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    "release_lost": SEM_HELD + RELEASE + SEND + RECV_CLOSED,
    "release_noscript": SEM_HELD + RELEASE + rt(NOSCRIPT) + owner(1),
    "extend_ok": SEM_HELD + advance(500) + extend(2000) + owner(1) + RELEASE + owner(1),
    "extend_gone": SEM_HELD + extend(2000) + owner(0),
    "extend_after_local_expiry": scfg() + s_acquire(100) + CONNECT + rt(grant(100))
    + advance(200) + extend(100) + RELEASE + owner(0),
    "extend_times_out": scfg(timeout=50) + s_acquire(300) + CONNECT + rt(grant(300))
    + extend(300) + SEND + RECV_TIMEOUT,
    "adopt_extend_release": scfg() + s_adopt(TOKEN0) + extend(5000) + CONNECT + owner(1)
    + RELEASE + owner(1),
    "adopt_invalid": scfg() + s_adopt(b"") + s_adopt(b"x" * 74) + RELEASE,
    "owner_label_acquire": scfg() + s_owner(b"dev-42") + s_acquire() + CONNECT
    + rt(grant(1000)) + HOLDERS + rt(page((b"dev-42", 990))) + RELEASE + owner(1),
    "owner_label_invalid": scfg() + s_owner(b"bad label") + s_owner(b"x" * 33) + s_owner(b"")
    + s_acquire() + CONNECT + rt(busy(10)),
    "query_mine": SEM_HELD + QUERY + rt(b"*3\r\n:2\r\n:900\r\n:1\r\n"),
    "query_other": scfg() + QUERY + CONNECT + rt(b"*3\r\n:3\r\n:-2\r\n:0\r\n"),
    "query_malformed": scfg() + QUERY + CONNECT + rt(b"*3\r\n:1\r\n:-3\r\n:0\r\n") + QUERY
    + rt(b"*2\r\n:1\r\n:2\r\n") + QUERY + rt(b"*3\r\n:1\r\n$1\r\n5\r\n:0\r\n"),
    "holders_two": scfg() + HOLDERS + CONNECT + rt(page((b"dev-a", 900), (b"", 1500))),
    "holders_none": scfg() + HOLDERS + CONNECT + rt(b"*0\r\n"),
    "holders_pages": scfg(limit=3) + HOLDERS + CONNECT
    + rt(page((b"a", 1), (b"b", 2), (b"c", 3))) + rt(page((b"d", 4), (b"e", 5), (b"f", 6)))
    + rt(page((b"g", 7))),
    "holders_long_label": scfg() + HOLDERS + CONNECT + rt(page((b"x" * 33, 900))),
    "holders_odd": scfg() + HOLDERS + CONNECT + rt(b"*1\r\n$1\r\na\r\n"),
    "holders_negative_ms": scfg() + HOLDERS + CONNECT + rt(page((b"a", -5))),
    "holders_second_page_lost": scfg(timeout=2) + HOLDERS + CONNECT + SEND + delay(33)
    + reply(page((b"a", 1), (b"b", 2), (b"c", 3))) + SEND + RECV_TIMEOUT,
    "close_between_calls": SEM_HELD + CLOSE + RELEASE + CONNECT + owner(1),
}


# fuzz_sentinel: LEN BYTES (one reply for the parsers), then sentinels and timeout, then the
# server's events for up to eight PINGs (see fuzz_sentinel.cpp).
ADDR = b"*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n"
MASTER = b"*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
SLAVE = b"*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:6380\r\n$9\r\nconnected\r\n:0\r\n"
READONLY = b"-READONLY You can't write against a read only replica.\r\n"


def sentinel_seed(parsed, sentinels=1, timeout=100, events=b""):
    return bytes([len(parsed)]) + parsed + bytes([sentinels - 1, timeout]) + events


def rt_long(data):
    """A round trip whose reply comes in several reads of at most 200 bytes."""
    return SEND + b"".join(reply(data[i:i + 200]) for i in range(0, len(data), 200))


def resolve(addr=ADDR, role=MASTER):
    """A sentinel gives addr, the master answers ROLE with role."""
    return CONNECT + rt(addr) + CONNECT + rt_long(role)


def master_with(replicas):
    """A master's ROLE reply listing `replicas` replicas (4 + 4 per replica values)."""
    r = b"*3\r\n$6\r\nmaster\r\n:0\r\n*" + str(replicas).encode() + b"\r\n"
    for i in range(replicas):
        r += b"*3\r\n$9\r\n127.0.0.1\r\n$4\r\n" + str(6390 + i).encode() + b"\r\n$1\r\n0\r\n"
    return r


SENTINEL = {
    "addr_master_ping": sentinel_seed(ADDR, 1, 100, resolve() + rt(b"+PONG\r\n")),
    "master_with_replicas": sentinel_seed(master_with(5), 3, 100,
                                          resolve(role=master_with(20)) + rt(b"+PONG\r\n")
                                          + CONNECT + rt(ADDR) + CONNECT + rt(ADDR)
                                          + CONNECT + rt(ADDR)),
    "confirm_names_another": sentinel_seed(ADDR, 2, 100,
                                           resolve() + rt(b"+PONG\r\n") + CONNECT + rt(ADDR)
                                           + CONNECT
                                           + rt(b"*2\r\n$9\r\n127.0.0.1\r\n$4\r\n6381\r\n")),
    "nil_then_next": sentinel_seed(b"*-1\r\n", 2, 100,
                                   CONNECT + rt(b"*-1\r\n") + resolve() + rt(b"+PONG\r\n")),
    "all_unknown": sentinel_seed(b"$-1\r\n", 2, 100, CONNECT + rt(b"*-1\r\n") + REFUSED),
    "unreachable": sentinel_seed(b"-ERR x\r\n", 3, 100, REFUSED + CONNECT_TIMEOUT + REFUSED),
    "slave_then_master": sentinel_seed(SLAVE, 1, 100,
                                       resolve(role=SLAVE) + resolve() + rt(b"+PONG\r\n")),
    "readonly_resend": sentinel_seed(READONLY, 1, 100,
                                     resolve() + rt(READONLY) + resolve() + rt(b"+PONG\r\n")),
    "bad_port": sentinel_seed(b"*2\r\n$1\r\nh\r\n$5\r\n65536\r\n", 2, 100,
                              CONNECT + rt(b"*2\r\n$1\r\nh\r\n$1\r\n0\r\n") + resolve()),
    "role_error": sentinel_seed(b"*1\r\n:1\r\n", 1, 100,
                                resolve(role=b"-NOPERM no\r\n") + resolve(role=b"+OK\r\n")),
    "lost_then_again": sentinel_seed(MASTER, 1, 100,
                                     resolve() + SEND + RECV_CLOSED + resolve() + rt(b"+PONG\r\n")),
}


# fuzz_cluster: config byte, then ops; the server's connect / send / recv events as the calls
# need them (see fuzz_cluster.cpp).
C_GET = b"\x00"
C_CLOSE = b"\x01"
C_OK = b"\x00"  # connect ok, or send accepted
C_REFUSED = b"\x03"


def c_value(data):
    return b"\x00" + bytes([len(data)]) + data


def c_redirect(ask, slot, host, port=None):
    how = (1 if ask else 0) | (2 if port is None else 0)
    out = b"\x06" + bytes([how]) + u16(slot) + bytes([len(host)]) + host
    return out + (u16(port) if port is not None else b"")


def c_round(recv):
    return C_OK + C_OK + recv  # connect, send, then the reply


C_ASKING_OK = b"\x07"
CLUSTER = {
    "moved_then_value": b"\x64" + C_GET + c_round(c_redirect(False, 3999, b"127.0.0.1", 7001))
    + c_round(c_value(b"$1\r\nv\r\n")),
    "ask_then_value": b"\x64" + C_GET + c_round(c_redirect(True, 12, b"b", 2))
    + C_OK + C_OK + C_ASKING_OK + C_OK + c_value(b"$1\r\nv\r\n"),
    "moved_loop": b"\x64" + C_GET + C_OK
    + (C_OK + c_redirect(False, 5, b"a", 1) + C_OK) * 7,
    "ask_loop": b"\x64" + C_GET + c_round(c_redirect(True, 5, b"a", 1))
    + (C_OK + C_OK + C_ASKING_OK + C_OK + c_redirect(True, 5, b"a", 1)) * 6,
    "empty_host": b"\x64" + C_GET + c_round(c_redirect(False, 3999, b"", 6380))
    + c_round(c_value(b":1\r\n")),
    "bad_slot": b"\x64" + C_GET + c_round(c_redirect(False, 16384, b"a", 1)),
    "no_port": b"\x64" + C_GET + c_round(c_redirect(True, 1, b"a", None)),
    "long_host": b"\x64" + C_GET + c_round(c_redirect(False, 1, b"h" * 65, 1)),
    "asking_refused": b"\x64" + C_GET + c_round(c_redirect(True, 12, b"b", 2))
    + C_OK + C_OK + c_value(b"-ERR unknown command 'ASKING'\r\n"),
    "asking_odd": b"\x64" + C_GET + c_round(c_redirect(True, 12, b"b", 2))
    + C_OK + C_OK + c_value(b":1\r\n"),
    "fallback": b"\x64" + C_GET + c_round(c_redirect(False, 7, b"gone", 1))
    + c_round(c_value(b":1\r\n")) + C_CLOSE + C_GET + C_REFUSED + c_round(c_value(b":2\r\n")),
    "other_error": b"\x64" + C_GET + c_round(c_value(b"-CROSSSLOT Keys don't hash\r\n")),
}


def write(folder, seeds):
    path = os.path.join(HERE, "corpus", folder)
    os.makedirs(path, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("resp", RESP)
    write("lock", LOCK)
    write("quorum", QUORUM)
    write("semaphore", SEMAPHORE)
    write("sentinel", SENTINEL)
    write("cluster", CLUSTER)
