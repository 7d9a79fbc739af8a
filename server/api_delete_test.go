package server

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// docs/phase-6-network-api.md § Delete a topic: DELETE /api/topics/{topic}
// answers 200 with what was deleted; the topic, its records and its
// consumer offsets are gone, from then on and after a restart; every
// request naming it is a 404; the journal holds the deletion; a topic
// created again under the name is empty.
func TestE2EDeleteTopic(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	r := startServer(t, dir, 3, manual)
	c := r.client
	_, _, err := c.CreateTopic(ctx, "orders", 2, 2)
	require.NoError(t, err)
	_, _, err = c.CreateTopic(ctx, "keep", 1, 1)
	require.NoError(t, err)
	produceValues(t, r, "orders", "a", "b", "c")
	produceValues(t, r, "keep", "k")
	_, err = c.CommitOffset(ctx, "billing", "orders", 0, 1)
	require.NoError(t, err)

	res, err := c.DeleteTopic(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, apiclient.DeleteTopicResponse{Name: "orders", PartitionCount: 2, ReplicationFactor: 2, ConsumerOffsets: 1}, *res)

	_, err = c.Topic(ctx, "orders")
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.ProduceRaw(ctx, "orders", nil, []byte("late"))
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.Fetch(ctx, "orders", 0, 0, 0)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.ConsumerOffset(ctx, "billing", "orders", 0)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.DeleteTopic(ctx, "orders")
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	topics, err := c.Topics(ctx)
	require.NoError(t, err)
	require.Equal(t, []apiclient.TopicSummary{{Name: "keep", PartitionCount: 1, ReplicationFactor: 1}}, topics.Topics)
	offsets, err := c.ConsumerOffsets(ctx, "billing")
	require.NoError(t, err)
	require.Empty(t, offsets.Offsets)
	for id := 1; id <= 3; id++ {
		require.NoDirExists(t, filepath.Join(cluster.BrokerDir(dir, id), "topics", "orders"))
	}

	j, err := c.Journal(ctx, 0, 1000)
	require.NoError(t, err)
	last := j.Entries[len(j.Entries)-2:]
	for i, phase := range []string{"intent", "done"} {
		e := last[i]
		require.Equal(t, [4]string{"delete-topic", phase, "operator", "orders"}, [4]string{e.Event, e.Phase, e.By, e.Topic})
		require.Nil(t, e.Partition, "a deletion names no partition")
	}
	require.Equal(t, last[0].Offset, *last[1].Intent)

	// Gone after a restart too; created again, it is empty.
	r.stop()
	r = startServer(t, dir, 3, manual)
	c = r.client
	_, err = c.Topic(ctx, "orders")
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	td, created, err := c.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, uint64(0), td.Partitions[0].HighWatermark)
	off, err := c.ConsumerOffset(ctx, "billing", "orders", 0)
	require.NoError(t, err)
	require.Nil(t, off.Offset, "no offset inherited")
	fetched, err := c.Fetch(ctx, "keep", 0, 0, 0)
	require.NoError(t, err)
	require.Len(t, fetched.Records, 1)
}

// DELETE /api/topics/{topic} refuses a body and an invalid name (400)
// before anything is deleted.
func TestE2EDeleteTopicBadRequests(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 1, manual)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)

	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, r.base+"/api/topics/orders", strings.NewReader(`{"yes":true}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	_, err = r.client.DeleteTopic(ctx, "no such/name")
	apitest.APIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
	_, err = r.client.Topic(ctx, "orders")
	require.NoError(t, err, "nothing was deleted")
}

// When the topic's files cannot be removed, the answer is a 500 saying the
// topic is deleted all the same; the topic is gone, and creating it again
// answers the same until the files are removed.
func TestE2EDeleteTopicUnfinished(t *testing.T) {
	ctx := t.Context()
	cfg := Defaults()
	cfg.DataDir = t.TempDir()
	cfg.Brokers = BrokerCount(1)
	cfg.FailoverAfter = 0
	ffs := logtest.NewFaultFS(nil)
	srv, err := newServer(cfg, NewLogger(io.Discard, cfg), ffs)
	require.NoError(t, err)
	r := serveExisting(t, srv)
	_, _, err = r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	ffs.SetFault(func(op logtest.Op, path string) error {
		if op == logtest.OpRemove && strings.Contains(path, "orders") {
			return logtest.ErrInjected
		}
		return nil
	})

	_, err = r.client.DeleteTopic(ctx, "orders")
	e := apitest.APIErr(t, err, http.StatusInternalServerError, apiclient.CodeInternal)
	require.Contains(t, e.Message, "the topic is deleted, but its files are not all removed yet")
	require.NotContains(t, e.Message, cfg.DataDir, "paths relative to the data directory")
	_, err = r.client.Topic(ctx, "orders")
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, _, err = r.client.CreateTopic(ctx, "orders", 1, 1)
	apitest.APIErr(t, err, http.StatusInternalServerError, apiclient.CodeInternal)

	ffs.SetFault(nil)
	td, created, err := r.client.CreateTopic(ctx, "orders", 1, 1)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, uint64(0), td.Partitions[0].HighWatermark)
}
