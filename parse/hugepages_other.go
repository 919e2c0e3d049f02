//go:build !linux

package parse

func adviseHugeHeap(bool) (lo, hi uintptr) { return 0, 0 }
