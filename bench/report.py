#!/usr/bin/env python3
"""Summarises bench/run.sh's raw measurements (`name value unit` lines): medians over the
interleaved rounds, ratios per round, instructions per cycle from two callgrind run lengths, and
the invariants. Prints a table for people, then `name value unit` lines for scripts.

  report.py RAW_FILE BUILD_DIR

Exits 1 when an invariant fails: heap calls by resplock inside the measured loop, or a malloc
counter that saw nothing from hiredis either (it would not be counting at all).
"""

import re
import statistics
import sys


def load(path):
    values = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                values[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "-")
    return values


ANNOTATE_LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.+?)\s*$")


def function_costs(path):
    """Ir per function from a callgrind_annotate listing."""
    costs = {}
    with open(path) as f:
        for line in f:
            m = ANNOTATE_LINE.match(line)
            if not m or "PROGRAM TOTALS" in m.group(2):
                continue
            where = re.sub(r" \[[^\]]*\]$", "", m.group(2))  # drop the [object]
            name = where.split(":", 1)[1] if ":" in where else where
            name = re.sub(r"(?<=\w)\(.*\)", "()", name)  # drop parameter lists
            name = name.replace("std::basic_string_view<char, std::char_traits<char> >", "sv")
            costs[name] = costs.get(name, 0) + int(m.group(1).replace(",", ""))
    return costs


