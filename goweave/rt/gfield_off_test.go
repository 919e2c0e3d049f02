//go:build !weavegfield

package rt

import "testing"

func benchGField(b *testing.B) {}
