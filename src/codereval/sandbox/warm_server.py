"""The fork server inside one warm worker: a sandboxed interpreter that forks each sample.

Started by codereval.sandbox.warm as pid 1 of its own bubblewrap sandbox (read-only root, no
network, private /tmp, no capabilities) with the project's interpreter, so keep it to Python 3.6
syntax and the standard library; codereval never imports it. It talks to the host over a
SOCK_SEQPACKET socket (one JSON message per packet, file descriptors attached with SCM_RIGHTS).

Why pid 1: the kernel drops every signal sent to a namespace's init from inside the namespace
unless init handles it, so a sample's ``os.kill(os.getppid(), 9)`` does nothing, exactly as with
bubblewrap's own init in the fresh path. The server is also made non-dumpable, so a sample can
neither ptrace it nor read its memory. It never learns a sample's completion marker: the marker
travels in the stdin pipe that only the forked child reads.

Each sample's child, before any sample code runs: joins its own cgroups (through descriptors the
host opened), starts a new session, takes its stdio from the pipes the host passed, closes every
other descriptor, restores default signal handlers, applies its rlimits, and then either runs
Python code the way a fresh ``python [flags] script args`` would (new ``__main__``, ``sys.argv``,
``sys.path``, environment, reseeded random generators; at the end thread shutdown, atexit and
flushing as in interpreter finalisation) or execs any other program. After the child ends the
server kills every process left in its namespace (``kill(-1, SIGKILL)`` from init spares only
init), reaps them and empties /tmp, /run and /dev/shm, so the next sample starts clean.
"""

# ruff: noqa: UP031, UP036, SIM105, E402  (runs under Python 3.6+ in project interpreters)
import sys

# What the interpreter itself loaded before this file ran: any other module in a sample's
# sys.modules (this file's imports included) counts as preloaded for the shadowing check.
AT_START = frozenset(sys.modules)

import array
import atexit
import fcntl
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import time
import types

MAX_PACKET = 4 << 20
# Filled by main(): the module search path a fresh interpreter of these flags starts with.
BASE_PATH = []  # type: list[str]
STARTUP_ENV = {}  # type: dict[str, str]
# Top-level names of the modules the preload added (stdlib ones included), with their files.
PRELOADED = {}  # type: dict[str, str]
# The modules each preload import added to sys.modules, in order: what to forget when a
# sample's path shadows one of them (see _forget_preload).
GROUPS = []  # type: list[list[str]]
# Our own scripts (the harness), compiled once: source bytes -> code object.
COMPILED = {}  # type: dict[bytes, object]
# In a sample's child: the sys.path entries already checked for shadowing (see path_changed).
CHECKED = set()  # type: set[str]
# The project's own modules the host offers (config "project"): the only ones a preload may
# import, and the module names of the files samples change, which none may.
PROJECT_ALLOWED = set()  # type: set[str]
PROJECT_BANNED = set()  # type: set[str]
# Emptied after every sample; the host adds the private tmpfs it lays over a folder the host
# lacks (the original platform's /home for a --compat tree), writable by samples as well.
WIPED = ["/tmp", "/run", "/dev/shm"]
SYSVIPC = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")
# What Python itself ignores at startup (writes then fail with EPIPE / EFBIG instead).
PY_IGNORED = ("SIGPIPE", "SIGXFSZ")


def _send(sock, message, fds=()):
    data = json.dumps(message).encode("utf-8")
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def _receive(sock):
    """One message and the descriptors attached to it; (None, []) when the host is gone."""
    size = array.array("i").itemsize
    data, ancillary, _, _ = sock.recvmsg(_packet_size(sock), socket.CMSG_SPACE(64 * size))
    if not data:
        return None, []
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % size)])
    return json.loads(data.decode("utf-8")), list(fds)


_PRCTL = []  # type: list[object]


def _packet_size(sock):
    """The next packet's length: a buffer of the largest size costs a page fault per page."""
    probe = bytearray(1)
    length = sock.recv_into(probe, 1, socket.MSG_PEEK | socket.MSG_TRUNC)
    return max(1, min(length, MAX_PACKET))


def _prctl_dumpable(value):
    import ctypes

    if not _PRCTL:
        # Looked up once in the server: every child needs it and a lookup costs milliseconds.
        _PRCTL.append(ctypes.CDLL(None, use_errno=True).prctl)
    if _PRCTL[0](4, value, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE)")


