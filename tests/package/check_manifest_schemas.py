#!/usr/bin/env python3
"""Checks the structure of the package manifests against the schemas their tools document, since
PlatformIO, the ESP-IDF component manager and Zephyr are not part of this project's test machine:

  library.json           PlatformIO's library manifest: required keys, types, allowed values of
                         the top level and of `build` (unknown keys are refused: PlatformIO ignores
                         them silently, so a misspelt key would change nothing without a word);
  idf_component.yml      the ESP-IDF component manifest: keys, version, tags, the `idf` version
                         specification, `files`, URL fields;
  zephyr/module.yml      the keys Zephyr's module schema accepts; build.cmake names a folder with
                         a CMakeLists.txt and build.kconfig an existing file.

And what this project promises of them: each names the MIT licence of LICENSE; the PlatformIO
build replaces the frameworks' older C++ standard by C++17; ESP-IDF 4.4 is the minimum; the Zephyr
module refuses a standard older than C++17.

    python3 check_manifest_schemas.py REPO_ROOT

Prints every problem, exits 1 if there was one. Reads YAML with its own reader of the block
subset the manifests use (maps, lists of scalars, comments), so that it needs nothing beyond
python3; where PyYAML is installed it also checks that both readers agree.
"""
import json
import os
import re
import sys

problems = []


def problem(where, text):
    problems.append("%s: %s" % (where, text))


# --- a reader for the block subset of YAML the manifests use --------------------------------------
class YamlError(Exception):
    pass


def _scalar(text, where):
    text = text.strip()
    if not text:
        return None
    if text[0] in "\"'":
        quote = text[0]
        if len(text) < 2 or text[-1] != quote:
            raise YamlError("%s: unterminated quoted scalar" % where)
        body = text[1:-1]
        if quote == "'":
            return body.replace("''", "'")
        if "\\" in body:
            raise YamlError("%s: escapes in double-quoted scalars are not supported" % where)
        return body
    if text[0] in "[{&*!|>%@`":
        raise YamlError("%s: flow, anchor, tag or block scalar syntax is not supported" % where)
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text in ("null", "~"):
        return None
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return int(text)
    return text


def _strip_comment(line):
    # A '#' starts a comment at the start of a line or after a space, outside quotes.
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def read_yaml(path):
    lines = []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            if "\t" in raw[: len(raw) - len(raw.lstrip())]:
                raise YamlError("%s:%d: tab in indentation" % (path, number))
            text = _strip_comment(raw.rstrip("\n")).rstrip()
            if text.strip():
                lines.append((number, len(text) - len(text.lstrip(" ")), text.strip()))

    def block(i, indent):
        """Parses the block of lines at `indent` starting at lines[i]; returns (value, next i)."""
        number, _, text = lines[i]
        if text.startswith("- ") or text == "-":
            result = []
            while i < len(lines) and lines[i][1] == indent and lines[i][2].startswith("-"):
                number, _, text = lines[i]
                item = text[1:].strip()
                if ":" in item and not item.startswith(("'", '"')):
                    raise YamlError("%s:%d: maps inside lists are not supported" % (path, number))
                result.append(_scalar(item, "%s:%d" % (path, number)))
                i += 1
            return result, i
        result = {}
        while i < len(lines) and lines[i][1] == indent:
            number, _, text = lines[i]
            m = re.fullmatch(r"([A-Za-z0-9_./-]+):(?:\s+(.*))?", text)
            if not m:
                raise YamlError("%s:%d: expected 'key: value'" % (path, number))
            key, rest = m.group(1), m.group(2)
            if key in result:
                raise YamlError("%s:%d: duplicate key %s" % (path, number, key))
            i += 1
            if rest is not None and rest.strip():
                result[key] = _scalar(rest, "%s:%d" % (path, number))
            elif i < len(lines) and (lines[i][1] > indent or
                                     (lines[i][1] == indent and lines[i][2].startswith("-"))):
                result[key], i = block(i, lines[i][1])
            else:
                result[key] = None
        if i < len(lines) and lines[i][1] > indent:
            raise YamlError("%s:%d: unexpected indentation" % (path, lines[i][0]))
        return result, i

    if not lines:
        return None
    value, i = block(0, lines[0][1])
    if i != len(lines):
        raise YamlError("%s:%d: unexpected indentation" % (path, lines[i][0]))
    try:
        import yaml  # optional: the cross-check only
    except ImportError:
        return value
    with open(path, encoding="utf-8") as f:
        reference = yaml.safe_load(f)
    if reference != value:
        raise YamlError("%s: this reader and PyYAML disagree: %r != %r" % (path, value, reference))
    return value


