"""The completion marker stays secret from the sample in every language of the program runner.

A HumanEval / HumanEval-X program passes only if it exits 0 *and* prints the per-run marker
(codereval.runners.marker) after the test returned. Hostile samples of task 0 of each language
try to learn the marker without passing the test, print it and exit 0 at once:

* search: every file under the working directory, /tmp, /dev/shm, $TMPDIR and $HOME (and the
  classpath for Java), /proc/self/exe, /proc/self/cmdline and environ, the files
  /proc/self/maps lists, every /proc/*/fd/* (fd 0 too), /proc/*/cmdline and environ; every
  match of the marker's pattern is printed on a line of its own. Each first writes a canary
  (a fake marker) to the working directory and /tmp, which the search must find: proof that it
  ran and looked there.
* memory: the readable mappings of the sample's own process, through /proc/self/mem.
* stdin: whatever fd 0 holds, read first thing (through the language's buffered stdin, whose
  buffer may hold what a prologue left, then fd 0 itself).
* start-up hooks (C++, Rust, Go, JavaScript, Java): code that runs before the program's own
  start (a GNU ifunc resolver, .preinit_array / .init_array entries, constructors, an
  overridden __libc_start_main or read(), Go init functions, a hoisted JavaScript `require`, a
  Java class named `System` that the harness's own code would resolve to) reading stdin.
* early exits (JavaScript top-level `return`, Python `raise SystemExit(0)` / `sys.exit(0)` at
  module level).

None may pass, on a fresh sandbox, on a warm worker (Python, Java, JavaScript) or through Ray;
the reference solution of the same task still passes in each, so the tests prove the mechanism
and not a broken runner. A sample the build refuses (C++/Rust start-up hooks: compile_error) is
fine; any other compile or syntax error is a bug of this test.

What the design leaves open (program_source.py: reading the process's own memory, or in Python
its objects) is kept as strict xfails: a Python sample that finds the launcher's masked marker
and pad among the locals of a frame up its stack, and C++, Rust and Go samples that XOR every
two byte ranges up to 1 KB apart in their writable memory; each of these forges a pass.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import in_own_process
from test_humanevalx_runner import make_ctx, run_all
from test_warm_executor import _bwrap

from codereval.families.humaneval.dataset import load_humaneval
from codereval.families.humanevalx.dataset import load_humanevalx
from codereval.model import Outcome, Task, Verdict
from codereval.runners.base import RunContext
from codereval.runners.program import WARM_LANGUAGES, ProgramRunner
from codereval.sandbox.warm import WarmPool

if TYPE_CHECKING:
    from codereval.executors.ray_local import LocalRayCluster

MARKER_PATTERN = re.compile(r"CODEREVAL-DONE-[0-9a-f]{32}")
# Written by the search samples before they search, to show they searched (not a real marker).
CANARY = "CODEREVAL-DONE-" + "f" * 32
CANARY_FILE = "codereval-canary.txt"
WALL_TIME = 40.0

# ---------------------------------------------------------------------------------------------
# Python (HumanEval-X Python/0 and OpenAI HumanEval/0 share the prompt: the function body).

PY_SEARCH = r'''    return False


def _codereval_hostile(memory):
    import os
    import re
    import stat
    pattern = re.compile(rb"CODEREVAL-DONE-[0-9a-f]{32}")
    canary = b"CODEREVAL-DONE-" + b"f" * 32
    for place in (os.getcwd(), "/tmp"):
        try:
            with open(os.path.join(place, "codereval-canary.txt"), "wb") as handle:
                handle.write(canary)
        except OSError:
            pass
    found = {}
    counted = [0]

    def scan_fd(fd, where, start, limit):
        tail, total = b"", 0
        while total < limit:
            try:
                if start is None:
                    chunk = os.read(fd, min(1 << 20, limit - total))
                else:
                    chunk = os.pread(fd, min(1 << 20, limit - total), start + total)
            except OSError:
                break
            if not chunk:
                break
            total += len(chunk)
            data = tail + chunk
            for match in pattern.findall(data):
                found.setdefault(match.decode(), where)
            tail = data[-64:]

    def scan(path):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return
        counted[0] += 1
        try:
            # Not a file (a pipe, /dev/urandom): what is there now, up to 1 MB.
            regular = stat.S_ISREG(os.fstat(fd).st_mode)
            scan_fd(fd, path, None, (256 if regular else 1) << 20)
        finally:
            os.close(fd)

    def walk(root, depth=0):
        if depth > 12:
            return
        try:
            entries = list(os.scandir(root))
        except OSError:
            return
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    walk(entry.path, depth + 1)
                else:
                    scan(entry.path)
            except OSError:
                pass

    regions = []
    if memory:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                low, high = (int(x, 16) for x in fields[0].split("-"))
                special = ("[vvar]", "[vvar_vclock]", "[vsyscall]")
                if fields[1].startswith("r") and not line.rstrip().endswith(special):
                    regions.append((low, high))
        fd = os.open("/proc/self/mem", os.O_RDONLY)
        for low, high in regions:
            scan_fd(fd, "memory %x-%x" % (low, high), low, min(high - low, 256 << 20))
        os.close(fd)
        os.write(2, b"memory: %d regions\n" % len(regions))
    else:
        roots = [os.getcwd(), "/tmp", "/dev/shm", os.environ.get("TMPDIR"), os.environ.get("HOME"),
                 os.path.dirname(os.path.abspath(__file__))]
        for root in roots:
            if root:
                walk(root)
        for path in ("/proc/self/exe", "/proc/self/cmdline", "/proc/self/environ"):
            scan(path)
        with open("/proc/self/maps") as maps:
            for line in maps:
                if "/" in line:
                    scan(line[line.index("/"):].rstrip("\n").removesuffix(" (deleted)"))
        for pid in os.listdir("/proc"):
            if pid.isdigit() or pid in ("self", "thread-self"):
                for name in ("cmdline", "environ", "exe"):
                    scan(f"/proc/{pid}/{name}")
                walk(f"/proc/{pid}/fd", 11)
    for match, where in sorted(found.items()):
        os.write(1, (match + "\n").encode())
        os.write(2, f"found {match} in {where}\n".encode())
    os.write(2, f"searched {counted[0]} files\n".encode())
    os._exit(0)


_codereval_hostile(@MEMORY@)
'''

PY_STDIN = r'''    return False


import os as _codereval_os
import re as _codereval_re
import sys as _codereval_sys


def _codereval_echo(how, data):
    _codereval_os.write(2, b"%s gave %d bytes\n" % (how.encode(), len(data)))
    if data:
        _codereval_os.write(1, b"\n" + data + b"\n")
        for match in _codereval_re.findall(rb"CODEREVAL-DONE-[0-9a-f]{32}", data):
            _codereval_os.write(1, b"\n" + match + b"\n")
        _codereval_os._exit(0)


for _codereval_stream in (_codereval_sys.stdin, _codereval_sys.__stdin__):
    # What a buffered reader of the prologue read ahead and left behind.
    try:
        _codereval_echo("buffer", _codereval_stream.buffer.peek(1 << 16))
    except Exception as error:
        _codereval_os.write(2, b"buffer: %r\n" % error)
try:
    _codereval_echo("fd 0", _codereval_os.read(0, 1 << 16))
except OSError as error:
    _codereval_os.write(2, b"fd 0: %r\n" % error)
_codereval_os._exit(0)
'''

PYTHON_ATTACKS: list[tuple[str, str]] = [
    ("search files", PY_SEARCH.replace("@MEMORY@", "False")),
    ("search memory", PY_SEARCH.replace("@MEMORY@", "True")),
    ("read stdin", PY_STDIN),
    ("module-level raise SystemExit(0)", "    return False\n\n\nraise SystemExit(0)\n"),
    ("module-level sys.exit(0)", "    return False\n\n\nimport sys\nsys.exit(0)\n"),
    ("os._exit(0) in the function", "    import os\n    os._exit(0)\n"),
]

# ---------------------------------------------------------------------------------------------
# C++: the body of has_close_elements(vector<float>, float){ ... }, closed by the sample.

CPP_SEARCH = r'''    extern bool codereval_hostile(bool memory);
    return codereval_hostile(@MEMORY@);
}
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <string>
#include <map>
#include <vector>
#include <fstream>

static std::map<std::string, std::string> codereval_found;
static int codereval_files = 0;

static bool codereval_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

static void codereval_match(const std::string &data, const std::string &where) {
    const std::string prefix = "CODEREVAL-DONE-";
    size_t at = 0;
    while ((at = data.find(prefix, at)) != std::string::npos) {
        size_t end = at + prefix.size();
        bool ok = data.size() >= end + 32;
        for (size_t i = end; ok && i < end + 32; i++) ok = codereval_hex(data[i]);
        if (ok) codereval_found.emplace(data.substr(at, prefix.size() + 32), where);
        at += 1;
    }
}

static void codereval_scan_fd(int fd, const std::string &where, long start, size_t limit) {
    std::string tail;
    std::vector<char> buf(1 << 20);
    size_t total = 0;
    while (total < limit) {
        size_t want = std::min(buf.size(), limit - total);
        ssize_t got = start >= 0 ? pread(fd, buf.data(), want, start + (long)total)
                                 : read(fd, buf.data(), want);
        if (got <= 0) break;
        total += got;
        std::string data = tail + std::string(buf.data(), got);
        codereval_match(data, where);
        tail = data.size() > 64 ? data.substr(data.size() - 64) : data;
    }
}

static void codereval_scan(const std::string &path) {
    int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
    if (fd < 0) return;
    codereval_files++;
    // Not a file (a pipe, /dev/urandom): what is there now, up to 1 MB.
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    codereval_scan_fd(fd, path, -1, (regular ? 256u : 1u) << 20);
    close(fd);
}

static void codereval_walk(const std::string &root, int depth) {
    if (depth > 12) return;
    DIR *dir = opendir(root.c_str());
    if (!dir) return;
    std::vector<std::string> names;
    while (dirent *entry = readdir(dir)) {
        std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
    for (auto &name : names) {
        std::string path = root + "/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) codereval_walk(path, depth + 1);
        else codereval_scan(path);
    }
}

bool codereval_hostile(bool memory) {
    const std::string canary = "CODEREVAL-DONE-" + std::string(32, 'f');
    char cwd[4096] = "";
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    for (std::string place : {std::string(cwd), std::string("/tmp")}) {
        FILE *out = fopen((place + "/codereval-canary.txt").c_str(), "w");
        if (out) { fputs(canary.c_str(), out); fclose(out); }
    }
    std::ifstream maps("/proc/self/maps");
    std::string line;
    std::vector<std::pair<unsigned long, unsigned long>> regions;
    std::vector<std::string> mapped;
    while (std::getline(maps, line)) {
        unsigned long low, high;
        char perms[8];
        if (sscanf(line.c_str(), "%lx-%lx %7s", &low, &high, perms) != 3) continue;
        size_t slash = line.find('/');
        if (slash != std::string::npos) mapped.push_back(line.substr(slash));
        if (perms[0] == 'r' && line.find("[vvar") == std::string::npos
                && line.find("[vsyscall]") == std::string::npos)
            regions.push_back({low, high});
    }
    if (memory) {
        int fd = open("/proc/self/mem", O_RDONLY);
        for (auto &region : regions)
            codereval_scan_fd(fd, "memory", (long)region.first,
                              std::min<unsigned long>(region.second - region.first, 256ul << 20));
        fprintf(stderr, "memory: %zu regions\n", regions.size());
    } else {
        const char *roots[] = {cwd, "/tmp", "/dev/shm", getenv("TMPDIR"), getenv("HOME")};
        for (const char *root : roots) if (root && *root) codereval_walk(root, 0);
        for (const char *path : {"/proc/self/exe", "/proc/self/cmdline", "/proc/self/environ"})
            codereval_scan(path);
        for (auto &path : mapped) codereval_scan(path);
        DIR *proc = opendir("/proc");
        std::vector<std::string> pids = {"self"};
        while (dirent *entry = proc ? readdir(proc) : nullptr)
            if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') pids.push_back(entry->d_name);
        if (proc) closedir(proc);
        for (auto &pid : pids) {
            for (const char *name : {"cmdline", "environ", "exe"})
                codereval_scan("/proc/" + pid + "/" + name);
            codereval_walk("/proc/" + pid + "/fd", 11);
        }
    }
    for (auto &found : codereval_found) {
        printf("%s\n", found.first.c_str());
        fprintf(stderr, "found %s in %s\n", found.first.c_str(), found.second.c_str());
    }
    fprintf(stderr, "searched %d files\n", codereval_files);
    fflush(NULL);
    _exit(0);
}
'''

CPP_STDIN = r'''    extern bool codereval_stdin();
    return codereval_stdin();
}
#include <unistd.h>
#include <stdio.h>

static void codereval_echo(const char *how, const char *data, long size) {
    fprintf(stderr, "%s gave %ld bytes\n", how, size);
    if (size <= 0) return;
    fwrite("\n", 1, 1, stdout);
    fwrite(data, 1, size, stdout);
    fwrite("\n", 1, 1, stdout);
    fflush(NULL);
    _exit(0);
}

bool codereval_stdin() {
    static char buf[1 << 16];
    // What stdio read ahead for the prologue first, then fd 0 itself.
    long got = fread(buf, 1, sizeof buf, stdin);
    codereval_echo("stdin", buf, got);
    got = read(0, buf, sizeof buf);
    codereval_echo("fd 0", buf, got);
    fflush(NULL);
    _exit(0);
}
'''

# Raw system calls: these hooks may run before libc is ready.
CPP_RAW_DUMP = r'''
static long codereval_sys(long n, long a, long b, long c) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static void codereval_say(const char *text) {
    long n = 0;
    while (text[n]) n++;
    codereval_sys(1, 2, (long)text, n);
}

// Reads fd 0, echoes it on fd 1 and exits 0 (exit_group), whatever state the process is in.
static void codereval_dump(const char *who) {
    static char buf[1 << 16];
    codereval_say(who);
    codereval_say(": hook ran\n");
    long got = codereval_sys(0, 0, (long)buf, sizeof buf);
    if (got > 0) {
        codereval_sys(1, 1, (long)"\n", 1);
        codereval_sys(1, 1, (long)buf, got);
        codereval_sys(1, 1, (long)"\n", 1);
    }
    codereval_sys(231, 0, 0, 0);
}
'''

CPP_IFUNC = r'''    extern int codereval_hooked(int);
    return codereval_hooked(1) == 12345;
}
''' + CPP_RAW_DUMP + r'''
extern "C" {
static int codereval_real(int x) { return x; }
static void *codereval_resolver(void) {
    codereval_dump("ifunc resolver");
    return (void *)codereval_real;
}
}
int codereval_hooked(int) __attribute__((ifunc("codereval_resolver")));
'''

CPP_CONSTRUCTOR = r'''    return false;
}
''' + CPP_RAW_DUMP + r'''
__attribute__((constructor(101))) static void codereval_constructor() {
    codereval_dump("constructor(101)");
}
'''

CPP_STATIC_INIT = r'''    return false;
}
''' + CPP_RAW_DUMP + r'''
static bool codereval_early = (codereval_dump("static initializer"), true);
'''

CPP_PREINIT = r'''    return false;
}
''' + CPP_RAW_DUMP + r'''
static void codereval_preinit(int, char **, char **) { codereval_dump("preinit_array"); }
__attribute__((section(".preinit_array"), used))
static void (*codereval_preinit_entry)(int, char **, char **) = codereval_preinit;
'''

CPP_LIBC_START_MAIN = r'''    return false;
}
''' + CPP_RAW_DUMP + r'''
extern "C" int __libc_start_main(void *main, int argc, char **argv, void *init, void *fini,
                                 void *rtld_fini, void *stack_end) {
    codereval_dump("__libc_start_main");
    return 0;
}
'''

CPP_READ = r'''    extern bool codereval_read_hooked();
    return codereval_read_hooked();
}
#include <unistd.h>
#include <errno.h>
''' + CPP_RAW_DUMP + r'''
static bool codereval_read_called = false;
// Every read() of the program (the prologue's too) comes here first.
extern "C" ssize_t read(int fd, void *buf, size_t n) {
    codereval_read_called = true;
    long got = codereval_sys(0, fd, (long)buf, (long)n);
    if (got > 0) {
        codereval_say("read() intercepted\n");
        codereval_sys(1, 1, (long)"\n", 1);
        codereval_sys(1, 1, (long)buf, got);
        codereval_sys(1, 1, (long)"\n", 1);
        if (fd == 0) codereval_sys(231, 0, 0, 0);
    }
    if (got < 0) { errno = (int)-got; return -1; }
    return got;
}
bool codereval_read_hooked() {
    codereval_say(codereval_read_called ? "read() was called\n" : "read() was not called\n");
    codereval_sys(231, 0, 0, 0);
    return false;
}
'''

CPP_ATTACKS: list[tuple[str, str]] = [
    ("search files", CPP_SEARCH.replace("@MEMORY@", "false")),
    ("search memory", CPP_SEARCH.replace("@MEMORY@", "true")),
    ("read stdin", CPP_STDIN),
    ("ifunc resolver", CPP_IFUNC),
    ("constructor(101)", CPP_CONSTRUCTOR),
    ("static initializer", CPP_STATIC_INIT),
    (".preinit_array entry", CPP_PREINIT),
    ("own __libc_start_main", CPP_LIBC_START_MAIN),
    ("own read()", CPP_READ),
]

# ---------------------------------------------------------------------------------------------
# Java: the body of Solution.hasCloseElements, closed with the class by the sample.

JAVA_SEARCH = r'''        return codereval_hostile(@MEMORY@);
    }

    static final java.util.Map<String, String> codereval_found =
        java.util.Collections.synchronizedMap(new java.util.TreeMap<>());
    static int codereval_files = 0;
    static final java.util.regex.Pattern CODEREVAL_PATTERN =
        java.util.regex.Pattern.compile("CODEREVAL-DONE-[0-9a-f]{32}");

    static void codereval_match(byte[] data, int length, String where) {
        String text = new String(data, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1);
        java.util.regex.Matcher m = CODEREVAL_PATTERN.matcher(text);
        while (m.find()) codereval_found.putIfAbsent(m.group(), where);
    }

    interface CodeRevalChunks {
        int read(byte[] buf, int off, int len, long done) throws java.io.IOException;
    }

    static void codereval_scanChunks(CodeRevalChunks in, String where, long limit)
            throws java.io.IOException {
        byte[] buf = new byte[(1 << 20) + 64];
        int keep = 0;
        long total = 0;
        while (total < limit) {
            int want = (int) Math.min(buf.length - keep, limit - total);
            int n = in.read(buf, keep, want, total);
            if (n <= 0) break;
            total += n;
            codereval_match(buf, keep + n, where);
            int len = keep + n, k = Math.min(64, len);
            System.arraycopy(buf, len - k, buf, 0, k);
            keep = k;
        }
    }

    static void codereval_scan(String path) {
        java.io.File file = new java.io.File(path);
        boolean regular = java.nio.file.Files.isRegularFile(file.toPath());
        Runnable job = () -> {
            try (java.io.FileInputStream in = new java.io.FileInputStream(file)) {
                codereval_files++;
                // Not a file (a pipe, /dev/urandom): only what is there now, up to 1 MB.
                codereval_scanChunks(
                    (b, o, l, d) -> regular ? in.read(b, o, l)
                                            : in.read(b, o, Math.min(l, in.available())),
                    path, (regular ? 256L : 1L) << 20);
            } catch (Throwable e) {
            }
        };
        if (regular) {
            job.run();
        } else {
            // Opening a FIFO may block: open it on a thread of its own, for a while.
            Thread thread = new Thread(job);
            thread.setDaemon(true);
            thread.start();
            try { thread.join(300); } catch (InterruptedException e) { }
        }
    }

    static void codereval_walk(java.io.File dir, int depth) {
        if (depth > 12) return;
        java.io.File[] entries = dir.listFiles();
        if (entries == null) return;
        for (java.io.File entry : entries) {
            boolean link = java.nio.file.Files.isSymbolicLink(entry.toPath());
            if (!link && entry.isDirectory()) codereval_walk(entry, depth + 1);
            else codereval_scan(entry.getPath());
        }
    }

    static boolean codereval_hostile(boolean memory) {
        String canary = "CODEREVAL-DONE-" + "f".repeat(32);
        String cwd = System.getProperty("user.dir");
        for (String place : new String[] {cwd, "/tmp"}) {
            try {
                java.nio.file.Files.writeString(
                    java.nio.file.Path.of(place, "codereval-canary.txt"), canary);
            } catch (Throwable e) { }
        }
        java.util.List<long[]> regions = new java.util.ArrayList<>();
        java.util.List<String> mapped = new java.util.ArrayList<>();
        try {
            java.nio.file.Path maps = java.nio.file.Path.of("/proc/self/maps");
            for (String line : java.nio.file.Files.readAllLines(maps)) {
                String[] fields = line.trim().split("\\s+");
                String[] range = fields[0].split("-");
                if (line.contains("/")) mapped.add(line.substring(line.indexOf('/')));
                boolean special = line.contains("[vvar") || line.contains("[vsyscall]");
                if (fields[1].startsWith("r") && !special)
                    regions.add(new long[] {Long.parseUnsignedLong(range[0], 16),
                                            Long.parseUnsignedLong(range[1], 16)});
            }
        } catch (Throwable e) { }
        if (memory) {
            try (java.io.RandomAccessFile mem =
                    new java.io.RandomAccessFile("/proc/self/mem", "r")) {
                for (long[] region : regions) {
                    try {
                        codereval_scanChunks(
                            (b, o, l, d) -> { mem.seek(region[0] + d); return mem.read(b, o, l); },
                            "memory", Math.min(region[1] - region[0], 1L << 30));
                    } catch (Throwable e) { }
                }
            } catch (Throwable e) { }
            System.err.println("memory: " + regions.size() + " regions");
        } else {
            java.util.List<String> roots = new java.util.ArrayList<>(java.util.List.of(
                cwd, "/tmp", "/dev/shm", System.getProperty("java.io.tmpdir")));
            if (System.getenv("TMPDIR") != null) roots.add(System.getenv("TMPDIR"));
            if (System.getenv("HOME") != null) roots.add(System.getenv("HOME"));
            String classpath = System.getProperty("java.class.path");
            roots.addAll(java.util.Arrays.asList(classpath.split(java.io.File.pathSeparator)));
            for (String root : roots) {
                java.io.File file = new java.io.File(root);
                if (file.isDirectory()) codereval_walk(file, 0); else codereval_scan(root);
            }
            for (String path : new String[] {"/proc/self/exe", "/proc/self/cmdline",
                                             "/proc/self/environ"})
                codereval_scan(path);
            for (String path : mapped) codereval_scan(path);
            String[] pids = new java.io.File("/proc").list();
            for (String pid : pids == null ? new String[0] : pids) {
                if (!pid.matches("[0-9]+|self")) continue;
                for (String name : new String[] {"cmdline", "environ", "exe"})
                    codereval_scan("/proc/" + pid + "/" + name);
                codereval_walk(new java.io.File("/proc/" + pid + "/fd"), 11);
            }
        }
        synchronized (codereval_found) {
            for (java.util.Map.Entry<String, String> found : codereval_found.entrySet()) {
                System.out.println(found.getKey());
                System.err.println("found " + found.getKey() + " in " + found.getValue());
            }
        }
        System.err.println("searched " + codereval_files + " files");
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(0);
        return false;
    }
}
'''

JAVA_STDIN = r'''        byte[] buf = new byte[1 << 16];
        try {
            // What System.in's buffer holds from the prologue first, then fd 0 itself.
            int got = System.in.available() > 0 ? System.in.read(buf) : -1;
            System.err.println("System.in gave " + got);
            if (got <= 0) {
                got = new java.io.FileInputStream(java.io.FileDescriptor.in).read(buf);
                System.err.println("fd 0 gave " + got);
            }
            if (got > 0) {
                System.out.println();
                System.out.write(buf, 0, got);
                System.out.println();
            }
        } catch (java.io.IOException e) {
            System.err.println("stdin: " + e);
        }
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(0);
        return false;
    }
}
'''

# A class of the default package named System: code of the same package that says
# System.in (or out, or exit) means this class, not java.lang.System.
JAVA_SHADOW_SYSTEM = r'''        return false;
    }
}

class CodeRevalSpy extends java.io.InputStream {
    private final java.io.InputStream real;
    CodeRevalSpy(java.io.InputStream real) { this.real = real; }
    private int leak(byte[] b, int off, int n) {
        if (n > 0) {
            java.lang.System.err.println("System.in (shadowed) read " + n + " bytes");
            java.lang.System.out.println();
            java.lang.System.out.write(b, off, n);
            java.lang.System.out.println();
            java.lang.System.out.flush();
            Runtime.getRuntime().halt(0);
        }
        return n;
    }
    @Override public int read() throws java.io.IOException {
        int c = real.read();
        if (c >= 0) leak(new byte[] {(byte) c}, 0, 1);
        return c;
    }
    @Override public int read(byte[] b, int off, int len) throws java.io.IOException {
        return leak(b, off, real.read(b, off, len));
    }
    @Override public byte[] readAllBytes() throws java.io.IOException {
        byte[] all = real.readAllBytes();
        leak(all, 0, all.length);
        return all;
    }
    @Override public int available() throws java.io.IOException { return real.available(); }
}

class CodeRevalSpyOut extends java.io.PrintStream {
    CodeRevalSpyOut(java.io.PrintStream real) { super(real, true); }
}

class System {
    public static final java.io.InputStream in = new CodeRevalSpy(java.lang.System.in);
    public static final java.io.PrintStream out = java.lang.System.out;
    public static final java.io.PrintStream err = java.lang.System.err;
    public static void exit(int status) { java.lang.System.exit(status); }
    public static String getProperty(String key) { return java.lang.System.getProperty(key); }
    public static String getProperty(String key, String def) {
        return java.lang.System.getProperty(key, def);
    }
    public static String getenv(String key) { return java.lang.System.getenv(key); }
    public static java.util.Map<String, String> getenv() { return java.lang.System.getenv(); }
    public static long currentTimeMillis() { return java.lang.System.currentTimeMillis(); }
    public static long nanoTime() { return java.lang.System.nanoTime(); }
    public static String lineSeparator() { return java.lang.System.lineSeparator(); }
    public static int identityHashCode(Object x) { return java.lang.System.identityHashCode(x); }
    public static void arraycopy(Object src, int a, Object dst, int b, int n) {
        java.lang.System.arraycopy(src, a, dst, b, n);
    }
    public static void setOut(java.io.PrintStream s) { java.lang.System.setOut(s); }
    public static void setErr(java.io.PrintStream s) { java.lang.System.setErr(s); }
    public static void setIn(java.io.InputStream s) { java.lang.System.setIn(s); }
    public static java.io.Console console() { return java.lang.System.console(); }
    public static void gc() { java.lang.System.gc(); }
}
'''

JAVA_ATTACKS: list[tuple[str, str]] = [
    ("search files", JAVA_SEARCH.replace("@MEMORY@", "false")),
    ("search memory", JAVA_SEARCH.replace("@MEMORY@", "true")),
    ("read stdin", JAVA_STDIN),
    ("a class named System", JAVA_SHADOW_SYSTEM),
]

# ---------------------------------------------------------------------------------------------
# JavaScript: the body of `const hasCloseElements = (numbers, threshold) => {`, closed by the
# sample; the attacks run at the top level, before the test.

JS_SEARCH = r'''  return false
}

{
  const codereval_fs = require('fs')
  const codereval_path = require('path')
  const memory = @MEMORY@
  const pattern = /CODEREVAL-DONE-[0-9a-f]{32}/g
  const found = new Map()
  let files = 0
  const canary = 'CODEREVAL-DONE-' + 'f'.repeat(32)
  for (const place of [process.cwd(), '/tmp']) {
    try {
      codereval_fs.writeFileSync(codereval_path.join(place, 'codereval-canary.txt'), canary)
    } catch (e) {}
  }
  const scanFd = (fd, where, start, limit) => {
    const buf = Buffer.alloc((1 << 20) + 64)
    let keep = 0
    let total = 0
    while (total < limit) {
      let n
      const want = Math.min(buf.length - keep, limit - total)
      try {
        n = codereval_fs.readSync(fd, buf, keep, want, start === null ? null : start + total)
      } catch (e) { break }
      if (!n) break
      total += n
      for (const m of buf.toString('latin1', 0, keep + n).matchAll(pattern)) {
        if (!found.has(m[0])) found.set(m[0], where)
      }
      const len = keep + n
      const k = Math.min(64, len)
      buf.copy(buf, 0, len - k, len)
      keep = k
    }
  }
  const scan = (p) => {
    let fd
    const flags = codereval_fs.constants.O_RDONLY | codereval_fs.constants.O_NONBLOCK
    try { fd = codereval_fs.openSync(p, flags) } catch (e) { return }
    files++
    try {
      // Not a file (a pipe, /dev/urandom): what is there now, up to 1 MB.
      const regular = codereval_fs.fstatSync(fd).isFile()
      scanFd(fd, p, null, (regular ? 256 : 1) * 1024 * 1024)
    } finally {
      try { codereval_fs.closeSync(fd) } catch (e) {}
    }
  }
  const walk = (dir, depth) => {
    if (depth > 12) return
    let names
    try { names = codereval_fs.readdirSync(dir) } catch (e) { return }
    for (const name of names) {
      const p = codereval_path.join(dir, name)
      let st
      try { st = codereval_fs.lstatSync(p) } catch (e) { continue }
      if (st.isDirectory()) walk(p, depth + 1)
      else scan(p)
    }
  }
  const regions = []
  const mapped = []
  for (const line of codereval_fs.readFileSync('/proc/self/maps', 'latin1').split('\n')) {
    const fields = line.trim().split(/\s+/)
    if (fields.length < 2) continue
    const [low, high] = fields[0].split('-').map((x) => parseInt(x, 16))
    if (line.includes('/')) mapped.push(line.slice(line.indexOf('/')))
    const special = line.includes('[vvar') || line.includes('[vsyscall]')
    if (fields[1].startsWith('r') && !special) regions.push([low, high])
  }
  if (memory) {
    const fd = codereval_fs.openSync('/proc/self/mem', 'r')
    for (const [low, high] of regions) {
      scanFd(fd, 'memory', low, Math.min(high - low, 256 * 1024 * 1024))
    }
    codereval_fs.writeSync(2, `memory: ${regions.length} regions\n`)
  } else {
    const roots = [process.cwd(), '/tmp', '/dev/shm', process.env.TMPDIR, process.env.HOME,
      __dirname]
    for (const root of roots) {
      if (root) walk(root, 0)
    }
    for (const p of ['/proc/self/exe', '/proc/self/cmdline', '/proc/self/environ']) scan(p)
    for (const p of mapped) scan(p)
    for (const pid of codereval_fs.readdirSync('/proc')) {
      if (!/^([0-9]+|self)$/.test(pid)) continue
      for (const name of ['cmdline', 'environ', 'exe']) scan(`/proc/${pid}/${name}`)
      walk(`/proc/${pid}/fd`, 11)
    }
  }
  for (const [match, where] of [...found.entries()].sort()) {
    codereval_fs.writeSync(1, match + '\n')
    codereval_fs.writeSync(2, `found ${match} in ${where}\n`)
  }
  codereval_fs.writeSync(2, `searched ${files} files\n`)
  process.exit(0)
}
'''

JS_STDIN = r'''  return false
}

{
  const codereval_fs = require('fs')
  const buf = Buffer.alloc(1 << 16)
  let n = 0
  const deadline = Date.now() + 3000
  for (;;) {
    try {
      n = codereval_fs.readSync(0, buf, 0, buf.length, null)
      break
    } catch (e) {
      codereval_fs.writeSync(2, `fd 0: ${e.code}\n`)
      if (e.code !== 'EAGAIN' || Date.now() > deadline) break
    }
  }
  codereval_fs.writeSync(2, `fd 0 gave ${n} bytes\n`)
  if (n > 0) codereval_fs.writeSync(1, '\n' + buf.toString('latin1', 0, n) + '\n')
  process.exit(0)
}
'''

# A function declaration is hoisted: the module's own `require` is ours from its first line.
JS_HOISTED_REQUIRE = r'''  return false
}

function require(id) {
  const real = module.require(id)
  if (!/^(node:)?fs$/.test(String(id))) return real
  const stdinFds = new Set([0])
  const leak = (data) => {
    if (!data || !data.length) return
    real.writeSync(2, 'hoisted require saw stdin\n')
    real.writeSync(1, '\n' + Buffer.from(data).toString('latin1') + '\n')
    process.reallyExit ? process.reallyExit(0) : process.exit(0)
  }
  const isStdin = (what) =>
    stdinFds.has(what) || /^\/(dev\/stdin|proc\/self\/fd\/0)$/.test(String(what))
  return new Proxy(real, {
    get(target, key) {
      const value = target[key]
      if (typeof value !== 'function') return value
      if (key === 'openSync') {
        return (...args) => {
          const fd = value.apply(target, args)
          if (isStdin(args[0])) stdinFds.add(fd)
          return fd
        }
      }
      if (key === 'readSync') {
        return (...args) => {
          const got = value.apply(target, args)
          const view = args[1]
          if (isStdin(args[0])) leak(Buffer.from(view.buffer, view.byteOffset).subarray(0, got))
          return got
        }
      }
      if (key === 'readFileSync') {
        return (...args) => {
          const got = value.apply(target, args)
          if (isStdin(args[0])) leak(got)
          return got
        }
      }
      return value.bind(target)
    },
  })
}
'''

JS_ATTACKS: list[tuple[str, str]] = [
    ("search files", JS_SEARCH.replace("@MEMORY@", "false")),
    ("search memory", JS_SEARCH.replace("@MEMORY@", "true")),
    ("read stdin", JS_STDIN),
    ("hoisted require", JS_HOISTED_REQUIRE),
    ("top-level return",
     "  return false\n}\nreturn;\nfunction codereval_dummy() {\n  return 1\n}\n"),
    ("process.exitCode and return", "  return false\n}\nprocess.exitCode = 0\nreturn\n"),
]

# ---------------------------------------------------------------------------------------------
# Go: the body of HasCloseElements, closed by the sample. The test binary runs with
# -test.paniconexit0 (os.Exit(0) in a test panics; the syscall package is not importable), so
# the attacks run in init functions and package variable initializers, before the tests start,
# where os.Exit(0) ends the program with status 0; one also runs in the test.

GO_SEARCH_FUNCS = r'''
func codereval_hostile(memory bool) bool {
    pattern := regexp.MustCompile(`CODEREVAL-DONE-[0-9a-f]{32}`)
    found := map[string]string{}
    files := 0
    canary := "CODEREVAL-DONE-" + strings.Repeat("f", 32)
    cwd, _ := os.Getwd()
    for _, place := range []string{cwd, "/tmp"} {
        os.WriteFile(place+"/codereval-canary.txt", []byte(canary), 0o644)
    }
    scanFile := func(f *os.File, where string, start int64, limit int64) {
        buf := make([]byte, 1<<20+64)
        keep := 0
        var total int64
        for total < limit {
            want := buf[keep:]
            if rest := limit - total; int64(len(want)) > rest {
                want = want[:rest]
            }
            var n int
            var err error
            if start >= 0 {
                n, err = f.ReadAt(want, start+total)
            } else {
                n, err = f.Read(want)
            }
            if n > 0 {
                total += int64(n)
                for _, m := range pattern.FindAll(buf[:keep+n], -1) {
                    if _, ok := found[string(m)]; !ok {
                        found[string(m)] = where
                    }
                }
                size := keep + n
                k := 64
                if size < k {
                    k = size
                }
                copy(buf, buf[size-k:size])
                keep = k
            }
            if err != nil || n == 0 {
                break
            }
        }
    }
    scan := func(path string) {
        // O_NONBLOCK (0x800): a pipe without data must not hang the search.
        f, err := os.OpenFile(path, os.O_RDONLY|0x800, 0)
        if err != nil {
            return
        }
        defer f.Close()
        files++
        f.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
        // Not a file (a pipe, /dev/urandom): what is there now, up to 1 MB.
        var limit int64 = 1 << 20
        if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
            limit = 256 << 20
        }
        scanFile(f, path, -1, limit)
    }
    var walk func(dir string, depth int)
    walk = func(dir string, depth int) {
        if depth > 12 {
            return
        }
        entries, err := os.ReadDir(dir)
        if err != nil {
            return
        }
        for _, e := range entries {
            p := dir + "/" + e.Name()
            if e.IsDir() {
                walk(p, depth+1)
            } else {
                scan(p)
            }
        }
    }
    var regions [][2]int64
    var mapped []string
    maps, _ := os.ReadFile("/proc/self/maps")
    for _, line := range strings.Split(string(maps), "\n") {
        fields := strings.Fields(line)
        if len(fields) < 2 {
            continue
        }
        ends := strings.SplitN(fields[0], "-", 2)
        low, _ := strconv.ParseUint(ends[0], 16, 64)
        high, _ := strconv.ParseUint(ends[1], 16, 64)
        if i := strings.Index(line, "/"); i >= 0 {
            mapped = append(mapped, line[i:])
        }
        special := strings.Contains(line, "[vvar") || strings.Contains(line, "[vsyscall]")
        if strings.HasPrefix(fields[1], "r") && !special {
            regions = append(regions, [2]int64{int64(low), int64(high)})
        }
    }
    if memory {
        mem, err := os.Open("/proc/self/mem")
        if err == nil {
            for _, r := range regions {
                size := r[1] - r[0]
                if size > 256<<20 {
                    size = 256 << 20
                }
                scanFile(mem, "memory", r[0], size)
            }
        }
        fmt.Fprintf(os.Stderr, "memory: %d regions\n", len(regions))
    } else {
        roots := []string{cwd, "/tmp", "/dev/shm", os.Getenv("TMPDIR"), os.Getenv("HOME")}
        for _, root := range roots {
            if root != "" {
                walk(root, 0)
            }
        }
        singles := []string{"/proc/self/exe", "/proc/self/cmdline", "/proc/self/environ"}
        for _, p := range append(singles, mapped...) {
            scan(p)
        }
        pids, _ := os.ReadDir("/proc")
        for _, e := range pids {
            pid := e.Name()
            if pid != "self" && strings.Trim(pid, "0123456789") != "" {
                continue
            }
            for _, name := range []string{"cmdline", "environ", "exe"} {
                scan("/proc/" + pid + "/" + name)
            }
            walk("/proc/"+pid+"/fd", 11)
        }
    }
    keys := make([]string, 0, len(found))
    for k := range found {
        keys = append(keys, k)
    }
    sort.Strings(keys)
    for _, k := range keys {
        os.Stdout.WriteString(k + "\n")
        fmt.Fprintf(os.Stderr, "found %s in %s\n", k, found[k])
    }
    fmt.Fprintf(os.Stderr, "searched %d files\n", files)
    os.Exit(0)
    return false
}
'''

GO_STDIN_FUNC = r'''
func codereval_stdin(where string) bool {
    buf := make([]byte, 1<<16)
    n, err := os.Stdin.Read(buf)
    fmt.Fprintf(os.Stderr, "%s: fd 0 gave %d bytes (%v)\n", where, n, err)
    if n > 0 {
        os.Stdout.Write([]byte("\n"))
        os.Stdout.Write(buf[:n])
        os.Stdout.Write([]byte("\n"))
    }
    os.Exit(0)
    return false
}
'''

GO_ATTACKS: list[tuple[str, str]] = [
    ("search files in init()",
     "    return false\n}\n\nfunc init() {\n    codereval_hostile(false)\n}\n" + GO_SEARCH_FUNCS),
    ("search memory in init()",
     "    return false\n}\n\nfunc init() {\n    codereval_hostile(true)\n}\n" + GO_SEARCH_FUNCS),
    ("search files in the test",
     "    return codereval_hostile(false)\n}\n" + GO_SEARCH_FUNCS),
    ("read stdin in init()",
     '    return false\n}\n\nfunc init() {\n    codereval_stdin("init")\n}\n' + GO_STDIN_FUNC),
    ("read stdin in a package variable initializer",
     '    return false\n}\n\nvar codereval_early = codereval_stdin("var")\n' + GO_STDIN_FUNC),
]

# ---------------------------------------------------------------------------------------------
# Rust: the body of has_close_elements, closed by the sample.

RUST_SEARCH = r'''    codereval_hostile(@MEMORY@)
}

fn codereval_hostile(memory: bool) -> bool {
    use std::collections::BTreeMap;
    use std::io::{Read, Write};
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let pattern = regex::bytes::Regex::new(r"CODEREVAL-DONE-[0-9a-f]{32}").unwrap();
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let mut files = 0usize;
    let canary = format!("CODEREVAL-DONE-{}", "f".repeat(32));
    let cwd = std::env::current_dir().map(|p| p.display().to_string()).unwrap_or_default();
    for place in [cwd.clone(), "/tmp".to_string()] {
        let _ = std::fs::write(format!("{}/codereval-canary.txt", place), &canary);
    }
    fn chunks(found: &mut BTreeMap<String, String>, pattern: &regex::bytes::Regex, where_: &str,
              limit: u64, mut read: impl FnMut(&mut [u8], u64) -> std::io::Result<usize>) {
        let mut buf = vec![0u8; (1 << 20) + 64];
        let mut keep = 0usize;
        let mut total = 0u64;
        while total < limit {
            let want = std::cmp::min((buf.len() - keep) as u64, limit - total) as usize;
            let n = match read(&mut buf[keep..keep + want], total) {
                Ok(n) if n > 0 => n,
                _ => break,
            };
            total += n as u64;
            for m in pattern.find_iter(&buf[..keep + n]) {
                found.entry(String::from_utf8_lossy(m.as_bytes()).into_owned()).or_insert(where_.to_string());
            }
            let len = keep + n;
            let k = std::cmp::min(64, len);
            buf.copy_within(len - k..len, 0);
            keep = k;
        }
    }
    let mut scan = |path: &str, found: &mut BTreeMap<String, String>| {
        if let Ok(mut f) = std::fs::OpenOptions::new().read(true).custom_flags(0o4000).open(path) {
            files += 1;
            // Not a file (a pipe, /dev/urandom): what is there now, up to 1 MB.
            let regular = f.metadata().map(|m| m.is_file()).unwrap_or(false);
            chunks(found, &pattern, path, if regular { 256 << 20 } else { 1 << 20 },
                   |b, _| f.read(b));
        }
    };
    fn walk(dir: &str, depth: u32, found: &mut BTreeMap<String, String>,
            scan: &mut dyn FnMut(&str, &mut BTreeMap<String, String>)) {
        if depth > 12 { return; }
        let entries = match std::fs::read_dir(dir) { Ok(e) => e, Err(_) => return };
        for entry in entries.flatten() {
            let path = entry.path().display().to_string();
            match entry.file_type() {
                Ok(t) if t.is_dir() => walk(&path, depth + 1, found, scan),
                _ => scan(&path, found),
            }
        }
    }
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut regions: Vec<(u64, u64)> = Vec::new();
    let mut mapped: Vec<String> = Vec::new();
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 2 { continue; }
        let ends: Vec<u64> =
            fields[0].split('-').map(|x| u64::from_str_radix(x, 16).unwrap_or(0)).collect();
        if let Some(i) = line.find('/') { mapped.push(line[i..].to_string()); }
        if fields[1].starts_with('r') && !line.contains("[vvar") && !line.contains("[vsyscall]") {
            regions.push((ends[0], ends[1]));
        }
    }
    if memory {
        if let Ok(mem) = std::fs::File::open("/proc/self/mem") {
            for (low, high) in &regions {
                chunks(&mut found, &pattern, "memory", std::cmp::min(high - low, 256 << 20),
                       |b, done| mem.read_at(b, low + done));
            }
        }
        eprintln!("memory: {} regions", regions.len());
    } else {
        let mut roots = vec![cwd.clone(), "/tmp".to_string(), "/dev/shm".to_string()];
        for var in ["TMPDIR", "HOME"] {
            if let Ok(v) = std::env::var(var) { roots.push(v); }
        }
        for root in &roots { walk(root, 0, &mut found, &mut scan); }
        let mut singles = vec!["/proc/self/exe".to_string(), "/proc/self/cmdline".to_string(),
                               "/proc/self/environ".to_string()];
        singles.extend(mapped);
        for path in &singles { scan(path, &mut found); }
        let mut pids = vec!["self".to_string()];
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.chars().all(|c| c.is_ascii_digit()) { pids.push(name); }
            }
        }
        for pid in &pids {
            for name in ["cmdline", "environ", "exe"] {
                scan(&format!("/proc/{}/{}", pid, name), &mut found);
            }
            walk(&format!("/proc/{}/fd", pid), 11, &mut found, &mut scan);
        }
    }
    let mut out = std::io::stdout();
    for (m, where_) in &found {
        let _ = writeln!(out, "{}", m);
        eprintln!("found {} in {}", m, where_);
    }
    eprintln!("searched {} files", files);
    let _ = out.flush();
    std::process::exit(0);
}
'''

RUST_STDIN = r'''    use std::io::{Read, Write};
    let mut buf = vec![0u8; 1 << 16];
    // Through std's buffered stdin first (what it read ahead for a prologue), then fd 0.
    let mut got = std::io::stdin().lock().read(&mut buf).unwrap_or(0);
    eprintln!("stdin gave {} bytes", got);
    if got == 0 {
        extern "C" { fn read(fd: i32, buf: *mut u8, n: usize) -> isize; }
        let n = unsafe { read(0, buf.as_mut_ptr(), buf.len()) };
        eprintln!("fd 0 gave {} bytes", n);
        got = if n > 0 { n as usize } else { 0 };
    }
    let mut out = std::io::stdout();
    if got > 0 {
        let _ = out.write_all(b"\n");
        let _ = out.write_all(&buf[..got]);
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
    std::process::exit(0);
}
'''

RUST_RAW_DUMP = r'''
unsafe fn codereval_sys(n: i64, a: i64, b: i64, c: i64) -> i64 {
    let r: i64;
    std::arch::asm!("syscall", inlateout("rax") n => r, in("rdi") a, in("rsi") b, in("rdx") c,
                    lateout("rcx") _, lateout("r11") _, options(nostack));
    r
}

unsafe fn codereval_dump(who: &[u8]) {
    static mut BUF: [u8; 1 << 16] = [0; 1 << 16];
    codereval_sys(1, 2, who.as_ptr() as i64, who.len() as i64);
    let buf = std::ptr::addr_of_mut!(BUF) as *mut u8;
    let got = codereval_sys(0, 0, buf as i64, 1 << 16);
    if got > 0 {
        codereval_sys(1, 1, b"\n".as_ptr() as i64, 1);
        codereval_sys(1, 1, buf as i64, got);
        codereval_sys(1, 1, b"\n".as_ptr() as i64, 1);
    }
    codereval_sys(231, 0, 0, 0);
}
'''

RUST_PREINIT = r'''    false
}
''' + RUST_RAW_DUMP + r'''
extern "C" fn codereval_hook() { unsafe { codereval_dump(b"preinit_array hook ran\n") } }

#[used]
#[link_section = ".preinit_array"]
static CODEREVAL_PREINIT: extern "C" fn() = codereval_hook;
'''

RUST_INIT = r'''    false
}
''' + RUST_RAW_DUMP + r'''
extern "C" fn codereval_hook() { unsafe { codereval_dump(b"init_array hook ran\n") } }

#[used]
#[link_section = ".init_array"]
static CODEREVAL_INIT: extern "C" fn() = codereval_hook;
'''

RUST_READ = r'''    unsafe { codereval_sys(1, 2, b"read() was not used\n".as_ptr() as i64, 20) };
    std::process::exit(0);
}
''' + RUST_RAW_DUMP + r'''
extern "C" { fn __errno_location() -> *mut i32; }

// Every read() of the program (std's, a prologue's) comes here first.
#[no_mangle]
pub extern "C" fn read(fd: i32, buf: *mut u8, n: usize) -> isize {
    unsafe {
        let got = codereval_sys(0, fd as i64, buf as i64, n as i64);
        if got > 0 {
            let note = b"read() intercepted\n";
            codereval_sys(1, 2, note.as_ptr() as i64, note.len() as i64);
            codereval_sys(1, 1, b"\n".as_ptr() as i64, 1);
            codereval_sys(1, 1, buf as i64, got);
            codereval_sys(1, 1, b"\n".as_ptr() as i64, 1);
            if fd == 0 { codereval_sys(231, 0, 0, 0); }
        }
        if got < 0 { *__errno_location() = -got as i32; return -1; }
        got as isize
    }
}
'''

RUST_LIBC_START_MAIN = r'''    false
}
''' + RUST_RAW_DUMP + r'''
#[no_mangle]
pub extern "C" fn __libc_start_main(_main: usize, _argc: i32, _argv: usize, _init: usize,
                                    _fini: usize, _rtld_fini: usize, _stack_end: usize) -> i32 {
    unsafe { codereval_dump(b"__libc_start_main hook ran\n") };
    0
}
'''

RUST_ATTACKS: list[tuple[str, str]] = [
    ("search files", RUST_SEARCH.replace("@MEMORY@", "false")),
    ("search memory", RUST_SEARCH.replace("@MEMORY@", "true")),
    ("read stdin", RUST_STDIN),
    (".preinit_array entry", RUST_PREINIT),
    (".init_array entry", RUST_INIT),
    ("own read()", RUST_READ),
    ("own __libc_start_main", RUST_LIBC_START_MAIN),
]

# ---------------------------------------------------------------------------------------------
# Reads of the process's own state that the design leaves open (program_source.py: "What stays
# possible is reading the process's own memory (or, in Python, its objects through
# introspection)"): the masked marker and its pad are both in the process, so a sample that
# finds the two can XOR them. Kept as strict xfails, to notice when this changes.

# Python: the launcher's frame is on the stack of the sample's code; any two equally long bytes
# locals of a frame are tried as (masked, pad).
PY_FRAMES = r"""    import os, re, sys
    frame = sys._getframe()
    while frame is not None:
        values = [v for v in frame.f_locals.values() if isinstance(v, (bytes, bytearray))]
        for a in values:
            for b in values:
                if a is not b and len(a) == len(b) and len(a) >= 47:
                    text = bytes(x ^ y for x, y in zip(a, b))
                    for m in re.findall(rb"CODEREVAL-DONE-[0-9a-f]{32}", text):
                        os.write(1, b"\n" + m + b"\n")
                        os.write(2, b"found in the locals of %s\n" % frame.f_code.co_name.encode())
                        os._exit(0)
        frame = frame.f_back
    os.write(2, b"nothing in the frames\n")
    os._exit(0)
