package b

import "strings"

func Words(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, strings.Repeat("x", i%7)+"y")
	}
	return out
}
