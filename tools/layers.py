#!/usr/bin/env python3
"""gpufleet's layer check: no import cycle between source files, and no import up a floor.

The floors are those of docs/ARCHITECTURE.md, lowest first:

    base     config/, paths.rs, utc.rs
    core     sources (telemetry/, remote/), engine (fleet/) and domain (everything not named
             here): one floor, since sources emit the engine's event types and the engine calls
             the domain's pure functions
    drivers  app/, ui/, theme.rs, watch/, alerts/, metrics/
    entry    main.rs, lib.rs, cli.rs, cli_values.rs, launch.rs, demo.rs, commands/

A file may import its own floor and those below it, never one above. Imports are read as text:
`use crate::…`, `use super::…`, `use self::…` (braces expanded) and inline `crate::…` paths; a
`pub use` in a mod.rs or lib.rs is a facade, followed to the file that defines the name. Test
code (`#[cfg(test)]` modules and the files only they declare) may reach anywhere and is left out.

usage: python3 tools/layers.py [SRC_DIR]   (default: src)
Exit 0 when clean, 1 when a cycle or a layer break is found, 2 when SRC_DIR is not a folder.
"""
import os
import re
import sys

FLOORS = [
    ("base", ["config/", "paths.rs", "utc.rs"]),
    ("core", []),
    ("drivers", ["app/", "ui/", "theme.rs", "watch", "alerts", "metrics"]),
    ("entry", ["main.rs", "lib.rs", "cli.rs", "cli_values.rs", "cli/", "bin/", "launch.rs",
               "demo.rs", "commands/"]),
]
CORE = 1

TEST_MOD = re.compile(
    r"#\[cfg\(test\)\]\s*(?:#\[path\s*=\s*\"([^\"]+)\"\]\s*)?(?:pub(?:\([^)]*\))?\s+)?"
    r"mod\s+(\w+)\s*([;{])")
USE = re.compile(r"(\bpub(?:\([\w: ]+\))?\s+)?\buse\s+([^;]+);")
INLINE = re.compile(r"(?<![\w:])((?:crate|super|self)(?:::\w+)+)")


def floor_of(rel):
    for i, (_, prefixes) in enumerate(FLOORS):
        if any(rel == p or rel.startswith(p) for p in prefixes):
            return i
    return CORE


def module_path(rel):
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def read_sources(src):
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, src).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[rel] = f.read()
    return files


def test_only_files(files):
    """Files that only a `#[cfg(test)] mod x;` declaration brings in."""
    found = set()
    for rel, text in files.items():
        here = os.path.dirname(rel)
        own = here if rel.endswith(("mod.rs", "lib.rs", "main.rs")) else rel[:-3]
        for m in TEST_MOD.finditer(text):
            if m.group(3) != ";":
                continue
            if m.group(1):
                cands = [os.path.join(here, m.group(1))]
            else:
                cands = [f"{own}/{m.group(2)}.rs", f"{own}/{m.group(2)}/mod.rs"]
            for cand in cands:
                found.add(os.path.normpath(cand.lstrip("/")).replace(os.sep, "/"))
    return found


