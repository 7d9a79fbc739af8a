module github.com/pystream/pystream/cluster

go 1.26.0

require (
	github.com/pystream/pystream/client v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/log v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/topic v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.11.1
	golang.org/x/sys v0.48.0
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/pystream/pystream/client => ../client
	github.com/pystream/pystream/log => ../log
	github.com/pystream/pystream/topic => ../topic
)
