"""Both halves of the tests judge, as one standard-library program run inside two sandboxes.

``harness.py candidate FD MODE SRC``: the untrusted half. It loads the candidate (``code``:
the reply's code as module ``candidate`` from ``candidate.py``; ``dir``: the agent's folder
first on ``sys.path``), from a private copy of SRC and then only answers requests on socket FD: look up a name,
call a function, read an attribute or an item. Whatever it computes goes back as plain data.

``harness.py tests FD TIMEOUT``: the trusted half. It runs every top-level statement of the
task's tests, with the candidate's names bound to :class:`Remote` proxies (``code``) or its
modules importable as remote modules (``dir``), counts the checks that hold (any statement
that raises fails the task) and prints the verdict. It never runs a line of the candidate's code and never sees its files.

Values cross as JSON built only from ``None``, ``bool``, ``int``, finite ``float``, ``str``,
``list`` and tagged objects for ``tuple``, ``dict``, ``set``, ``frozenset``, ``bytes``,
non-finite floats, exceptions (by the name of their nearest builtin class) and opaque
references. Decoding builds builtin objects only, so a value whose ``__eq__`` always says True
cannot cross: the candidate can return a right value or a wrong one, never a verdict.
A subclass of a builtin crosses as the builtin. A reference (an object that is not plain data:
a class instance, a generator) supports calls, the attributes it really has (no str method
names), items, ``len`` and iteration, each a request; ``in`` is decided on this side over the
items it iterates to; it has no truth value and equals only itself. The candidate's
``StopIteration`` arrives as a ``RuntimeError``, never as the end of a loop here.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import json
import math
import os
import socket
import sys
import time
import types

MAX_LINE = 8 << 20  # one message; more is a broken candidate
_NOT_BUILTIN = (SystemExit, KeyboardInterrupt, GeneratorExit)
# raised by the candidate they would end the tests' loop (``all(map(f, xs))`` over nothing):
# they arrive as a RuntimeError instead, which fails the statement
_CONTROL_FLOW = ("StopIteration", "StopAsyncIteration", "GeneratorExit")
# a candidate object is never asked how a string behaves: where the tests expect text, an
# object that answers ``startswith`` or ``lower`` itself is refused (a real str crosses as str)
_TEXT_METHODS = frozenset(n for n in dir(str) + dir(bytes) if not n.startswith("_"))


# ---------------------------------------------------------------- plain data codec


def encode(value, refs=None, depth=0):  # noqa: ANN001, ANN201 - stdlib-only program
    """Plain data as JSON; anything else a reference (candidate side) or a TypeError."""
    if depth > 200:
        raise ValueError("value nested too deeply")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    # a subclass of a builtin scalar crosses as the builtin value it holds (its own __eq__,
    # __str__ or __int__ are never called)
    if isinstance(value, int):
        return int.__int__(value) if t is not bool else value
    if isinstance(value, float):
        f = float.__float__(value)
        return f if math.isfinite(f) else {"t": "float", "v": repr(f)}
    if isinstance(value, str):
        return str.__str__(value)
    # a subclass of a builtin container (namedtuple, Counter, OrderedDict, a candidate's own
    # list subclass) crosses as that builtin, read through the builtin's own methods
    if isinstance(value, list):
        return [encode(v, refs, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return {"t": "tuple", "v": [encode(v, refs, depth + 1) for v in tuple.__iter__(value)]}
    if isinstance(value, dict):
        pairs = [[encode(k, refs, depth + 1), encode(v, refs, depth + 1)]
                 for k, v in dict.items(value)]  # fmt: skip
        return {"t": "dict", "v": pairs}
    for base in (set, frozenset):
        if isinstance(value, base):
            items = base.__iter__(value)
            return {"t": base.__name__, "v": [encode(v, refs, depth + 1) for v in items]}
    if isinstance(value, (bytes, bytearray)):
        return {"t": "bytes", "v": bytes.hex(bytes(value))}
    if refs is None:
        raise TypeError(f"a {t.__name__} cannot be passed to the candidate (plain data only)")
    refs.append(value)
    kind = "callable" if callable(value) else "object"
    return {"t": "ref", "v": len(refs) - 1, "k": kind, "n": t.__name__}


def decode(data, conn=None, depth=0):  # noqa: ANN001, ANN201
    """Builtin objects only; a reference becomes a :class:`Remote` on ``conn``."""
    if depth > 200:
        raise ValueError("value nested too deeply")
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is float:
        return data
    if type(data) is list:
        return [decode(v, conn, depth + 1) for v in data]
    if type(data) is not dict:
        raise ValueError("not plain data")
    tag, v = data.get("t"), data.get("v")
    if tag == "float" and v in ("inf", "-inf", "nan"):
        return float(v)
    if tag in ("tuple", "set", "frozenset") and type(v) is list:
        items = [decode(x, conn, depth + 1) for x in v]
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and type(v) is list:
        out = {}
        for pair in v:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("bad dict item")
            out[decode(pair[0], conn, depth + 1)] = decode(pair[1], conn, depth + 1)
        return out
    if tag == "bytes" and type(v) is str:
        return bytes.fromhex(v)
    if tag == "ref" and type(v) is int and conn is not None:
        return Remote(conn, v, str(data.get("n") or "object")[:60], data.get("k") == "callable")
    raise ValueError("not plain data")


def _no_constants(name):  # noqa: ANN001, ANN202
    raise ValueError(f"{name} is not plain data")


def loads(line):  # noqa: ANN001, ANN201
    return json.loads(line, parse_constant=_no_constants)


# ---------------------------------------------------------------- the channel


class Channel:
    """Newline-delimited JSON over a socket, with a deadline on every read."""

    def __init__(self, fd, deadline=None):  # noqa: ANN001
        self.sock = socket.socket(fileno=fd)
        self.file = self.sock.makefile("rb")
        self.deadline = deadline
        self.next_id = 0

    def send(self, msg):  # noqa: ANN001
        self.sock.sendall(json.dumps(msg, separators=(",", ":")).encode() + b"\n")

    def recv(self):  # noqa: ANN201
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise Gone("timed out")
            self.sock.settimeout(left)
        try:
            line = self.file.readline(MAX_LINE + 1)
        except TimeoutError:
            raise Gone("timed out") from None
        except OSError:
            raise Gone("died") from None
        if not line:
            raise Gone("died")
        if len(line) > MAX_LINE:
            raise Gone("sent a message over the size limit")
        return loads(line)


class Gone(BaseException):
    """The candidate process timed out, died or broke the protocol: nothing more is judged.

    A BaseException so that a test's ``except Exception`` cannot swallow it."""


