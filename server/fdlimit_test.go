package server

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
)

// docs/design.md § Creating a topic, limits: at start the soft limit on open files is
// raised to the hard one.
func TestFileLimitRaisedAtStart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lowers RLIMIT_NOFILE")
	}
	var orig syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig))
	if orig.Max < 2048 {
		t.Skip("hard limit too low to lower the soft one safely")
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	low := orig
	low.Cur = 1024
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low))

	lim, err := RaiseFileLimit()
	require.NoError(t, err)
	require.True(t, lim.Raised)
	require.Equal(t, clampInt(orig.Max), lim.Soft)
	require.Equal(t, clampInt(orig.Max), lim.Hard)
	var now syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now))
	require.Equal(t, orig.Max, now.Cur)
}

// The cap on replica logs is the configured one, else derived from the
// soft limit.
func TestFileLimitMaxOpenLogs(t *testing.T) {
	cfg := Defaults()
	require.Equal(t, 768, maxOpenLogs(cfg, FileLimit{Soft: 1024, Hard: 4096}))
	require.Equal(t, -1, maxOpenLogs(cfg, FileLimit{}), "unknown limit: none")
	cfg.MaxOpenLogs = 10
	require.Equal(t, 10, maxOpenLogs(cfg, FileLimit{Soft: 1024}))
	cfg.MaxOpenLogs = 5000
	require.Equal(t, 768, maxOpenLogs(cfg, FileLimit{Soft: 1024, Hard: 1024}),
		"a configured cap above what the file limit allows: the file limit wins")
	require.Equal(t, 5000, maxOpenLogs(cfg, FileLimit{}), "unknown limit: the configured cap")
}

// docs/design.md § Creating a topic, limits: the start-up line says the open-file limits
// and the cap; a topic past the cap is refused with 409 naming it, a name
// differing only in case with 409 naming the existing topic, and the next
// small creation succeeds.
func TestFileLimitCreateTopicRefusals(t *testing.T) {
	r := startServer(t, t.TempDir(), 3, func(c *Config) { c.MaxOpenLogs = 12 })
	ctx := context.Background()
	lim := r.srv.fileLimit
	require.Equal(t, 12, r.srv.maxOpenLogs)
	if runtime.GOOS == "linux" {
		require.Positive(t, lim.Soft)
		require.GreaterOrEqual(t, lim.Hard, lim.Soft)
	}

	_, _, err := r.client.CreateTopic(ctx, "Orders", 3, 3)
	require.NoError(t, err)
	_, _, err = r.client.CreateTopic(ctx, "big", 2, 2)
	var ae *apiclient.Error
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, http.StatusConflict, ae.Status)
	require.Equal(t, apiclient.CodeConflict, ae.Code)
	require.Contains(t, ae.Message, "limit of 12 open replica logs")
	require.Contains(t, ae.Message, "PYSTREAM_MAX_OPEN_LOGS")

	_, _, err = r.client.CreateTopic(ctx, "orders", 1, 1)
	require.True(t, errors.As(err, &ae), "%v", err)
	require.Equal(t, http.StatusConflict, ae.Status)
	require.Contains(t, ae.Message, `existing topic "Orders"`)

	_, created, err := r.client.CreateTopic(ctx, "small", 1, 3)
	require.NoError(t, err)
	require.True(t, created)
	_, err = r.srv.cluster.Topic("small")
	require.NoError(t, err)
	require.ErrorIs(t, r.srv.Cluster().CreateTopic("big", 1, 1), cluster.ErrOpenLogsLimit)
}

// The start-up line names the open-file limits and the cap.
func TestFileLimitInStartupLine(t *testing.T) {
	s, logs := newTestServer(t, Defaults())
	ln := listenLoopback(t)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln) }()
	cancel()
	require.NoError(t, <-served)
	require.Contains(t, logs.String(), `"open_files_soft":`)
	require.Contains(t, logs.String(), `"open_files_hard":`)
	require.Contains(t, logs.String(), `"max_open_logs":`)
}
