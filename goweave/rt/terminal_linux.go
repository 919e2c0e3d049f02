package rt

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal reports whether f is a terminal (the TCGETS ioctl succeeds).
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return e == 0
}
