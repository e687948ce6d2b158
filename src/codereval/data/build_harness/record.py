# Records the calls a project's own test suite makes to chosen functions (codereval build).
#
# Runs inside the project's interpreter (Python 3.6 and later: no annotations, no f-strings
# with '='), in the sandbox, as:  python record.py SPEC.json OUT_DIR [pytest arguments...]
# SPEC lists the targets: {"targets": [{"id", "module", "qualname"}], "max_calls", "max_bytes",
# "roots": [source roots to put first on sys.path]}. For each target, every outermost call the
# suite makes is written to OUT_DIR/<id>.calls as pickled records, one after another:
#   {"args": bytes, "args_after": bytes, "outcome": "return" | "raise" | "yield",
#    "value": bytes, "error": "module.Class"}
# A result that is an iterator (a generator, map, itertools...) is handed to the suite through a
# tap that records the items it consumes: "yield", value = (items, whether it was exhausted),
# error = the exception raised while iterating, if any.
# where args is the pickle of (args, kwargs) before the call (a method's receiver is args[0])
# and args_after the same objects after it (what the call changed in them). A call whose inputs
# or result cannot be pickled is counted in OUT_DIR/<id>.dropped and not written. Pickle by
# default: it is in every interpreter, so nothing is installed into the project's environment.
# SPEC's "serializer": "cloudpickle" (installed into the environment by `build --serializer
# cloudpickle`) also holds lambdas and local functions, by value; its pickles are read back by
# plain pickle.loads as long as cloudpickle is importable, so the replay is the same.
import json
import os
import pickle
import sys
import threading
import types

SPEC_PATH, OUT_DIR = sys.argv[1], sys.argv[2]
with open(SPEC_PATH) as handle:
    SPEC = json.load(handle)
MAX_CALLS = int(SPEC.get("max_calls", 20))
MAX_BYTES = int(SPEC.get("max_bytes", 1 << 16))
MAX_DROPS = int(SPEC.get("max_drops", 10 * MAX_CALLS))
PROTOCOL = min(4, pickle.HIGHEST_PROTOCOL)
if SPEC.get("serializer") == "cloudpickle":
    import cloudpickle as _serializer
else:
    _serializer = pickle
_state = threading.local()
_counts = {}
_dropped = {}
_lock = threading.Lock()


def _note_dropped(target_id, why):
    with _lock:
        count = _dropped[target_id] = _dropped.get(target_id, 0) + 1
        # The reasons of the first few; the count (suite.json) is of all the calls tried.
        if count <= MAX_CALLS:
            with open(os.path.join(OUT_DIR, target_id + ".dropped"), "a") as handle:
                handle.write(why + "\n")


def _dumps(value):
    data = _serializer.dumps(value, protocol=PROTOCOL)
    if len(data) > MAX_BYTES:
        raise ValueError("larger than %d bytes" % MAX_BYTES)
    return data


def _recording(target_id, function):
    def wrapper(*args, **kwargs):
        active = getattr(_state, "active", None)
        if active is None:
            active = _state.active = set()
        # Only the outermost call: a recursive call is part of the outer one's behaviour.
        # A function whose calls never pickle is not tried for ever: pickling a large object
        # graph on each of a suite's million calls is what made suites run for hours.
        if (target_id in active or _counts.get(target_id, 0) >= MAX_CALLS
                or _dropped.get(target_id, 0) >= MAX_DROPS):
            return function(*args, **kwargs)
        try:
            before = _dumps((args, kwargs))
        except Exception as exc:
            _note_dropped(target_id, "arguments: %s" % type(exc).__name__)
            return function(*args, **kwargs)
        active.add(target_id)
        try:
            result = function(*args, **kwargs)
        except Exception as exc:
            active.discard(target_id)
            _write(target_id, before, args, kwargs, "raise", None, exc)
            raise
        active.discard(target_id)
        if _is_iterator(result):
            # A generator (or any iterator) is its items: recorded as the suite consumes them.
            return _tapped(target_id, before, args, kwargs, result)
        _write(target_id, before, args, kwargs, "return", result, None)
        return result

    wrapper.__wrapped__ = function
    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, name, getattr(function, name))
        except AttributeError:
            pass
    return wrapper