# --- helpers --------------------------------------------------------------------------------------
def is_str_list(value):
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def check_keys(where, mapping, allowed, required=()):
    for key in required:
        if key not in mapping:
            problem(where, "required key '%s' is missing" % key)
    for key in mapping:
        if key not in allowed:
            problem(where, "unknown key '%s' (allowed: %s)" % (key, ", ".join(sorted(allowed))))


def check_url(where, value):
    if not isinstance(value, str) or not re.fullmatch(r"https?://[^\s/$.?#][^\s]*", value):
        problem(where, "not an http(s) URL: %r" % (value,))


def check_license(where, value, root):
    if value != "MIT":
        problem(where, "licence %r is not MIT, the licence of LICENSE" % (value,))
    try:
        with open(os.path.join(root, "LICENSE"), encoding="utf-8") as f:
            if not f.readline().startswith("MIT License"):
                problem("LICENSE", "does not start with 'MIT License'")
    except OSError as e:
        problem("LICENSE", "cannot be read: %s" % e)


# --- PlatformIO: library.json ---------------------------------------------------------------------
# Keys and types as docs.platformio.org/en/latest/manifests/library-json/ documents them.
PIO_TOP = {"name", "version", "description", "keywords", "authors", "repository", "homepage",
           "license", "frameworks", "platforms", "headers", "examples", "dependencies", "export",
           "build", "downloadUrl"}
PIO_BUILD = {"flags", "unflags", "includeDir", "srcDir", "srcFilter", "extraScript", "libArchive",
             "libLDFMode", "libCompatMode", "builder"}
PIO_FRAMEWORKS = {"*", "arduino", "espidf", "zephyr", "mbed", "cmsis", "stm32cube", "libopencm3",
                  "spl", "freertos", "energia", "wiringpi", "simba", "pumbaa", "arduino-pico"}
PIO_PLATFORMS = {"*", "espressif32", "espressif8266", "atmelavr", "atmelsam", "ststm32",
                 "nordicnrf52", "raspberrypi", "teensy", "native", "linux_x86_64", "linux_arm"}


def str_or_list(where, value):
    if isinstance(value, str):
        return value.split()
    if is_str_list(value):
        return [token for item in value for token in item.split()]
    problem(where, "must be a string or an array of strings, not %r" % (value,))
    return []


