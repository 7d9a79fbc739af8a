package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// process is a running pystream-server process.
type process struct {
	cmd    *exec.Cmd
	client *apiclient.Client
	logs   chan string // the rest of stderr, once the process has exited
}

// startBinary runs the binary on dataDir, with three brokers and any extra
// PYSTREAM_* variables, and waits for its listening line.
func startBinary(t testing.TB, ctx context.Context, bin, dataDir string, extraEnv ...string) *process {
	t.Helper()
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(t)
		env := append([]string{"PYSTREAM_PORT=" + strconv.Itoa(port), "PYSTREAM_LOG_FORMAT=json",
			"PYSTREAM_DATA_DIR=" + dataDir, "PYSTREAM_BROKERS=3", "PYSTREAM_KAFKA_PORT=0"}, extraEnv...)
		cmd := command(t, ctx, bin, env...)
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := bufio.NewScanner(stderr)
		addr := ""
		for lines.Scan() {
			var rec struct{ Msg, Addr string }
			require.NoError(t, json.Unmarshal(lines.Bytes(), &rec), "log line %q", lines.Text())
			if rec.Msg == "pystream-server listening" {
				addr = rec.Addr
				break
			}
		}
		if addr == "" {
			_ = exitCode(t, cmd) // port taken: the process has exited
			continue
		}
		logs := make(chan string, 1)
		go func() {
			b, _ := io.ReadAll(stderr)
			logs <- string(b)
		}()
		return &process{cmd: cmd, client: apiclient.New("http://" + addr), logs: logs}
	}
	t.Fatal("the server did not start")
	return nil
}

// stop sends SIGTERM and requires a clean exit.
func (s *process) stop(t testing.TB) string {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	// Read stderr to its end before Wait, which closes the pipe and would
	// drop what is still unread.
	logs := <-s.logs
	require.Equal(t, 0, exitCode(t, s.cmd))
	return logs
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *process) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, s.cmd.Process.Kill())
	<-s.logs
	_ = s.cmd.Wait() // "signal: killed": the expected end
}

// docs/phase-6-network-api.md § The embedded cluster: the real binary keeps
// everything across a SIGTERM and restart on the same data directory: topics,
// records, consumer offsets.
func TestBinaryRestartKeepsData(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dataDir := filepath.Join(t.TempDir(), "data")

	s := startBinary(t, ctx, bin, dataDir)
	_, created, err := s.client.CreateTopic(ctx, "events", 2, 3)
	require.NoError(t, err)
	require.True(t, created)
	_, err = s.client.Produce(ctx, "events", []apiclient.ProduceRecord{{Key: []byte("k"), Value: []byte("one")}, {Value: []byte("two")}})
	require.NoError(t, err)
	_, err = s.client.ProduceRaw(ctx, "events", nil, []byte("three"))
	require.NoError(t, err)
	_, err = s.client.CommitOffset(ctx, "reader", "events", 1, 1)
	require.NoError(t, err)
	before := [2]*apiclient.FetchResponse{}
	for p := range 2 {
		before[p], err = s.client.Fetch(ctx, "events", p, 0, 100)
		require.NoError(t, err)
	}
	logs := s.stop(t)
	require.Contains(t, logs, `"msg":"stopped"`)

	s = startBinary(t, ctx, bin, dataDir)
	defer s.stop(t)
	topics, err := s.client.Topics(ctx)
	require.NoError(t, err)
	require.Equal(t, []apiclient.TopicSummary{{Name: "events", PartitionCount: 2, ReplicationFactor: 3}}, topics.Topics)
	total := 0
	for p := range 2 {
		got, err := s.client.Fetch(ctx, "events", p, 0, 100)
		require.NoError(t, err)
		require.Equal(t, before[p], got)
		total += len(got.Records)
	}
	require.Equal(t, 3, total)
	off, err := s.client.ConsumerOffset(ctx, "reader", "events", 1)
	require.NoError(t, err)
	require.Equal(t, uint64(1), *off.Offset)
}

// docs/phase-6-network-api.md § The embedded cluster: a second server on the
// same data directory refuses to start with a clear message and exit status
// 1, and leaves the first one serving.
func TestBinaryLockRefusesSecondServer(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	dataDir := t.TempDir()

	first := startBinary(t, ctx, bin, dataDir)
	second := command(t, ctx, bin, "PYSTREAM_PORT="+strconv.Itoa(freePort(t)), "PYSTREAM_DATA_DIR="+dataDir)
	out, err := second.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "output: %s", out)
	require.Equal(t, 1, ee.ExitCode(), "output: %s", out)
	require.Contains(t, string(out), "data directory is in use by another server")
	require.Contains(t, string(out), "pid="+strconv.Itoa(first.cmd.Process.Pid))
	require.False(t, strings.Contains(string(out), "listening"))

	_, err = first.client.Health(ctx)
	require.NoError(t, err, "the first server still serves")
	first.stop(t)
}
