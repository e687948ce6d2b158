// codereval's prologue for a C++ program, compiled once per toolchain and linked before the
// program: it takes the run's completion marker from stdin before any code of the program runs,
// calls the test's main (renamed codereval_test_main) from its own main, and prints the marker
// only when that returned.
//
// Before: a .preinit_array hook, the first code of the executable the dynamic loader runs (the
// build refuses a binary with any other such hook, or a GNU indirect function, whose resolver
// runs even earlier). Raw system calls: a program that defines read() or write() of its own
// cannot see them. The state has internal linkage in this translation unit, so no name in the
// program reaches it; reading the process's memory still can, as anything in-process can.
#include <cstddef>

int codereval_test_main();

namespace {

constexpr long kSize = 128;
unsigned char masked[kSize];
unsigned char pad[kSize];
long size = 0;
int out = -1;

#if defined(__x86_64__)
enum : long { SYS_READ = 0, SYS_WRITE = 1, SYS_CLOSE = 3, SYS_FCNTL = 72, SYS_OPENAT = 257,
              SYS_DUP3 = 292, SYS_GETRANDOM = 318 };
long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
    long r;
    register long r10 __asm__("r10") = d;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                     : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
enum : long { SYS_READ = 63, SYS_WRITE = 64, SYS_CLOSE = 57, SYS_FCNTL = 25, SYS_OPENAT = 56,
              SYS_DUP3 = 24, SYS_GETRANDOM = 278 };
long sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
    return x0;
}
#else
#error "codereval: no raw system calls for this architecture"
#endif

void take_marker(int, char**, char**) {
    unsigned char held[kSize];
    long got = 0;
    while (got < kSize) {
        long count = sys(SYS_READ, 0, reinterpret_cast<long>(held + got), kSize - got);
        if (count == -4) continue;  // EINTR
        if (count <= 0) break;
        got += count;
    }
    unsigned char rest[256];
    while (sys(SYS_READ, 0, reinterpret_cast<long>(rest), sizeof rest) > 0) {
    }
    while (size < got && held[size] != '\n') ++size;
    long filled = 0;
    while (filled < size) {
        long count = sys(SYS_GETRANDOM, reinterpret_cast<long>(pad + filled), size - filled, 0);
        if (count <= 0) break;
        filled += count;
    }
    for (long i = 0; i < size; ++i) {
        masked[i] = held[i] ^ pad[i];
        *static_cast<volatile unsigned char*>(held + i) = 0;
    }
    long null = sys(SYS_OPENAT, -100, reinterpret_cast<long>("/dev/null"), 0);  // AT_FDCWD
    if (null >= 0) {
        sys(SYS_DUP3, null, 0, 0);
        sys(SYS_CLOSE, null);
    }
    out = static_cast<int>(sys(SYS_FCNTL, 1, 1030, 3));  // F_DUPFD_CLOEXEC, above 2
}

__attribute__((section(".preinit_array"), used))
void (*const codereval_preinit)(int, char**, char**) = take_marker;

}  // namespace

extern "C" int fflush(void*);

int main() {
    codereval_test_main();
    fflush(nullptr);
    unsigned char line[kSize + 2];
    line[0] = '\n';
    for (long i = 0; i < size; ++i) line[i + 1] = masked[i] ^ pad[i];
    line[size + 1] = '\n';
    sys(SYS_WRITE, out, reinterpret_cast<long>(line), size + 2);
    for (long i = 0; i < size + 2; ++i) *static_cast<volatile unsigned char*>(line + i) = 0;
    return 0;
}
