package parse

import (
	"strings"
	"testing"
)

// TestMacrosFor: a pruned parse gets the predefined macros its builtin
// text names, those they name in turn, KeptMacros and the __STDC ones, in
// their order; not the others.
func TestMacrosFor(t *testing.T) {
	st := &dialectState{predefined: strings.Join([]string{
		"#define __STDC__ 1",
		"#define __OPTIMIZE__ 1",
		"#define __INT64_TYPE__ long int",
		"#define __INTMAX_TYPE__ __INT64_TYPE__",
		"#define __UINT8_C(c) c",
		"#define __linux__ 1",
		"#define __GNUC__ 12",
		"#define __SIZE_TYPE__ long unsigned int",
		"#define __STDC_VERSION__ 201710L",
		"",
	}, "\n")}
	got := st.macrosFor("typedef __INTMAX_TYPE__ intmax; __SIZE_TYPE__ f(void);\n")
	want := strings.Join([]string{
		"#define __STDC__ 1",
		"#define __INT64_TYPE__ long int",
		"#define __INTMAX_TYPE__ __INT64_TYPE__",
		"#define __GNUC__ 12",
		"#define __SIZE_TYPE__ long unsigned int",
		"#define __STDC_VERSION__ 201710L",
		"",
	}, "\n")
	if got != want {
		t.Errorf("macrosFor:\n%s\nwant:\n%s", got, want)
	}
}