def check_library_json(root):
    where = "library.json"
    try:
        with open(os.path.join(root, where), encoding="utf-8") as f:
            pio = json.load(f)
    except (OSError, ValueError) as e:
        problem(where, "not valid JSON: %s" % e)
        return
    if not isinstance(pio, dict):
        problem(where, "the top level is not an object")
        return
    check_keys(where, pio, PIO_TOP, required=("name", "version"))
    name = pio.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= 100 or re.search(r"[:;/,@<>]", name):
        problem(where, "name %r: 1 to 100 characters, none of :;/,@<>" % (name,))
    version = pio.get("version")
    if not isinstance(version, str) or not re.fullmatch(r"\d+\.\d+(\.\d+)?([-+][0-9A-Za-z.+-]+)?",
                                                       version):
        problem(where, "version %r is not a semantic version" % (version,))
    if "description" in pio and not (isinstance(pio["description"], str) and
                                     1 <= len(pio["description"]) <= 1000):
        problem(where, "description: a string of 1 to 1000 characters")
    keywords = pio.get("keywords", [])
    if isinstance(keywords, str):
        keywords = [k.strip() for k in keywords.split(",")]
    if not is_str_list(keywords):
        problem(where, "keywords: a string or an array of strings")
    else:
        for k in keywords:
            if not re.fullmatch(r"[a-z\d\-+. ]{1,50}", k):
                problem(where, "keyword %r: only a-z 0-9 - + . and space, at most 50" % k)
    for key, known in (("frameworks", PIO_FRAMEWORKS), ("platforms", PIO_PLATFORMS)):
        values = str_or_list("%s: %s" % (where, key), pio.get(key, []))
        for v in values:
            v = v.strip(",")
            if not re.fullmatch(r"[a-z\d\-_]+|\*", v):
                problem(where, "%s: %r has characters other than a-z 0-9 - _" % (key, v))
            elif v not in known:
                problem(where, "%s: %r is not a known PlatformIO %s" % (key, v, key[:-1]))
    for key in ("homepage", "downloadUrl"):
        if key in pio:
            check_url("%s: %s" % (where, key), pio[key])
    if "repository" in pio:
        repo = pio["repository"]
        if not isinstance(repo, dict):
            problem(where, "repository: an object {type, url}")
        else:
            check_keys(where + ": repository", repo, {"type", "url", "branch"}, ("type", "url"))
            if repo.get("type") not in ("git", "hg", "svn"):
                problem(where, "repository.type: one of git, hg, svn")
    if "authors" in pio:
        authors = pio["authors"] if isinstance(pio["authors"], list) else [pio["authors"]]
        for a in authors:
            if not isinstance(a, dict) or not isinstance(a.get("name"), str):
                problem(where, "authors: objects with at least a name")
    check_license(where + ": license", pio.get("license"), root)

    build = pio.get("build", {})
    if not isinstance(build, dict):
        problem(where, "build is not an object")
        return
    check_keys(where + ": build", build, PIO_BUILD)
    for key in ("includeDir", "srcDir"):
        if key in build:
            if not isinstance(build[key], str):
                problem(where, "build.%s: a string" % key)
            elif not os.path.isdir(os.path.join(root, build[key])):
                problem(where, "build.%s: %s is not a folder" % (key, build[key]))
    for token in str_or_list(where + ": build.srcFilter", build.get("srcFilter", [])):
        if not re.fullmatch(r"[+-]<[^<>]+>", token):
            problem(where, "build.srcFilter: %r is not +<path> or -<path>" % token)
    flags = str_or_list(where + ": build.flags", build.get("flags", []))
    unflags = str_or_list(where + ": build.unflags", build.get("unflags", []))
    if "libArchive" in build and not isinstance(build["libArchive"], bool):
        problem(where, "build.libArchive: true or false")
    for key, allowed in (("libLDFMode", {"off", "chain", "deep", "chain+", "deep+"}),
                         ("libCompatMode", {"off", "soft", "strict"}),
                         ("builder", {"PlatformIOLibBuilder", "ArduinoLibBuilder",
                                      "MbedLibBuilder"})):
        if key in build and build[key] not in allowed:
            problem(where, "build.%s: one of %s" % (key, ", ".join(sorted(allowed))))
    if "extraScript" in build and not os.path.isfile(os.path.join(root, str(build["extraScript"]))):
        problem(where, "build.extraScript: no such file")
    # The library is C++17; PlatformIO's Arduino core for ESP32 compiles C++ as gnu++11. The
    # library's own flags (PlatformIO applies them to the library's sources only) must replace it.
    std = [f for f in flags if f.startswith("-std=")]
    if std not in (["-std=gnu++17"], ["-std=c++17"]):
        problem(where, "build.flags must set C++17 once (-std=gnu++17), not %r" % (std,))
    for old in ("-std=gnu++11", "-std=gnu++14"):
        if old not in unflags:
            problem(where, "build.unflags must remove %s, which a framework may set" % old)


# --- ESP-IDF: idf_component.yml -------------------------------------------------------------------
# Keys as the component manager's manifest reference and its models (idf_component_tools) define.
IDF_TOP = {"name", "version", "targets", "maintainers", "description", "license", "tags",
           "dependencies", "files", "examples", "url", "repository", "documentation", "issues",
           "discussion", "repository_info"}
