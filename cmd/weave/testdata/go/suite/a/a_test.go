package a

import "testing"

func TestMake(t *testing.T) {
	if Make(100) != 100 {
		t.Fatal("bad")
	}
}
