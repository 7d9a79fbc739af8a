//go:build linux

package main

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
)

// docs/security.md § Bounds: a Kafka listener that runs out of file
// descriptors is not lost. The real binary, started under
// RLIMIT_NOFILE=128 (prlimit, soft and hard: the server raises its soft
// limit to the hard one), is flooded with 300 idle connections; its
// accepts fail with EMFILE and back off, logged once when the episode
// starts. Once the flood's connections close, the listener accepts again
// (the episode's end is logged with its count) and a kgo client is
// served. Loopback only; every wait is bounded.
func TestBinaryKafkaSurvivesDescriptorFlood(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit not installed")
	}
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	kport := freePort(t)
	cmd := command(t, ctx, prlimit, "PYSTREAM_PORT="+strconv.Itoa(freePort(t)), "PYSTREAM_KAFKA_PORT="+strconv.Itoa(kport),
		"PYSTREAM_LOG_FORMAT=json")
	cmd.Args = []string{prlimit, "--nofile=128:128", bin}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

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
			if strings.Contains(lines.Text(), `"msg":"kafka listener open"`) {
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

	var flood []net.Conn
	for range 300 {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			break // the backlog is full: the flood did its work
		}
		flood = append(flood, c)
	}
	t.Logf("%d idle connections open", len(flood))
	require.Eventually(t, func() bool { return strings.Contains(logText(), "accept failing") },
		20*time.Second, 50*time.Millisecond, "the episode's first line")
	for _, c := range flood {
		_ = c.Close()
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RetryBackoffFn(func(int) time.Duration { return 100 * time.Millisecond }))
	require.NoError(t, err)
	defer cl.Close()
	pingCtx, pingCancel := context.WithTimeout(ctx, 30*time.Second)
	defer pingCancel()
	var pingErr error
	for pingCtx.Err() == nil {
		if pingErr = cl.Ping(pingCtx); pingErr == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, pingErr, "a kgo client is served once the flood is gone")
	require.Eventually(t, func() bool { return strings.Contains(logText(), "accepting connections again") },
		20*time.Second, 50*time.Millisecond, "the episode's last line")
	text := logText()
	require.Equal(t, 1, strings.Count(text, "accept failing"), "one line starts the episode:\n%s", text)
	require.Contains(t, text, `"listener":"kafka"`)
	require.Contains(t, text, `"failed_accepts":`)
}
