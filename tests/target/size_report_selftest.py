#!/usr/bin/env python3
"""Checks size_report.py against independent figures, so that a wrong analysis cannot pass the
budget test: compiles fixtures/callgraph.cpp for Cortex-M4 as `make size` compiles the core, then
checks that the report
- sums sections like binutils' `size` does (flash = text + data, RAM = data + bss),
- adds up a call chain from the compiler's own .su frame sizes,
- reports the recursion in the fixture as an error and exits non-zero;
and firmware_size.py against fixtures/firmware.map, a GNU ld map written by hand with its sums
worked out below (discarded sections, padding, a name on its own line, .data, .bss, debug).
Exits 77 (CTest's skip code) when arm-none-eabi-g++ is absent (after the map check)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CXX = "arm-none-eabi-g++"
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


def main():
    failures = []

    def check(ok, what):
        print(("ok: " if ok else "FAILED: ") + what)
        if not ok:
            failures.append(what)

    firmware_map_check(check)
    if shutil.which(CXX) is None:
        print(f"SKIPPED: {CXX} not installed")
        return 1 if failures else 77

    with tempfile.TemporaryDirectory() as build:
        os.makedirs(os.path.join(build, "src", "core"))
        obj = os.path.join(build, "src", "core", "callgraph.o")
        subprocess.run([CXX, *FLAGS, "-c", os.path.join(HERE, "fixtures", "callgraph.cpp"),
                        "-o", obj], check=True)
        report = subprocess.run([sys.executable, os.path.join(HERE, "size_report.py"),
                                 "--build", build, "--check"],
                                capture_output=True, text=True)
        print(report.stdout, end="")
        values = dict((m.group(1), int(m.group(2))) for m in
                      re.finditer(r"^(\S+) (\d+) bytes$", report.stdout, re.M))

        berkeley = subprocess.run(["arm-none-eabi-size", obj], capture_output=True, text=True,
                                  check=True).stdout.splitlines()[1].split()
        text, data, bss = (int(x) for x in berkeley[:3])
        check(values.get("cortex_m4.core_flash") == text + data,
              f"flash {values.get('cortex_m4.core_flash')} == size's text + data {text + data}")
        check(values.get("cortex_m4.core_ram") == data + bss,
              f"RAM {values.get('cortex_m4.core_ram')} == size's data + bss {data + bss}")

        frames = {}
        with open(obj[:-2] + ".su") as su:
            for line in su:
                where, size, _ = line.rsplit("\t", 2)
                signature = re.sub(r"^.*?:\d+:\d+:", "", where)
                frames[signature.split("(")[0].split(" ")[-1]] = int(size)
        expected = frames["resplock::resp::Parser::parse"] + frames["resplock::resp::leaf"]
        got = values.get("cortex_m4.stack.resp::Parser::parse")
        check(got == expected, f"stack of Parser::parse {got} == parse + leaf frames {expected}")

        check(re.search(r"^ERROR: recursion: .*encode_command.*bounce", report.stdout, re.M)
              is not None, "the recursion encode_command -> bounce is an ERROR line")
        check(report.returncode == 1, f"exit status {report.returncode} == 1")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
