package b

import "testing"

func TestWords(t *testing.T) {
	if len(Words(50)) != 50 {
		t.Fatal("bad")
	}
}
