module example.com/known

go 1.22