IDF_DEPENDENCY = {"version", "public", "path", "git", "registry_url", "service_url", "rules",
                  "matches", "override_path", "require", "pre_release"}
IDF_TARGETS = {"esp32", "esp32s2", "esp32s3", "esp32c2", "esp32c3", "esp32c5", "esp32c6",
               "esp32c61", "esp32h2", "esp32h4", "esp32p4", "linux"}
VERSION_CLAUSE = r"(==|!=|>=|<=|>|<|~=|~|\^)?\s*\d+(\.\d+){0,2}([-+][0-9A-Za-z.]+)?"


def idf_minimum(spec):
    """The lower bound (major, minor) of an `idf` version specification, or None."""
    for clause in spec.split(","):
        m = re.fullmatch(r"\s*(>=|==|~=|~|\^)?\s*(\d+)\.(\d+)(\.\d+)?\s*", clause)
        if m and (m.group(1) or "==") != "<":
            return int(m.group(2)), int(m.group(3))
    return None


def check_idf_component(root):
    where = "idf_component.yml"
    try:
        manifest = read_yaml(os.path.join(root, where))
    except (OSError, YamlError) as e:
        problem(where, str(e))
        return
    if not isinstance(manifest, dict):
        problem(where, "the top level is not a map")
        return
    check_keys(where, manifest, IDF_TOP, required=("version", "license", "description"))
    version = manifest.get("version")
    if not isinstance(version, str) or not re.fullmatch(
            r"\d+\.\d+\.\d+(~\d+)?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?", version):
        problem(where, "version %r: MAJOR.MINOR.PATCH[~REVISION][-PRE][+BUILD]" % (version,))
    if not isinstance(manifest.get("description"), str):
        problem(where, "description: a string")
    check_license(where + ": license", manifest.get("license"), root)
    for key in ("targets", "maintainers", "tags"):
        if key in manifest:
            values = manifest[key]
            if not is_str_list(values):
                problem(where, "%s: a list of strings" % key)
                continue
            if len({v.lower() for v in values}) != len(values):
                problem(where, "%s: duplicates" % key)
            for v in values:
                if key == "tags" and not re.fullmatch(r"[A-Za-z0-9_-]{3,32}", v):
                    problem(where, "tag %r: 3 to 32 of A-Z a-z 0-9 _ -" % v)
                if key == "targets" and v not in IDF_TARGETS:
                    problem(where, "target %r is not an ESP-IDF target" % v)
    for key in ("url", "documentation", "issues", "discussion"):
        if key in manifest:
            check_url("%s: %s" % (where, key), manifest[key])
    if "repository" in manifest and not re.fullmatch(r"(https?|git|ssh)://\S+|git@\S+:\S+",
                                                      str(manifest["repository"])):
        problem(where, "repository: a git URL")
    deps = manifest.get("dependencies", {})
    if not isinstance(deps, dict):
        problem(where, "dependencies: a map")
        deps = {}
    for name, dep in deps.items():
        if not re.fullmatch(r"([a-z0-9_-]+/)?[a-z0-9_-]+", name) or "__" in name:
            problem(where, "dependencies: %r is not a component name" % name)
        spec = dep
        if isinstance(dep, dict):
            check_keys("%s: dependencies.%s" % (where, name), dep, IDF_DEPENDENCY)
            spec = dep.get("version", "*")
        if not isinstance(spec, str) or not (
                spec.strip() == "*" or
                all(re.fullmatch(r"\s*" + VERSION_CLAUSE + r"\s*", c) for c in spec.split(","))):
            problem(where, "dependencies.%s: %r is not a version specification" % (name, spec))
    idf = deps.get("idf")
    idf = idf.get("version") if isinstance(idf, dict) else idf
    if not isinstance(idf, str) or idf_minimum(idf) != (4, 4):
        problem(where, "dependencies.idf must require ESP-IDF >=4.4, not %r" % (idf,))
    files = manifest.get("files", {})
    if not isinstance(files, dict):
        problem(where, "files: a map")
    else:
        check_keys(where + ": files", files, {"use_gitignore", "include", "exclude"})
        if "use_gitignore" in files and not isinstance(files["use_gitignore"], bool):
            problem(where, "files.use_gitignore: true or false")
        for key in ("include", "exclude"):
            if key in files and not is_str_list(files[key]):
                problem(where, "files.%s: a list of patterns" % key)
        for pattern in files.get("exclude") or []:
            if re.fullmatch(r"(\*\*/)?(LICENSE|include|src|ports|cmake)(/.*)?", str(pattern)):
                problem(where, "files.exclude drops %s, which the component needs" % pattern)


