package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/topic"
)

// Contract (docs/phase-6-network-api.md § Requests and errors): every library
// error maps to its status and code, and 503s and divergence carry the broker
// ids, regressions the committed and requested offsets.
func TestAPIErrorClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	tests := []struct {
		name    string
		err     error
		status  int
		code    string
		brokers []int
	}{
		{"invalid name", wrap(topic.ErrInvalidName), 400, CodeInvalidArgument, nil},
		{"partition count", wrap(cluster.ErrInvalidPartitionCount), 400, CodeInvalidArgument, nil},
		{"replication factor", wrap(cluster.ErrInvalidReplicationFactor), 400, CodeInvalidArgument, nil},
		{"cluster argument", wrap(cluster.ErrInvalidArgument), 400, CodeInvalidArgument, nil},
		{"unknown topic", wrap(cluster.ErrUnknownTopic), 404, CodeNotFound, nil},
		{"partition out of range", wrap(topic.ErrPartitionOutOfRange), 404, CodeNotFound, nil},
		{"unknown broker", wrap(cluster.ErrUnknownBroker), 404, CodeNotFound, nil},
		{"not assigned", wrap(cluster.ErrNotAssigned), 404, CodeNotFound, nil},
		{"topic exists, other settings", &cluster.TopicExistsError{Topic: "t"}, 409, CodeConflict, nil},
		{"leader still available", wrap(&cluster.LeaderStillAvailableError{BrokerID: 1}), 409, CodeConflict, nil},
		{"replica active", wrap(cluster.ErrReplicaActive), 409, CodeConflict, nil},
		{"replica is leader", wrap(cluster.ErrReplicaIsLeader), 409, CodeConflict, nil},
		{"replica inactive", wrap(cluster.ErrReplicaInactive), 409, CodeConflict, nil},
		// A failed operation whose failure could not be journaled either
		// is answered for its own error.
		{"refused, journal failed too", errors.Join(wrap(&cluster.ReplicaDivergenceError{BrokerID: 2}), errJournalFailed), 409, CodeConflict, []int{2}},
		{"failed, journal failed too", errors.Join(errors.New("cluster: leadership not changed: disk full"), errJournalFailed), 500, CodeInternal, nil},
		{"divergence", wrap(&cluster.ReplicaDivergenceError{BrokerID: 3}), 409, CodeConflict, []int{3}},
		{"payload too large", wrap(log.ErrPayloadTooLarge), 413, CodePayloadTooLarge, nil},
		{"leader unavailable", wrap(&cluster.LeaderUnavailableError{BrokerID: 2, Err: cluster.ErrBrokerUnavailable}), 503, CodeUnavailable, []int{2}},
		{"replication failed", wrap(&cluster.ReplicationError{BrokerIDs: []int{2, 3}, Count: 1, Err: errors.New("x")}), 503, CodeUnavailable, []int{2, 3}},
		{"no eligible replica", wrap(&cluster.NoEligibleReplicaError{LeaderBrokerID: 1}), 503, CodeUnavailable, []int{1}},
		{"broker unavailable", wrap(cluster.ErrBrokerUnavailable), 503, CodeUnavailable, nil},
		{"closed", cluster.ErrClosed, 503, CodeUnavailable, nil},
		{"corruption", wrap(&log.CorruptionError{Path: "p", Reason: "bad"}), 500, CodeInternal, nil},
		{"offset file damaged", &client.OffsetCorruptionError{Path: "p", Reason: "bad"}, 500, CodeInternal, nil},
		{"batch", &topic.BatchError{Topic: "t", Partitions: map[int]error{
			2: &cluster.ReplicationError{BrokerIDs: []int{3}, Count: 1, Err: errors.New("x")},
			0: &cluster.LeaderUnavailableError{BrokerID: 1, Err: cluster.ErrBrokerUnavailable},
		}}, 503, CodeUnavailable, []int{1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify(tt.err)
			require.Equal(t, tt.status, e.status)
			require.Equal(t, tt.code, e.body.Code)
			require.Equal(t, tt.brokers, e.body.BrokerIDs)
			require.NotEmpty(t, e.body.Message)
		})
	}
	// An operation that took effect but whose journal entry failed is a
	// 500 that says so, without the cause (it names a file).
	e := classify(wrap(errJournalFailed))
	require.Equal(t, http.StatusInternalServerError, e.status)
	require.Equal(t, CodeInternal, e.body.Code)
	require.Contains(t, e.body.Message, "took effect")
	require.Contains(t, e.body.Message, "journal entry was not written")
	require.NotContains(t, e.body.Message, "/data")
	require.Equal(t, "disk full", classify(errors.Join(errors.New("disk full"), errJournalFailed)).body.Message,
		"a failed operation is answered for its own error")

	e = classify(wrap(&client.OffsetRegressionError{Committed: 5, Requested: 3}))
	require.Equal(t, http.StatusConflict, e.status)
	require.Equal(t, uint64(5), *e.body.Committed)
	require.Equal(t, uint64(3), *e.body.Requested)
	require.Nil(t, e.body.HighWatermark)

	// A commit or reset past the high watermark: 409 with the watermark
	// and the requested offset.
	e = classify(wrap(&client.OffsetBeyondEndError{Op: "reset", End: 4, Requested: 1000}))
	require.Equal(t, http.StatusConflict, e.status)
	require.Equal(t, CodeConflict, e.body.Code)
	require.Equal(t, uint64(4), *e.body.HighWatermark)
	require.Equal(t, uint64(1000), *e.body.Requested)
	require.Nil(t, e.body.Committed)
}

