#!/usr/bin/env python3
"""What resplock adds to a firmware: reads the GNU ld link map (-Wl,-Map) of a firmware linked
with --gc-sections (tests/target/cortex-m4/firmware_c_api.c, built by `make size`) and sums the
input sections the linker kept, by where they came from:

- library: members of the resplock archive (its name given with --library);
- C run-time: members of the toolchain's archives (libc_nano.a, libgcc.a, ...) that the link
  pulled in, e.g. memcpy, memcmp, strlen: the library's calls pull them, the firmware pays them;
- the firmware's own objects (start-up, port, main) are listed apart and not counted.

flash = every kept section but .bss/.noinit (.data counts: its initial values are in flash);
RAM = .data + .bss. Prints library + C run-time next to --target-flash (reported, not enforced);
with --check, exits 1 when their flash exceeds --max-flash (a ceiling against growth) or their
RAM exceeds --max-ram. Prints a table, then `name value unit` lines.
"""

import argparse
import os
import sys

from linkmap import in_flash, in_ram, loaded, occupied, origin, parse


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("map", help="the firmware's link map")
    ap.add_argument("--library", default="libresplock.a", help="file name of the library archive")
    ap.add_argument("--name", default="firmware_c_api", help="prefix of the figures printed")
    ap.add_argument("--target-flash", type=int, default=4096)
    ap.add_argument("--max-flash", type=int, default=4096)
    ap.add_argument("--max-ram", type=int, default=0)
    ap.add_argument("--check", action="store_true", help="exit 1 when over budget")
    ap.add_argument("--core", default="cortex_m4",
                    help="the core the figures are for: their prefix (cortex_m0plus, ...)")
    args = ap.parse_args()

    flash = {"library": 0, "runtime": 0, "own": 0}
    ram = dict(flash)
    members = {}  # (origin, member) -> flash bytes
    for section, size in occupied(s for s in parse(args.map) if loaded(s)):
        who = origin(section.file, args.library)
        member = os.path.basename(section.file)
        if in_ram(section):
            ram[who] += size
        if not in_flash(section):
            continue
        flash[who] += size
        members[(who, member)] = members.get((who, member), 0) + size
    if flash["library"] == 0:
        raise SystemExit(f"{args.map}: nothing from {args.library} was linked")

    total_flash = flash["library"] + flash["runtime"]
    total_ram = ram["library"] + ram["runtime"]
    print(f"firmware {args.name}: what resplock adds (link map {args.map})")
    for who, title in (("library", "resplock"), ("runtime", "C run-time pulled in")):
        print(f"  {title:<28} {flash[who]:>6} B flash {ram[who]:>5} B RAM")
        for (w, member), size in sorted(members.items(), key=lambda kv: -kv[1]):
            if w == who:
                print(f"      {member:<40} {size:>6} B")
    verdict = "met" if total_flash <= args.target_flash else (
        f"missed by {total_flash - args.target_flash} B")
    print(f"  {'total':<28} {total_flash:>6} B flash {total_ram:>5} B RAM   (target: flash <= "
          f"{args.target_flash} B, {verdict}; checked: flash <= {args.max_flash} B, RAM <= "
          f"{args.max_ram} B)")
    print(f"  (not counted: the firmware's own start-up, port and main, {flash['own']} B flash, "
          f"{ram['own']} B RAM, the lock and connection objects and buffer included)")
    print()
    print(f"{args.core}.{args.name}.flash {total_flash} bytes")
    print(f"{args.core}.{args.name}.ram {total_ram} bytes")
    print(f"{args.core}.{args.name}.library_flash {flash['library']} bytes")
    print(f"{args.core}.{args.name}.runtime_flash {flash['runtime']} bytes")
    print(f"{args.core}.{args.name}.target_flash {args.target_flash} bytes")
    for (w, member), size in sorted(members.items()):
        if w == "runtime":
            print(f"{args.core}.{args.name}.runtime.{member} {size} bytes")
    failures = []
    if total_flash > args.max_flash:
        failures.append(f"{args.name}: flash {total_flash} B > {args.max_flash} B")
    if total_ram > args.max_ram:
        failures.append(f"{args.name}: RAM {total_ram} B > {args.max_ram} B")
    for f in failures:
        print(f"OVER BUDGET: {f}")
    if failures and args.check:
        sys.exit(1)


if __name__ == "__main__":
    main()