def strip(text):
    """Comments, string contents and `#[cfg(test)]` module bodies removed."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    out, pos = [], 0
    for m in TEST_MOD.finditer(text):
        if m.start() < pos or m.group(3) != "{":
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        out.append(text[pos:m.start()])
        pos = i
    return "".join(out) + text[pos:]


def expand(path):
    """`crate::a::{b, c::{d, e}}` -> `crate::a::b`, `crate::a::c::d`, `crate::a::c::e`."""
    if "{" not in path:
        return [path]
    head, rest = path.split("{", 1)
    body = rest[: rest.rfind("}")]
    items, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += (ch == "{") - (ch == "}")
        cur += ch
    items.append(cur)
    out = []
    for item in items:
        item = item.strip()
        if item:
            out += expand(head + item)
    return out


def use_paths(text):
    """(path, is_pub) for every path a `use` item names, `as` renames dropped."""
    found = []
    for m in USE.finditer(text):
        body = re.sub(r"\s+as\s+\w+", "", m.group(2))
        for path in expand(re.sub(r"\s+", "", body)):
            found.append((path, bool(m.group(1))))
    return found


class Crate:
    def __init__(self, files):
        self.files = files
        self.by_module = {}
        for rel in files:
            if rel != "main.rs":
                self.by_module.setdefault(module_path(rel), rel)
        self.reexports = {}
        for rel, text in files.items():
            if rel.endswith("mod.rs") or rel == "lib.rs":
                for path, is_pub in use_paths(strip(text)):
                    if not is_pub:
                        continue
                    if not path.startswith(("crate", "self", "super")):
                        path = "self::" + path
                    target = self.resolve(rel, "::".join(path.split("::")[:-1]))
                    if target and target != rel:
                        self.reexports.setdefault(rel, {})[path.split("::")[-1]] = target

    def resolve(self, rel, path):
        """The file a path names: its deepest module, or the file a facade re-exports."""
        segs = path.split("::")
        if segs[0] == "crate":
            cur, segs = [], segs[1:]
        else:
            cur = list(module_path(rel))
            while segs and segs[0] in ("self", "super"):
                if segs[0] == "super":
                    cur = cur[:-1]
                segs = segs[1:]
        best = self.by_module.get(tuple(cur))
        for seg in segs:
            cur = cur + [seg]
            if tuple(cur) in self.by_module:
                best = self.by_module[tuple(cur)]
            else:
                best = self.reexports.get(best, {}).get(seg, best)
                break
        return best

    def imports(self):
        """{file: {imported file: names}}, facades' own `pub use` lines left out."""
        edges = {rel: {} for rel in self.files}
        for rel, text in self.files.items():
            facade = rel.endswith("mod.rs") or rel == "lib.rs"
            parent = facade or rel == "main.rs"
            body = strip(text)
            for path, is_pub in use_paths(body):
                if not path.startswith(("crate", "super", "self")):
                    if not parent:
                        continue  # an external crate
                    path = "self::" + path  # `use child::X` in a mod.rs
                target = self.resolve(rel, path)
                if target and target != rel and not (is_pub and facade):
                    edges[rel].setdefault(target, set()).add(path.split("::")[-1])
            for m in INLINE.finditer(body):
                target = self.resolve(rel, m.group(1))
                if target and target != rel:
                    edges[rel].setdefault(target, set()).add(m.group(1).split("::")[-1])
        return edges


def cycles(edges):
    """Strongly connected components of more than one file (Tarjan, iterative)."""
    index, low, on, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def main(argv):
    src = argv[1] if len(argv) > 1 else "src"
    if not os.path.isdir(src):
        print(f"layers.py: {src}: not a folder (run from the repository root)", file=sys.stderr)
        return 2
    files = read_sources(src)
    for rel in test_only_files(files) & set(files):
        del files[rel]
    edges = Crate(files).imports()
    comps = cycles(edges)
    breaks = [(a, b, names) for a in sorted(edges) for b, names in sorted(edges[a].items())
              if floor_of(b) > floor_of(a)]
    print(f"{len(files)} files, {sum(len(e) for e in edges.values())} imports between files")
    for comp in comps:
        print(f"cycle of {len(comp)} files:")
        for a in comp:
            for b, names in sorted(edges[a].items()):
                if b in comp:
                    print(f"  {src}/{a} -> {src}/{b}  ({', '.join(sorted(names)[:4])})")
    for a, b, names in breaks:
        print(f"layer break: {src}/{a} ({FLOORS[floor_of(a)][0]}) imports {src}/{b} "
              f"({FLOORS[floor_of(b)][0]}): {', '.join(sorted(names)[:4])}")
    if comps or breaks:
        return 1
    print("no import cycles; no import runs up a floor")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
