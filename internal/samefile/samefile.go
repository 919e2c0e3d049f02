// Package samefile keeps a command from writing its output over one of its
// inputs: the check every weave command that writes makes first.
package samefile

import (
	"fmt"
	"os"
)

// Check returns gcc's error for an output that is the same file as one of
// the inputs (the same device and inode: a name such as ./x.c, a hard link
// or a symbolic link to the input is caught), so that nothing is written.
// An output that does not exist yet, or is not a regular file (/dev/null),
// and standard output ("" or "-") pass; so do inputs that cannot be read,
// whose own error comes when they are opened.
func Check(output string, inputs ...string) error {
	if output == "" || output == "-" {
		return nil
	}
	out, err := os.Stat(output)
	if err != nil || !out.Mode().IsRegular() {
		return nil
	}
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if fi, err := os.Stat(in); err == nil && os.SameFile(fi, out) {
			return fmt.Errorf("error: input file '%s' is the same as output file", in)
		}
	}
	return nil
}
