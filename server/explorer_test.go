package server

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/explorer"
)

// follow reads a server's events stream until until says stop, or the
// timeout.
func follow(t *testing.T, c *apiclient.Client, opts apiclient.EventsOptions, timeout time.Duration, until func(apiclient.Update) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	stop := errors.New("seen")
	_, err := c.Events(ctx, opts, func(u apiclient.Update) error {
		if until(u) {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop, "the stream did not show it within %v", timeout)
}

// The stream shows what the REST API does, as it happens: a produce moves
// the leader's log end and the high watermark, a stopped broker is
// unavailable and journaled, with the partition's log start beside.
func TestExplorerEventsFollowTheCluster(t *testing.T) {
	r := startServer(t, t.TempDir(), 3, manual)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	var hw uint64
	produced := false
	follow(t, r.client, apiclient.EventsOptions{}, 10*time.Second, func(u apiclient.Update) bool {
		if u.Cluster != nil && len(u.Cluster.Topics) == 1 {
			p := u.Cluster.Topics[0].Partitions[0]
			if !produced && p.HighWatermark == 0 {
				// Once: an update sent before the produce took effect
				// shows 0 too.
				produced = true
				_, err := r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}})
				require.NoError(t, err)
			}
			hw = p.HighWatermark
			require.Zero(t, p.LogStart)
			require.Len(t, p.Replicas, 3)
			require.False(t, u.Cluster.Controller.Automatic, "manual mode")
		}
		return hw == 2
	})

	_, err = r.client.StopBroker(ctx, 3)
	require.NoError(t, err)
	down, journaled := false, false
	follow(t, r.client, apiclient.EventsOptions{Since: new(uint64)}, 10*time.Second, func(u apiclient.Update) bool {
		if u.Cluster != nil {
			down = !u.Cluster.Brokers[2].Available
		}
		for _, e := range u.Journal {
			journaled = journaled || e.Event == string(cluster.EventBrokerStop) && e.Broker == 3
		}
		return down && journaled
	})
}

// A consumer group joined over HTTP is in the stream's state as GET
// /api/groups/{group} describes it: its protocol, state and epoch, the
// member and the partitions it holds, and per partition the committed
// offset against the high watermark, and the lag
// (docs/groups.md § Listing, describing, deleting).
func TestExplorerEventsShowGroups(t *testing.T) {
	r := startServer(t, t.TempDir(), 3, manual)
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
	require.NoError(t, err)
	hb, err := r.client.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{Topics: []string{"orders"}, ClientID: "explorer-test"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		hb, err = r.client.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: hb.MemberID, MemberEpoch: hb.MemberEpoch,
			Owned: hb.Assignment})
		return err == nil && len(hb.Assignment) == 1
	}, 10*time.Second, 20*time.Millisecond, "the member gets orders/0")
	_, err = r.client.CommitGroupOffset(ctx, "billing", "orders", 0, hb.MemberID, hb.MemberEpoch, 1)
	require.NoError(t, err)
	want, err := r.client.Group(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, uint64(2), *want.Offsets[0].Lag, "the describe this test compares with")

	var got apiclient.GroupDescription
	follow(t, r.client, apiclient.EventsOptions{}, 10*time.Second, func(u apiclient.Update) bool {
		if u.Cluster == nil || len(u.Cluster.Groups) != 1 {
			return false
		}
		got = u.Cluster.Groups[0]
		return len(got.Offsets) == 1 && got.Offsets[0].CommittedOffset != nil
	})
	require.Equal(t, *want, got)
	require.Equal(t, "consumer", got.Protocol)
	require.Equal(t, hb.MemberID, got.Members[0].MemberID)
	require.Equal(t, "explorer-test", got.Members[0].ClientID)
	require.Equal(t, hb.MemberID, got.Offsets[0].MemberID)
	require.Equal(t, uint64(3), *got.Offsets[0].LogEndOffset)
}

