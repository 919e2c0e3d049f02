module forms

go 1.24
