package pseudostack

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// ABI is weave.h's ABI number, as its first line states it: "(ABI N)".
// It changes when the layout woven code relies on changes other than by
// appending (a field of __weave_thread moved, an argument added).
var ABI = sync.OnceValue(func() int {
	m := regexp.MustCompile(`^/\* weave\.h: .*\(ABI (\d+)\)`).FindStringSubmatch(Header())
	if m == nil {
		panic("pseudostack: weave.h's first line states no ABI number")
	}
	n, _ := strconv.Atoi(m[1])
	return n
})

// ABIMark returns the symbol the runtime defines for the ABI it speaks and
// a woven x86-64 object references (weave/weave.go, needsRuntime): linked
// with a runtime of another ABI, the object then fails to link with an
// undefined reference whose name says what to do, instead of running
// with fields read at the wrong places.
func ABIMark() string {
	return fmt.Sprintf("__weave_abi_%d__woven_by_another_weave__rebuild_it", ABI())
}
