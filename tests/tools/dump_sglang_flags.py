"""Dump SGLang's argparse table (JSON on stdout) from an unpacked wheel, every other import stubbed.

Usage: python tests/tools/dump_sglang_flags.py UNPACKED_WHEEL_DIR MODULES_TO_KEEP [EXTRA_SYS_PATH] (msgspec
for 0.5.23). 0.5.11: keep "sglang.srt.server_args,sglang.srt.environ"; 0.5.23: also "sglang.srt.arg_groups.*".
The JSON then becomes gdnconsole/sglang/flagtables.py (see that module's docstring).
"""

# ruff: noqa: E402, RUF012

import argparse
import importlib.abc
import importlib.machinery
import json
import sys
import types

ROOT = sys.argv[1]
KEEP = set(sys.argv[2].split(","))


class Base:
    def __init_subclass__(cls, **kw):
        pass

    def __init__(self, *a, **k):
        pass

    def __class_getitem__(cls, k):
        return cls

    def __getattr__(self, name):
        return Anything()


class Anything:
    __version__ = "2.9.0"
    __file__ = "/nonexistent/x.py"
    __path__ = []

    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        if name in (
            "__signature__",
            "__wrapped__",
            "__spec__",
            "__loader__",
            "__origin__",
            "__args__",
            "__parameters__",
        ):
            raise AttributeError(name)
        return Anything()

    def __call__(self, *a, **k):
        if len(a) == 1 and callable(a[0]) and not k:
            return a[0]
        return Anything()

    def __iter__(self):
        return iter(())

    def __getitem__(self, k):
        return Anything()

    def __setitem__(self, k, v):
        pass

    def __delitem__(self, k):
        pass

    def __setattr__(self, k, v):
        pass

    def __mro_entries__(self, bases):
        return (Base,)

    def __bool__(self):
        return False

    def __len__(self):
        return 0

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __float__(self):
        return 0.0

    def __str__(self):
        return "0"

    def __lt__(self, o):
        return False

    __gt__ = __le__ = __ge__ = __lt__

    def __or__(self, o):
        return self

    __ror__ = __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __or__

    def __hash__(self):
        return 0

    def __contains__(self, x):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class Mod(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name not in ("__version__",):
            raise AttributeError(name)
        if name in ("npu", "hpu", "xpu", "musa"):
            raise AttributeError(name)
        return Anything()


class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if (
            top == "msgspec"
            or name in KEEP
            or any(name.startswith(k[:-1]) for k in KEEP if k.endswith("*"))
            or top in sys.stdlib_module_names
        ):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        m = Mod(spec.name)
        m.__path__ = (
            [ROOT + "/" + spec.name.replace(".", "/")]
            if spec.name in ("sglang", "sglang.srt", "sglang.srt.arg_groups")
            else []
        )
        m.__version__ = "2.9.0"
        m.__file__ = "/nonexistent/x.py"
        return m

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, Finder())
sys.path.insert(0, ROOT)
sys.path[1:1] = [p for p in sys.argv[3:]]  # e.g. a --target dir holding msgspec
from sglang.srt.server_args import ServerArgs

p = argparse.ArgumentParser()
ServerArgs.add_cli_args(p)
out = []
for a in p._actions:
    if isinstance(a, argparse._HelpAction):
        continue
    kind = type(a).__name__
    t = getattr(a.type, "__name__", repr(a.type)) if a.type else None
    out.append(
        {
            "options": a.option_strings,
            "dest": a.dest,
            "action": kind,
            "nargs": a.nargs,
            "type": t,
            "choices": list(a.choices) if a.choices is not None else None,
            "required": a.required,
            "const": repr(a.const) if a.const is not None else None,
        }
    )
json.dump(out, sys.stdout, indent=None)
