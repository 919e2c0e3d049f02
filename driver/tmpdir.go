package driver

import (
	"os"
	"sync"

	"syscall"
)

// tempDir is where weave cc makes its temporary files: the first of
// $TMPDIR, $TMP, $TEMP, /var/tmp, /usr/tmp and /tmp that is a directory
// it may write, as gcc chooses its own (libiberty's choose_tmpdir): a
// TMPDIR that does not exist fails neither gcc nor weave cc.
var tempDir = sync.OnceValue(func() string {
	for _, d := range []string{os.Getenv("TMPDIR"), os.Getenv("TMP"), os.Getenv("TEMP"), "/var/tmp", "/usr/tmp", "/tmp"} {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && syscall.Access(d, 2|1) == nil {
			return d
		}
	}
	return os.TempDir() // none: the error names $TMPDIR or /tmp
})
