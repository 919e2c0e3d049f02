//go:build weavegfield

package rt

import (
	"testing"
	"unsafe"
)

// glsGet and glsSet read and write a field woven into the runtime's g
// (orchestrion's way); go run ./goweave/gobench -gls builds with the
// runtime patched by an overlay that pushes them here.
func glsGet() unsafe.Pointer
func glsSet(unsafe.Pointer)

//go:noinline
func leafGField(i int) {
	defer enterWith((*G)(glsGet()), fBench).Exit()
	sink += i
}

func benchGField(b *testing.B) {
	b.Run("g-field", func(b *testing.B) {
		defer Enter(fA).Exit()
		glsSet(unsafe.Pointer(current()))
		defer cpuPerOp(b)()
		for i := 0; b.Loop(); i++ {
			leafGField(i)
		}
	})
}