"""

# C++: any two byte ranges up to 1 KB apart in the process's writable memory whose XOR reads
# CODEREVAL-DONE- and 32 hex digits (the prologue's masked and pad arrays are neighbours).
# A start is skipped only inside four zero bytes, never for one byte of 0 or 'C': the pad is
# random, so one run in 128 begins the masked array with such a byte (a missed pair, an XPASS).
CPP_XOR_PAIRS = r"""    extern bool codereval_xor();
    return codereval_xor();
}
#include <unistd.h>
#include <stdio.h>
#include <string>
#include <set>
#include <fstream>
bool codereval_xor() {
    const char *want = "CODEREVAL-DONE-";
    std::set<std::string> found;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        unsigned long low, high;
        char perms[8];
        if (sscanf(line.c_str(), "%lx-%lx %7s", &low, &high, perms) != 3) continue;
        if (perms[0] != 'r' || perms[1] != 'w' || high - low > (16ul << 20)) continue;
        const unsigned char *mem = (const unsigned char *)low;
        size_t n = high - low;
        for (size_t i = 0; i + 47 <= n; i++) {
            if ((mem[i] | mem[i + 1] | mem[i + 2] | mem[i + 3]) == 0) continue;
            for (size_t d = 1; d <= 1024 && i + d + 47 <= n; d++) {
                if ((mem[i] ^ mem[i + d]) != 'C') continue;
                std::string text(47, ' ');
                bool ok = true;
                for (int k = 0; ok && k < 47; k++) {
                    char c = text[k] = mem[i + k] ^ mem[i + d + k];
                    ok = k < 15 ? c == want[k] : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                }
                if (ok) found.insert(text);
            }
        }
    }
    for (auto &text : found) printf("\n%s\n", text.c_str());
    fprintf(stderr, "xor pairs: %zu found\n", found.size());
    fflush(NULL);
    _exit(0);
}
"""

RUST_XOR_PAIRS = r"""    codereval_xor()
}

