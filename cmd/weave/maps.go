package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/vmmap"
)

// mapsCommand prints the segments of a running process's memory map.
var mapsCommand = &cli.Command{
	Name:      "maps",
	Usage:     "print the memory segments of a running process",
	ArgsUsage: "PID",
	Description: "Reads /proc/PID/maps and prints the process's virtual memory by segment: the\n" +
		"program's text, rodata, data and bss, the heap, anonymous maps, the stacks, each\n" +
		"shared library's text and data, vdso/vvar and the rest.",
	Action: runMaps,
}

func runMaps(c *cli.Context) error {
	if c.NArg() != 1 {
		return misuse(c, "want one process id")
	}
	pid := c.Args().First()
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
		return misuse(c, "%q is not a process id", pid)
	}
	maps, exe, err := vmmap.ReadProc(pid)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("maps: no process %s", pid)
	}
	if err != nil {
		return fmt.Errorf("maps: %v", err)
	}
	if len(maps) == 0 {
		return fmt.Errorf("maps: process %s has no memory map of its own%s", pid, noMapWhy(pid))
	}
	segs := vmmap.Classify(maps, exe)
	w := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "segment\tstart\tsize\tmaps\t\n")
	for _, s := range segs {
		fmt.Fprintf(w, "%s\t%#x\t%s\t%d\t\n", s.Name(), s.Start, vmmap.Bytes(s.Size), s.Maps)
	}
	fmt.Fprintf(w, "total\t\t%s\t%d\t\n", vmmap.Bytes(vmmap.Total(segs)), len(maps))
	return w.Flush()
}

// noMapWhy is why process pid has no maps, from /proc/PID/stat: ": a
// kernel thread" (PF_KTHREAD in its flags), ": a zombie ...", or "" (it
// has just exited).
func noMapWhy(pid string) string {
	st, _ := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	var f []string                                      // state ppid pgrp session tty tpgid flags ...
	if i := bytes.LastIndex(st, []byte(") ")); i >= 0 { // after the command name, which may hold ") "
		f = strings.Fields(string(st[i+2:]))
	}
	if len(f) < 7 {
		return ""
	}
	const pfKthread = 0x00200000
	if flags, err := strconv.ParseUint(f[6], 10, 64); err == nil && flags&pfKthread != 0 {
		return ": a kernel thread"
	}
	if f[0] == "Z" || f[0] == "X" {
		return ": it has exited (a zombie: its parent has not waited for it)"
	}
	return ": it is exiting"
}
