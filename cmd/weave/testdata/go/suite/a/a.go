package a

type T struct{ x [4]int }

var keep []*T

func Make(n int) int {
	for i := 0; i < n; i++ {
		keep = append(keep, &T{})
	}
	return len(keep)
}