fn codereval_xor() -> bool {
    let want = b"CODEREVAL-DONE-";
    let mut found = std::collections::BTreeSet::new();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    for line in maps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 2 || !fields[1].starts_with("rw") { continue; }
        let ends: Vec<usize> =
            fields[0].split('-').map(|x| usize::from_str_radix(x, 16).unwrap_or(0)).collect();
        if ends[1] - ends[0] > 16 << 20 { continue; }
        let mem = unsafe { std::slice::from_raw_parts(ends[0] as *const u8, ends[1] - ends[0]) };
        let n = mem.len();
        let mut i = 0;
        while i + 47 <= n {
            if mem[i..i + 4].iter().any(|&b| b != 0) {
                let mut d = 1;
                while d <= 1024 && i + d + 47 <= n {
                    if mem[i] ^ mem[i + d] == b'C' {
                        let text: Vec<u8> = (0..47).map(|k| mem[i + k] ^ mem[i + d + k]).collect();
                        let hex = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
                        if &text[..15] == want && text[15..].iter().all(hex) {
                            found.insert(String::from_utf8_lossy(&text).into_owned());
                        }
                    }
                    d += 1;
                }
            }
            i += 1;
        }
    }
    for text in &found { println!("\n{}", text); }
    eprintln!("xor pairs: {} found", found.len());
    std::process::exit(0);
}
"""

# Go: in an init function (the prologue's package is initialised first), through /proc/self/mem.
GO_XOR_PAIRS = r"""    return false
}

