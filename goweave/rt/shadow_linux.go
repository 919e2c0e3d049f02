package rt

import (
	"os"
	"syscall"
	"unsafe"
)

// mapShadow maps n bytes of zeroes outside the Go heap, reserving no swap
// (only the pages written take memory); nil if it cannot.
func mapShadow(n int) unsafe.Pointer {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// dumpPath is the heap dump's name, built outside the heap.
var dumpPath [4096]byte

// dumpFile opens a new file for the heap dump without allocating (a block
// allocated at exit before the dump, live in it, could be where a freed
// woven block was): in $TMPDIR (not in a set-id program) or /tmp, at a
// random name, created exclusively, readable by the owner only, and
// unlinked at once; -1 if it cannot.
func dumpFile() int {
	dir := os.Getenv("TMPDIR")
	if dir == "" || len(dir) > 3000 || syscall.Getuid() != syscall.Geteuid() || syscall.Getgid() != syscall.Getegid() {
		dir = "/tmp"
	}
	n := copy(dumpPath[:], dir)
	n += copy(dumpPath[n:], "/.weave-heap-")
	var r [8]byte
	rfd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&urandom[0])), syscall.O_RDONLY|syscall.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return -1
	}
	got, _, e := syscall.Syscall(syscall.SYS_READ, rfd, uintptr(unsafe.Pointer(&r[0])), 8)
	syscall.Syscall(syscall.SYS_CLOSE, rfd, 0, 0)
	if e != 0 || got != 8 {
		return -1
	}
	for _, b := range r {
		dumpPath[n], dumpPath[n+1] = "0123456789abcdef"[b>>4], "0123456789abcdef"[b&15]
		n += 2
	}
	dumpPath[n] = 0
	p := uintptr(unsafe.Pointer(&dumpPath[0]))
	fd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, atFDCWD, p,
		syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600, 0, 0)
	if e != 0 {
		return -1
	}
	syscall.Syscall(syscall.SYS_UNLINKAT, atFDCWD, p, 0)
	return int(fd)
}

const atFDCWD = ^uintptr(99) // AT_FDCWD, -100

var urandom = [...]byte{'/', 'd', 'e', 'v', '/', 'u', 'r', 'a', 'n', 'd', 'o', 'm', 0}
