"""Read a Rust crate's module tree and its `crate::` paths, stdlib only.

Shared by `scripts/code_metrics.py` (counts the maintenance review asks for) and
`scripts/check_layers.py` (the layering check `.ci/run` runs). Not a Rust parser: a lexer that
blanks comments and string/char literals (keeping line numbers and byte offsets), brace
matching, and the module declarations (`mod x;`, `mod x { .. }`, `#[path = ".."]`,
`#[cfg(test)]`) from `src/lib.rs` down.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field


def blank_comments_and_strings(text: str) -> str:
    """Returns `text` with comments and string/char literal contents replaced by spaces.

    Newlines are kept, so offsets and line numbers still match the source; string literals keep
    their quotes (`"   "`) so code around them still reads as an expression.
    """
    out = list(text)
    i, n = 0, len(text)

    def blank(start: int, end: int) -> None:
        for k in range(start, min(end, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rb" and re.match(r'(br|r)#*"', text[i:i + 260]) and (
            i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
        ):
            m = re.match(r'(br|r)(#*)"', text[i:])
            hashes = m.group(2)
            start = i + m.end()
            end = text.find('"' + hashes, start)
            end = n if end < 0 else end
            blank(start, end)
            i = end + 1 + len(hashes)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime/label ('a, 'static).
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                blank(i + 1, i + m.end() - 1)
                i += m.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def matching_brace(code: str, open_index: int) -> int:
    """The index of the `}` closing the `{` at `open_index` (in blanked code)."""
    depth = 0
    for k in range(open_index, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(code) - 1


@dataclass
class Module:
    """One module: its path (`index::filter::plan`), file, and the span of its body in it."""

    path: str
    file: str
    start: int
    end: int
    test_only: bool
    public: bool  # reachable from outside the crate by `pub mod` all the way down
    children: list = field(default_factory=list)


ATTR = r"(?:#\s*\[[^\]]*\]\s*)*"
MOD_DECL = re.compile(
    r"(?P<attrs>" + ATTR + r")(?P<vis>pub(?:\s*\([^)]*\))?\s+)?mod\s+(?P<name>\w+)\s*(?P<tail>[;{])"
)


def _raw_attrs(text: str, start: int, end: int) -> str:
    return text[start:end]


def load_crate(src_dir: str) -> tuple[list[Module], dict[str, tuple[str, str]]]:
    """Every module of the crate rooted at `src_dir/lib.rs`, and each file's (text, code)."""
    files: dict[str, tuple[str, str]] = {}
    modules: list[Module] = []

    def read(path: str) -> tuple[str, str]:
        if path not in files:
            with open(path, encoding="utf-8") as f:
                text = f.read()
            files[path] = (text, blank_comments_and_strings(text))
        return files[path]

    def walk(mod: Module, dir_for_children: str) -> None:
        text, code = read(mod.file)
        depth_ok = _top_level_mask(code, mod.start, mod.end)
        for m in MOD_DECL.finditer(code, mod.start, mod.end):
            name_pos = m.start("name")
            if not depth_ok(name_pos):
                continue
            attrs_raw = text[m.start("attrs"):m.end("attrs")]
            name = m.group("name")
            vis = (m.group("vis") or "").strip()
            test_only = mod.test_only or bool(
                re.search(r"#\s*\[\s*cfg\s*\(\s*test\s*\)", attrs_raw)
            ) or name == "tests" and "cfg(test" in attrs_raw.replace(" ", "")
            public = mod.public and vis == "pub"
            child_path = f"{mod.path}::{name}" if mod.path else name
            if m.group("tail") == "{":
                open_i = m.end("tail") - 1
                close_i = matching_brace(code, open_i)
                child = Module(child_path, mod.file, open_i + 1, close_i, test_only, public)
                mod.children.append(child)
                modules.append(child)
                walk(child, os.path.join(dir_for_children, name))
                continue
            path_attr = re.search(r'#\s*\[\s*path\s*=\s*"([^"]+)"', attrs_raw)
            if path_attr:
                child_file = os.path.normpath(os.path.join(dir_for_children, path_attr.group(1)))
            else:
                a = os.path.join(dir_for_children, name + ".rs")
                b = os.path.join(dir_for_children, name, "mod.rs")
                child_file = a if os.path.exists(a) else b
            if os.path.isdir(child_file):
                child_file = os.path.join(child_file, "mod.rs")
            if not os.path.exists(child_file):
                continue
            _, child_code = read(child_file)
            child = Module(child_path, child_file, 0, len(child_code), test_only, public)
            mod.children.append(child)
            modules.append(child)
            base = os.path.basename(child_file)
            if base in ("mod.rs", "lib.rs"):
                child_dir = os.path.dirname(child_file)
            else:
                child_dir = os.path.join(os.path.dirname(child_file), base[:-3])
            walk(child, child_dir)

    lib = os.path.join(src_dir, "lib.rs")
    _, code = read(lib)
    root = Module("", lib, 0, len(code), False, True)
    modules.append(root)
    walk(root, src_dir)
    return modules, files


