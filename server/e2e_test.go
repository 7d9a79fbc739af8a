package server

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/datalock"
	"github.com/pystream/pystream/topic"
)

// docs/phase-6-network-api.md § Endpoints, by way of a tour, end to end:
// create a topic, produce keyed and keyless records, fetch them, commit, read
// and reset offsets over a real listener; then restart the server on the same
// data directory and find everything.
func TestE2ETourAndRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	r := startServer(t, dir, 3)
	c := r.client

	detail, created, err := c.CreateTopic(ctx, "orders", 3, 2)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, 3, detail.PartitionCount)
	require.Len(t, detail.Partitions, 3)
	// docs/design.md § Placement: partition p led by broker p+1, followed by
	// the next.
	require.Equal(t, []int{2, 3}, detail.Partitions[1].Assigned)

	// The same request again is a no-op (200, not created); other settings conflict.
	_, created, err = c.CreateTopic(ctx, "orders", 3, 2)
	require.NoError(t, err)
	require.False(t, created)
	_, _, err = c.CreateTopic(ctx, "orders", 2, 2)
	apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

	// A keyed batch lands where SHA-256 routing says, in request order.
	key := []byte("user-123")
	want := topic.PartitionForKey(key, 3)
	batch := []apiclient.ProduceRecord{{Key: key, Value: []byte("a")}, {Key: key, Value: []byte("b")}, {Key: key, Value: []byte("")}}
	prod, err := c.Produce(ctx, "orders", batch)
	require.NoError(t, err)
	require.Len(t, prod.Records, 3)
	for i, res := range prod.Records {
		require.Equal(t, want, res.Partition)
		require.Equal(t, uint64(i), res.Offset)
		require.Equal(t, detail.Partitions[want].Leader, res.Leader)
		require.Equal(t, detail.Partitions[want].Assigned, res.Brokers)
		require.NotZero(t, res.Timestamp)
	}
	// Keyless records go round robin from partition 0.
	prod, err = c.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("x")}, {Value: []byte("y")}, {Value: []byte("z")}})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2}, []int{prod.Records[0].Partition, prod.Records[1].Partition, prod.Records[2].Partition})
	// The raw form: one record, key as text.
	raw, err := c.ProduceRaw(ctx, "orders", key, []byte("raw value"))
	require.NoError(t, err)
	require.Equal(t, want, raw.Records[0].Partition)
	require.Equal(t, uint64(4), raw.Records[0].Offset, "3 keyed + 1 keyless before it")

	fetched, err := c.Fetch(ctx, "orders", want, 0, 100)
	require.NoError(t, err)
	var values []string
	for _, rec := range fetched.Records {
		values = append(values, string(rec.Value))
	}
	keyless := map[int]string{0: "x", 1: "y", 2: "z"}[want]
	require.Equal(t, []string{"a", "b", "", keyless, "raw value"}, values)
	require.Equal(t, uint64(5), fetched.NextOffset)
	require.Equal(t, uint64(5), fetched.HighWatermark)
	require.Equal(t, uint64(5), fetched.LogEnd)
	// max limits, offset starts; past the end is empty, not an error.
	part, err := c.Fetch(ctx, "orders", want, 1, 2)
	require.NoError(t, err)
	require.Len(t, part.Records, 2)
	require.Equal(t, uint64(1), part.Records[0].Offset)
	require.Equal(t, uint64(3), part.NextOffset)
	empty, err := c.Fetch(ctx, "orders", want, 99, 10)
	require.NoError(t, err)
	require.Empty(t, empty.Records)
	require.Equal(t, uint64(99), empty.NextOffset)

	// Offsets: unset is null, commits move forward only, reset moves back.
	off, err := c.ConsumerOffset(ctx, "billing", "orders", want)
	require.NoError(t, err)
	require.Nil(t, off.Offset)
	off, err = c.CommitOffset(ctx, "billing", "orders", want, 4)
	require.NoError(t, err)
	require.Equal(t, uint64(4), *off.Offset)
	_, err = c.CommitOffset(ctx, "billing", "orders", want, 2)
	e := apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Equal(t, uint64(4), *e.Committed)
	require.Equal(t, uint64(2), *e.Requested)
	off, err = c.ResetOffset(ctx, "billing", "orders", want, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(1), *off.Offset)
	// Past the high watermark 5, commit and reset alike are 409 carrying
	// the watermark and the offset asked for, and change nothing.
	_, err = c.ResetOffset(ctx, "billing", "orders", want, 6)
	e = apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Equal(t, uint64(5), *e.HighWatermark)
	require.Equal(t, uint64(6), *e.Requested)
	require.Nil(t, e.Committed)
	_, err = c.CommitOffset(ctx, "billing", "orders", want, 1000)
	e = apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Equal(t, uint64(5), *e.HighWatermark)
	require.Equal(t, uint64(1000), *e.Requested)
	off, err = c.ConsumerOffset(ctx, "billing", "orders", want)
	require.NoError(t, err)
	require.Equal(t, uint64(1), *off.Offset, "neither moved it")
	off, err = c.CommitOffset(ctx, "billing", "orders", want, 5)
	require.NoError(t, err, "at the high watermark")
	require.Equal(t, uint64(5), *off.Offset)
	off, err = c.ResetOffset(ctx, "billing", "orders", want, 1)
	require.NoError(t, err)
	require.Equal(t, uint64(1), *off.Offset)
	_, err = c.CommitOffset(ctx, "billing", "orders", 0, 0)
	require.NoError(t, err)
	_, err = c.ConsumerOffset(ctx, "billing", "nope", 0)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.ConsumerOffset(ctx, "billing", "orders", 3)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)

	before, err := c.Topic(ctx, "orders")
	require.NoError(t, err)
	offsetsBefore, err := c.ConsumerOffsets(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, offsetsBefore.Offsets, 2)
	r.stop()

	// Restart on the same directory: topics, placement, records, offsets.
	r2 := startServer(t, dir, 3)
	c = r2.client
	after, err := c.Topic(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, before, after)
	fetched2, err := c.Fetch(ctx, "orders", want, 0, 100)
	require.NoError(t, err)
	require.Equal(t, fetched, fetched2)
	offsetsAfter, err := c.ConsumerOffsets(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, offsetsBefore, offsetsAfter)
	topics, err := c.Topics(ctx)
	require.NoError(t, err)
	require.Equal(t, []apiclient.TopicSummary{{Name: "orders", PartitionCount: 3, ReplicationFactor: 2}}, topics.Topics)
}

