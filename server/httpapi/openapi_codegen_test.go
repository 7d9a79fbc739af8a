package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The generator test: a Go client generated from the served /openapi.json
// by oapi-codegen with its default settings builds, and runs a short tour
// against a live server. The generator is a test-only tool: it runs as
// `go run module@version` in a temporary module, as the Makefile runs
// staticcheck, and is never a requirement of this module's go.mod.
const (
	oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	// codegenGoMod pins what the generated code imports with default
	// settings (the client's runtime, the echo server, the embedded
	// spec's kin-openapi), so the build does not follow new releases.
	codegenGoMod = `module pystream.test/openapiclient

go 1.26

require (
	github.com/getkin/kin-openapi v0.153.0
	github.com/labstack/echo/v4 v4.16.5
	github.com/oapi-codegen/runtime v1.9.0
)
`
	// codegenRun says how to run the test where it skipped.
	codegenRun = "needs the go command and the Go module proxy; run it with " +
		"`cd server && go test -run TestOpenAPIGeneratedGoClient -v .` on a machine that has both"
)

// codegenTour uses the generated client the way the tour of
// docs/phase-6-network-api.md does: create, produce, fetch, commit, a
// refused request, HEAD. It prints "tour ok" or exits 1 with the reason.
const codegenTour = `package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"pystream.test/openapiclient/api"
)

func check(ok bool, format string, args ...any) {
	if !ok {
		fmt.Printf(format+"\n", args...)
		os.Exit(1)
	}
}

func main() {
	ctx := context.Background()
	c, err := api.NewClientWithResponses(os.Args[1])
	check(err == nil, "client: %v", err)

	health, err := c.GetHealthWithResponse(ctx)
	check(err == nil && health.JSON200 != nil && health.JSON200.Status == api.Ok, "health: %v %s", err, health.Body)

	created, err := c.CreateTopicWithResponse(ctx, api.CreateTopicJSONRequestBody{Name: "tour", Partitions: 1, ReplicationFactor: 2})
	check(err == nil && created.JSON201 != nil && created.JSON201.Name == "tour", "create: %v %s", err, created.Body)

	produced, err := c.ProduceRecordsWithResponse(ctx, "tour", nil, api.ProduceRecordsJSONRequestBody{
		Records: []api.ProduceRecord{{Key: &[]byte{'k'}, Value: []byte("hello")}, {Value: []byte("world")}}})
	check(err == nil && produced.JSON200 != nil && len(produced.JSON200.Records) == 2, "produce: %v %s", err, produced.Body)
	r := produced.JSON200.Records[0]
	check(r.TimestampMs == r.Timestamp/1e6, "timestamp_ms %d is not timestamp %d in ms", r.TimestampMs, r.Timestamp)

	fetched, err := c.FetchRecordsWithResponse(ctx, "tour", 0, &api.FetchRecordsParams{})
	check(err == nil && fetched.JSON200 != nil && len(fetched.JSON200.Records) == 2, "fetch: %v %s", err, fetched.Body)
	first := fetched.JSON200.Records[0] // key and value are nullable: pointers
	check(first.Value != nil && string(*first.Value) == "hello", "fetched value %v", first.Value)
	check(first.Key != nil && string(*first.Key) == "k", "fetched key %v", first.Key)
	check(fetched.JSON200.Records[1].Key == nil, "a record without a key fetched with %v", fetched.JSON200.Records[1].Key)
	check(fetched.JSON200.Records[1].Timestamp == produced.JSON200.Records[1].Timestamp, "timestamps differ")

	topic, err := c.GetTopicWithResponse(ctx, "tour")
	check(err == nil && topic.JSON200 != nil, "topic: %v %s", err, topic.Body)
	logEnd := topic.JSON200.Partitions[0].LogEnd // required and nullable: a pointer
	check(logEnd != nil && *logEnd == 2, "log_end %v", logEnd)

	never, err := c.GetConsumerOffsetWithResponse(ctx, "billing", "tour", 0)
	check(err == nil && never.JSON200 != nil && never.JSON200.Offset == nil, "offset before a commit: %v %s", err, never.Body)
	committed, err := c.CommitConsumerOffsetWithResponse(ctx, "billing", "tour", 0, api.CommitConsumerOffsetJSONRequestBody{Offset: 2})
	check(err == nil && committed.JSON200 != nil && *committed.JSON200.Offset == 2, "commit: %v %s", err, committed.Body)

	refused, err := c.CreateTopicWithResponse(ctx, api.CreateTopicJSONRequestBody{Name: "tour", Partitions: 0, ReplicationFactor: 1})
	check(err == nil && refused.JSON400 != nil && refused.JSON400.Error.Code == "invalid_argument", "bad create: %v %s", err, refused.Body)

	head, err := c.HeadTopicWithResponse(ctx, "tour")
	check(err == nil && head.StatusCode() == http.StatusOK && len(head.Body) == 0, "head: %v", err)
	fmt.Println("tour ok")
}
`

// offline reports whether a go command's output says it could not reach
// the module proxy (or was told not to).
func offline(out string) bool {
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "i/o timeout", "TLS handshake",
		"GOPROXY=off", "module lookup disabled", "GOFLAGS=-mod=vendor", "cannot find module providing package",
		"proxyconnect", "network is unreachable", "Service Unavailable"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// docs/phase-6-network-api.md § Documentation pages: client generators
// read /openapi.json. Reference: oapi-codegen names an operation's types
// <OperationId>Response, <OperationId>Params, ...; an operation id that
// makes one of them equal a schema name (fetch: FetchResponse) does not
// compile. The client generated with default settings builds and runs the
// tour against this server. Skipped with -short, or when the go command or
// the module proxy cannot be reached (cold: about a minute of downloads;
// warm: a few seconds).
func TestOpenAPIGeneratedGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: " + codegenRun)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: " + codegenRun)
	}
	r := startServer(t, t.TempDir(), 3)
	resp, err := http.Get(r.base + "/openapi.json")
	require.NoError(t, err)
	served, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "api"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openapi.json"), served, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(codegenGoMod), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(codegenTour), 0o644))

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir = dir
		// Outside this workspace; may add go.sum lines to the temporary
		// module; no toolchain download.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false", "GOTOOLCHAIN=local")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	step := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || offline(out)) {
			t.Skipf("go %s: %v\n%s\n%s", args[0], err, out, codegenRun)
		}
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return out
	}

	// Default settings: no -generate, so types, client, echo server and
	// the embedded spec, as the reader ran it.
	step("run", oapiCodegen, "-package", "api", "-o", filepath.Join("api", "api.gen.go"), "openapi.json")
	step("build", "-o", "tour", ".")
	out := step("vet", "./...")
	require.Empty(t, strings.TrimSpace(out))

	tour := exec.CommandContext(ctx, filepath.Join(dir, "tour"), r.base)
	got, err := tour.CombinedOutput()
	require.NoError(t, err, "%s", got)
	require.Equal(t, "tour ok\n", string(got))
}