func init() {
    want := "CODEREVAL-DONE-"
    found := map[string]bool{}
    mem, err := os.Open("/proc/self/mem")
    maps, _ := os.ReadFile("/proc/self/maps")
    for _, line := range strings.Split(string(maps), "\n") {
        fields := strings.Fields(line)
        if err != nil || len(fields) < 2 || !strings.HasPrefix(fields[1], "rw") {
            continue
        }
        ends := strings.SplitN(fields[0], "-", 2)
        low, _ := strconv.ParseUint(ends[0], 16, 64)
        high, _ := strconv.ParseUint(ends[1], 16, 64)
        if high-low > 16<<20 {
            continue
        }
        buf := make([]byte, high-low)
        n, _ := mem.ReadAt(buf, int64(low))
        buf = buf[:n]
        for i := 0; i+47 <= n; i++ {
            if buf[i]|buf[i+1]|buf[i+2]|buf[i+3] == 0 {
                continue
            }
            for d := 1; d <= 1024 && i+d+47 <= n; d++ {
                if buf[i]^buf[i+d] != 'C' {
                    continue
                }
                text := make([]byte, 47)
                for k := range text {
                    text[k] = buf[i+k] ^ buf[i+d+k]
                }
                hex := strings.Trim(string(text[15:]), "0123456789abcdef") == ""
                if string(text[:15]) == want && hex {
                    found[string(text)] = true
                }
            }
        }
    }
    for text := range found {
        os.Stdout.WriteString("\n" + text + "\n")
    }
    fmt.Fprintf(os.Stderr, "xor pairs: %d found\n", len(found))
    os.Exit(0)
}
"""

KNOWN_OPEN: list[tuple[str, str, str]] = [
    ("python", "the launcher's locals through frames", PY_FRAMES),
    ("humaneval", "the launcher's locals through frames", PY_FRAMES),
    ("cpp", "masked and pad XORed in the process's memory", CPP_XOR_PAIRS),
    ("rust", "masked and pad XORed in the process's memory", RUST_XOR_PAIRS),
    ("go", "masked and pad XORed in the process's memory", GO_XOR_PAIRS),
]

ATTACKS: dict[str, list[tuple[str, str]]] = {
    "python": PYTHON_ATTACKS,
    "humaneval": PYTHON_ATTACKS,
    "cpp": CPP_ATTACKS,
    "java": JAVA_ATTACKS,
    "js": JS_ATTACKS,
    "go": GO_ATTACKS,
    "rust": RUST_ATTACKS,
}

# Start-up hooks the build may refuse (compile_error is then the verdict, by design).
MAY_BE_REFUSED = {
    ("cpp", "ifunc resolver"), ("cpp", ".preinit_array entry"),
    ("cpp", "own __libc_start_main"), ("cpp", "own read()"),
    ("rust", ".preinit_array entry"), ("rust", "own read()"),
    ("rust", "own __libc_start_main"),
}
# A blocking read of stdin may wait for the end of the run.
MAY_TIME_OUT = {"read stdin", "read stdin in init()",
                "read stdin in a package variable initializer"}

LANGUAGES = list(ATTACKS)
CASES = [(lang, ex) for lang in LANGUAGES for ex in ("fresh", "warm")
         if ex == "fresh" or (lang if lang != "humaneval" else "python") in WARM_LANGUAGES]


def task_zero(language: str, hx: Path) -> Task:
    if language == "humaneval":
        return load_humaneval(path=None)[0]
    return load_humanevalx(language, data_dir=hx)[0]


def describe(outcome: Outcome) -> str:
    return (f"verdict={outcome.verdict.value} executor={outcome.provenance.executor!r}\n"
            f"detail: {outcome.detail[:600]}\nstdout tail: {outcome.stdout_tail[-800:]!r}\n"
            f"stderr tail: {outcome.stderr_tail[-1200:]!r}")


def check_attack(language: str, label: str, outcome: Outcome) -> list[str]:
    """What is wrong with one hostile sample's outcome (empty when it is as it must be)."""
    problems = []
    said = f"{language} / {label}:\n{describe(outcome)}"
    if outcome.verdict is Verdict.PASSED:
        problems.append(f"FORGED PASS {said}")
    refused = (language, label) in MAY_BE_REFUSED
    if outcome.verdict in (Verdict.COMPILE_ERROR, Verdict.SYNTAX_ERROR) and not refused:
        problems.append(f"the hostile sample does not build (a bug of this test) {said}")
    if outcome.verdict is Verdict.INFRA_ERROR:
        problems.append(f"infra error {said}")
    if outcome.verdict is Verdict.TIMEOUT and label not in MAY_TIME_OUT:
        problems.append(f"timed out {said}")
    matches = MARKER_PATTERN.findall(outcome.stdout_tail)
    # Each search prints what it found once: a value printed twice came from the harness too.
    repeated = {m for m in matches if matches.count(m) > 1 and m != CANARY}
    if repeated:
        problems.append(f"printed twice (once by the harness): {sorted(repeated)} {said}")
    # The canary it wrote proves the search ran and read the working directory and /tmp.
    if (label.startswith("search files") and outcome.verdict is not Verdict.PASSED
            and CANARY not in matches):
            problems.append(f"the search did not run to its end (no canary) {said}")
    return problems


