#!/usr/bin/env python3
"""Runs the documentation's commands exactly as written (test docs.commands).

Scans README.md and docs/*.md of --source for fenced blocks right after a marker line (blank lines
between them are allowed):

  <!-- run -->          a ```sh / ```bash / ```shell block: run verbatim with `bash -euo pipefail`
                        in a scratch copy of the repository (cwd = the copy's root). One copy per
                        Markdown file; its blocks run in order, as a reader would type them.
  <!-- compile c++ -->  a ```cpp block, <!-- compile c --> a ```c block: the #include lines go to
                        the top, the rest into main() after a short prelude (below), and the
                        program is compiled with warnings as errors and linked with --link.
  <!-- program c++ -->  a ```cpp block, <!-- program c --> a ```c block: a whole program,
                        compiled as written (warnings as errors, linked with --link), then run:
                        it must exit 0.
  <!-- cmake project --> a ```cmake block: a whole CMakeLists.txt, written into a scratch folder
                        with a copy of the repository in third_party/resplock and a main.cpp
                        that sets up the POSIX port, then configured and built with cmake.

Blocks run with the environment of this process (the test runs it under with_redis: REDIS_URL and
REDIS_PORT name a throwaway server) and with --path-dir first on PATH (the build's `resplock`).
A block that runs the test suite itself (scripts/test.sh, ctest) is refused: it would recurse.
Fails, naming FILE:LINE of each failing block, if a block fails, if a marker marks no suitable
block, or if no block is marked at all.

  run_doc_blocks.py --source DIR --work DIR [--path-dir DIR]
                    [--cxx CXX --cc CC --include DIR --link LIB...
                    --cxxflags FLAGS --cflags FLAGS --ldflags FLAGS]
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

MARKER = re.compile(
    r"^\s*<!--\s*(run|compile c\+\+|compile c|program c\+\+|program c|cmake project)\s*-->\s*$")
ANY_MARKER = re.compile(r"^\s*<!--\s*(run|compile|program|cmake)\b")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9+_-]*)\s*$")
LANGUAGES = {"run": {"sh", "bash", "shell"}, "compile c++": {"cpp", "c++"}, "compile c": {"c"},
             "program c++": {"cpp", "c++"}, "program c": {"c"}, "cmake project": {"cmake"}}
RECURSIVE = re.compile(r"scripts/test\.sh|(^|[\s;&|(])ctest\b")

# Names the README's snippets use without defining them, as a program around them would.
PRELUDE = {
    "compile c++": "static int steps_left = 3;\n"
                   "static bool work_left() { return steps_left > 0; }\n"
                   "static void do_a_step() { --steps_left; }\n",
    "compile c": "#include \"resplock/ports/posix.h\"\n"
                 "static resplock_posix_t net;\n"
                 "static resplock_port_t port;\n",
}
MAIN_START = {"compile c++": "", "compile c": "resplock_posix_port_init(&net, NULL, &port);\n"}

failures = []


def fail(where, text):
    failures.append("%s: %s" % (where, text))
    print("FAIL: %s: %s" % (where, text), flush=True)


def find_blocks(root):
    """[(relative file, line of the block's first line, kind, text)] in reading order."""
    files = ["README.md"] if os.path.isfile(os.path.join(root, "README.md")) else []
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        files += ["docs/" + f for f in sorted(os.listdir(docs)) if f.endswith(".md")]
    blocks = []
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            m = MARKER.match(lines[i])
            if not m:
                if ANY_MARKER.match(lines[i]):
                    fail("%s:%d" % (rel, i + 1), "unknown marker %r" % lines[i].strip())
                i += 1
                continue
            kind, marker_line = m.group(1), i + 1
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            fence = FENCE.match(lines[i]) if i < len(lines) else None
            if not fence or fence.group(3) not in LANGUAGES[kind]:
                wanted = "/".join(sorted(LANGUAGES[kind]))
                fail("%s:%d" % (rel, marker_line),
                     "'%s' is not followed by a ```%s block" % (kind, wanted))
                continue
            start, body = i + 2, []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(2)):
                body.append(lines[i])
                i += 1
            if i == len(lines):
                fail("%s:%d" % (rel, start - 1), "the block is never closed")
            i += 1
            blocks.append((rel, start, kind, "\n".join(body) + "\n"))
    return blocks


def copy_repository(source, dest, work):
    """Copies the files git knows (tracked or not ignored), or everything but build trees and
    the work folder."""
    if os.path.exists(dest):
        shutil.rmtree(dest)
    listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True)
    if listed.returncode == 0 and listed.stdout:
        for rel in listed.stdout.decode().split("\0"):
            src = os.path.join(source, rel)
            if rel and os.path.isfile(src):  # skips files deleted but still in the index
                os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
                shutil.copy2(src, os.path.join(dest, rel))
    else:
        def ignore(folder, names):
            return [n for n in names if n in (".git", "build") or n.startswith("build-") or
                    os.path.abspath(os.path.join(folder, n)) == work]
        shutil.copytree(source, dest, symlinks=True, ignore=ignore)


def run_block(copy, where, text, work, env):
    script = os.path.join(work, "block.sh")
    with open(script, "w", encoding="utf-8") as f:
        f.write(text)
    print("=== %s: bash -euo pipefail\n%s---" % (where, text), flush=True)
    rc = subprocess.run(["bash", "-euo", "pipefail", script], cwd=copy, env=env,
                        stdin=subprocess.DEVNULL).returncode
    if rc != 0:
        fail(where, "the block exited with status %d" % rc)
    return rc == 0