# --------------------------------------------------------------------------- preloading


def _snapshot(project_dirs):
    # atexit handlers are no reason: each child runs its own copy at its end, as a fresh
    # interpreter that imported the module would.
    handlers = {}
    for number in range(1, signal.NSIG):
        try:
            handlers[number] = repr(signal.getsignal(number))
        except (ValueError, OSError):
            pass
    listing = {}
    for folder in WIPED:
        try:
            listing[folder] = sorted(os.listdir(folder))
        except OSError:
            listing[folder] = []
    return {
        "threads": len(os.listdir("/proc/self/task")),
        "fds": sorted(os.listdir("/proc/self/fd")),
        "signals": handlers,
        "cwd": os.getcwd(),
        "environ": dict(os.environ),
        "files": listing,
        "children": _children(),
        "hooks": [repr(sys.excepthook), repr(sys.displayhook),
                  len(sys.path_hooks), repr(sys.stdout), repr(sys.stderr)],
        "meta_path": [id(finder) for finder in sys.meta_path],
        "project": sorted(_project_modules(project_dirs)),
        "banned": sorted(n for n in PROJECT_BANNED if n in sys.modules),
    }


def _children():
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me:
            found.append(int(name))
    return found


def _project_modules(project_dirs):
    roots = [os.path.realpath(p) + os.sep for p in project_dirs]
    hits = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and any(os.path.realpath(path).startswith(r) for r in roots):
            hits.append(name)
    return hits


def _side_effects(before, after):
    """What importing a module did beyond defining it: reasons not to preload it."""
    reasons = []
    if after["threads"] > before["threads"]:
        reasons.append("started a thread")
    if after["children"] != before["children"]:
        reasons.append("started a process")
    if after["fds"] != before["fds"]:
        reasons.append("left a file descriptor open")
    changed = [n for n in after["signals"] if after["signals"][n] != before["signals"].get(n)]
    if changed:
        reasons.append("installed signal handlers (%s)" % ", ".join(map(str, changed[:3])))
    if after["cwd"] != before["cwd"]:
        reasons.append("changed the working directory")
    if after["environ"] != before["environ"]:
        reasons.append("changed the environment")
    if after["files"] != before["files"]:
        reasons.append("wrote files in /tmp, /run or /dev/shm")
    if after["hooks"] != before["hooks"]:
        reasons.append("replaced interpreter hooks (excepthook, stdout, import hooks)")
    # A finder appended to sys.meta_path (six's) is asked only for what every standard finder
    # failed to find: an import that fails in a fresh interpreter unless the finder's own
    # module was imported. One put in front of them, or one removed, changes imports.
    if after["meta_path"][: len(before["meta_path"])] != before["meta_path"]:
        reasons.append("replaced interpreter hooks (import hooks before the standard ones)")
    own = set(after["project"]) - set(before["project"])
    if own - PROJECT_ALLOWED:
        reasons.append("imported the project's own modules (they change per sample)")
    if after["banned"] != before["banned"]:
        reasons.append("imported a file samples change (%s)" % ", ".join(
            sorted(set(after["banned"]) - set(before["banned"]))[:3]))
    return reasons


class _Refuser:
    """An import finder for a probe's child: importing one of ``names`` (modules found unfit
    to preload) fails at once, so that a module needing one is rejected without importing
    the rest of what it needs."""

    def __init__(self, names):
        self.names = names
        self.hit = None

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.names:
            self.hit = fullname
            raise ImportError("not preloaded: %s" % fullname)
        return None


