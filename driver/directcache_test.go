package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestVolatile: the one-pass scan answers as a search for each marker
// does, on the system's headers and on texts made to trip it (runs of
// underscores, a marker at the end, a probe in a system header).
func TestVolatile(t *testing.T) {
	contains := func(b []byte, system bool) bool {
		for _, m := range []string{"__DATE__", "__TIME__", "__TIMESTAMP__"} {
			if bytes.Contains(b, []byte(m)) {
				return true
			}
		}
		return !system && (bytes.Contains(b, []byte("__has_include")) || bytes.Contains(b, []byte("__has_embed")))
	}
	texts := []string{"", "_", "__", "___", "__DATE_", "x___DATE__", "____TIME__ y", "__TIMESTAMP_", "a__TIMESTAMP__",
		"#if __has_include(<x.h>)", "#if ___has_include_next(<x.h>)", "__has_embed", "__has_includ", "__DAT__TIME__",
		"__func__ __LINE__ __FILE__", "__DATE", "_ _DATE__"}
	for _, s := range texts {
		for _, system := range []bool{false, true} {
			if got, want := volatile([]byte(s), system), contains([]byte(s), system); got != want {
				t.Errorf("volatile(%q, %v) = %v, want %v", s, system, got, want)
			}
		}
	}
	headers, _ := filepath.Glob("/usr/include/*.h")
	more, _ := filepath.Glob("/usr/include/*/*.h")
	headers = append(headers, more...)
	if len(headers) < 50 {
		t.Fatalf("%d headers in /usr/include", len(headers))
	}
	found := 0
	for _, h := range headers {
		b, err := os.ReadFile(h)
		if err != nil {
			continue
		}
		for _, system := range []bool{false, true} {
			got, want := volatile(b, system), contains(b, system)
			if got != want {
				t.Errorf("%s (system %v): volatile %v, want %v", h, system, got, want)
			}
			if got {
				found++
			}
		}
	}
	if found == 0 {
		t.Errorf("no header of %d probes or names the date", len(headers))
	}
}
