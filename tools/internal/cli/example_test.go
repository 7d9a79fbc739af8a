package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/pystream/pystream/tools/internal/cli"
)

// Run executes one pystream command line and returns the exit code; here
// `topic list` against a stand-in for the server's GET /api/topics.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"topics":[{"name":"orders","partition_count":3,"replication_factor":2}]}`)
	}))
	defer srv.Close()

	code := cli.Run([]string{"--server", srv.URL, "topic", "list"}, cli.Env{Stdout: os.Stdout, Getenv: func(string) string { return "" }})
	fmt.Println("exit", code)
	// Output:
	// TOPIC   PARTITIONS  REPLICATION-FACTOR
	// orders  3           2
	// exit 0
}