def _is_iterator(value):
    import io

    if isinstance(value, io.IOBase) or not hasattr(value, "__next__"):
        return False
    try:
        return iter(value) is value
    except Exception:
        return False


def _tapped(target_id, before, args, kwargs, iterator):
    items = []
    try:
        for item in iterator:
            items.append(item)
            yield item
    except GeneratorExit:
        # Closed (or collected) before the end: the items consumed are what was seen.
        _write(target_id, before, args, kwargs, "yield", (items, False), None)
        raise
    except Exception as exc:
        _write(target_id, before, args, kwargs, "yield", (items, False), exc)
        raise
    _write(target_id, before, args, kwargs, "yield", (items, True), None)


def _write(target_id, before, args, kwargs, outcome, result, error):
    try:
        after = _dumps((args, kwargs))
        value = _dumps(result) if outcome in ("return", "yield") else b""
    except Exception as exc:
        _note_dropped(target_id, "result: %s" % type(exc).__name__)
        return
    error_name = ""
    if error is not None:
        error_name = type(error).__module__ + "." + type(error).__qualname__
    record = {"args": before, "args_after": after, "outcome": outcome, "value": value,
              "error": error_name}
    with _lock:
        if _counts.get(target_id, 0) >= MAX_CALLS:
            return
        _counts[target_id] = _counts.get(target_id, 0) + 1
        with open(os.path.join(OUT_DIR, target_id + ".calls"), "ab") as handle:
            pickle.dump(record, handle, protocol=PROTOCOL)


def _mangled(owner, name):
    # A class's private method ``__x`` lives in its dict as ``_Class__x``.
    if isinstance(owner, type) and name.startswith("__") and not name.endswith("__"):
        return "_" + owner.__name__.lstrip("_") + name
    return name


def _install(target):
    import importlib

    module = importlib.import_module(target["module"])
    owner, parts = module, target["qualname"].split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    name = _mangled(owner, parts[-1])
    raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    if isinstance(raw, staticmethod):
        original = raw.__func__
        replacement = staticmethod(_recording(target["id"], original))
    elif isinstance(raw, classmethod):
        original = raw.__func__
        replacement = classmethod(_recording(target["id"], original))
    elif isinstance(raw, types.FunctionType):
        original = raw
        replacement = _recording(target["id"], original)
    else:
        return None
    setattr(owner, name, replacement)
    return original, replacement


def _rebind(pairs):
    # Modules that imported a target before it was wrapped (``from pkg.mod import f`` in the
    # package's __init__) hold the original: point them at the recording wrapper too.
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not namespace:
            continue
        for key, value in list(namespace.items()):
            for original, replacement in pairs:
                if value is original and not isinstance(replacement, (staticmethod, classmethod)):
                    namespace[key] = replacement


class _Plugin(object):
    def __init__(self):
        self.pairs = []

    def pytest_configure(self, config):
        for target in SPEC["targets"]:
            try:
                installed = _install(target)
            # A script's module may exit when imported (argparse at the top): that target is
            # not recorded, the suite still runs.
            except (Exception, SystemExit) as exc:
                _note_dropped(target["id"], "not installed: %s: %s" % (type(exc).__name__, exc))
                continue
            if installed is not None:
                self.pairs.append(installed)
        _rebind(self.pairs)

    def pytest_collection_finish(self, session):
        _rebind(self.pairs)


def main():
    import pytest

    os.makedirs(OUT_DIR, exist_ok=True)
    # Source roots (src/) first, before pytest loads conftest files that import the project.
    for root in reversed(SPEC.get("roots", [])):
        path = os.path.abspath(root)
        if path not in sys.path:
            sys.path.insert(0, path)
    code = pytest.main(sys.argv[3:], plugins=[_Plugin()])
    with open(os.path.join(OUT_DIR, "suite.json"), "w") as handle:
        json.dump({"exit": int(code), "calls": _counts, "dropped": _dropped}, handle)
    sys.exit(0)


if __name__ == "__main__":
    main()