def main():
    raw, build = sys.argv[1], sys.argv[2]
    v = load(raw)

    def num(name):
        return float(v[name][0])

    out = []  # (name, value, unit)
    failures = []

    def emit(name, value, unit, fmt="{:.0f}"):
        out.append((name, fmt.format(value) if isinstance(value, float) else str(value), unit))
        return value

    print("== 1. Uncontended acquire + release, one connection (medians of interleaved rounds)")
    rounds = sorted({int(m.group(1)) for k in v for m in [re.match(r"round(\d+)\.", k)] if m})
    per = {"ours": [], "hiredis": [], "raw": [], "limit": [], "set": [], "evalsha": []}
    ratio_limit, ratio_hiredis, ratio_raw = [], [], []
    server = {"ours": [], "hiredis": [], "raw": [], "limit": []}
    for r in rounds:
        ours, hired, raw_ = num(f"round{r}.ours"), num(f"round{r}.hiredis"), num(f"round{r}.raw")
        s, e = num(f"round{r}.limit_set"), num(f"round{r}.limit_evalsha")
        limit = 1.0 / (1.0 / s + 1.0 / e)
        for key, val in (("ours", ours), ("hiredis", hired), ("raw", raw_), ("limit", limit),
                         ("set", s), ("evalsha", e)):
            per[key].append(val)
        ratio_limit.append(ours / limit)
        ratio_hiredis.append(ours / hired)
        ratio_raw.append(ours / raw_)
        for key in server:
            server[key].append(num(f"round{r}.{key}.server"))
    med = {k: statistics.median(x) for k, x in per.items()}
    rl, rh = statistics.median(ratio_limit), statistics.median(ratio_hiredis)
    rr = statistics.median(ratio_raw)
    rtt_us = 1e6 / med["ours"] / 2
    print(f"{'client':44} {'cycles/s':>10} {'us/cycle':>9} {'server us':>9}")
    rows = (
        ("resplock (Connection + Lock, POSIX port)", med["ours"], statistics.median(server["ours"])),
        ("hiredis 0.14 (redisCommand SET + EVALSHA)", med["hiredis"],
         statistics.median(server["hiredis"])),
        ("limit: redis-benchmark -c 1 -P 1, SET+EVALSHA", med["limit"],
         statistics.median(server["limit"])),
        ("floor: pre-encoded requests, blocking socket", med["raw"],
         statistics.median(server["raw"])),
    )
    for name, rate, srv in rows:
        print(f"{name:44} {rate:10.0f} {1e6 / rate:9.1f} {srv:9.2f}")
    print(f"  redis-benchmark alone: SET NX PX {med['set']:.0f} ops/s, "
          f"EVALSHA {med['evalsha']:.0f} ops/s ({len(rounds)} rounds)")
    print(f"  ours / limit {rl:.3f} (target >= 0.97)   ours / hiredis {rh:.3f} (target > 1)")
    print(f"  per-round ours/limit: {' '.join(f'{x:.3f}' for x in ratio_limit)}")
    emit("cycle.ours", med["ours"], "cycles/s")
    emit("cycle.hiredis", med["hiredis"], "cycles/s")
    emit("cycle.limit", med["limit"], "cycles/s")
    emit("cycle.limit.set", med["set"], "ops/s")
    emit("cycle.limit.evalsha", med["evalsha"], "ops/s")
    emit("cycle.ratio.ours_limit", rl, "ratio", "{:.3f}")
    emit("cycle.ratio.ours_hiredis", rh, "ratio", "{:.3f}")
    emit("cycle.raw", med["raw"], "cycles/s")
    emit("cycle.ratio.ours_raw", rr, "ratio", "{:.3f}")
    emit("cycle.round_trip", rtt_us, "us", "{:.1f}")
    for key in server:
        emit(f"cycle.server.{key}", statistics.median(server[key]), "us/cycle", "{:.2f}")
    emit("cycle.rounds", len(rounds), "rounds")

    print()
    print("== 2. User-space instructions per cycle (callgrind Ir, start-up subtracted)")
    short, long_ = int(num("callgrind.short")), int(num("callgrind.long"))
    ir = {}
    for client in ("ours", "hiredis"):
        ir[client] = (num(f"callgrind.{client}.{long_}") - num(f"callgrind.{client}.{short}")) / (
            long_ - short)
        emit(f"instructions.{client}", ir[client], "Ir/cycle")
    print(f"resplock {ir['ours']:.0f} Ir/cycle (target <= 1000)   hiredis {ir['hiredis']:.0f}"
          f" Ir/cycle   ratio {ir['hiredis'] / ir['ours']:.1f}x")
    for client in ("ours", "hiredis"):
        a = function_costs(f"{build}/callgrind.{client}.{short}.txt")
        b = function_costs(f"{build}/callgrind.{client}.{long_}.txt")
        diff = {f: (b.get(f, 0) - a.get(f, 0)) / (long_ - short) for f in set(a) | set(b)}
        top = sorted(diff.items(), key=lambda kv: -kv[1])[:10 if client == "ours" else 5]
        print(f"  where {client}' instructions go (Ir/cycle, self cost):")
        for f, c in top:
            print(f"    {c:7.0f}  {f[:90]}")

    print()
    print("== 3. Contended hand-off: K processes, one key, hold 5 ms; a process rejoins once"
          " another holds")
    print(f"{'waiter':34} {'K':>2} {'acq/s':>7} {'median ms':>10} {'p99 ms':>8}"
          f" {'med RTTs':>9} {'req/acq':>8} {'SET/acq':>8} {'PTTL/acq':>9} {'BLPOP/acq':>10}")
    for strategy, label in (("backoff", "resplock try_acquire backoff"),
                            ("poll", "poll: acquire, sleep 100 ms"),
                            ("wake", "resplock try_acquire + wake")):
        for k in (2, 4, 8):
            p = f"handoff.{strategy}.k{k}."
            acq, medn, p99 = num(p + "acq_per_s"), num(p + "handoff_median_ms"), num(
                p + "handoff_p99_ms")
            req, sets, pttl = num(p + "requests_per_acq"), num(p + "set_per_acq"), num(
                p + "pttl_per_acq")
            blpop = num(p + "blpop_per_acq")
            print(f"{label:34} {k:2d} {acq:7.1f} {medn:10.2f} {p99:8.2f}"
                  f" {medn * 1000 / rtt_us:9.1f} {req:8.2f} {sets:8.2f} {pttl:9.2f} {blpop:10.2f}")
            q = f"handoff.{strategy}.k{k}"
            emit(f"{q}.acquisitions_per_s", acq, "1/s", "{:.1f}")
            emit(f"{q}.delay_median", medn, "ms", "{:.2f}")
            emit(f"{q}.delay_p99", p99, "ms", "{:.2f}")
            emit(f"{q}.delay_median_rtt", medn * 1000 / rtt_us, "round-trips", "{:.1f}")
            emit(f"{q}.requests_per_acquisition", req, "requests", "{:.2f}")
            emit(f"{q}.handoffs", int(num(p + "handoffs")), "count")
    idle_us = num("idle_rtt.median_us")
    emit("idle_rtt", idle_us, "us", "{:.1f}")
    for k in (2, 4, 8):
        medn = num(f"handoff.wake.k{k}.handoff_median_ms")
        emit(f"handoff.wake.k{k}.delay_median_idle_rtt", medn * 1000 / idle_us, "round-trips",
             "{:.1f}")
    print(f"  round trip of a client asleep 2 ms before each PING (as a woken waiter):"
          f" {idle_us:.1f} us; wake median in those: "
          + " / ".join(f"{num(f'handoff.wake.k{k}.handoff_median_ms') * 1000 / idle_us:.1f}"
                       for k in (2, 4, 8)) + " (K = 2 / 4 / 8)")
    print(f"  requests: SET + PTTL + EVALSHA/EVAL + BLPOP calls counted by the server (INFO"
          f" commandstats) / acquisitions (for wake, not the SET and PTTL its scripts call); a"
          f" round trip is half an uncontended cycle of part 1 ({rtt_us:.1f} us)")

    print()
    print("== 4. Footprint")
    if "cortex_m4.skipped" in v:
        print("Cortex-M4: skipped (arm-none-eabi-g++ not installed)")
        emit("footprint.cortex_m4", "skipped", "-")
    else:
        stacks = {k[len("cortex_m4.stack."):]: int(num(k)) for k in v
                  if k.startswith("cortex_m4.stack.")}
        worst = max(stacks, key=lambda k: stacks[k])
        flash, ram = int(num("cortex_m4.core_flash")), int(num("cortex_m4.core_ram"))
        print(f"Cortex-M4 (-Os, arm-none-eabi-g++): core flash {flash} B, static RAM {ram} B,"
              f" worst stack of any public call {stacks[worst]} B ({worst}; the plain lock's"
              f" try_acquire {stacks.get('Lock::try_acquire/2', 0)} B)")
        emit("footprint.cortex_m4.flash", flash, "bytes")
        emit("footprint.cortex_m4.ram", ram, "bytes")
        emit("footprint.cortex_m4.stack_worst", stacks[worst], "bytes")
    print(f"{'x86-64 static library (-O2)':40} {'.a bytes':>9} {'text+data+bss':>14}")
    for lib, label in (("resplock", "libresplock.a (every object)"),
                       ("resplock_posix", "libresplock_posix.a (POSIX port)"),
                       ("hiredis", "libhiredis.a (Debian)")):
        f, c = int(num(f"x86_64.{lib}.file")), int(num(f"x86_64.{lib}.code"))
        print(f"{label:40} {f:9d} {c:14d}")
        emit(f"footprint.x86_64.{lib}.file", f, "bytes")
        emit(f"footprint.x86_64.{lib}.code", c, "bytes")

    print()
    print("== 5. Heap calls inside the measured loop (LD_PRELOAD counter)")
    n = int(num("heap.cycles"))
    for client in ("ours", "hiredis"):
        a, f = int(num(f"heap.{client}.allocs")), int(num(f"heap.{client}.frees"))
        print(f"{client:8} allocations {a / n:6.2f}/cycle   frees {f / n:6.2f}/cycle   ({n} cycles)")
        emit(f"heap.{client}.allocations", a / n, "per-cycle", "{:.2f}")
        emit(f"heap.{client}.frees", f / n, "per-cycle", "{:.2f}")
    if int(num("heap.ours.allocs")) != 0 or int(num("heap.ours.frees")) != 0:
        failures.append("resplock touched the heap inside the measured loop")
    if int(num("heap.hiredis.allocs")) == 0:
        failures.append("the malloc counter saw no allocation from hiredis: it is not counting")

    print()
    for name, value, unit in out:
        print(f"{name} {value} {unit}")
    for f in failures:
        print(f"INVARIANT FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
