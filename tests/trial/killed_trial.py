#!/usr/bin/env python3
"""A trial killed with SIGKILL leaves nothing running: every server, sentinel, client, proxy and
`resplock run` COMMAND it started goes with it.

Usage: killed_trial.py TRIAL_PROGRAM
Starts `TRIAL_PROGRAM --short`, waits until its process tree holds redis servers and clients,
notes every process of the tree, SIGKILLs the trial alone, and fails if any of those processes
is still alive 10 s later."""
import os
import signal
import subprocess
import sys
import time


def children():
    """pid -> parent pid, for every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: the fields after it are fixed.
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry)] = int(fields[1])
    return table


def tree(root):
    parents = children()
    found = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return found - {root}


def name(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 64
    trial = subprocess.Popen([sys.argv[1], "--short"], stdout=subprocess.DEVNULL)
    seen = set()
    give_up = time.monotonic() + 60
    kinds = set()
    while time.monotonic() < give_up:
        time.sleep(0.5)
        for pid in tree(trial.pid):
            cmd = name(pid)
            if cmd:
                seen.add(pid)
                for kind in ("redis-server", "trial_client", "trial_writer", "resplock"):
                    if kind in cmd.split(" ")[0]:
                        kinds.add(kind)
        if {"redis-server", "trial_client", "trial_writer", "resplock"} <= kinds:
            break
    missing = {"redis-server", "trial_client", "trial_writer", "resplock"} - kinds
    if missing:
        print(f"FAIL: the trial's tree never held {sorted(missing)}")
        trial.kill()
        return 1
    seen |= tree(trial.pid)
    trial.send_signal(signal.SIGKILL)
    trial.wait()
    left = []
    give_up = time.monotonic() + 10
    while time.monotonic() < give_up:
        left = [pid for pid in seen if alive(pid)]
        if not left:
            break
        time.sleep(0.2)
    if left:
        for pid in left:
            print(f"FAIL: still running after the trial was killed: {pid} {name(pid)}")
            os.kill(pid, signal.SIGKILL)
        return 1
    print(f"ok: {len(seen)} processes of the killed trial ({', '.join(sorted(kinds))}...) all ended")
    return 0


if __name__ == "__main__":
    sys.exit(main())