def _probe(name, project_dirs, refuse=()):
    """Import ``name`` in a forked child; '' when clean, else why it must not be preloaded.
    ``refuse``: modules already rejected; a ``name`` that imports one is rejected too."""
    import importlib

    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        signal.alarm(60)
        refuser = _Refuser(frozenset(refuse)) if refuse else None
        try:
            before = _snapshot(project_dirs)
            if refuser is not None:
                sys.meta_path.insert(0, refuser)
            try:
                importlib.import_module(name)
            except ImportError:
                if refuser is None or refuser.hit is None:
                    raise
                os.write(write_fd, ("imports %s, which is not preloaded" % refuser.hit)
                         .encode("utf-8", "replace"))
                os._exit(0)
            if refuser is not None:
                sys.meta_path.remove(refuser)
            reasons = _side_effects(before, _snapshot(project_dirs))
            text = "; ".join(reasons)
        except BaseException as exc:
            text = "import failed: %s: %s" % (type(exc).__name__, str(exc)[:200])
        os.write(write_fd, (text or "ok").encode("utf-8", "replace")[:4000])
        os._exit(0)
    os.close(write_fd)
    chunks = []
    while True:
        chunk = os.read(read_fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _wait_for(pid)
    text = b"".join(chunks).decode("utf-8", "replace")
    return "" if text == "ok" else (text or "the import crashed the interpreter")


def _wait_for(pid):
    while True:
        try:
            reaped, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return None
        if reaped == pid:
            return status


def _installed(name):
    """Is the top-level package of ``name`` found before the project's tree (the environment
    installed the project, or a module of that name)? A fresh interpreter imports that copy."""
    import importlib.machinery

    top = name.split(".", 1)[0]
    try:
        return importlib.machinery.PathFinder.find_spec(top, BASE_PATH) is not None
    except (ImportError, ValueError):
        return True


def _third_party(project_dirs):
    """Top-level modules installed in site-packages, except the project's own and the tools."""
    own = set()
    for folder in project_dirs:
        try:
            for entry in os.listdir(folder):
                own.add(entry[:-3] if entry.endswith(".py") else entry)
        except OSError:
            pass
    tools = {"pip", "setuptools", "pkg_resources", "wheel", "easy_install", "site",
             "sitecustomize", "usercustomize", "distutils", "virtualenv"}
    names = set()
    for folder in sys.path:
        if os.path.basename(folder) not in ("site-packages", "dist-packages"):
            continue
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            path = os.path.join(folder, entry)
            if os.path.isdir(path):
                if not os.path.isfile(os.path.join(path, "__init__.py")):
                    continue
                name = entry
            elif entry.endswith(".py"):
                name = entry[:-3]
            elif entry.endswith(".so"):
                name = entry.split(".", 1)[0]
            else:
                continue
            if name.isidentifier() and not name.startswith("_") and name not in tools:
                names.add(name)
    return sorted(names - own)


def _preload(config):
    before = AT_START
    try:
        return _preload_modules(config)
    finally:
        for name in set(sys.modules) - before:
            top = name.split(".", 1)[0]
            module = sys.modules.get(top)
            if module is not None and top not in PRELOADED:
                where = getattr(module, "__file__", None)
                # Built-in and frozen modules have no file; the path never shadows them.
                PRELOADED[top] = os.path.realpath(where) if where else ""


def _preload_modules(config):
    project = config.get("project") or {}
    if not project:
        return _preload_from(config, list(config.get("project_dirs", [])), [])
    # The project's own modules come from its tree where the samples find it: on sys.path
    # last, as the official tests append it, and from its folder, as the tests run there.
    PROJECT_ALLOWED.update(project.get("modules", []))
    PROJECT_BANNED.update(project.get("banned", []))
    root = project["root"]
    sys.path.append(root)
    try:
        os.chdir(project.get("cwd") or "/")
        return _preload_from(config, [*config.get("project_dirs", []), root],
                             list(project.get("modules", [])))
    finally:
        os.chdir("/")
        if root in sys.path:
            sys.path.remove(root)


def _preload_from(config, project_dirs, own):
    loaded, skipped = [], {}
    for name in config.get("stdlib", []):
        try:
            _grouped_import(name)
            loaded.append(name)
        except ImportError as exc:
            skipped[name] = "import failed: %s" % exc
    for name in config.get("trusted", []):
        # Found clean by an earlier worker (or server) of the same environment.
        try:
            _grouped_import(name)
            loaded.append(name)
        except BaseException as exc:
            skipped[name] = "import failed: %s" % type(exc).__name__
    choice = config.get("preload", "none")
    if choice == "auto":
        # What the project's tests import (stdlib and submodules too), read by the host from
        # the tests' source; without that list, every top-level module of site-packages.
        # (Both measured on CoderEval's projects: the sweep cost a worker 2-3 s more to start
        # for samples no faster.)
        candidates = list(config.get("imports", [])) or _third_party(project_dirs)
        forced = False
        # The project's modules after the rest: what they import is mostly preloaded by then.
        candidates += [n for n in own if n not in candidates and not _installed(n)]
    elif isinstance(choice, list):
        candidates, forced = choice, True
    else:
        candidates, forced = [], False
    known = config.get("skip", {})
    # Importing in place and checking afterwards costs one import instead of two (the probe's
    # and ours) and no fork per candidate; a module that turns out to have side effects taints
    # the server, which the host then replaces by one that probes (config "optimistic").
    optimistic = bool(config.get("optimistic")) and not forced
    for name in candidates:
        if name in sys.modules:
            continue  # the interpreter or an earlier candidate has it already
        top = name.split(".", 1)[0]
        if name in known:
            skipped[name] = known[name]
            continue
        if top in skipped and not forced:
            skipped[name] = skipped[top]
            continue
        # The project's own modules are probed first: one of them rejected must not cost the
        # worker a restart (re-importing everything), and each is cheap to import twice.
        if optimistic and name not in own:
            tainted, reason = _import_checked(name, project_dirs)
            if tainted:
                return loaded, skipped, {name: reason}
            if reason:
                skipped[name] = reason
            else:
                loaded.append(name)
            continue
        # A project module needing a module found unfit is unfit: told without importing it.
        refuse = [n for n, why in skipped.items() if not why.startswith("import failed")] \
            if name in own else ()
        reason = _probe(name, project_dirs, refuse)
        if reason and not (forced and not reason.startswith("import failed")):
            skipped[name] = reason
            continue
        try:
            _grouped_import(name)
            loaded.append(name)
        except BaseException as exc:
            skipped[name] = "import failed: %s" % type(exc).__name__
    return loaded, skipped, {}


_IMPORT_TIMEOUT = 60


class _ImportTimeout(Exception):
    pass


def _on_alarm(number, frame):
    raise _ImportTimeout()


def _import_checked(name, project_dirs):
    """Import ``name`` here, then check what the import did as the probe would. Returns
    (tainted, reason): (False, '') when it is loaded and clean; (False, why) when it is not
    there and nothing of it ran; (True, why) when the server's state is no longer a fresh
    interpreter's."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        before = _snapshot(project_dirs)
        failure = absent = ""
        signal.alarm(_IMPORT_TIMEOUT)
        try:
            _grouped_import(name)
        except ModuleNotFoundError as exc:
            # Not there (nor its package): nothing of it ran. A module that exists and fails
            # to import one of its own imports ran code: that taints.
            missing = exc.name or ""
            if missing and (name == missing or name.startswith(missing + ".")):
                absent = "import failed: not found"
            else:
                failure = "import failed: ModuleNotFoundError: %s" % str(exc)[:200]
        except _ImportTimeout:
            failure = "import failed: still importing after %ds" % _IMPORT_TIMEOUT
        except BaseException as exc:
            failure = "import failed: %s: %s" % (type(exc).__name__, str(exc)[:200])
        finally:
            signal.alarm(0)
        reasons = _side_effects(before, _snapshot(project_dirs))
    finally:
        signal.signal(signal.SIGALRM, previous)
    if failure or reasons:
        return True, "; ".join(reasons) or failure
    return False, absent


def _grouped_import(name):
    """Import ``name``, recording what it added to sys.modules (a failed import too: what it
    imported before failing stays loaded)."""
    import importlib

    before = set(sys.modules)
    try:
        importlib.import_module(name)
    finally:
        added = sorted(set(sys.modules) - before)
        if added:
            GROUPS.append(added)


# --------------------------------------------------------------------------- the sample's child


# Signals whose disposition in the server is not the default (filled by main() once the
# server's own handlers are set): only these need resetting in each sample's process.
NOT_DEFAULT = []  # type: list[int]


def _not_default_signals():
    """Every signal the server does not leave at SIG_DFL, asked of the kernel (a C extension
    may have installed a handler Python's own table does not know of); all of them when the
    kernel cannot be asked."""
    numbers = [n for n in range(1, signal.NSIG) if n not in (signal.SIGKILL, signal.SIGSTOP)]
    try:
        import ctypes

        sigaction = ctypes.CDLL(None, use_errno=True).sigaction
        # struct sigaction starts with the handler in glibc and musl; the rest is room.
        old = ctypes.create_string_buffer(1024)
    except (OSError, AttributeError):
        return numbers
    found = []
    for number in numbers:
        if sigaction(number, None, old) != 0:
            continue  # not a signal this libc lets anyone set (glibc's reserved ones)
        handler = ctypes.c_void_p.from_buffer(old).value
        if handler or signal.getsignal(number) not in (signal.SIG_DFL, None):
            found.append(number)
    return found


def _reset_signals(python):
    signal.set_wakeup_fd(-1)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in NOT_DEFAULT:
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError, RuntimeError):
            pass
    if python:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in PY_IGNORED:
            signal.signal(getattr(signal, name), signal.SIG_IGN)


def _close_other_fds(keep):
    if sys.version_info >= (3, 10):
        # close_range(2) where the kernel has it: three calls instead of one per descriptor.
        low = 3
        for fd in sorted(keep):
            if fd >= low:
                os.closerange(low, fd)
                low = fd + 1
        os.closerange(low, max(os.sysconf("SC_OPEN_MAX"), low))
        return
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _prepare_spare(keep):
    """What every sample's process needs whatever its request, done while the spare waits for
    it (off the sample's clock): only the spare's channel and error pipe stay open, default
    signal handlers and an empty mask (Python's own for SIGINT, SIGPIPE and SIGXFSZ, undone in
    _child for other programs), dumpable again. No code of a sample has run in it yet."""
    _close_other_fds(keep)
    _reset_signals(True)
    _prctl_dumpable(1)


def _child(request, fds, error_fd):
    """Become the sample's process. Never returns."""
    stdio, cgroups = fds[:3], fds[3:]
    try:
        for fd in cgroups:
            os.write(fd, b"0")
            os.close(fd)
    except OSError as exc:
        os.write(error_fd, ("cgroup: cannot join the sample's cgroup (%s)" % exc).encode())
        os._exit(125)
    # No setsid: like the fresh path's command, the sample stays in init's session and group
    # (init is immune to its signals; what it starts is found through its cgroup and killed).
    for target, fd in enumerate(stdio):
        os.dup2(fd, target)
    for fd in stdio:
        if fd > 2:
            os.close(fd)
    python = request["mode"] == "python"
    if not python:
        for name in ("SIGINT", *PY_IGNORED):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        for name, soft, hard in request["rlimits"]:
            resource.setrlimit(getattr(resource, name), (soft, hard))
        os.chdir(request["cwd"])
    except OSError as exc:
        os.write(error_fd, ("setup: %s" % exc).encode())
        os._exit(126)
    # What the interpreter added to its environment at startup (PEP 538's LC_CTYPE) first;
    # bubblewrap gives every command PWD, the directory it starts in.
    wanted = dict(STARTUP_ENV) if python else {}
    wanted.update(request["env"])
    wanted["PWD"] = request["cwd"]
    _set_environ(wanted)
    if not python:
        argv = request["argv"]
        try:
            os.execvpe(argv[0], argv, dict(os.environ))
        except OSError as exc:
            os.write(error_fd, ("execvp %s: %s" % (argv[0], exc.strerror)).encode())
            os._exit(127)
    os.close(error_fd)
    os._exit(_run_python(request))


def _set_environ(wanted):
    """Make os.environ (and the C environment) exactly ``wanted``, touching only what differs:
    most of it is the worker's own environment already."""
    for key in [k for k in os.environ if k not in wanted]:
        del os.environ[key]
    for key, value in wanted.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def _fresh_state(request):
    """What a new interpreter would have: argv, path, __main__, random seeds, temp dir."""
    script = request.get("script")
    sys.argv[:] = request["py_argv"]
    path = list(BASE_PATH)
    if not request.get("ignore_env"):
        extra = request["env"].get("PYTHONPATH", "")
        path[0:0] = [os.path.abspath(p) if p else os.getcwd() for p in extra.split(os.pathsep)
                     if extra]
    if not request.get("isolated"):
        path.insert(0, os.path.dirname(os.path.abspath(script)) if script else "")
    # The finders cached for the shared entries stay: they notice changes by directory mtime.
    sys.path[:] = path
    path_changed()
    # Our harness puts the test's folder first on sys.path after the interpreter started; it
    # calls this then, through a module only a warm child has.
    hook = types.ModuleType("_codereval_warm")
    hook.__dict__["path_changed"] = path_changed
    sys.modules["_codereval_warm"] = hook
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = sys.modules["builtins"]
    if script:
        main.__file__ = os.path.abspath(script)
        main.__cached__ = None
    sys.modules["__main__"] = main
    # os.fork keeps the parent's generator state: every sample would draw the same numbers.
    if "random" in sys.modules:
        sys.modules["random"].seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        try:
            numpy_random.seed()
        except Exception:
            pass
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None
    return main


def path_changed():
    """Forget the preload when an entry the worker did not start with shadows part of it.

    Called when the child starts and again when our harness adds the test's folder: each
    entry is listed once per sample, and nothing is listed once the preload is forgotten.
    """
    if not PRELOADED:
        return
    entries = [p for p in sys.path if p not in BASE_PATH and p not in CHECKED]
    CHECKED.update(entries)
    shadowed = _shadowed(entries)
    if shadowed:
        # This child only (a fork).
        _forget_preload(shadowed)


def _shadowed(entries):
    """The preloaded top-level names a fresh interpreter would find elsewhere first.

    The sample's own folder and PYTHONPATH come before the environment on sys.path: a file
    there named like a preloaded module (federation/utils/django.py beside a test run as a
    script) is what ``import`` finds in a fresh interpreter, not the preloaded module.
    """
    found = set()
    for entry in entries:
        folder = os.path.abspath(entry or ".")
        try:
            listing = os.listdir(folder)
        except OSError:
            continue
        for item in listing:
            name = item.split(".", 1)[0]
            where = PRELOADED.get(name)
            if not where:
                continue
            path = os.path.join(folder, item)
            if item != name:
                if not item.endswith((".py", ".pyc", ".so")):
                    continue
            elif not (os.path.isfile(os.path.join(path, "__init__.py"))
                      or os.path.isfile(os.path.join(path, "__init__.pyc"))):
                continue  # a namespace portion: a regular package later on the path wins
            real = os.path.realpath(path)
            if where != real and not where.startswith(real + os.sep):
                found.add(name)
    return found


def _forget_preload(shadowed):
    """Drop the shadowed modules and every module preloaded from the first import that loaded
    one of them on: the sample imports those from its own path, cold.

    What an earlier import loaded was complete before any shadowed module existed, so none of
    it refers to one (an import that had needed it would have loaded it: it would be in that
    import's group). A submodule dropped from a package that stays is taken off the package
    too, as a fresh interpreter that never imported it would not have it there.
    """
    # A shadowed module no recorded import loaded was loaded by the server itself: anything
    # may use it, so everything goes.
    cut = next((index for index, group in enumerate(GROUPS)
                if any(name.split(".", 1)[0] in shadowed for name in group)), 0)
    forget = set()
    for group in GROUPS[cut:]:
        forget.update(group)
    forget.update(n for n in sys.modules if n.split(".", 1)[0] in shadowed)
    dropped = {}
    for name in forget:
        dropped[name] = sys.modules.pop(name, None)
    for name, gone in dropped.items():
        parent, _, child = name.rpartition(".")
        module = sys.modules.get(parent) if parent else None
        # Only the module itself: a package may have rebound the name (``from .x import x``).
        if gone is not None and module is not None and getattr(module, child, None) is gone:
            try:
                delattr(module, child)
            except (AttributeError, TypeError):
                pass
    del GROUPS[cut:]
    for top in list(PRELOADED):
        if top not in sys.modules:
            del PRELOADED[top]


def _run_python(request):
    main = _fresh_state(request)
    script = request.get("script")
    status = 0
    try:
        if script:
            try:
                with open(script, "rb") as handle:
                    source = handle.read()
            except OSError as exc:
                sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n" % (
                    request["argv"][0], script, exc.errno, exc.strerror))
                return _finish(2)
            filename = main.__file__
        else:
            source, filename = request["code"], "<string>"
        try:
            known = COMPILED.get(source) if isinstance(source, bytes) else None
            if known is not None and hasattr(known, "replace"):
                code = _renamed(known, filename)
            else:
                code = compile(source, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            kind, value = sys.exc_info()[:2]
            # A fresh interpreter reports a compile error with no traceback above it.
            if value is not None:
                value.__traceback__ = None
            sys.excepthook(kind, value, None)
            return _finish(1)
        exec(code, main.__dict__)
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException:
        kind, value, tb = sys.exc_info()
        # The traceback starts at the sample's code, as a fresh interpreter's does.
        tb = tb.tb_next if tb is not None else None
        if value is not None:
            value.__traceback__ = tb
        sys.excepthook(kind, value, tb)
        status = 1
        if kind is KeyboardInterrupt and sys.version_info >= (3, 8):
            status = -signal.SIGINT
    return _finish(status)


def _renamed(code, filename):
    """``code`` as if compiled from ``filename`` (tracebacks name the sample's own file)."""
    consts = tuple(_renamed(c, filename) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _exit_status(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def _finish(status):
    """Interpreter finalisation, in its order: join threads, atexit, flush std streams."""
    threading = sys.modules.get("threading")
    if threading is not None and hasattr(threading, "_shutdown"):
        try:
            threading._shutdown()
        except BaseException:
            pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream, code in ((sys.stdout, 120), (sys.stderr, None)):
        try:
            if stream is not None:
                stream.flush()
        except BaseException:
            if code is not None and status == 0:
                status = code
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


# --------------------------------------------------------------------------- the server


def _reap_all():
    """Kill every process in the namespace but this one and reap them. False if some stay."""
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError:
        pass
    give_up = time.monotonic() + 3.0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            if time.monotonic() > give_up:
                return False
            time.sleep(0.001)


def _force_remove(path):
    """Remove a file or tree even where the sample took away the permissions (it owns them)."""
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
        return
    os.chmod(path, 0o700)
    for folder, dirs, _ in os.walk(path):
        for name in dirs:
            sub = os.path.join(folder, name)
            if not os.path.islink(sub):
                os.chmod(sub, 0o700)
    shutil.rmtree(path)


def _mount_points():
    points = set()
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            points.add(line.split()[4].replace("\\040", " "))
    return points


def _wipe(folder, keep):
    """Remove everything below ``folder`` except the mounts in ``keep`` and the way to them."""
    for entry in os.listdir(folder):
        path = os.path.join(folder, entry)
        if path in keep:
            continue
        if any(k.startswith(path + "/") for k in keep) and not os.path.islink(path):
            _wipe(path, keep)
        else:
            _force_remove(path)


def _clean(baseline, reap=True):
    problems = []
    if reap and not _reap_all():
        problems.append("processes of the sample survived")
    for folder in WIPED:
        try:
            os.chmod(folder, baseline[folder])
            _wipe(folder, baseline["mounts"])
        except Exception as exc:
            problems.append("cannot empty %s: %s" % (folder, exc))
    try:
        os.chmod("/dev", baseline["/dev"])
        for entry in os.listdir("/dev"):
            if entry not in baseline["dev_entries"]:
                _force_remove(os.path.join("/dev", entry))
        for entry, kind in baseline["dev_entries"].items():
            if _kind(os.path.join("/dev", entry)) != kind:
                problems.append("/dev/%s was changed" % entry)
    except Exception as exc:
        problems.append("cannot restore /dev: %s" % exc)
    for table in SYSVIPC:
        try:
            with open(table) as handle:
                if len(handle.read().splitlines()) > 1:
                    problems.append("System V IPC objects left in %s" % table)
        except OSError:
            pass
    return problems


def _kind(path):
    try:
        info = os.lstat(path)
    except OSError:
        return "missing"
    return "%o:%d" % (stat.S_IFMT(info.st_mode), info.st_rdev)


def _baseline():
    found = {}
    for folder in (*WIPED, "/dev"):
        try:
            found[folder] = stat.S_IMODE(os.stat(folder).st_mode)
        except OSError:
            found[folder] = 0o1777
    # Mounts below the wiped folders (a slot or scratch under /tmp on the host) stay.
    found["mounts"] = {p for p in _mount_points() if any(p.startswith(f + "/") for f in WIPED)}
    found["dev_entries"] = {e: _kind(os.path.join("/dev", e)) for e in os.listdir("/dev")}
    return found


SPARE = []  # type: list[tuple[int, socket.socket, int]]


def _spawn_spare(sock):
    """Fork the next sample's process ahead of time: it waits for its request, so the fork is
    not on the sample's clock. Made only after the previous sample's processes are gone."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    error_r, error_w = os.pipe()
    # Exec failures are reported through a pipe that a successful exec closes.
    fcntl.fcntl(error_w, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            sock.close()
            os.close(error_r)
            _prepare_spare({theirs.fileno(), error_w})
            request, fds = _receive(theirs)
            if request is not None:
                theirs.close()
                _child(request, fds, error_w)
        finally:
            os._exit(126)
    theirs.close()
    os.close(error_w)
    SPARE.append((pid, ours, error_r))


def _run(sock, request, fds, wakeup):
    if not SPARE:
        _spawn_spare(sock)
    pid, channel, error_r = SPARE.pop()
    try:
        _send(channel, request, fds)
    except OSError:
        pass  # the spare is gone: its exit is reported like any other
    channel.close()
    for fd in fds:
        os.close(fd)
    status = None
    while status is None:
        ready, _, _ = select.select([sock, wakeup], [], [])
        if wakeup in ready:
            try:
                while os.read(wakeup, 512):
                    pass
            except (BlockingIOError, InterruptedError):
                pass
        while status is None:
            try:
                reaped, raw = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                status = 255 << 8
                break
            if reaped == 0:
                break
            if reaped == pid:
                status = raw
        if sock in ready and status is None:
            message, _ = _receive(sock)
            if message is None:
                os._exit(0)
            if message.get("op") == "kill":
                try:
                    os.kill(-1, signal.SIGKILL)
                except OSError:
                    pass
    # What the sample left (daemons included) dies before its end is reported: the host then
    # drains pipes nobody holds any more, and the clean-up that follows finds nothing to kill.
    gone = _reap_all()
    error = b""
    while True:
        chunk = os.read(error_r, 4096)
        if not chunk:
            break
        error += chunk
    os.close(error_r)
    _send(sock, {"exit": status, "error": error.decode("utf-8", "replace")})
    if gone:
        # Nothing of the sample lives any more, so the next sample's spare may be forked now,
        # while the host judges this one, instead of after the wipe: it is a copy of this
        # server, not of anything the sample made, and it gets no request before the host has
        # read the clean-up's answer (a worker with problems is retired, spare and all).
        _spawn_spare(sock)
    return gone


def main():
    if os.getpid() != 1:
        # Outside its own pid namespace the clean-up's kill(-1, SIGKILL) would reach every
        # process this user may signal on the host: refuse rather than rely on the caller.
        sys.stderr.write("warm_server: must run as pid 1 of its own pid namespace\n")
        sys.exit(70)
    fd = int(sys.argv[1])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=fd)
    # As init, only signals with a handler can reach us from inside: keep SIGINT default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _prctl_dumpable(0)
    os.chdir("/")
    script_dir = os.path.dirname(os.path.abspath(__file__))
    BASE_PATH[:] = [p for p in sys.path if os.path.abspath(p or ".") != script_dir]
    config, _ = _receive(sock)
    if config is None:
        return
    WIPED.extend(f for f in config.get("wipe", []) if f not in WIPED)
    given = config.get("environ", {})
    STARTUP_ENV.update({k: v for k, v in os.environ.items() if k not in given and k != "PWD"})
    loaded, skipped, tainted = _preload(config)
    if tainted:
        # This interpreter is no longer fit to fork samples: the host starts another that
        # skips the module (and probes the rest), importing what was clean here first.
        _send(sock, {"ready": False, "retry": tainted, "preloaded": loaded,
                     "skipped": skipped})
        return
    threads = len(os.listdir("/proc/self/task"))
    for text in config.get("scripts", []):
        source = text.encode("utf-8")
        try:
            COMPILED[source] = compile(source, "<script>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            pass  # compiled (and reported) by each child, as a fresh interpreter would
    if threads > 1:
        _send(sock, {"error": "a preloaded module left %d threads running; forking would lose "
                              "them" % threads, "skipped": skipped})
        return
    import gc

    gc.collect()
    if hasattr(gc, "freeze"):
        # Keeps the preloaded objects out of the children's collections: fewer copied pages.
        gc.freeze()
    wakeup_r, wakeup_w = os.pipe()
    os.set_blocking(wakeup_r, False)
    os.set_blocking(wakeup_w, False)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    signal.set_wakeup_fd(wakeup_w)
    NOT_DEFAULT[:] = _not_default_signals()
    baseline = _baseline()
    _spawn_spare(sock)
    _send(sock, {"ready": True, "preloaded": loaded, "skipped": skipped,
                 "python": sys.version.split()[0]})
    while True:
        message, fds = _receive(sock)
        if message is None or message.get("op") == "exit":
            return
        op = message.get("op")
        if op == "run":
            forked = _run(sock, message, fds, wakeup_r)
            # No request for it: every sample is followed by its clean-up, whose answer the
            # host reads before the next sample (while it judges this one, we clean and fork).
            # A reap now would kill the spare already forked: its own reap found nothing left.
            problems = _clean(baseline, reap=not forked)
            _send(sock, {"problems": problems})
            if not problems and not forked:
                _spawn_spare(sock)
        elif op == "kill":
            # Between samples (a kill that crossed the end's report): what the sample started
            # was killed and reaped before that report; the spare is ours, not the sample's.
            pass
        else:
            for extra in fds:
                os.close(extra)


if __name__ == "__main__":
    main()
