#!/usr/bin/env python3
"""Who includes and who calls whom, among the C files of some folders.

    scripts/module-graph.py [--dot] [DIR...]      (default: manager manager/core)

Reads the .c and .h files of the folders given and builds two graphs over
the files: includes (a file's quoted #include of another file of the set)
and direct calls (a .c file calling a function that another .c file of the
set defines, not static). It reports every cycle of either graph (a
strongly connected component of more than one file) and exits 1 if there
is one: no file of the set may depend on itself through others.

For the picture it groups files into modules: a file belongs to the module
of the shortest .c stem that its own stem starts with, followed by "_"
(mgr_api_view.c and mgr_api_int.h belong to mgr_api), or to the one
GROUPS names (mgr_desired.c to mgr_driver), and a .h to its .c. It prints
the calls and includes between modules, or with --dot the module graph in
Graphviz's dot language (solid: calls, dashed: includes only).

A call through a function pointer (a callback a module was given by main)
is not a call here: that is the point of registering callbacks. It reads
text and builds nothing: a comment or a string that looks like a call is
skipped only in comments, which can add edges, never hide a cycle.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A definition: the name at the start of a line, after a return type on the line above.
DEFN = re.compile(r'^([A-Za-z_]\w*)\(', re.M)
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def files_of(dirs):
    out = {}
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                out[name] = os.path.join(d, name)
    return out


# Files whose name does not say their module.
GROUPS = {"mgr_desired": "mgr_driver", "mgr_effective": "mgr_health", "mgr_hrec": "mgr_health"}


def modules_of(names):
    stems = sorted({os.path.splitext(n)[0] for n in names if n.endswith(".c")}, key=len)
    mod = {}
    for n in names:
        stem = os.path.splitext(n)[0]
        best = next((s for s in stems if stem == s or stem.startswith(s + "_")), stem)
        mod[n] = GROUPS.get(best, best)
    return mod


def definitions(files):
    """Non-static function definitions: name -> file."""
    defs = {}
    for name, path in files.items():
        if not name.endswith(".c"):
            continue
        text = read(path)
        for m in DEFN.finditer(text):
            line_start = text.rfind("\n", 0, m.start() - 1) + 1
            prev = text[line_start:m.start()]
            if "static" in prev:
                continue
            defs.setdefault(m.group(1), name)
    return defs


def edges(files, defs):
    """File-level include and call edges."""
    inc, call = set(), set()
    for name, path in files.items():
        text = read(path)
        for m in INCLUDE.finditer(text):
            target = os.path.basename(m.group(1))
            if target in files and target != name:
                inc.add((name, target))
        if name.endswith(".c"):
            body = COMMENT.sub(" ", text)
            for m in CALL.finditer(body):
                f = defs.get(m.group(1))
                if f is not None and f != name:
                    call.add((name, f))
    return inc, call


def lift(es, mod):
    return {(mod[a], mod[b]) for a, b in es if mod[a] != mod[b]}


def cycles(nodes, es):
    """Tarjan's strongly connected components with more than one node."""
    succ = {n: sorted(b for a, b in es if a == n) for n in nodes}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def report(title, files, fes, mod):
    mes = lift(fes, mod)
    nodes = set(mod.values())
    print(f"{title}: {len(fes)} between files, {len(mes)} between {len(nodes)} modules")
    for a in sorted(nodes):
        outs = sorted(b for x, b in mes if x == a)
        if outs:
            print(f"  {a} -> {', '.join(outs)}")
    cyc = cycles(set(files), fes)
    for c in cyc:
        print(f"  CYCLE of files: {' <-> '.join(c)}")
    if not cyc:
        print("  no cycle of files")
    return cyc


def dot(nodes, inc, call):
    print("digraph modules {\n  rankdir=TB; node [shape=box];")
    for a, b in sorted(call):
        print(f'  "{a}" -> "{b}";')
    for a, b in sorted(inc - call):
        print(f'  "{a}" -> "{b}" [style=dashed];')
    print("}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dot", action="store_true", help="print the module graph as dot")
    ap.add_argument("dirs", nargs="*", default=["manager", "manager/core"])
    a = ap.parse_args()
    files = files_of(a.dirs)
    mod = modules_of(files)
    inc, call = edges(files, definitions(files))
    if a.dot:
        dot(set(mod.values()), lift(inc, mod), lift(call, mod))
        return 0
    bad = report("includes", files, inc, mod)
    bad += report("calls", files, call, mod)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
