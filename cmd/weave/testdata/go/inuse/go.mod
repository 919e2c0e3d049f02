module example.com/inuse

go 1.22
