package runtime

import (
	"embed"

	"weave/pseudostack"
	"weave/vmmap"
)

// files holds this package's C parts.
//
//go:embed internal.h init.c side.c advice.c interpose.c out.c profile.c safefile.c save.c summary.c leakscan.c leakreport.c exit.c timing.c
var files embed.FS

// parts lists the runtime's C parts in the order Source joins them into one
// translation unit. Headers (.h) are not emitted where they are listed but
// where a part first #includes them; every other part starts with
// #include "internal.h". Adding a part is one line here: a folder's C file
// (embedded by its own package, as pseudostack.Files is), placed after
// what it uses.
var parts = []part{
	file(files, "runtime", "internal.h"),
	file(pseudostack.Files, "pseudostack", "weave.h"),
	outOfLine(pseudostack.Files, "pseudostack", "weave.h"),
	file(pseudostack.Files, "pseudostack", "cct.c"),
	file(pseudostack.Files, "pseudostack", "thread.c"),
	file(pseudostack.Files, "pseudostack", "enter.c"),
	file(files, "runtime", "init.c"),
	file(files, "runtime", "side.c"),
	file(vmmap.Files, "vmmap", "vmmap.c"),
	file(files, "runtime", "advice.c"),
	file(files, "runtime", "interpose.c"),
	file(files, "runtime", "out.c"),
	file(files, "runtime", "profile.c"),
	file(files, "runtime", "safefile.c"),
	file(files, "runtime", "save.c"),
	file(files, "runtime", "summary.c"),
	file(files, "runtime", "leakscan.c"),
	file(files, "runtime", "leakreport.c"),
	file(files, "runtime", "exit.c"),
	file(files, "runtime", "timing.c"),
}