# ---------------------------------------------------------------- trusted side


class Remote:
    """A proxy for one object in the candidate process; every use is a request."""

    __slots__ = ("_conn", "_ref", "_type", "_callable")

    def __init__(self, conn, ref, type_name, is_callable):  # noqa: ANN001
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_callable", is_callable)

    def _ask(self, op, **fields):  # noqa: ANN001, ANN202
        return ask(self._conn, op, ref=self._ref, **fields)

    def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN204
        return self._ask("call", args=encode(list(args)), kwargs=encode(dict(kwargs)))

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name in _TEXT_METHODS:
            raise TypeError(f"a {self._type} from the candidate is not a str: no .{name}() here")
        return self._ask("attr", name=name)

    def __setattr__(self, name, value):  # noqa: ANN001, ANN204
        self._ask("setattr", name=name, value=encode(value))

    def __getitem__(self, key):  # noqa: ANN001, ANN204
        return self._ask("item", key=encode(key))

    def __len__(self):  # noqa: ANN204
        n = self._ask("len")
        if type(n) is not int or n < 0:
            raise TypeError("len() of the candidate's object is not a count")
        return n

    def __contains__(self, item):  # noqa: ANN001, ANN204
        return item in self.__iter__()  # decided here, on its plain-data items

    def __iter__(self):  # noqa: ANN204
        items = self._ask("iter")
        if type(items) is not list:
            raise TypeError("the candidate's object did not iterate to a list")
        return iter(items)

    def __bool__(self):  # noqa: ANN204
        raise TypeError(f"a {self._type} from the candidate has no truth value here")

    def __repr__(self):  # noqa: ANN204
        return f"<candidate {self._type}>"


def ask(conn, op, **fields):  # noqa: ANN001, ANN003, ANN201
    conn.next_id += 1
    rid = conn.next_id
    conn.send({"id": rid, "op": op, **fields})
    reply = conn.recv()
    if type(reply) is not dict or reply.get("id") != rid:
        raise Gone("broke the protocol")
    if "raise" in reply:
        name, msg = str(reply.get("raise")), str(reply.get("msg") or "")[:500]
        if name in _CONTROL_FLOW:
            raise RuntimeError(f"the candidate raised {name}: {msg}")
        raise _exception(name, msg)
    try:
        return decode(reply.get("ok"), conn)
    except (ValueError, TypeError, RecursionError):
        raise TypeError("the candidate returned something that is not plain data") from None


