module github.com/pystream/pystream/tools

go 1.26

require (
	github.com/pystream/pystream/server v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/cluster v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/client v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/topic v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/log v0.0.0-00010101000000-000000000000
)

replace (
	github.com/pystream/pystream/server => ../server
	github.com/pystream/pystream/cluster => ../cluster
	github.com/pystream/pystream/client => ../client
	github.com/pystream/pystream/topic => ../topic
	github.com/pystream/pystream/log => ../log
)
