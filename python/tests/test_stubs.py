"""The type stubs describe the native module: every public class, method and property of
`lakeseek._lakeseek` is in `_lakeseek.pyi`, and the stubs name nothing that does not exist."""

import ast
from pathlib import Path

import lakeseek
from lakeseek import _lakeseek

STUB = Path(lakeseek.__file__).with_name("_lakeseek.pyi")
HELPERS = {"ArrowArrayExportable", "Addresses", "NDArrayLike", "StorageOptions", "Vector"}  # typing-only


def _stub_classes():
    tree = ast.parse(STUB.read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    return classes


def _public(cls):
    return {n for n in vars(cls) if not n.startswith("_") or n in ("__arrow_c_stream__",
                                                                     "__arrow_c_array__",
                                                                     "__arrow_c_schema__")}


def test_stubs_match_the_native_module():
    stubs = _stub_classes()
    native = {n: getattr(_lakeseek, n) for n in dir(_lakeseek) if isinstance(getattr(_lakeseek, n), type)}
    assert set(stubs) - HELPERS == set(native)
    for name, cls in native.items():
        if issubclass(cls, BaseException):
            continue
        stubbed = {m for m in stubs[name] if not m.startswith("_") or m.startswith("__arrow")}
        assert _public(cls) == stubbed, name


def test_every_public_name_is_exported_and_documented():
    for name in lakeseek.__all__:
        obj = getattr(lakeseek, name)
        if isinstance(obj, type):
            assert obj.__doc__, f"{name} has no docstring"
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and callable(getattr(value, "__get__", None)):
                    assert getattr(value, "__doc__", None), f"{name}.{attr} has no docstring"
