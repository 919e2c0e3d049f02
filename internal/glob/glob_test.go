package glob

import "testing"

func TestFile(t *testing.T) {
	for _, tc := range []struct {
		glob, file string
		want       bool
	}{
		{"third_party/**", "third_party/z/x.c", true},
		{"third_party/**", "/src/p/third_party/x.c", true},
		{"third_party/**", "src/third_partyx/x.c", false},
		{"**/xalloc.c", "xalloc.c", true},
		{"**/xalloc.c", "/a/b/xalloc.c", true},
		{"*.h", "/usr/include/stdio.h", true},
		{"src/*.c", "src/a/b.c", false},
		{"l?ex.c", "llex.c", true},
		{"[lm]*.c", "/lua/src/lmem.c", true},
		{"[!l]*.c", "/lua/src/lmem.c", false},
	} {
		if got := File(tc.glob, tc.file); got != tc.want {
			t.Errorf("File(%q, %q) = %v, want %v", tc.glob, tc.file, got, tc.want)
		}
	}
}