def _exception(name, msg):  # noqa: ANN001, ANN202
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        cls = RuntimeError
    try:
        return cls(msg)
    except Exception:  # an exception class with another signature (UnicodeDecodeError)
        return RuntimeError(f"{name}: {msg}")


class _RemoteFinder:
    """Imports of the candidate's own modules (dir mode) become remote modules."""

    def __init__(self, conn, names):  # noqa: ANN001
        self.conn, self.names = conn, set(names)

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001, ANN201
        if fullname.split(".")[0] not in self.names:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):  # noqa: ANN001, ANN201
        module = types.ModuleType(spec.name)
        conn, name = self.conn, spec.name

        def remote_attr(attr):  # noqa: ANN001, ANN202
            if attr.startswith("__"):
                raise AttributeError(attr)
            return ask(conn, "get", module=name, name=attr)

        module.__getattr__ = remote_attr
        module.__path__ = []
        return module

    def exec_module(self, module):  # noqa: ANN001
        ask(self.conn, "import", module=module.__name__)


def _reserved(name, stdlib):  # noqa: ANN001, ANN202
    return hasattr(builtins, name) or name in stdlib or name.startswith("__")


# statements that only set names up: they count as a check only when they raise
_SETUP = ("Import", "ImportFrom", "FunctionDef", "AsyncFunctionDef", "ClassDef", "Assign",
          "AnnAssign", "Pass")


def judge(fd, timeout_s, tests):  # noqa: ANN001, ANN201
    """Run the tests against the candidate on ``fd``; return the verdict as a dict.

    Every top-level statement runs, in order, whatever happened to the ones before; an
    exception escaping any statement (an assert, a call, a loop, try/else, with) fails the
    task. ``total`` counts the checks: every statement but setup (imports, def/class,
    assignments, pass), plus each setup statement that raised; ``passed`` those that held."""
    import ast

    result = {"total": 0, "passed": 0, "error": None, "gone": None, "failed": 0}
    tree = ast.parse(tests)
    checks = [type(node).__name__ not in _SETUP for node in tree.body]
    result["total"] = sum(checks)
    conn = Channel(fd, deadline=time.monotonic() + 20.0)  # interpreter start-up
    try:
        hello = conn.recv()
    except Gone as exc:
        result["gone"] = str(exc)
        return result
    if type(hello) is not dict or hello.get("ready") is not True:
        error = hello.get("error") if type(hello) is dict else None
        result["error"] = "candidate: " + str(error or "did not start")[:300]
        result["total"] = max(1, result["total"])
        return result
    conn.deadline = time.monotonic() + timeout_s
    ns = {"__name__": "tests", "__builtins__": builtins}
    names = hello.get("names") if type(hello.get("names")) is list else []
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    try:
        for name in names[:2000]:
            # a candidate's ``len`` or ``math`` must not stand in for the tests' own: builtins
            # and standard modules are never taken from the candidate (tests import theirs)
            if type(name) is str and name.isidentifier() and not _reserved(name, stdlib):
                ns[name] = ask(conn, "get", module=None, name=name)
    except Gone as exc:
        result["gone"] = str(exc)
        return result
    except Exception as exc:
        result["error"] = "candidate: " + repr(exc)[:300]
        result["total"] = max(1, result["total"])
        return result
    modules = hello.get("modules") if type(hello.get("modules")) is list else []
    local = [m for m in modules if type(m) is str and m.isidentifier() and m not in stdlib]
    if local:
        sys.meta_path.insert(0, _RemoteFinder(conn, local))
    for node, is_check in zip(tree.body, checks, strict=True):
        code = compile(ast.Module(body=[node], type_ignores=[]), "tests.py", "exec")
        try:
            exec(code, ns)
        except Gone as exc:
            result["gone"] = str(exc)
            result["passed"] = 0
            return result
        except Exception as exc:
            result["failed"] += 1
            result["total"] += 0 if is_check else 1
            if result["error"] is None:
                result["error"] = f"line {node.lineno}: " + repr(exc)[:300]
            continue
        result["passed"] += is_check
    if result["total"] == 0:  # nothing but setup, and it all ran
        result["total"] = result["passed"] = 1
    return result


