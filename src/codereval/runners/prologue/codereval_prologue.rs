// codereval's prologue for a Rust program, at the top of main.rs: takes the run's completion
// marker from stdin in a .preinit_array hook (the first code of the executable the dynamic loader
// runs; the build refuses a binary with any other such hook, or a GNU indirect function), through
// raw system calls (a `#[no_mangle] fn read` of the program's cannot see them). The state is
// private to this module, and only the one call in our main, found by its place in main.rs, may
// announce; reading the process's memory still can, as anything in-process can.
#[allow(dead_code, static_mut_refs, clippy::all)]
mod codereval_prologue {
    const CAPACITY: usize = 128;
    static mut MASKED: [u8; CAPACITY] = [0; CAPACITY];
    static mut PAD: [u8; CAPACITY] = [0; CAPACITY];
    static mut SIZE: usize = 0;
    static mut OUT: isize = -1;
    const LINE: u32 = @LINE@;
    const COLUMN: u32 = @COLUMN@;

    #[cfg(target_arch = "x86_64")]
    const NR: (isize, isize, isize, isize, isize, isize, isize) = (0, 1, 3, 72, 257, 292, 318);
    #[cfg(target_arch = "aarch64")]
    const NR: (isize, isize, isize, isize, isize, isize, isize) = (63, 64, 57, 25, 56, 24, 278);

    #[cfg(target_arch = "x86_64")]
    unsafe fn sys(n: isize, a: isize, b: isize, c: isize) -> isize {
        let r: isize;
        ::core::arch::asm!("syscall", inlateout("rax") n => r, in("rdi") a, in("rsi") b,
                           in("rdx") c, lateout("rcx") _, lateout("r11") _, options(nostack));
        r
    }

    #[cfg(target_arch = "aarch64")]
    unsafe fn sys(n: isize, a: isize, b: isize, c: isize) -> isize {
        let r: isize;
        ::core::arch::asm!("svc 0", in("x8") n, inlateout("x0") a => r, in("x1") b, in("x2") c,
                           options(nostack));
        r
    }

    extern "C" fn take(_: i32, _: *const *const u8, _: *const *const u8) {
        let (read, _, close, fcntl, openat, dup3, getrandom) = NR;
        unsafe {
            let mut held = [0u8; CAPACITY];
            let mut got = 0usize;
            while got < CAPACITY {
                let n = sys(read, 0, held.as_mut_ptr().add(got) as isize, (CAPACITY - got) as isize);
                if n == -4 {
                    continue;
                }
                if n <= 0 {
                    break;
                }
                got += n as usize;
            }
            let mut rest = [0u8; 256];
            while sys(read, 0, rest.as_mut_ptr() as isize, 256) > 0 {}
            let mut size = 0usize;
            while size < got && held[size] != b'\n' {
                size += 1;
            }
            let pad = &mut *::core::ptr::addr_of_mut!(PAD);
            let mut filled = 0usize;
            while filled < size {
                let n = sys(getrandom, pad.as_mut_ptr().add(filled) as isize, (size - filled) as isize, 0);
                if n <= 0 {
                    break;
                }
                filled += n as usize;
            }
            let masked = &mut *::core::ptr::addr_of_mut!(MASKED);
            for i in 0..size {
                masked[i] = held[i] ^ pad[i];
                ::core::ptr::write_volatile(&mut held[i], 0);
            }
            *::core::ptr::addr_of_mut!(SIZE) = size;
            let null = sys(openat, -100, b"/dev/null\0".as_ptr() as isize, 0);
            if null >= 0 {
                sys(dup3, null, 0, 0);
                sys(close, null, 0, 0);
            }
            *::core::ptr::addr_of_mut!(OUT) = sys(fcntl, 1, 1030, 3);
        }
    }

    #[used]
    #[link_section = ".preinit_array"]
    static PREINIT: extern "C" fn(i32, *const *const u8, *const *const u8) = take;

    #[track_caller]
    pub(crate) fn done() {
        let at = ::std::panic::Location::caller();
        if at.file() != "main.rs" || at.line() != LINE || at.column() != COLUMN {
            return;
        }
        let _ = ::std::io::Write::flush(&mut ::std::io::stdout());
        unsafe {
            let size = *::core::ptr::addr_of!(SIZE);
            let masked = &*::core::ptr::addr_of!(MASKED);
            let pad = &*::core::ptr::addr_of!(PAD);
            let mut line = [0u8; CAPACITY + 2];
            line[0] = b'\n';
            line[size + 1] = b'\n';
            for i in 0..size {
                line[i + 1] = masked[i] ^ pad[i];
            }
            sys(NR.1, *::core::ptr::addr_of!(OUT), line.as_ptr() as isize, (size + 2) as isize);
            for byte in line.iter_mut() {
                ::core::ptr::write_volatile(byte, 0);
            }
        }
    }
}