def _top_level_mask(code: str, start: int, end: int):
    """A predicate: is this offset at brace depth 0 within [start, end)?"""
    depths = []
    depth = 0
    for k in range(start, end):
        depths.append(depth)
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1

    def at_top(pos: int) -> bool:
        return depths[pos - start] == 0

    return at_top


def own_spans(mod: Module) -> list[tuple[int, int]]:
    """The spans of `mod`'s body minus its inline child modules' bodies."""
    inner = sorted((c.start, c.end) for c in mod.children if c.file == mod.file)
    spans, cursor = [], mod.start
    for s, e in inner:
        spans.append((cursor, s))
        cursor = e
    spans.append((cursor, mod.end))
    return spans


def cfg_test_item_spans(code: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of items marked `#[cfg(test)]` (fns, impls, uses) within [start, end)."""
    spans = []
    for m in re.finditer(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]", code[start:end]):
        s = start + m.end()
        j = s
        while j < end and code[j] not in "{;":
            j += 1
        if j < end and code[j] == "{":
            spans.append((start + m.start(), matching_brace(code, j) + 1))
        else:
            spans.append((start + m.start(), j + 1))
    return spans


def expand_use_tree(tree: str) -> list[str]:
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`] (whitespace removed)."""
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [tree]
    i = tree.index("{")
    prefix = tree[:i]
    close = matching_brace(tree, i)
    inner = tree[i + 1:close]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        if not p:
            continue
        for sub in expand_use_tree(p):
            out.append(prefix + sub if sub != "self" else prefix.rstrip(":"))
    return out


def resolve(path: str, current: str) -> str | None:
    """An absolute `a::b::c` module path for `crate::`/`super::`/`self::` paths, else None."""
    segs = path.split("::")
    base = current.split("::") if current else []
    if segs[0] == "crate":
        return "::".join(segs[1:])
    if segs[0] in ("super", "self"):
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super":
                if not base:
                    return None
                base = base[:-1]
            segs = segs[1:]
        return "::".join(base + segs)
    return None


def crate_paths(mod: Module, code: str, skip_test_items: bool = True):
    """Yields (offset, absolute path) for every crate/super/self path in `mod`'s own code."""
    skip = cfg_test_item_spans(code, mod.start, mod.end) if skip_test_items else []

    def skipped(pos: int) -> bool:
        return any(s <= pos < e for s, e in skip)

    for s, e in own_spans(mod):
        seg = code[s:e]
        for m in re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", seg):
            if skipped(s + m.start()):
                continue
            for p in expand_use_tree(m.group(1)):
                p = re.sub(r"\bas\w+$", "", p.split(" as ")[0])
                r = resolve(p, mod.path)
                if r:
                    yield s + m.start(), r
        for m in re.finditer(r"(?<![\w:])((?:crate|super)(?:::\w+)+)", seg):
            # plain paths in code (not inside a `use`, handled above)
            line_start = seg.rfind("\n", 0, m.start()) + 1
            stmt = seg[line_start:m.start()]
            if re.search(r"\buse\b", stmt) or skipped(s + m.start()):
                continue
            r = resolve(m.group(1), mod.path)
            if r:
                yield s + m.start(), r