// errJournalFailed is what an operation returns when it took effect but its
// outcome could not be journaled.
var errJournalFailed = fmt.Errorf("%w: %w", cluster.ErrJournalFailed,
	&log.CorruptionError{Path: "/data/journal/log.bin", Reason: "write failed"})

// An operation's error answer never carries the data directory's absolute
// path (paths under it are given relative to it); a 500's full error goes
// to the server log.
func TestAPIOpErrorHidesDataDir(t *testing.T) {
	s, logs := newTestServer(t, Defaults())
	root := s.cluster.Root()
	journal := filepath.Join(root, "journal", "log.bin")
	e := s.opError("recover", fmt.Errorf("cluster: recover orders/0: %w", &log.CorruptionError{Path: journal, Reason: "bad frame"}))
	require.Equal(t, http.StatusInternalServerError, e.status)
	require.NotContains(t, e.body.Message, root)
	require.Contains(t, e.body.Message, filepath.Join("journal", "log.bin"))
	require.Contains(t, logs.String(), journal, "the server log has the whole error")

	e = s.opError("move-leader", fmt.Errorf("cluster: %w: %w", cluster.ErrJournalFailed, &log.CorruptionError{Path: journal, Reason: "no space"}))
	require.Equal(t, http.StatusInternalServerError, e.status)
	require.NotContains(t, e.body.Message, "journal"+string(filepath.Separator))
	require.Contains(t, logs.String(), "no space")
}

// The hand-written answer of a one-record produce is exactly what
// encoding/json writes for the shared wire type.
func TestAPIProduceEncodeOne(t *testing.T) {
	for _, res := range []cluster.SendResult{
		{SendResult: client.SendResult{Partition: 0, Offset: 0, Timestamp: 0}, LeaderBrokerID: 1, Brokers: []int{1}},
		{SendResult: client.SendResult{Partition: 63, Offset: 1<<64 - 1, Timestamp: -1}, LeaderBrokerID: 64, Brokers: []int{2, 3, 64}},
		{SendResult: client.SendResult{Partition: 1, Offset: 5, Timestamp: 1733131200000000000}, LeaderBrokerID: 2, Brokers: nil},
	} {
		want, err := json.Marshal(apiclient.ProduceResponse{Records: []apiclient.ProduceResult{produceResult(res)}})
		require.NoError(t, err)
		require.Equal(t, string(want)+"\n", string(encodeOneResult(res)))
	}
}

func TestAPIParseNumbers(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
		n  uint64
	}{
		{"0", true, 0}, {"007", true, 7}, {"18446744073709551615", true, 1<<64 - 1},
		{"18446744073709551616", false, 0}, {"", false, 0}, {"-1", false, 0}, {"+1", false, 0},
		{" 1", false, 0}, {"1e3", false, 0}, {"0x10", false, 0}, {"1_000", false, 0},
	} {
		n, ok := parseUint(tt.in, 1<<64-1)
		require.Equal(t, tt.ok, ok, tt.in)
		require.Equal(t, tt.n, n, tt.in)
	}
	_, ok := parseIndex("2147483648", 0)
	require.False(t, ok, "above maxIndex")
	_, ok = parseIndex("0", 1)
	require.False(t, ok, "below lo")
}

func TestAPICleanPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/api/topics": true, "/api/topics/": true,
		"": false, "api": false, "//api": false, "/api/./x": false, "/api/../x": false, "/api/x/..": false, "/a//b": false,
	} {
		require.Equal(t, want, cleanPath(p), p)
	}
}
