package server_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/pystream/pystream/server"
)

// Configuration comes from PYSTREAM_* variables; anything unset or empty
// keeps its default, and a typo is reported rather than ignored.
func ExampleLoad() {
	environ := []string{"PYSTREAM_PORT=9000", "PYSTREAM_LOG_LEVEL=warning", "PYSTREAM_LOGFORMAT=json"}
	cfg, unknown, err := server.Load(environ, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Addr(), cfg.LogLevel, cfg.LogFormat)
	for _, u := range unknown {
		fmt.Printf("unknown %s, did you mean %s?\n", u.Name, u.Suggestion)
	}
	// Output:
	// 127.0.0.1:9000 WARNING text
	// unknown PYSTREAM_LOGFORMAT, did you mean PYSTREAM_LOG_FORMAT?
}

// An invalid value names the variable and what it allows.
func ExampleLoad_invalid() {
	_, _, err := server.Load([]string{"PYSTREAM_PORT=010x"}, "")
	var ce *server.ConfigError
	if errors.As(err, &ce) {
		fmt.Printf("%s=%q: allowed: %s\n", ce.Var, ce.Value, ce.Allowed)
	}
	// Output:
	// PYSTREAM_PORT="010x": allowed: a decimal integer from 1 to 65535
}

// The health check, through the server's handler.
func ExampleServer_Handler() {
	dir, err := os.MkdirTemp("", "pystream-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cfg := server.Defaults()
	cfg.DataDir = dir // the embedded cluster lives here
	srv, err := server.New(cfg, server.NewLogger(io.Discard, cfg))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://localhost:8000/api/health", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 200 {"status":"ok","service":"pystream"}
}