// The events stream needs the read role like GET /api/journal; the page
// and its files are open like /docs, with a CSP that keeps them to their
// own files and this server.
func TestExplorerRoles(t *testing.T) {
	r := startServer(t, t.TempDir(), 1, func(c *Config) { c.AuthFile = writeAuthFile(t) })
	_, err := r.client.Events(t.Context(), apiclient.EventsOptions{}, func(apiclient.Update) error { return nil })
	apitest.APIErr(t, err, http.StatusUnauthorized, apiclient.CodeUnauthenticated)

	reader := apiclient.New(r.base, apiclient.WithToken(tokenRead))
	follow(t, reader, apiclient.EventsOptions{}, 5*time.Second, func(u apiclient.Update) bool { return u.Cluster != nil })
	_, err = reader.SetAutomatic(t.Context(), false, "")
	apitest.APIErr(t, err, http.StatusForbidden, apiclient.CodePermissionDenied)

	for _, path := range []string{"/explorer", "/explorer/explorer.js", "/explorer/explorer.css"} {
		resp, err := http.Get(r.base + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		require.Equal(t, explorer.CSP, resp.Header.Get("Content-Security-Policy"), path)
		require.NotEmpty(t, body)
	}
	resp, err := http.Get(r.base + "/explorer/nope.js")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// Automatic healing switched off at run time is manual mode: a stopped
// leader stays the leader, well past PYSTREAM_FAILOVER_AFTER. Switched on
// again, the controller fails it over. Both changes are journaled with
// their reasons (docs/design.md § The controller).
func TestExplorerControllerSwitch(t *testing.T) {
	r := startServer(t, t.TempDir(), 3, func(c *Config) { c.FailoverAfter = FailoverDelay(100 * time.Millisecond) })
	ctx := t.Context()
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	st, err := r.client.Controller(ctx)
	require.NoError(t, err)
	require.Equal(t, apiclient.ControllerStatus{Automatic: true, FailoverAfterMS: 100, Switchable: true}, *st)

	st, err = r.client.SetAutomatic(ctx, false, "watching a failover by hand")
	require.NoError(t, err)
	require.False(t, st.Automatic)
	_, err = r.client.StopBroker(ctx, 1)
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond) // five times the delay
	d, err := r.client.Topic(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, 1, d.Partitions[0].Leader, "manual mode: no failover")

	_, err = r.client.SetAutomatic(ctx, true, "")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := r.client.Topic(ctx, "orders")
		return err == nil && d.Partitions[0].Leader != 1
	}, 10*time.Second, 10*time.Millisecond)

	j, err := r.client.Journal(ctx, 0, 1000)
	require.NoError(t, err)
	var healing []apiclient.JournalEntry
	for _, e := range j.Entries {
		if e.Event == string(cluster.EventHealing) {
			healing = append(healing, e)
		}
	}
	require.Len(t, healing, 2)
	require.Equal(t, "watching a failover by hand", healing[0].Reason)
	require.True(t, strings.HasPrefix(healing[0].Summary, "automatic healing off"), healing[0].Summary)
	require.True(t, strings.HasPrefix(healing[1].Summary, "automatic healing on"), healing[1].Summary)

	_, err = r.client.SetAutomatic(ctx, true, "")
	require.NoError(t, err, "already on: nothing to do, nothing journaled")
	j, err = r.client.Journal(ctx, j.Next, 1000)
	require.NoError(t, err)
	for _, e := range j.Entries {
		require.NotEqual(t, string(cluster.EventHealing), e.Event)
	}
}

// A stream outlives the server's read and write timeouts (each write has
// its own deadline), and a shutdown ends it at once instead of waiting
// ShutdownTimeout for it.
func TestExplorerStreamOutlivesTimeoutsAndEndsOnShutdown(t *testing.T) {
	cfg := Defaults()
	cfg.DataDir, cfg.Brokers, cfg.KafkaPort, cfg.LogLevel = t.TempDir(), 1, 0, LogLevel(LevelError)
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	srv.readTimeout, srv.writeTimeout = 200*time.Millisecond, 200*time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := serveOn(t, srv, ln)
	_, _, err = r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)

	start := time.Now()
	follow(t, r.client, apiclient.EventsOptions{}, 10*time.Second, func(u apiclient.Update) bool {
		if u.Cluster != nil {
			_, err := r.client.Produce(t.Context(), "orders", []apiclient.ProduceRecord{{Value: []byte("x")}})
			require.NoError(t, err)
		}
		// A message more than five timeouts after the stream opened.
		return time.Since(start) > time.Second
	})

	ended, first := make(chan error, 1), make(chan struct{}, 1)
	go func() {
		_, err := r.client.Events(context.Background(), apiclient.EventsOptions{}, func(apiclient.Update) error {
			select {
			case first <- struct{}{}:
			default:
			}
			return nil
		})
		ended <- err
	}()
	<-first
	stopped := time.Now()
	r.stop()
	require.ErrorIs(t, <-ended, apiclient.ErrStreamEnded)
	require.Less(t, time.Since(stopped), ShutdownTimeout/2)
}
