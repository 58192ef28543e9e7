#!/usr/bin/env python3
"""The layering check: modules of the `lakeseek` crate import only downwards, with no cycle.

    python3 scripts/check_layers.py            # fails (exit 1) on a violation
    python3 scripts/check_layers.py --report   # lists violations, always exits 0

Reads the `crate::`/`super::` paths (in `use` statements and in code) of every non-test module
of `src/` (stdlib only, see `scripts/rust_modules.py`) and checks three rules:

1. a top-level module imports only modules of a strictly lower layer (see `LAYERS`, and
   docs/architecture.md for the picture);
2. no import cycle between units (the first two path segments: `index::filter`, `lance::file`);
3. no index kind imports another kind (`KINDS`);
4. the clients (`CLIENTS`: the CLI and `lakeseek bench`) use only what a user of the crate
   can: crate-root re-exports and public modules (`lakeseek::ecp::EcpIndex`, not
   `crate::ecp::index::EcpIndex`), besides each other.

`EXCEPTIONS` lists the edges still tolerated; `.ci/run` runs this check only with it empty.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import code_metrics as cm  # noqa: E402
import rust_modules as rm  # noqa: E402

# Lower layers first; a module may import only from a strictly lower layer.
LAYERS = {
    "error": 0,
    "io": 1,
    "lance": 2,
    "index": 3,
    "ecp": 3,
    "session": 4,
    "api": 5,
    "args": 5,
    "sample": 5,
    "testing": 5,
    "bench": 6,
    "fuzzing": 6,
    "cli": 7,
}

# One module per index kind; none imports another.
KINDS = {
    "index::btree",
    "index::bitmap",
    "index::bloom",
    "index::zonemap",
    "index::label_list",
    "index::list_element",
    "index::ngram",
}

# Modules that must be clients of the public API, like `lakeseek-datafusion` and Python.
CLIENTS = {"cli", "bench"}

# Edges still tolerated: (from, to) at either granularity. Empty = the check is strict.
EXCEPTIONS: set[tuple[str, str]] = set()


def private_uses(modules, files, src) -> list[str]:
    """Paths from a client module to anything a user of the crate cannot name."""
    by_path = {m.path: m for m in modules}
    reexported = cm.root_reexports(files, src)
    out = []
    for mod in modules:
        if mod.test_only or mod.path.split("::")[0] not in CLIENTS:
            continue
        text, code = files[mod.file]
        for off, path in rm.crate_paths(mod, code):
            segs = path.split("::")
            if segs[0] in CLIENTS or (segs[0] in reexported and segs[0] not in by_path):
                continue
            deepest = max(
                (i for i in range(1, len(segs) + 1) if "::".join(segs[:i]) in by_path),
                default=0,
            )
            if deepest and by_path["::".join(segs[:deepest])].public:
                continue
            line = code.count("\n", 0, off) + 1
            out.append(
                f"client uses a crate-internal path: {mod.path} -> crate::{path} "
                f"({os.path.relpath(mod.file, os.path.dirname(src))}:{line})"
            )
    return out


def violations(src: str) -> list[str]:
    modules, files = rm.load_crate(src)
    out = private_uses(modules, files, src)
    top = cm.edges(modules, files, src, 1)
    for (a, b), refs in sorted(top.items()):
        if a not in LAYERS or b not in LAYERS:
            out.append(f"unknown module in {a} -> {b}: add it to LAYERS ({refs[0][0]}:{refs[0][1]})")
        elif LAYERS[b] >= LAYERS[a] and (a, b) not in EXCEPTIONS:
            kind = "sideways" if LAYERS[a] == LAYERS[b] else "upward"
            out.append(
                f"{kind} import {a} -> {b} ({len(refs)} refs, first {refs[0][0]}:{refs[0][1]})"
            )
    unit_cycles, unit_edges = cm.cycles(modules, files, src, 2)
    for cycle in unit_cycles:
        inside = [
            f"{a} -> {b} ({unit_edges[(a, b)][0][0]}:{unit_edges[(a, b)][0][1]})"
            for a in cycle
            for b in cycle
            if (a, b) in unit_edges and (a, b) not in EXCEPTIONS
        ]
        if inside:
            out.append(f"import cycle {{{' '.join(cycle)}}}:\n    " + "\n    ".join(inside))
    for (a, b), refs in sorted(unit_edges.items()):
        if a in KINDS and b in KINDS and (a, b) not in EXCEPTIONS:
            out.append(
                f"index kind imports a sibling kind: {a} -> {b} "
                f"({len(refs)} refs, first {refs[0][0]}:{refs[0][1]})"
            )
    return out


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = violations(os.path.join(root, "src"))
    for v in found:
        print(v)
    if EXCEPTIONS:
        print(f"{len(EXCEPTIONS)} exceptions listed in scripts/check_layers.py")
        if "--report" not in sys.argv:
            return 1
    if found:
        print(f"layering: {len(found)} violations")
        return 0 if "--report" in sys.argv else 1
    print("layering: imports go only downwards, no cycles, no kind imports another")
    return 0


if __name__ == "__main__":
    sys.exit(main())
