module github.com/pystream/pystream/client

go 1.26

require (
	github.com/pystream/pystream/log v0.0.0-00010101000000-000000000000
	github.com/pystream/pystream/topic v0.0.0-00010101000000-000000000000
)

replace (
	github.com/pystream/pystream/log => ../log
	github.com/pystream/pystream/topic => ../topic
)
