module example.com/onelayer

go 1.26.0

require github.com/pystream/pystream/log v0.0.0-00010101000000-000000000000

require golang.org/x/sys v0.48.0 // indirect

// Until PyStream's modules are published, build against a local clone.
// Drop this line once github.com/pystream/pystream/log@vX.Y.Z can be fetched.
replace github.com/pystream/pystream/log => ../../../log
