package rt

import (
	"os"
	"syscall"
)

// readFlags open a file the runtime only peeks at: never through a link,
// never waiting on a FIFO planted at its name.
const readFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// streamOut opens what WEAVE_OUT names when it is no file to create, as
// the C runtime's device_out: a character device (/dev/null), or a
// descriptor (/dev/stdout, /dev/fd/N: fdName) that is a pipe, terminal or
// socket, never a regular file the program may have opened at that
// number (ENOSTR). ok false: path names a file.
func streamOut(path string) (f *os.File, ok bool, err error) {
	if n := fdName(path); n >= 0 {
		var st syscall.Stat_t
		if err := syscall.Fstat(n, &st); err != nil {
			return nil, true, err
		}
		if m := st.Mode & syscall.S_IFMT; m != syscall.S_IFIFO && m != syscall.S_IFCHR && m != syscall.S_IFSOCK {
			return nil, true, syscall.ENOSTR
		}
		d, err := syscall.Dup(n)
		if err != nil {
			return nil, true, err
		}
		syscall.CloseOnExec(d)
		return os.NewFile(uintptr(d), path), true, nil
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil, false, nil
	}
	f, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NOCTTY, 0)
	return f, true, err
}

// writeStderr writes the summary on descriptor 2 with a plain write(2): a
// reader gone (prog 2>&1 | head) is an EPIPE, where os.Stderr's write
// would end the program with SIGPIPE, as the Go runtime does for a broken
// pipe on descriptors 1 and 2.
func writeStderr(s string) {
	for b := []byte(s); len(b) > 0; {
		n, err := syscall.Write(2, b)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		b = b[n:]
	}
}