# ---------------------------------------------------------------- untrusted side


def serve(fd, mode, src):  # noqa: ANN001
    """Candidate side: load the candidate, then answer requests until the socket closes.

    ``src`` is the read-only copy of the candidate's files; when it is not the working
    directory it is copied into ``/tmp/work`` first (the sandbox's size-limited tmpfs), so
    whatever the candidate writes never reaches the host's disk."""
    import importlib
    import shutil

    if os.path.realpath(src) != os.path.realpath(os.getcwd()):
        shutil.copytree(src, "/tmp/work", symlinks=True)
        os.chdir("/tmp/work")
    conn = Channel(fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    refs = []
    names, modules = [], []
    space = {}
    try:
        if mode == "code":
            module = types.ModuleType("candidate")
            module.__file__ = os.path.abspath("candidate.py")
            sys.modules["candidate"] = module
            with open("candidate.py", encoding="utf-8") as fh:
                source = fh.read()
            exec(compile(source, "candidate.py", "exec"), module.__dict__)
            space = module.__dict__
            names = [n for n in space if not n.startswith("__")]
        else:
            sys.path.insert(0, os.getcwd())
            for entry in sorted(os.listdir(".")):
                stem = entry[:-3] if entry.endswith(".py") else entry
                if (entry.endswith(".py") or os.path.isdir(entry)) and stem.isidentifier():
                    modules.append(stem)
    except BaseException as exc:  # noqa: BLE001 - the candidate's failure is its result
        conn.send({"ready": False, "error": f"{type(exc).__name__}({str(exc)[:200]!r})"})
        return
    conn.send({"ready": True, "names": names, "modules": modules})
    while True:
        try:
            req = conn.recv()
        except Gone:
            return
        rid = req.get("id")
        try:
            value = _answer(req, refs, space, importlib)
            reply = {"id": rid, "ok": encode(value, refs)}
        except BaseException as exc:  # noqa: BLE001
            reply = {"id": rid, "raise": _builtin_name(exc), "msg": str(exc)[:500]}
        try:
            conn.send(reply)
        except (OSError, ValueError, TypeError):
            return


def _really_has(obj, name):  # noqa: ANN001, ANN202
    """Whether ``name`` is in the object's own ``__dict__`` or a class dict of its type (or,
    for a class, of its own MRO): what ``getattr`` finds without ``__getattr__``. Lighter
    than ``inspect.getattr_static``, whose import would cost every candidate process."""
    owners = list(type(obj).__mro__)
    if isinstance(obj, type):
        owners = list(obj.__mro__) + owners
    if any(name in type.__dict__["__dict__"].__get__(k) for k in owners):
        return True
    try:
        own = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        return False
    return type(own) is dict and name in own


def _answer(req, refs, space, importlib):  # noqa: ANN001, ANN202
    op = req.get("op")
    if op == "get":
        if req.get("module") is None:
            if req["name"] not in space:
                raise NameError(f"name {req['name']!r} is not defined")
            return space[req["name"]]
        return getattr(importlib.import_module(req["module"]), req["name"])
    if op == "import":
        importlib.import_module(req["module"])
        return None
    obj = refs[req["ref"]]
    if op == "call":
        return obj(*decode(req["args"]), **decode(req["kwargs"]))
    if op == "attr":  # only what the object really has: no __getattr__ answering anything
        if not _really_has(obj, req["name"]):
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute {req['name']!r}")
        return getattr(obj, req["name"])
    if op == "setattr":
        setattr(obj, req["name"], decode(req["value"]))
        return None
    if op == "item":
        return obj[decode(req["key"])]
    if op == "len":
        return len(obj)
    if op == "iter":
        return list(obj)
    raise ValueError(f"unknown request {op!r}")


def _builtin_name(exc):  # noqa: ANN001, ANN202
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins" and not issubclass(cls, _NOT_BUILTIN):
            return cls.__name__
    return "RuntimeError"


def main():  # noqa: ANN201
    role, fd = sys.argv[1], int(sys.argv[2])
    if role == "candidate":
        serve(fd, sys.argv[3], sys.argv[4])
        os._exit(0)
    with open(sys.argv[4], encoding="utf-8") as fh:
        tests = fh.read()
    result = judge(fd, float(sys.argv[3]), tests)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