// Phase 5 driven only through HTTP: stop the leader's broker, produce
// fails 503 naming it, failover, produce succeeds, start the broker,
// recover it, and the status shows it active again as a follower.
func TestE2EFailoverStory(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 3, manual)
	c := r.client
	_, _, err := c.CreateTopic(ctx, "payments", 1, 3)
	require.NoError(t, err)
	for _, v := range []string{"p0", "p1", "p2"} {
		_, err := c.ProduceRaw(ctx, "payments", nil, []byte(v))
		require.NoError(t, err)
	}
	// Failover refuses while the leader is alive.
	_, err = c.Failover(ctx, "payments", 0)
	apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

	st, err := c.StopBroker(ctx, 1)
	require.NoError(t, err)
	require.False(t, st.Available)
	st, err = c.StopBroker(ctx, 1) // idempotent
	require.NoError(t, err)
	require.False(t, st.Available)
	cl, err := c.Cluster(ctx)
	require.NoError(t, err)
	require.Equal(t, []apiclient.BrokerStatus{{ID: 1, Available: false, Configured: true}, {ID: 2, Available: true, Configured: true},
		{ID: 3, Available: true, Configured: true}}, cl.Brokers)

	_, err = c.Produce(ctx, "payments", []apiclient.ProduceRecord{{Value: []byte("lost")}})
	e := apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
	require.Equal(t, []int{1}, e.BrokerIDs)
	require.Len(t, e.Records, 1)
	require.NotNil(t, e.Records[0].Error, "the record is reported as not acknowledged")
	require.Equal(t, apiclient.CodeUnavailable, e.Records[0].Error.Code)
	_, err = c.Fetch(ctx, "payments", 0, 0, 10)
	e = apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
	require.Equal(t, []int{1}, e.BrokerIDs)

	fo, err := c.Failover(ctx, "payments", 0)
	require.NoError(t, err)
	require.Equal(t, apiclient.FailoverResponse{OldLeader: 1, NewLeader: 2, LeaderEpoch: 1, LogEndOffset: 3}, *fo)
	prod, err := c.ProduceRaw(ctx, "payments", nil, []byte("p3"))
	require.NoError(t, err)
	require.Equal(t, apiclient.ProduceResult{Partition: 0, Offset: 3, Timestamp: prod.Records[0].Timestamp,
		TimestampMS: time.Unix(0, prod.Records[0].Timestamp).UnixMilli(), Leader: 2, Brokers: []int{2, 3}}, prod.Records[0])

	detail, err := c.Topic(ctx, "payments")
	require.NoError(t, err)
	p0 := detail.Partitions[0]
	require.Equal(t, 2, p0.Leader)
	require.Equal(t, []int{2, 3}, p0.Active)
	require.Nil(t, p0.Replicas[0].LogEnd, "a stopped broker's log end is unknown")
	require.Nil(t, p0.Replicas[0].Lag)

	// Recovery of a stopped broker is refused as unavailable, naming it.
	_, err = c.Recover(ctx, "payments", 0, 1)
	e = apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
	require.Equal(t, []int{1}, e.BrokerIDs)

	st, err = c.StartBroker(ctx, 1)
	require.NoError(t, err)
	require.True(t, st.Available)
	_, err = c.StartBroker(ctx, 1) // idempotent
	require.NoError(t, err)
	rec, err := c.Recover(ctx, "payments", 0, 1)
	require.NoError(t, err)
	require.Equal(t, apiclient.RecoverResponse{BrokerID: 1, CommonPrefix: 3, Copied: 1}, *rec)
	_, err = c.Recover(ctx, "payments", 0, 1)
	apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict) // already active

	detail, err = c.Topic(ctx, "payments")
	require.NoError(t, err)
	p0 = detail.Partitions[0]
	require.Equal(t, 2, p0.Leader, "a returning leader rejoins as a follower")
	require.Equal(t, []int{1, 2, 3}, p0.Active)
	require.Equal(t, apiclient.RoleFollower, p0.Replicas[0].Role)
	require.True(t, p0.Replicas[0].Active)
	require.Equal(t, uint64(4), *p0.Replicas[0].LogEnd)
	require.Equal(t, uint64(4), p0.HighWatermark)

	// Catch-up of an up-to-date follower copies nothing.
	cu, err := c.CatchUp(ctx, "payments", 0, 3)
	require.NoError(t, err)
	require.Equal(t, apiclient.CatchUpResponse{BrokerID: 3, Copied: 0}, *cu)
	_, err = c.CatchUp(ctx, "payments", 0, 2)
	apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict) // the leader
	_, err = c.CatchUp(ctx, "payments", 0, 9)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.StopBroker(ctx, 9)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)

	all, err := c.Fetch(ctx, "payments", 0, 0, 100)
	require.NoError(t, err)
	var values []string
	for _, r := range all.Records {
		values = append(values, string(r.Value))
	}
	require.Equal(t, []string{"p0", "p1", "p2", "p3"}, values)
}

// A second server on the same data directory refuses to start; after the
// first one stops, it can.
func TestE2ELockRefusesSecondServer(t *testing.T) {
	dir := t.TempDir()
	r := startServer(t, dir, 1)
	cfg := Defaults()
	cfg.DataDir = dir
	_, err := New(cfg, NewLogger(&discard{}, cfg))
	require.ErrorIs(t, err, datalock.ErrLocked)
	var le *datalock.LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, datalock.Path(dir), le.Path)
	require.Positive(t, le.PID)
	r.stop()
	r2 := startServer(t, dir, 1)
	_, err = r2.client.Health(t.Context())
	require.NoError(t, err)
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }
