module example.com/inlnew

go 1.22
