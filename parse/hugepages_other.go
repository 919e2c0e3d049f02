//go:build !linux

package parse

func adviseHugeHeap() (lo, hi uintptr) { return 0, 0 }
