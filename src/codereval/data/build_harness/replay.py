# codereval build: this task's test. It replays calls the project's own test suite made to
# @@TARGET@@ and compares what the function under test does with what the original did: the
# value returned (or the type of exception raised) and the arguments after the call (a method's
# receiver is the first). Runs in the project's interpreter (Python 3.6 and later).
import base64
import importlib
import io
import json
import math
import os
import pickle
import sys

MODULE = @@MODULE@@
QUALNAME = @@QUALNAME@@
ROOTS = @@ROOTS@@
CALLS = @@CALLS@@

HERE = os.path.dirname(os.path.abspath(__file__))
for _root in reversed(ROOTS):
    sys.path.insert(0, os.path.join(HERE, _root))


def load_calls():
    stream = io.BytesIO(base64.b64decode(CALLS))
    calls = []
    while stream.tell() < len(stream.getvalue()):
        calls.append(pickle.load(stream))
    return calls


def function_under_test():
    owner = importlib.import_module(MODULE)
    parts = QUALNAME.split(".")
    for part in parts[:-1]:
        owner = getattr(owner, part)
    name = parts[-1]
    if isinstance(owner, type) and name.startswith("__") and not name.endswith("__"):
        name = "_" + owner.__name__.lstrip("_") + name  # a private method, as Python stores it
    raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    # The suite's calls were recorded with the receiver (or class) as the first argument.
    return getattr(raw, "__func__", raw)


def same(a, b, depth=0):
    """Equal as the recording saw it: floats within 1e-9 (NaN equals NaN), containers item by
    item, iterators always (see below), objects without their own __eq__ by their attributes,
    else by their pickles."""
    if a is b:
        return True
    if depth > 50:
        return False
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if type(a) is not type(b):
        return False
    if hasattr(a, "__next__"):
        # An iterator passed in is consumed by the call: how far, and how its pickle looks
        # then, is not behaviour the recording can pin down.
        return True
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, depth + 1) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (len(a) == len(b) and all(k in b for k in a)
                and all(same(a[k], b[k], depth + 1) for k in a))
    try:
        equal = a == b
        if equal is True:
            return True
        if equal is False and type(a).__eq__ is not object.__eq__:
            return False
    except Exception:
        pass
    if hasattr(a, "__dict__") and type(a).__eq__ is object.__eq__:
        return same(vars(a), vars(b), depth + 1)
    try:
        return pickle.dumps(a, protocol=2) == pickle.dumps(b, protocol=2)
    except Exception:
        return False


def check_items(result, call):
    """An iterator's items, as many as the suite consumed, then its end or its exception."""
    items, exhausted = pickle.loads(call["value"])
    # The original returned an iterator, and the suite may call next() on it: a list is not one.
    if not hasattr(result, "__next__"):
        return "returned %r, expected an iterator" % (result,)
    iterator = result
    for position, expected in enumerate(items):
        try:
            item = next(iterator)
        except StopIteration:
            return "stopped after %d items, expected %d" % (position, len(items))
        if not same(item, expected):
            return "item %d is %r, expected %r" % (position, item, expected)
    if call["error"]:
        try:
            extra = next(iterator)
        except Exception as exc:
            name = type(exc).__module__ + "." + type(exc).__qualname__
            if name != call["error"]:
                return "raised %s after the items, expected %s" % (name, call["error"])
            return None
        return "yielded %r, expected %s to be raised" % (extra, call["error"])
    if exhausted:
        try:
            extra = next(iterator)
        except StopIteration:
            return None
        return "yielded %r after the %d expected items" % (extra, len(items))
    return None


def check(call, function):
    """None when the call behaves as recorded, else what differs."""
    args, kwargs = pickle.loads(call["args"])
    try:
        result = function(*args, **kwargs)
    except Exception as exc:
        if call["outcome"] != "raise":
            return "raised %s: %s" % (type(exc).__name__, exc)
        name = type(exc).__module__ + "." + type(exc).__qualname__
        if name != call["error"]:
            return "raised %s, expected %s" % (name, call["error"])
    else:
        if call["outcome"] == "raise":
            return "returned %r, expected %s to be raised" % (result, call["error"])
        if call["outcome"] == "yield":
            problem = check_items(result, call)
            if problem is not None:
                return problem
        else:
            expected = pickle.loads(call["value"])
            if not same(result, expected):
                return "returned %r, expected %r" % (result, expected)
    if not same((args, kwargs), pickle.loads(call["args_after"])):
        return "left its arguments (or receiver) other than the original did"
    return None


def main():
    calls = load_calls()
    function = function_under_test()
    if len(sys.argv) > 2 and sys.argv[1] == "--calibrate":
        # codereval build: which calls the reference itself does not reproduce.
        failing = []
        for index, call in enumerate(calls):
            try:
                problem = check(call, function)
            except Exception as exc:
                problem = "%s: %s" % (type(exc).__name__, exc)
            if problem is not None:
                failing.append([index, problem[:300]])
        with open(sys.argv[2], "w") as handle:
            json.dump(failing, handle)
        return
    for index, call in enumerate(calls):
        problem = check(call, function)
        if problem is not None:
            raise AssertionError("recorded call %d of %d: %s" % (index + 1, len(calls), problem))


if __name__ == "__main__":
    main()
