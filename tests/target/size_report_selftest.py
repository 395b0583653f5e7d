#!/usr/bin/env python3
"""Checks size_report.py against independent figures, so that a wrong analysis cannot pass the
budget test:
- the link-map reading, on fixtures/core.map, a GNU ld map written by hand with its sums worked out
  below (kept and discarded sections, a symbol from the firmware's own object, the C run-time,
  padding, overlapping merged strings, a name on its own line or not, .data, .bss, debug);
- faults: an extra library function in that map raises the figure and fails the budget the
  figure had met; a budget one byte below the figure fails;
- firmware_size.py against fixtures/firmware.map the same way;
then, with arm-none-eabi-g++: compiles fixtures/callgraph.cpp as `make size` compiles the
library, archives it, links two small firmwares with --gc-sections (one calls Parser::parse, the
other encode_command as well) and checks that the report
- sums what each firmware links from the archive like `nm -S` sizes its symbols, the functions it
  does not call left out, and that the second firmware's extra functions fail the first's budget;
- sums each object like binutils' `size` (flash = text + data, RAM = data + bss);
- adds up a call chain from the compiler's own .su frame sizes;
- reports the recursion in the fixture as an error and exits non-zero.
Exits 77 (CTest's skip code) when arm-none-eabi-g++ is absent (after the map checks)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linkmap  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CXX = "arm-none-eabi-g++"
REPORT = os.path.join(HERE, "size_report.py")
FLAGS = ["-std=c++17", "-Os", "-mcpu=cortex-m4", "-mthumb", "-fno-exceptions", "-fno-rtti",
         "-ffunction-sections", "-fdata-sections", "-fstack-usage", "-fcallgraph-info=su"]


def firmware_map_check(check):
    """firmware_size.py on fixtures/firmware.map. Library flash: Lock::acquire 0x90 + lock_init
    0x26 + lock.o's strings 0x20 + its .data 0x4 = 218; C run-time: memcmp 0x60 = 96; total 314.
    RAM: .data 4 + libc's .bss 8 = 12. The firmware's own 0x8 + 0x20 + 0x10 = 56 B and 0x40 B
    of .bss, the discarded lock_query, the padding and the debug sections are not counted."""
    tool = os.path.join(HERE, "firmware_size.py")
    fixture = os.path.join(HERE, "fixtures", "firmware.map")

    def run(*extra):
        return subprocess.run([sys.executable, tool, fixture, "--max-ram", "12", *extra],
                              capture_output=True, text=True)

    out = run().stdout
    for name, value in (("flash", 314), ("ram", 12), ("library_flash", 218),
                        ("runtime_flash", 96)):
        line = f"cortex_m4.firmware_c_api.{name} {value} bytes"
        check(line in out.splitlines(), f"firmware map: {line}")
    check(run("--check", "--max-flash", "314").returncode == 0, "firmware map: 314 B within 314 B")
    check(run("--check", "--max-flash", "313").returncode == 1, "firmware map: 314 B over 313 B")


def figures(stdout):
    return dict((m.group(1), int(m.group(2))) for m in
                re.finditer(r"^(\S+) (\d+) (?:bytes|count)$", stdout, re.M))


def report(*args):
    return subprocess.run([sys.executable, REPORT, *args], capture_output=True, text=True)


def core_map_check(check, tmp):
    """size_report.py on fixtures/core.map. Library flash: Lock::acquire 0x90 = 144 +
    Connection::connect 0x20 = 32 (its name on the address line) + lock.o's strings 0x20 = 32
    (the 0x6 of Lock::acquire's strings lie inside them: ld merged them) + connection.o's switch
    table 5 + lock.o's .data 4 = 217. RAM: .data 4 + .bss 8 = 12. Not counted: the firmware's own
    vectors, main, its own Lock::release and strings, its .bss; memcpy; the discarded Lock::adopt;
    the two *fill*; .comment and .debug_info."""
    fixture = os.path.join(HERE, "fixtures", "core.map")
    res = report("--map", fixture, "--max-core-ram", "12", "--check")
    values = figures(res.stdout)
    check(values.get("cortex_m4.core_flash") == 217,
          f"core map: flash {values.get('cortex_m4.core_flash')} == 217")
    check(values.get("cortex_m4.core_ram") == 12,
          f"core map: RAM {values.get('cortex_m4.core_ram')} == 12")
    check(values.get("cortex_m4.core_symbols") == 6,
          f"core map: {values.get('cortex_m4.core_symbols')} symbols == 6")
    check(values.get("cortex_m4.core_flash_by_source.lock.o") == 180 and
          values.get("cortex_m4.core_flash_by_source.connection.o") == 37,
          "core map: by source lock.o 180, connection.o 37")
    rows = [line.split() for line in res.stdout.splitlines() if line.startswith("    ")]
    check(rows[:1] == [["144", "0", "text", "lock.o", "Lock::acquire(unsigned", "long)"]],
          "core map: the largest symbol first, Lock::acquire 144 B from lock.o")
    check("Lock::release" not in res.stdout and "adopt" not in res.stdout and
          "memcpy(" not in res.stdout, "core map: no firmware, discarded or run-time symbol")
    check(res.returncode == 0, f"core map: 217 B within 4352 B, exit {res.returncode} == 0")
    check(report("--map", fixture, "--max-core-ram", "12", "--max-core-flash", "216",
                 "--check").returncode == 1, "core map: 217 B over a budget of 216 B fails")
    check(report("--map", fixture, "--check").returncode == 1,
          "core map: 12 B of RAM over the default 0 B fails")

    # The fault: one more library function kept (Lock::query, 0x40, in the padding's place).
    with open(fixture) as f:
        text = f.read()
    extra = (" .text._ZN8resplock4Lock5queryERNS_8LockInfoE\n"
             "                0x000000e8       0x40 build/libresplock.a(lock.o)\n")
    faulty = os.path.join(tmp, "core_faulty.map")
    with open(faulty, "w") as f:
        f.write(text.replace(" *fill*         0x000000e8        0x2 \n", extra))
    res = report("--map", faulty, "--max-core-ram", "12", "--max-core-flash", "217", "--check")
    check(figures(res.stdout).get("cortex_m4.core_flash") == 217 + 0x40,
          f"fault: an extra function raises the figure to {217 + 0x40}")
    check(res.returncode == 1 and "OVER BUDGET: core flash 281 B > 217 B" in res.stdout,
          "fault: the extra function fails the budget the figure had met")

    # occupied() directly: overlapping merged strings counted once, for the first.
    secs = [linkmap.Section(".text", "a", 0x10, 0x8, "x"), linkmap.Section(".text", "b", 0x10, 0x20, "y"),
            linkmap.Section(".text", "c", 0x30, 0x4, "x")]
    got = [(s.name, n) for s, n in linkmap.occupied(secs)]
    check(got == [("b", 0x20), ("a", 0), ("c", 4)], f"occupied: {got}")


FIRMWARE = """
namespace resplock::resp {
struct Parser { int parse(int n) noexcept; };
int encode_command(int n) noexcept;
}
extern "C" { extern unsigned __stack_top__; void reset_handler(); }
volatile int sink;
void reset_handler() {
    resplock::resp::Parser p;
    sink = p.parse(sink);
    EXTRA
    for (;;) {}
}
struct Vectors { void* sp; void (*reset)(); };
__attribute__((section(".vectors"), used)) const Vectors vectors = {&__stack_top__, reset_handler};
"""


def link(build, name, extra):
    """Links a firmware calling Parser::parse (and `extra`) against build/libresplock.a; returns
    its map and elf."""
    src = os.path.join(build, name + ".cpp")
    with open(src, "w") as f:
        f.write(FIRMWARE.replace("EXTRA", extra))
    base = os.path.join(build, name)
    subprocess.run([CXX, *FLAGS[:6], "-ffunction-sections", "-fdata-sections", "-c", src, "-o",
                    base + ".o"], check=True)
    subprocess.run([CXX, "-mcpu=cortex-m4", "-mthumb", "--specs=nano.specs", "-nostartfiles",
                    "-T", os.path.join(HERE, "cortex-m4", "mps2-an386.ld"), "-Wl,--gc-sections",
                    f"-Wl,-Map,{base}.map", "-o", base + ".elf", base + ".o",
                    os.path.join(build, "libresplock.a")], check=True)
    return base + ".map", base + ".elf"


def nm_sizes(elf, names):
    """{symbol: size} from nm -S for the given (mangled) symbols."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", elf], capture_output=True, text=True,
                         check=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] in names:
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


