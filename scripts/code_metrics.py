#!/usr/bin/env python3
"""The maintenance counts of issue 22, measured from the source (stdlib only).

    python3 scripts/code_metrics.py            # summary
    python3 scripts/code_metrics.py --details  # plus every cycle, long function, flattening map_err
    python3 scripts/code_metrics.py --list     # only the functions over 80 lines: name, file:line, length

Counts (non-test code of the `lakeseek` crate; `--details` lists them):
- import cycles: strongly connected components of the `crate::`/`super::` edges between modules,
  at two granularities: top-level modules (`api`, `ecp`, ...) and units (`index::filter`,
  `lance::file`, ...: the first two path segments);
- functions over 80 (and over 100) lines;
- bare `pub` items in private modules (a module is private unless `pub mod` all the way from the
  crate root);
- `map_err` closures that turn an error into a string (`format!`/`.to_string()` in the closure)
  without keeping it as the new error's source (`.with_source(e)`), in the crate and in
  lakeseek-datafusion.
"""

from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rust_modules as rm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def module_index(modules):
    return {m.path for m in modules}


def unit_of(path: str, known: set[str], depth: int) -> str | None:
    """The module (first `depth` segments) an absolute item path lives in."""
    segs = path.split("::")
    for k in range(len(segs), 0, -1):
        if "::".join(segs[:k]) in known:
            return "::".join(segs[: min(k, depth)])
    return None


def root_reexports(files, src):
    """Names re-exported at the crate root (`pub use api::{Dataset, ..}`) -> their module."""
    text, code = files[os.path.join(src, "lib.rs")]
    out = {}
    for m in re.finditer(r"\bpub\s+use\s+([^;]+);", code):
        for p in rm.expand_use_tree(m.group(1)):
            segs = p.split(" as ")[0].split("::")
            if len(segs) >= 2:
                out[segs[-1]] = segs[0]
    return out


def edges(modules, files, src, depth):
    """{(from_unit, to_unit): [(file, line)]} for non-test code."""
    known = module_index(modules)
    alias = root_reexports(files, src)
    result = {}
    for mod in modules:
        if mod.test_only or not mod.path:
            continue
        text, code = files[mod.file]
        src_unit = "::".join(mod.path.split("::")[:depth])
        for off, path in rm.crate_paths(mod, code):
            first = path.split("::")[0]
            if first in alias and first not in known:
                path = alias[first] + "::" + path
            dst = unit_of(path, known, depth)
            if not dst or dst == src_unit or src_unit.startswith(dst + "::") or dst.startswith(
                src_unit + "::"
            ):
                continue
            line = code.count("\n", 0, off) + 1
            result.setdefault((src_unit, dst), []).append((os.path.relpath(mod.file, ROOT), line))
    return result


