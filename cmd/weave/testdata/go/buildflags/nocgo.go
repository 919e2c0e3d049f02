package main

// newItem is woven like the rest of the package: a file named so is no
// cgo file.
func newItem(i int) *item { return &item{i} }
