module github.com/pystream/pystream/docs

go 1.26
