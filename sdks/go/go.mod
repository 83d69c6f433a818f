module github.com/flagops/flagops/sdks/go

go 1.19
