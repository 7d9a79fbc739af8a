// Command pystream-server serves the PyStream HTTP API.
//
// It is configured with PYSTREAM_* environment variables or a .env file in
// the working directory (run it with -h for the table), logs to stderr,
// and stops gracefully on SIGINT or SIGTERM: it finishes the requests in
// flight and exits 0. A second signal ends it at once.
//
// Exit status: 0 after a clean shutdown, 1 when it cannot serve (for
// example the address is in use), 2 for invalid configuration.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/pystream/pystream/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal now ends the process at once
	}()
	code := server.Main(ctx, os.Args[1:], os.Environ(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
