#!/usr/bin/env python3
"""target.footprint_table_selftest: footprint_table.py over a made-up size report and document.

Writes a core's table into a document that has none (--write), checks that the comparison then
passes, and that it fails, naming the row, on each fault put into the document: one number changed,
a row removed, a row added; and on a report whose figure moved. Checks that another core's table
and the text around the table are left as they were by --write.
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "footprint_table.py")

REPORT = """resplock on cortex_m0plus: arm-none-eabi-g++ -Os -mcpu=cortex-m0plus
cortex_m0plus.core_flash 300 bytes
cortex_m0plus.core_ram 0 bytes
cortex_m0plus.core_flash_by_source.core.lock 200 bytes
cortex_m0plus.core_flash_by_source.core.resp 100 bytes
cortex_m0plus.core_stack_worst 96 bytes
cortex_m0plus.stack.Lock::extend 96 bytes
cortex_m0plus.stack.FairLock::release 900 bytes
cortex_m0plus.core_stack.Lock::extend 96 bytes
cortex_m0plus.firmware_c_api.flash 420 bytes
cortex_m0plus.firmware_c_api.ram 0 bytes
cortex_m0plus.firmware_c_api.library_flash 320 bytes
cortex_m0plus.firmware_c_api.runtime_flash 100 bytes
cortex_m0plus.firmware_c_api.runtime.libgcc.a(_udivsi3.o) 100 bytes
cortex_m4.core_flash 999 bytes
"""

DOC = """# Footprint

Text before.

<!-- footprint-table: cortex_m4 -->
| cortex_m4 | bytes |
|---|---|
| core flash: total | 999 |
<!-- /footprint-table -->

Text after.
"""

failures = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(doc, report, *extra):
    return subprocess.run([sys.executable, TOOL, "--core", "cortex_m0plus", "--doc", doc, report,
                           *extra], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        doc = os.path.join(tmp, "footprint.md")
        report = os.path.join(tmp, "report.txt")
        with open(doc, "w", encoding="utf-8") as f:
            f.write(DOC)
        with open(report, "w", encoding="utf-8") as f:
            f.write(REPORT)

        res = run(doc, report)
        check(res.returncode == 1 and "has no table of cortex_m0plus" in res.stdout,
              "a document without the core's table fails")
        res = run(doc, report, "--write")
        check(res.returncode == 0, "--write succeeds")
        with open(doc, encoding="utf-8") as f:
            written = f.read()
        check(written.startswith(DOC.rstrip("\n")), "--write keeps the other core's table and text")
        check("| core flash: src/core/lock.cpp | 200 |" in written and
              "| stack: Lock::extend | 96 |" in written and
              "| C API firmware run-time: libgcc.a(_udivsi3.o) | 100 |" in written,
              "the table has the sources, the budgeted stacks and the run-time members")
        check("FairLock::release" not in written, "an unbudgeted call's stack is left out")
        res = run(doc, report)
        check(res.returncode == 0, "the written table matches: " + res.stdout.strip())

        faults = [
            ("| core flash: total | 300 |", "| core flash: total | 301 |",
             "core flash: total: the table says 301, measured 300"),
            ("| stack: Lock::extend | 96 |\n", "",
             "stack: Lock::extend: measured 96, not in the table"),
            ("| core flash: total | 300 |", "| core flash: total | 300 |\n| stack: gone | 8 |",
             "stack: gone: the table says 8, not measured"),
        ]
        for old, new, message in faults:
            with open(doc, "w", encoding="utf-8") as f:
                f.write(written.replace(old, new, 1))
            res = run(doc, report)
            check(res.returncode == 1 and message in res.stdout, f"fault caught: {message}")

        with open(doc, "w", encoding="utf-8") as f:
            f.write(written)
        with open(report, "w", encoding="utf-8") as f:
            f.write(REPORT.replace("core_stack.Lock::extend 96", "core_stack.Lock::extend 104"))
        res = run(doc, report)
        check(res.returncode == 1 and "the table says 96, measured 104" in res.stdout,
              "a figure that moved fails the comparison")

    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
