// Command pystream is the command-line tool of PyStream. See the package
// documentation of github.com/pystream/pystream/tools and docs/cli.md.
package main

import (
	"os"

	"github.com/pystream/pystream/tools/internal/cli"
)

// version is set at build time:
//
//	go build -ldflags "-X main.version=v0.1.0" ./cmd/pystream
var version = "dev"

func main() {
	os.Exit(cli.Run(os.Args[1:], cli.Env{Version: version}))
}
