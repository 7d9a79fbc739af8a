package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testVersion is stamped into the test binary with -ldflags, as a release
// build would be.
const testVersion = "v9.9.9-test"

// pystreamBin is the pystream binary built once for the whole test run.
var pystreamBin string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "pystream-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	pystreamBin = filepath.Join(dir, "pystream")
	build := exec.Command(goTool(), "build", "-ldflags", "-X main.version="+testVersion, "-o", pystreamBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build pystream:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool returns the go command: go test puts its own GOROOT/bin first on
// the PATH of the tests it runs.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

// result is what one run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// run executes the binary with args and stdin in dir ("" for the current
// directory).
func run(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	return runIn(t, dir, []string{"PYSTREAM_SERVER="}, stdin, args...)
}

// runEnv executes the binary with extra environment variables.
func runEnv(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	return runIn(t, "", env, stdin, args...)
}

func runIn(t *testing.T, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(pystreamBin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// fixedClock returns a Now for log.Options that starts at a fixed instant
// and advances one millisecond per call, so logs are byte-for-byte
// reproducible.
func fixedClock() func() time.Time {
	t := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

// writeLog creates a log at path holding payloads, stamped by a fixed clock.
func writeLog(t *testing.T, path string, payloads ...string) []log.Record {
	t.Helper()
	l, err := log.OpenWithOptions(path, log.Options{Now: fixedClock()})
	require.NoError(t, err)
	defer func() { require.NoError(t, l.Close()) }()
	var recs []log.Record
	for _, p := range payloads {
		r, err := l.Append([]byte(p))
		require.NoError(t, err)
		recs = append(recs, r)
	}
	return recs
}

// writeReplica creates a follower log at path holding exactly recs.
func writeReplica(t *testing.T, path string, recs []log.Record) {
	t.Helper()
	l, err := log.Open(path)
	require.NoError(t, err)
	require.NoError(t, l.AppendRecords(recs))
	require.NoError(t, l.Close())
}

// appendBytes appends raw bytes to a file, to build damage byte by byte.
func appendBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write(b)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}

func readDir(dir string) ([]os.DirEntry, error) { return os.ReadDir(dir) }
