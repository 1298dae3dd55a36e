module goburn

go 1.19