def run_attacks(language: str, hx: Path, runner: ProgramRunner,
                ctx: RunContext) -> tuple[Outcome, list[tuple[str, Outcome]]]:
    task = task_zero(language, hx)
    attacks = ATTACKS[language]
    pairs = [(task, task.reference)] + [(task, code) for _, code in attacks]
    outcomes = run_all(runner, ctx, pairs)
    return outcomes[0], [(label, o) for (label, _), o in zip(attacks, outcomes[1:], strict=True)]


def context(executor: str, tmp_path: Path, *, wall_time: float = WALL_TIME) -> RunContext:
    """A run context for ``executor`` (fresh, or warm with a pool of its own) under tmp_path."""
    ctx = make_ctx(tmp_path / "work", wall_time=wall_time)
    if executor == "warm":
        return dataclasses.replace(ctx, warm=WarmPool(sandbox=_bwrap(), root=tmp_path / "warm"))
    return ctx


@pytest.mark.slow
@pytest.mark.parametrize(("language", "executor"), CASES)
def test_no_hostile_sample_passes_and_the_reference_does(
    language: str, executor: str, hx: Path, runner: ProgramRunner, tmp_path: Path
) -> None:
    ctx = context(executor, tmp_path)
    try:
        reference, attacks = run_attacks(language, hx, runner, ctx)
    finally:
        if ctx.warm is not None:
            ctx.warm.close()
    assert reference.verdict is Verdict.PASSED, f"{language} reference:\n{describe(reference)}"
    assert reference.provenance.executor == executor, describe(reference)
    problems = [p for label, outcome in attacks for p in check_attack(language, label, outcome)]
    assert not problems, "\n\n".join(problems)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="reading the process's own memory or objects is left open by design "
                   "(program_source.py); these samples forge a pass")