def sccs(nodes, adj):
    """Tarjan's strongly connected components with more than one node."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
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


def cycles(modules, files, src, depth):
    e = edges(modules, files, src, depth)
    adj, nodes = {}, set()
    for a, b in e:
        adj.setdefault(a, set()).add(b)
        nodes |= {a, b}
    return sccs(nodes, adj), e


def test_spans(mod, code):
    return rm.cfg_test_item_spans(code, mod.start, mod.end)


FN = re.compile(r"\bfn\s+(\w+)\s*(?:<[^{;]*?>)?\s*\(")


def long_functions(modules, files, limit):
    out = []
    seen = set()
    for mod in modules:
        if mod.test_only:
            continue
        text, code = files[mod.file]
        skip = test_spans(mod, code)
        for s, e in rm.own_spans(mod):
            for m in FN.finditer(code, s, e):
                if any(a <= m.start() < b for a, b in skip):
                    continue
                # the body: first `{` after the signature at paren depth 0, unless `;` first
                j, depth = m.end(), 1
                while j < e and depth:
                    depth += code[j] == "("
                    depth -= code[j] == ")"
                    j += 1
                while j < e and code[j] not in "{;":
                    j += 1
                if j >= e or code[j] == ";":
                    continue
                close = rm.matching_brace(code, j)
                first = code.count("\n", 0, m.start()) + 1
                last = code.count("\n", 0, close) + 1
                key = (mod.file, first)
                if key in seen:
                    continue
                seen.add(key)
                n = last - first + 1
                if n > limit:
                    out.append((n, os.path.relpath(mod.file, ROOT), first, m.group(1)))
    return sorted(out, reverse=True)


PUB_ITEM = re.compile(
    r"(?m)^\s*pub\s+(?:(?:async|unsafe|const|extern(?:\s*\"C\")?)\s+)*"
    r"(fn|struct|enum|trait|const|static|type|mod|use|union)\b"
)
PUB_FIELD = re.compile(r"(?m)^\s*pub\s+(\w+)\s*:")


def bare_pub_in_private(modules, files):
    """(items, fields) declared bare `pub` in non-test code of private modules."""
    items, fields, where = 0, 0, {}
    for mod in modules:
        if mod.test_only or mod.public:
            continue
        text, code = files[mod.file]
        skip = test_spans(mod, code)
        for s, e in rm.own_spans(mod):
            seg = code[s:e]
            for m in PUB_ITEM.finditer(seg):
                if any(a <= s + m.start() < b for a, b in skip):
                    continue
                items += 1
                where[mod.path] = where.get(mod.path, 0) + 1
            for m in PUB_FIELD.finditer(seg):
                if any(a <= s + m.start() < b for a, b in skip):
                    continue
                fields += 1
    return items, fields, where


def stringly_map_err(paths):
    """`map_err` closures whose body formats the error into a string."""
    out = []
    for base in paths:
        for dirpath, _, names in os.walk(base):
            for name in sorted(names):
                if not name.endswith(".rs"):
                    continue
                f = os.path.join(dirpath, name)
                with open(f, encoding="utf-8") as fh:
                    text = fh.read()
                code = rm.blank_comments_and_strings(text)
                for m in re.finditer(r"\.map_err\(\s*\|(\w+)(?:\s*:[^|]*)?\|", code):
                    var = m.group(1)
                    j, depth = m.end(), 1
                    while j < len(code) and depth:
                        depth += code[j] == "("
                        depth -= code[j] == ")"
                        j += 1
                    body_text = text[m.end():j]
                    body_code = code[m.end():j]
                    formats = (
                        re.search(r"\b" + var + r"\s*\.\s*to_string\s*\(", body_code)
                        or re.search(r"format!\s*\(", body_code)
                        and (
                            re.search(r"\{" + var + r"[}:]", body_text)
                            or re.search(r",\s*" + var + r"\b", body_code)
                        )
                    )
                    # The closure may quote the error in its message as long as it also keeps
                    # it as the error's source (`.with_source(e)`): nothing is flattened then.
                    keeps_source = re.search(r"\.with_source\(\s*" + var + r"\s*\)", body_code)
                    if formats and not keeps_source:
                        line = code.count("\n", 0, m.start()) + 1
                        out.append((os.path.relpath(f, ROOT), line))
    return out


def main() -> int:
    details = "--details" in sys.argv
    src = os.path.join(ROOT, "src")
    modules, files = rm.load_crate(src)
    if "--list" in sys.argv:
        for n, f, ln, name in long_functions(modules, files, 80):
            print(f"{name} {f}:{ln} {n}")
        return 0
    top_cycles, _ = cycles(modules, files, src, 1)
    unit_cycles, unit_edges = cycles(modules, files, src, 2)
    over80 = long_functions(modules, files, 80)
    over100 = [f for f in over80 if f[0] > 100]
    items, fields, where = bare_pub_in_private(modules, files)
    flat_src = stringly_map_err([src])
    flat_df = stringly_map_err([os.path.join(ROOT, "lakeseek-datafusion", "src")])
    print(f"modules (non-test): {sum(1 for m in modules if not m.test_only)}")
    print(f"import cycles, top-level modules: {len(top_cycles)} "
          f"({', '.join('{' + ' '.join(c) + '}' for c in top_cycles) or 'none'})")
    print(f"import cycles, units (two segments): {len(unit_cycles)} "
          f"(largest: {max((len(c) for c in unit_cycles), default=0)} units)")
    print(f"functions over 80 lines (non-test): {len(over80)} (over 100: {len(over100)})")
    print(f"bare pub items in private modules: {items} (plus {fields} bare pub fields)")
    print(f"map_err closures to strings: {len(flat_src)} in src/, "
          f"{len(flat_df)} in lakeseek-datafusion/src/")
    if details:
        print("\n# unit cycles")
        for c in unit_cycles:
            print("  " + " ".join(c))
            for a in c:
                for b in c:
                    if (a, b) in unit_edges:
                        f, ln = unit_edges[(a, b)][0]
                        print(f"    {a} -> {b}  ({f}:{ln}, {len(unit_edges[(a, b)])} refs)")
        print("\n# functions over 80 lines")
        for n, f, ln, name in over80:
            print(f"  {n:4} {f}:{ln} {name}")
        print("\n# bare pub items per private module (top 30)")
        for p, k in sorted(where.items(), key=lambda x: -x[1])[:30]:
            print(f"  {k:4} {p}")
        print("\n# map_err to strings")
        for f, ln in flat_src + flat_df:
            print(f"  {f}:{ln}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
