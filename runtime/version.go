package runtime

import (
	"regexp"
	"strconv"
)

// ABI is the version of the interface between woven code and the
// runtime, RT_ABI in internal.h (read from there, its one definition);
// profiles carry it as M runtime. 0 if internal.h does not define it.
func ABI() int {
	b, _ := files.ReadFile("internal.h")
	m := regexp.MustCompile(`(?m)^#define RT_ABI (\d+)$`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