def main():
    failures = []

    def check(ok, what):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        core_map_check(check, tmp)
    firmware_map_check(check)
    if shutil.which(CXX) is None:
        print(f"SKIPPED: {CXX} not installed")
        return 1 if failures else 77

    with tempfile.TemporaryDirectory() as build:
        os.makedirs(os.path.join(build, "src", "core"))
        obj = os.path.join(build, "src", "core", "callgraph.o")
        subprocess.run([CXX, *FLAGS, "-c", os.path.join(HERE, "fixtures", "callgraph.cpp"),
                        "-o", obj], check=True)
        subprocess.run(["arm-none-eabi-ar", "rcs", os.path.join(build, "libresplock.a"), obj],
                       check=True)
        plain_map, plain_elf = link(build, "plain", "")
        more_map, more_elf = link(build, "more", "sink = resplock::resp::encode_command(sink);")

        linked = ["_ZN8resplock4resp6Parser5parseEi", "_ZN8resplock4resp4leafEPVc",
                  "_ZN8resplock4resp14fixture_rodataE", "_ZN8resplock4resp12fixture_dataE"]
        extra = ["_ZN8resplock4resp14encode_commandEi", "_ZN8resplock4resp6bounceEi"]
        bss = "_ZN8resplock4resp11fixture_bssE"
        sizes = nm_sizes(more_elf, linked + extra + [bss])
        plain = figures(report("--map", plain_map, "--max-core-ram", "16").stdout)
        expected = sum(sizes.get(n, 0) for n in linked)
        check(plain.get("cortex_m4.core_flash") == expected,
              f"firmware: flash {plain.get('cortex_m4.core_flash')} == nm sizes of parse, leaf, "
              f"rodata, data {expected}")
        ram = sizes.get("_ZN8resplock4resp12fixture_dataE", 0) + sizes.get(bss, 0)
        check(plain.get("cortex_m4.core_ram") == ram,
              f"firmware: RAM {plain.get('cortex_m4.core_ram')} == nm sizes of data + bss {ram}")
        more = report("--map", more_map, "--max-core-ram", "16", "--check",
                      "--max-core-flash", str(plain.get("cortex_m4.core_flash")))
        grown = figures(more.stdout).get("cortex_m4.core_flash")
        expected = plain.get("cortex_m4.core_flash", 0) + sum(sizes.get(n, 0) for n in extra)
        check(grown == expected, f"fault: calling encode_command links it and bounce, "
              f"{grown} == {expected}")
        check(more.returncode == 1, "fault: those extra functions fail the first firmware's budget")

        res = report("--map", plain_map, "--build", build, "--max-core-ram", "16", "--check")
        print(res.stdout, end="")
        values = figures(res.stdout)
        check("src/core/callgraph.cpp" in res.stdout.split("every object")[0],
              "firmware: symbols attributed to their source, src/core/callgraph.cpp")

        berkeley = subprocess.run(["arm-none-eabi-size", obj], capture_output=True, text=True,
                                  check=True).stdout.splitlines()[1].split()
        text, data, bss_size = (int(x) for x in berkeley[:3])
        check(values.get("cortex_m4.flash.core.callgraph") == text + data,
              f"object flash {values.get('cortex_m4.flash.core.callgraph')} == size's text + data "
              f"{text + data}")
        check(values.get("cortex_m4.ram.core.callgraph") == data + bss_size,
              f"object RAM {values.get('cortex_m4.ram.core.callgraph')} == size's data + bss "
              f"{data + bss_size}")

        frames = {}
        with open(obj[:-2] + ".su") as su:
            for line in su:
                where, size, _ = line.rsplit("\t", 2)
                signature = re.sub(r"^.*?:\d+:\d+:", "", where)
                frames[signature.split("(")[0].split(" ")[-1]] = int(size)
        expected = frames["resplock::resp::Parser::parse"] + frames["resplock::resp::leaf"]
        got = values.get("cortex_m4.stack.resp::Parser::parse")
        check(got == expected, f"stack of Parser::parse {got} == parse + leaf frames {expected}")
        check(values.get("cortex_m4.core_stack_worst") == expected,
              "Parser::parse, linked by the firmware, is budgeted")

        check(re.search(r"^ERROR: recursion: .*encode_command.*bounce", res.stdout, re.M)
              is not None, "the recursion encode_command -> bounce is an ERROR line")
        check("ERROR: the core firmware links no resp::encode_command" in res.stdout,
              "a plain-lock call the firmware does not link is an ERROR line")
        check(res.returncode == 1, f"exit status {res.returncode} == 1")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
