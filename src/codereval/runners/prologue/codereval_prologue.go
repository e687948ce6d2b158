// Package codereval_prologue takes the run's completion marker from stdin before any code of the
// program runs, and prints it when the test binary's own main says the tests passed.
//
// Before: the program's package imports this one (a blank import in the import block we write;
// a Go sample cannot add imports), and Go initialises a package's imports before the package.
// Only the test binary's main (directly, or through TestMain as `go test` builds it) may
// announce: Done checks its caller, so a program calling TestMain itself gains nothing. The
// state is unexported, so no name in the program reaches it; reading the process's memory
// (/proc/self/mem) still can, as anything in-process can.
package codereval_prologue

import (
	"runtime"
	"syscall"
)

const capacity = 128

var (
	masked [capacity]byte
	pad    [capacity]byte
	size   int
	out    = -1
)

func init() {
	var held [capacity]byte
	got := 0
	for got < capacity {
		n, err := syscall.Read(0, held[got:])
		if err == syscall.EINTR {
			continue
		}
		if n <= 0 {
			break
		}
		got += n
	}
	var rest [256]byte
	for {
		if n, _ := syscall.Read(0, rest[:]); n <= 0 {
			break
		}
	}
	for size < got && held[size] != '\n' {
		size++
	}
	if random, err := syscall.Open("/dev/urandom", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err == nil {
		for filled := 0; filled < size; {
			n, err := syscall.Read(random, pad[filled:size])
			if n <= 0 || err != nil {
				break
			}
			filled += n
		}
		syscall.Close(random)
	}
	for i := 0; i < size; i++ {
		masked[i] = held[i] ^ pad[i]
		held[i] = 0
	}
	if null, err := syscall.Open("/dev/null", syscall.O_RDONLY, 0); err == nil {
		syscall.Dup3(null, 0, 0)
		syscall.Close(null)
	}
	if fd, err := syscall.Dup(1); err == nil {
		syscall.CloseOnExec(fd)
		out = fd
	}
}

// Done prints the marker when code is 0 (the tests passed) and the caller is the test binary's
// main, or a TestMain that main called.
func Done(code int) {
	if code != 0 || !calledByMain() {
		return
	}
	var line [capacity + 2]byte
	line[0] = '\n'
	for i := 0; i < size; i++ {
		line[i+1] = masked[i] ^ pad[i]
	}
	line[size+1] = '\n'
	syscall.Write(out, line[:size+2])
	for i := range line {
		line[i] = 0
	}
}

func calledByMain() bool {
	var pcs [8]uintptr
	// Skips runtime.Callers, calledByMain and Done.
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs[:])])
	first, more := frames.Next()
	if first.Function == "main.main" {
		return true
	}
	if !more || !hasSuffix(first.Function, ".TestMain") {
		return false
	}
	second, _ := frames.Next()
	return second.Function == "main.main"
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
