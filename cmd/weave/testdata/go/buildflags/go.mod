module example.com/buildflags

go 1.22
