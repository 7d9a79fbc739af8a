module github.com/pystream/pystream/server

go 1.26

require github.com/kelseyhightower/envconfig v1.4.0

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/stretchr/testify v1.11.1
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

replace (
	github.com/pystream/pystream/client => ../client
	github.com/pystream/pystream/cluster => ../cluster
	github.com/pystream/pystream/log => ../log
	github.com/pystream/pystream/topic => ../topic
)
