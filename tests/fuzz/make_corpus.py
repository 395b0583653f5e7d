#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/resp (raw server replies) and
tests/fuzz/corpus/lock (inputs in the format described at the top of fuzz_lock.cpp). The files
are committed; rerun this after changing a seed, and keep each file tiny. Inputs a fuzz run found
that are worth keeping are committed as they were saved (regress_* files this script does not
write); it never deletes them."""
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