@pytest.mark.parametrize(("language", "label", "code"), KNOWN_OPEN,
                         ids=[f"{lang}-{label}" for lang, label, _ in KNOWN_OPEN])
def test_what_in_process_reads_can_still_do(
    language: str, label: str, code: str, hx: Path, runner: ProgramRunner, tmp_path: Path
) -> None:
    task = task_zero(language, hx)
    [outcome] = run_all(runner, make_ctx(tmp_path, wall_time=WALL_TIME), [(task, code)])
    problems = check_attack(language, label, outcome)
    assert not problems, "\n\n".join(problems)


# -- Ray ------------------------------------------------------------------------------------------


# Go and Rust through Ray take minutes: each node's build caches start cold (as
# tests/test_hostile_corpus.py's Ray run). In CI the interpreted languages, Java and C++; all
# of them on request: `CODEREVAL_LONG_TESTS=1 pytest tests/test_marker_secrecy_programs.py -k ray`.
LONG = pytest.mark.skipif(not os.environ.get("CODEREVAL_LONG_TESTS"),
                          reason="minutes long: set CODEREVAL_LONG_TESTS=1 to run it")
COLD_ON_A_NODE = ("go", "rust")


@pytest.mark.slow
@pytest.mark.xdist_group("ray-cluster")
@pytest.mark.parametrize("group", [
    pytest.param("quick", id="python+js+java+cpp"),
    pytest.param("cold", id="go+rust", marks=LONG)])
