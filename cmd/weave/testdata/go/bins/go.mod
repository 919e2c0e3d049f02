module example.com/bins

go 1.22
