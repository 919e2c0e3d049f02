package weave

import "testing"

func TestSelection(t *testing.T) {
	s := Selection{Include: []string{"lua*"}, Exclude: []string{"luaH_*"}}
	for name, want := range map[string]bool{"luaC_newobj": false, "luaH_new": true, "main": true} {
		if got := s.excluded(name, "x.c"); got != want {
			t.Errorf("excluded(%s) = %v, want %v", name, got, want)
		}
	}
}