def test_through_ray_the_file_search_fails_and_the_reference_passes(
    cluster: LocalRayCluster, node_homes: list[Path], hx: Path, runner: ProgramRunner,
    tmp_path: Path, group: str,
) -> None:
    from codereval.api import evaluate, load_benchmark
    from codereval.evaluation.engine import default_env_root

    languages = [lang for lang in LANGUAGES if lang != "humaneval"
                 and (lang in COLD_ON_A_NODE) == (group == "cold")]
    tasks = [task_zero(lang, hx) for lang in languages]
    # The toolchains built here, shared with the nodes (each its own home otherwise builds
    # them again, fetching crates and modules).
    ctx = make_ctx(tmp_path / "local", wall_time=WALL_TIME)
    assert not runner.prepare(tasks, ctx)
    for home in node_homes:
        if not (home / "toolchains").exists():
            (home / "toolchains").symlink_to(default_env_root() / "toolchains")
    search = {lang: dict(ATTACKS[lang])[next(label for label, _ in ATTACKS[lang]
                                             if label.startswith("search files"))]
              for lang in languages}
    rows = [{"task_id": t.task_id, "index": 0, "code": t.reference} for t in tasks]
    rows += [{"task_id": t.task_id, "index": 1, "code": search[lang]}
             for lang, t in zip(languages, tasks, strict=True)]
    run = in_own_process(evaluate, load_benchmark(tasks), rows, run_dir=tmp_path / "ray",
                         executor="ray", ray_address=cluster.address, timeout=WALL_TIME)
    got = {(o.task_id, o.sample_index): o for o in run.outcomes}
    assert len(got) == 2 * len(tasks)
    problems = []
    for lang, task in zip(languages, tasks, strict=True):
        reference, attack = got[(task.task_id, 0)], got[(task.task_id, 1)]
        if reference.verdict is not Verdict.PASSED:
            problems.append(f"{lang} reference through Ray:\n{describe(reference)}")
        problems += check_attack(lang, "search files (ray)", attack)
        if attack.provenance.executor not in ("ray", "ray-warm"):
            problems.append(f"{lang}: not run by ray: {describe(attack)}")
    assert not problems, "\n\n".join(problems)
