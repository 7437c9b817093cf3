#!/usr/bin/env python3
"""Fails when a file includes a silt module its CMake target does not declare.

The rule (docs/ and DESIGN.md "Shape of the code"): a file of module M
(src/silt/M/...) may `#include "silt/X/..."` only when X is M itself or X is
declared by the target the file belongs to:

  - library files (the module's SOURCES, and every header): silt_M's DEPS and
    PRIVATE_DEPS, direct only; a module that uses something of a module below
    its direct deps must declare that module too;
  - test and tool files (silt_test SOURCES, add_executable sources in the
    module's folder): the module, silt_testing for tests, and every silt
    library their target links, with those libraries' declarations followed
    transitively (tests and tools are leaves; nothing includes them).

Inside a module, an optional `LAYERS` file in its folder fixes which
layers may include which (no upward includes), one rule a line:

    <layer>: <layer> <layer> ...

A layer is a sub-folder (`source`), or a file stem at the module's top
(`job` names job.h, job.cc and job_test.cc), or `.`: the other files at the
top. Each layer may include itself. A file in a layer with no rule line is
an error, so a new folder must be placed in the order on purpose. Tests are
leaves and are not held to the order.

Prints one `file:line: message` per violation and exits 1 if there was any.
Usage: scripts/check-includes.py [repo root]
"""

import os
import re
import sys

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"silt/([^/"]+)/([^"]*)"')
CALL_RE = re.compile(r"\b(silt_module|silt_test|add_executable|target_link_libraries|target_sources)\s*\(",
                     re.IGNORECASE)
KEYWORDS = {"SOURCES", "DEPS", "PRIVATE_DEPS", "LABELS", "PUBLIC", "PRIVATE", "INTERFACE"}
SOURCE_EXT = (".h", ".cc", ".cpp", ".hpp", ".inc", ".h.in", ".cc.in")


def strip_comments(text):
    return "\n".join(line.split("#", 1)[0] for line in text.splitlines())


def calls(text):
    """(command, [args]) for the CMake calls the rule needs, in file order."""
    text = strip_comments(text)
    for m in CALL_RE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        yield m.group(1).lower(), text[m.end():i - 1].split()


def sections(args, first_is_name=True):
    """{'NAME': name, 'SOURCES': [...], 'DEPS': [...], ...} of a call's args."""
    out = {"NAME": args[0] if first_is_name and args else None}
    key = "SOURCES"
    for a in args[1:] if first_is_name else args:
        if a in KEYWORDS:
            key = a
            continue
        out.setdefault(key, []).append(a)
    return out


def silt_libs(names):
    return {n[len("silt_"):] for n in names if n.startswith("silt_")}


class Module:
    def __init__(self, name):
        self.name = name
        self.deps = set()          # direct DEPS + PRIVATE_DEPS (module names)
        self.lib_sources = set()   # paths relative to the module folder
        self.targets = {}          # test/tool file -> (target, modules it links)


def load_modules(src):
    modules = {}
    for name in sorted(os.listdir(src)):
        cml = os.path.join(src, name, "CMakeLists.txt")
        if not os.path.isfile(cml):
            continue
        mod = Module(name)
        modules[name] = mod
        exes = {}  # executable target -> (sources, links)
        with open(cml, encoding="utf-8") as f:
            text = f.read()
        for cmd, args in calls(text):
            if cmd == "silt_module":
                s = sections(args)
                mod.deps = silt_libs(s.get("DEPS", []) + s.get("PRIVATE_DEPS", []))
                mod.lib_sources = set(s.get("SOURCES", []))
            elif cmd == "silt_test":
                s = sections(args)
                links = {name, "testing"} | silt_libs(s.get("DEPS", []))
                for f in s.get("SOURCES", []):
                    mod.targets[f] = (f"silt_{name}_test", links)
            elif cmd == "add_executable":
                s = sections(args)
                exes[s["NAME"]] = (s.get("SOURCES", []), set())
            elif cmd == "target_link_libraries" and args and args[0] in exes:
                exes[args[0]][1].update(silt_libs(args[1:]))
            elif cmd == "target_sources" and args and args[0] == "silt_" + name:
                mod.lib_sources.update(a for a in args[1:] if a not in KEYWORDS)
        for exe, (sources, links) in exes.items():
            for f in sources:
                mod.targets[f] = (exe, links | {name})
    return modules


def closure(modules, names):
    seen, todo = set(), list(names)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in modules:
            todo.extend(modules[n].deps)
    return seen


def load_layers(mod_dir, errors):
    path = os.path.join(mod_dir, "LAYERS")
    if not os.path.isfile(path):
        return None
    rules = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                errors.append(f"{path}:{n}: expected '<folder>: <folders it may include>'")
                continue
            folder, allowed = line.split(":", 1)
            rules[folder.strip()] = set(allowed.split()) | {folder.strip()}
    return rules


def layer_of(rel, layers):
    """The layer of a path inside a module: its top sub-folder; for a file at
    the top, its stem when LAYERS names it, else '.'."""
    parts = rel.split("/")
    if len(parts) > 1:
        return parts[0]
    stem = parts[0].split(".", 1)[0]
    if stem.endswith("_test"):
        stem = stem[:-len("_test")]
    return stem if stem in layers else "."


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    src = os.path.join(root, "src", "silt")
    modules = load_modules(src)
    errors = []
    checked = 0
    for name, mod in modules.items():
        mod_dir = os.path.join(src, name)
        layers = load_layers(mod_dir, errors)
        for dirpath, _, files in os.walk(mod_dir):
            for fname in sorted(files):
                if not fname.endswith(SOURCE_EXT):
                    continue
                path = os.path.join(dirpath, fname)
                rel = os.path.relpath(path, mod_dir).replace(os.sep, "/")
                shown = os.path.relpath(path, root)
                if rel in mod.targets:
                    target_name, links = mod.targets[rel]
                    allowed = closure(modules, links)
                    what = f"{target_name} (src/silt/{name}/CMakeLists.txt)"
                else:
                    allowed = mod.deps | {name}
                    what = f"silt_{name} (DEPS/PRIVATE_DEPS in src/silt/{name}/CMakeLists.txt)"
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.readlines()
                for n, line in enumerate(lines, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    target, inner = m.group(1), m.group(2)
                    if target not in modules:
                        errors.append(f"{shown}:{n}: includes silt/{target}/, which is not a module")
                    elif target not in allowed:
                        errors.append(f"{shown}:{n}: includes silt/{target}/{inner}, but "
                                      f"{what} does not declare silt_{target}")
                    elif target == name and layers is not None and rel not in mod.targets:
                        here, there = layer_of(rel, layers), layer_of(inner, layers)
                        if here not in layers:
                            errors.append(f"{shown}:{n}: layer '{here}' of {name}/ has no rule "
                                          f"in src/silt/{name}/LAYERS")
                        elif there not in layers[here]:
                            errors.append(f"{shown}:{n}: {name}/{here} may not include "
                                          f"{name}/{inner} (src/silt/{name}/LAYERS)")
    for e in errors:
        print(e)
    if errors:
        print(f"check-includes: {len(errors)} include(s) outside the declared dependencies",
              file=sys.stderr)
        return 1
    print(f"check-includes: {checked} files, includes within declared dependencies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
