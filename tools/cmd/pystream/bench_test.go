package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pystream/pystream/log/segment"
	"github.com/stretchr/testify/require"
)

// perfLine is the final line of kafka-producer-perf-test (docs/cli.md).
var perfLine = regexp.MustCompile(`^(\d+) records sent, ([0-9.]+) records/sec \(([0-9.]+) MB/sec\), ([0-9.]+) ms avg latency, ([0-9.]+) ms max latency, ([0-9.]+) ms 50th, ([0-9.]+) ms 95th, ([0-9.]+) ms 99th, ([0-9.]+) ms 99\.9th\.\n$`)

// TestCLIBenchLog: bench log appends every record and prints the final line
// in the kafka-producer-perf-test shape, percentiles in order.
func TestCLIBenchLog(t *testing.T) {
	dir := t.TempDir()
	r := run(t, "", "", "bench", "log", "--records", "200", "--concurrency", "2", "--batch", "3", "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr, "no progress when stderr is not a terminal")
	m := perfLine.FindStringSubmatch(r.stdout)
	require.NotNil(t, m, r.stdout)
	require.Equal(t, "200", m[1])
	var v [9]float64
	for i := 2; i <= 9; i++ {
		f, err := strconv.ParseFloat(m[i], 64)
		require.NoError(t, err)
		v[i-1] = f
	}
	require.Greater(t, v[1], 0.0, "records/sec")
	require.LessOrEqual(t, v[5], v[6], "p50 <= p95")
	require.LessOrEqual(t, v[6], v[7], "p95 <= p99")
	require.LessOrEqual(t, v[7], v[8], "p99 <= p99.9")
	require.LessOrEqual(t, v[8], v[4], "p99.9 <= max")
	entries, err := readDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the scratch directory is removed")

	r = run(t, "", "", "bench", "log", "--records", "50", "--json", "--dir", dir)
	require.Equal(t, 0, r.code, r.stderr)
	var got struct {
		Benchmark string `json:"benchmark"`
		Records   int64  `json:"records"`
		Bytes     int64  `json:"bytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, "log", got.Benchmark)
	require.Equal(t, int64(50), got.Records)
	require.Equal(t, int64(5000), got.Bytes)
}

// TestCLIBenchLogInterrupt: Ctrl-C (SIGINT) during bench log stops it,
// removes its scratch directory and exits 1 saying how far it got, instead
// of dying with the scratch log left behind.
func TestCLIBenchLogInterrupt(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(pystreamBin, "bench", "log", "--records", "100000000", "--dir", dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	// Wait (bounded) until appends have begun: the scratch log's first
	// segment has data.
	deadline := time.Now().Add(15 * time.Second)
	for {
		logs, _ := filepath.Glob(filepath.Join(dir, "*", "partition-000000", segment.SegmentFileName(0)))
		if len(logs) == 1 {
			if fi, err := os.Stat(logs[0]); err == nil && fi.Size() > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("bench log wrote nothing within 15s: %s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	interruptWantExit1(t, cmd, &errOut, "interrupted after")
	require.Empty(t, out.String())
	entries, err := readDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the scratch directory is removed")
}

// interruptWantExit1 sends cmd SIGINT (Ctrl-C) and requires exit status 1
// with want on stderr: a bench stopped before its end.
func interruptWantExit1(t *testing.T, cmd *exec.Cmd, errOut *bytes.Buffer, want string) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	var exitErr *exec.ExitError
	require.True(t, errors.As(err, &exitErr), "want exit 1, got %v; stderr: %s", err, errOut.String())
	require.Equal(t, 1, exitErr.ExitCode(), errOut.String())
	require.Contains(t, errOut.String(), want)
}