# --- Zephyr: zephyr/module.yml, zephyr/Kconfig ----------------------------------------------------
# Keys as Zephyr's module schema (scripts/zephyr_module.py) accepts them; it refuses any other.
ZEPHYR_TOP = {"name", "build", "tests", "samples", "boards", "blobs", "security",
              "package-managers", "runners"}
ZEPHYR_BUILD = {"cmake", "kconfig", "cmake-ext", "kconfig-ext", "sysbuild-cmake",
                "sysbuild-kconfig", "sysbuild-cmake-ext", "sysbuild-kconfig-ext", "depends",
                "settings"}


def check_zephyr(root):
    where = "zephyr/module.yml"
    path = os.path.join(root, where)
    try:
        module = read_yaml(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, YamlError) as e:
        problem(where, str(e))
        return
    if not isinstance(module, dict):
        problem(where, "the top level is not a map")
        return
    check_keys(where, module, ZEPHYR_TOP)
    if "name" in module and not (isinstance(module["name"], str) and
                                 re.fullmatch(r"[A-Za-z0-9_.-]+", module["name"])):
        problem(where, "name: a plain string")
    build = module.get("build", {})
    if not isinstance(build, dict):
        problem(where, "build: a map")
        return
    check_keys(where + ": build", build, ZEPHYR_BUILD)
    for key in ("cmake-ext", "kconfig-ext", "sysbuild-cmake-ext", "sysbuild-kconfig-ext"):
        if key in build and not isinstance(build[key], bool):
            problem(where, "build.%s: true or false" % key)
    cmake = build.get("cmake", "zephyr")
    if not isinstance(cmake, str) or not os.path.isfile(os.path.join(root, cmake,
                                                                      "CMakeLists.txt")):
        problem(where, "build.cmake %r is not a folder with a CMakeLists.txt" % (cmake,))
    kconfig = build.get("kconfig", "zephyr/Kconfig")
    if not isinstance(kconfig, str) or not os.path.isfile(os.path.join(root, kconfig)):
        problem(where, "build.kconfig %r is not a file" % (kconfig,))
        return
    # Zephyr's schema has no licence key (blobs aside): the licence is an SPDX comment.
    if not re.search(r"^# SPDX-License-Identifier: MIT\b", text, re.M):
        problem(where, "no '# SPDX-License-Identifier: MIT' line")
    with open(os.path.join(root, kconfig), encoding="utf-8") as f:
        kconfig_text = f.read()
    m = re.search(r"^config RESPLOCK\n((?:[ \t]+.*\n|\n)*?)(?=\S)", kconfig_text, re.M)
    if not m:
        problem(kconfig, "defines no RESPLOCK symbol")
        return
    depends = " ".join(re.findall(r"^\s*depends on (.*)$", m.group(1), re.M))
    for needed in ("CPP", "!STD_CPP98", "!STD_CPP11", "!STD_CPP14"):
        if not re.search(r"(^|[\s(&|])%s($|[\s)&|])" % re.escape(needed), depends):
            problem(kconfig, "RESPLOCK does not depend on %s (C++17 or newer)" % needed)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_manifest_schemas.py REPO_ROOT")
    root = sys.argv[1]
    check_library_json(root)
    check_idf_component(root)
    check_zephyr(root)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print("%d problem(s) in the manifests' structure" % len(problems))
        return 1
    print("ok: library.json, idf_component.yml and zephyr/module.yml match their schemas")
    return 0


if __name__ == "__main__":
    sys.exit(main())