def compile_block(kind, where, text, work, args, env):
    if not args.cxx or not args.cc or not args.include:
        fail(where, "--cxx, --cc and --include are needed to compile a block")
        return
    rel, line = where.rsplit(":", 1)
    if kind.startswith("program"):
        # #line makes the compiler's messages name the Markdown file and its own line numbers.
        program = '#line %s "%s"\n' % (line, rel) + text
    else:
        # The #include lines move to the top (blank lines keep their place).
        lines = text.split("\n")
        includes = [line for line in lines if line.lstrip().startswith("#include")]
        rest = ["" if line.lstrip().startswith("#include") else line for line in lines]
        program = ("\n".join(includes) + "\n" + PRELUDE[kind] + "int main(void) {\n" +
                   MAIN_START[kind] + '#line %s "%s"\n' % (line, rel) + "\n".join(rest) +
                   "\nreturn 0;\n}\n")
    if kind.endswith("c++"):
        source = os.path.join(work, "snippet.cpp")
        command = [args.cxx, "-std=c++17"] + shlex.split(args.cxxflags)
    else:
        source = os.path.join(work, "snippet.c")
        command = [args.cc, "-std=c99"] + shlex.split(args.cflags)
    with open(source, "w", encoding="utf-8") as f:
        f.write(program)
    command += ["-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I", args.include, source,
                "-o", os.path.join(work, "snippet")]
    command += shlex.split(args.ldflags) + args.link + ["-pthread"]
    if not kind.endswith("c++"):
        command += ["-lstdc++"]  # the library is C++; a C program links its runtime
    print("=== %s: %s" % (where, " ".join(command)), flush=True)
    if subprocess.run(command).returncode != 0:
        fail(where, "the block does not compile and link")
        return
    if kind.startswith("program"):
        rc = subprocess.run([os.path.join(work, "snippet")], cwd=work, env=env,
                            stdin=subprocess.DEVNULL).returncode
        if rc != 0:
            fail(where, "the program exited with status %d" % rc)


# The program a `cmake project` block builds (as main.cpp): it only needs resplock::posix to link.
CMAKE_MAIN = """#include "resplock/core/lock.hpp"
#include "resplock/ports/posix.h"

int main() {
    resplock_posix_t net;
    resplock_port_t port;
    return resplock_posix_port_init(&net, nullptr, &port) == RESPLOCK_STATUS_ok ? 0 : 1;
}
"""


def cmake_block(where, text, source, work, args, env):
    project = os.path.join(work, "cmake-project")
    if os.path.exists(project):
        shutil.rmtree(project)
    copy_repository(source, os.path.join(project, "third_party", "resplock"), work)
    with open(os.path.join(project, "CMakeLists.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(project, "main.cpp"), "w", encoding="utf-8") as f:
        f.write(CMAKE_MAIN)
    build = os.path.join(project, "build")
    configure = ["cmake", "-S", project, "-B", build, "-DCMAKE_BUILD_TYPE=Debug"]
    if args.cxx and args.cc:
        configure += ["-DCMAKE_CXX_COMPILER=" + args.cxx, "-DCMAKE_C_COMPILER=" + args.cc]
    configure += ["-DCMAKE_CXX_FLAGS=" + args.cxxflags, "-DCMAKE_C_FLAGS=" + args.cflags,
                  "-DCMAKE_EXE_LINKER_FLAGS=" + args.ldflags]
    print("=== %s: a project with this CMakeLists.txt\n%s---" % (where, text), flush=True)
    for command in (configure, ["cmake", "--build", build, "-j", str(os.cpu_count() or 2)]):
        if subprocess.run(command, env=env, stdin=subprocess.DEVNULL).returncode != 0:
            fail(where, "the project does not configure and build: %s" % " ".join(command))
            return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--path-dir")
    parser.add_argument("--cxx")
    parser.add_argument("--cc")
    parser.add_argument("--include")
    parser.add_argument("--link", action="append", default=[])
    # The build's own flags (e.g. the sanitizers'), one string each: C++ and C compile, and link.
    parser.add_argument("--cxxflags", default="")
    parser.add_argument("--cflags", default="")
    parser.add_argument("--ldflags", default="")
    args = parser.parse_args()
    source, work = os.path.abspath(args.source), os.path.abspath(args.work)

    blocks = find_blocks(source)
    if not blocks and not failures:
        fail(source, "no block is marked <!-- run --> or <!-- compile ... -->: nothing was checked")
    env = dict(os.environ)
    if args.path_dir:
        env["PATH"] = os.path.abspath(args.path_dir) + os.pathsep + env.get("PATH", "")
    os.makedirs(work, exist_ok=True)
    copies, broken = {}, set()
    ran = 0
    for rel, line, kind, text in blocks:
        where = "%s:%d" % (rel, line)
        if kind == "cmake project":
            cmake_block(where, text, source, work, args, env)
            ran += 1
            continue
        if kind != "run":
            compile_block(kind, where, text, work, args, env)
            ran += 1
            continue
        if RECURSIVE.search(text):
            fail(where, "the block runs the test suite, which runs this test: refused")
            continue
        if rel in broken:
            fail(where, "not run: an earlier block of %s failed" % rel)
            continue
        if rel not in copies:
            copies[rel] = os.path.join(work, "copy-" + re.sub(r"[^A-Za-z0-9]", "_", rel))
            copy_repository(source, copies[rel], work)
        if not run_block(copies[rel], where, text, work, env):
            broken.add(rel)
        ran += 1
    if failures:
        print("%d failure(s) in the documentation's blocks" % len(failures))
        return 1
    print("ok: %d marked block(s) from %d file(s) ran as written" %
          (ran, len({b[0] for b in blocks})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
