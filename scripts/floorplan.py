#!/usr/bin/env python3
"""The floor plan of the C tree, checked from its #include lines (make test runs it).

liblance is built in floors, one folder each under lib/. A floor may include the floors
below it, never one above, so that each can be read, tested and replaced knowing only
what is under it:

  util      the common layer: integer parsers, the protobuf wire walk, buffers, lists,
            errors, asserts. Linked by the library and the programs alike, never exported.
  io        reads into caller buffers: pread, io_uring, S3. Knows nothing of Lance.
  arrow, encoding, format, layout, take, dataset, cache   (Lance and Arrow, upward)

What is checked:
  1. nothing in lib/io includes a header from lib/{format,layout,take,dataset,cache};
  2. no include cycle between lib/ folders (lance.h, the public API, is outside the graph:
     every floor may use its types);
  3. daemon/ and loadtest/ include from lib/ only lance.h and the common layer (lib/util),
     plus the generated protobuf headers of their own API.
Exits 1 naming every violation.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
IO_MAY_NOT = {"format", "layout", "take", "dataset", "cache"}
COMMON = "util"


def sources(top):
    for base, _, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(base, f)


def includes(path):
    """(line number, resolved repo-relative path or None, spelled name) for each local include."""
    text = open(path, encoding="utf-8", errors="replace").read()
    for m in INCLUDE.finditer(text):
        name = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        here = os.path.normpath(os.path.join(os.path.dirname(path), name))
        viaroot = os.path.normpath(os.path.join(ROOT, "lib", name))
        target = here if os.path.exists(here) else viaroot if os.path.exists(viaroot) else None
        yield line, (os.path.relpath(target, ROOT) if target else None), name


def lib_folder(rel):
    parts = rel.split(os.sep)
    return parts[1] if len(parts) > 2 and parts[0] == "lib" else None


def find_cycle(graph):
    """One folder cycle as a list, or None (depth-first search, colours)."""
    colour, stack = {}, []

    def visit(n):
        colour[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if not colour.get(m):
                found = visit(m)
                if found:
                    return found
        stack.pop()
        colour[n] = 2
        return None

    for n in sorted(graph):
        if not colour.get(n):
            found = visit(n)
            if found:
                return found
    return None


def main():
    errors = []
    graph, why = {}, {}
    for path in sources("lib"):
        rel = os.path.relpath(path, ROOT)
        src = lib_folder(rel)
        for line, target, name in includes(path):
            dst = lib_folder(target) if target else None
            if not src or not dst or src == dst:
                continue
            graph.setdefault(src, set()).add(dst)
            why.setdefault((src, dst), f"{rel}:{line} includes {name}")
            if src == "io" and dst in IO_MAY_NOT:
                errors.append(f"{rel}:{line}: lib/io includes {name} (lib/{dst} is above it)")
    cycle = find_cycle(graph)
    if cycle:
        steps = "; ".join(why[(a, b)] for a, b in zip(cycle, cycle[1:]))
        errors.append("include cycle between lib folders " + " -> ".join(cycle) + f" ({steps})")
    for top in ("daemon", "loadtest"):
        for path in sources(top):
            rel = os.path.relpath(path, ROOT)
            for line, target, name in includes(path):
                if target is None or not target.startswith("lib" + os.sep):
                    continue  # its own headers, generated protobuf headers
                if target == os.path.join("lib", "lance.h") or lib_folder(target) == COMMON:
                    continue
                errors.append(f"{rel}:{line}: includes {name} (from lib/ a program uses lance.h and lib/{COMMON}/ only)")
    for e in errors:
        print("floorplan: " + e)
    if not cycle:
        # Bottom floor first: a folder after everything it includes.
        nodes = sorted(set(graph) | {d for ds in graph.values() for d in ds})
        order, placed = [], set()
        while len(order) < len(nodes):
            for n in nodes:
                if n not in placed and graph.get(n, set()) <= placed:
                    order.append(n)
                    placed.add(n)
                    break
        print("floorplan: lib floors, bottom up: " + ", ".join(order))
    print(f"floorplan: {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
