//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// openFDs is how many descriptors process pid holds (its /proc/PID/fd
// entries), and how many of them are numbered limit or above: inherited
// before the limit was set (a pipe of the test runner's), so not counted
// against it.
func openFDs(t *testing.T, pid, limit int) (n, above int) {
	t.Helper()
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	require.NoError(t, err)
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= limit {
			above++
		}
	}
	return len(entries), above
}

// fdLimit is the descriptor limit the server runs under; floodKept is how
// many of the flood's connections, the first accepted, stay open while
// other clients are served; fdMargin is how far from where they began the
// server's descriptors may end (a connection the runtime has not yet
// closed, the log).
const (
	fdLimit   = 128
	floodKept = 48
	fdMargin  = 4
)

// docs/security.md § Bounds: a Kafka listener that runs out of file
// descriptors is not lost, and serves others while the flood that took
// them is still on. The real binary, started under RLIMIT_NOFILE=128
// (prlimit, soft and hard: the server raises its soft limit to the hard
// one), is flooded with 300 idle connections; its accepts fail with
// EMFILE and back off, each episode logged once when it starts and once
// when it ends, with its count. The server's descriptors (/proc/PID/fd)
// are counted before the flood, at its height (at most the limit) and
// once all but the first floodKept of it have closed: the listener
// accepts again and, with those floodKept still open and held by the
// server, a kgo client pings, creates a topic and produces to it, and the
// HTTP port answers /api/health. When the rest of the flood and the
// client close, the descriptors come back to within fdMargin of where
// they began: nothing leaks. Loopback only; every wait is bounded.
func TestBinaryKafkaSurvivesDescriptorFlood(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed")
	}
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	kport, hport := freePort(t), freePort(t)
	cmd := command(t, ctx, prlimit, "PYSTREAM_PORT="+strconv.Itoa(hport), "PYSTREAM_KAFKA_PORT="+strconv.Itoa(kport),
		"PYSTREAM_LOG_FORMAT=json")
	cmd.Args = []string{prlimit, "--nofile=" + strconv.Itoa(fdLimit) + ":" + strconv.Itoa(fdLimit), bin}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid // prlimit execs the server in its place

	var mu sync.Mutex
	var logs strings.Builder
	kafkaOpen := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(stderr)
		once := sync.Once{}
		for lines.Scan() {
			mu.Lock()
			logs.WriteString(lines.Text() + "\n")
			mu.Unlock()
			if strings.Contains(lines.Text(), `"msg":"kafka listener open"`) && strings.Contains(lines.Text(), `"broker":1,`) {
				once.Do(func() { close(kafkaOpen) })
			}
		}
	}()
	select {
	case <-kafkaOpen:
	case <-ctx.Done():
		t.Fatalf("the Kafka listener never opened: %s", logs.String())
	}
	logText := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	addr := "127.0.0.1:" + strconv.Itoa(kport)
	health := func() error {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := hc.Get("http://127.0.0.1:" + strconv.Itoa(hport) + "/api/health")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/api/health: %s", resp.Status)
		}
		return nil
	}
	require.Eventually(t, func() bool { return health() == nil }, 20*time.Second, 50*time.Millisecond, "the HTTP port opens")
	before, inherited := openFDs(t, pid, fdLimit)

	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			_ = c.Close()
		}
	}()
	var dialErr error
	for range 300 {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			dialErr = err // the backlog is full: the flood did its work
			break
		}
		flood = append(flood, c)
	}
	t.Logf("%d idle connections open (then: %v)", len(flood), dialErr)
	require.Greater(t, len(flood), fdLimit, "the flood outnumbers the descriptors; the server's log:\n%s", logText())
	require.Eventually(t, func() bool { return strings.Contains(logText(), "accept failing") },
		20*time.Second, 50*time.Millisecond, "the episode's first line")
	peak, _ := openFDs(t, pid, fdLimit)
	require.LessOrEqual(t, peak, fdLimit+inherited, "the server holds no more descriptors than its limit")
	require.Greater(t, peak, before+floodKept, "the flood took the descriptors")

	// All but the first floodKept close: the server accepts the closed
	// ones still queued, reads their end and lets them go, and has room
	// again while those kept stay open.
	for _, c := range flood[floodKept:] {
		_ = c.Close()
	}
	flood = flood[:floodKept]
	require.Eventually(t, func() bool { return strings.Contains(logText(), "accepting connections again") },
		20*time.Second, 50*time.Millisecond, "the episode's last line")
	require.Eventually(t, func() bool { n, _ := openFDs(t, pid, fdLimit); return n < fdLimit+inherited-8 }, 20*time.Second, 20*time.Millisecond,
		"the closed part of the flood gives its descriptors back")

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	require.NoError(t, err)
	defer cl.Close()
	opCtx, opCancel := context.WithTimeout(ctx, 30*time.Second)
	defer opCancel()
	require.NoError(t, cl.Ping(opCtx), "a kgo client is served while the flood is still on")
	create := kmsg.NewPtrCreateTopicsRequest()
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic, topic.NumPartitions, topic.ReplicationFactor = "flood", 1, 1
	create.Topics, create.TimeoutMillis = append(create.Topics, topic), 10_000
	created, err := create.RequestWith(opCtx, cl)
	require.NoError(t, err, "a kgo client creates a topic while the flood is still on")
	require.Len(t, created.Topics, 1)
	require.Zero(t, created.Topics[0].ErrorCode)
	require.NoError(t, cl.ProduceSync(opCtx, &kgo.Record{Topic: "flood", Value: []byte("during the flood")}).FirstErr(),
		"a kgo client produces while the flood is still on")
	require.NoError(t, health(), "the HTTP port answers while the flood is still on")
	during, _ := openFDs(t, pid, fdLimit)
	require.GreaterOrEqual(t, during, before+floodKept, "the kept part of the flood is still held by the server")

	for _, c := range flood {
		_ = c.Close()
	}
	flood = nil
	cl.Close()
	var after int
	require.Eventually(t, func() bool { after, _ = openFDs(t, pid, fdLimit); return after <= before+fdMargin }, 20*time.Second, 20*time.Millisecond,
		"the server's descriptors come back to where they began")
	// Every episode is two lines, its start and its end with its count,
	// not one a failed accept: as the flood's closed connections are
	// accepted and let go, the listener may run short more than once.
	var text string
	require.Eventually(t, func() bool {
		text = logText()
		return strings.Count(text, "accept failing") == strings.Count(text, "accepting connections again")
	}, 20*time.Second, 50*time.Millisecond, "each episode's last line")
	episodes, failed := 0, 0
	for line := range strings.Lines(text) {
		if !strings.Contains(line, "accepting connections again") {
			continue
		}
		var end struct {
			Listener      string `json:"listener"`
			FailedAccepts int    `json:"failed_accepts"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &end), line)
		require.Equal(t, "kafka", end.Listener)
		require.Positive(t, end.FailedAccepts, line)
		episodes, failed = episodes+1, failed+end.FailedAccepts
	}
	require.Positive(t, episodes)
	t.Logf("%d episodes, %d accepts failed", episodes, failed)
	t.Logf("server descriptors: before %d, peak %d, with %d of the flood open and clients served %d, after %d (limit %d, %d inherited above it)",
		before, peak, floodKept, during, after, fdLimit, inherited)
}
