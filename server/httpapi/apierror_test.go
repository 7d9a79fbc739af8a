package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/topic"
)

// Paths of a data directory, as the libraries put them in their errors.
const (
	testRoot     = "/srv/pystream/data"
	leaderLog    = testRoot + "/broker-000001/topics/orders/partition-000000/00000000000000000000.log"
	followerLog  = testRoot + "/broker-000002/topics/orders/partition-000000/00000000000000000000.log"
	journalLog   = testRoot + "/journal/log.bin"
	offsetFile   = testRoot + "/offsets/billing/orders/partition-000000.offset"
	clusterMeta  = testRoot + "/cluster.meta"
	thirdReplica = testRoot + "/broker-000003/topics/orders/partition-000001/00000000000000000000.log"
)

// fsyncFailed is what a log returns when the fsync of an append fails.
// The cluster node's errors as their packages write them
// (server/clusternode, server/raftmeta); the HTTP API sees them only as
// server/nodebackend marks them.
var (
	errBrokerIsProcess = errors.New("cluster: in cluster mode a broker is a process of its own")
	errNoLeader        = errors.New("clusternode: the cluster has no controller leader")
	errNotLeader       = errors.New("raftmeta: not the leader")
	errLeadershipLost  = errors.New("raftmeta: leadership lost before the command committed; its outcome is unknown")
	errRaftClosed      = errors.New("raftmeta: node closed")
)

// peerError is a peer's refusal of a forwarded request as
// server/nodebackend passes it on: kind, and the peer's message.
func peerError(kind error, code, message string) error {
	return &backend.PeerError{Message: message, Kind: kind, Err: fmt.Errorf("replication: %s: %s", code, message)}
}

func fsyncFailed(path string) error {
	return fmt.Errorf("log: append to %s: fsync after writing 20 bytes at byte 0: %w", path,
		&fs.PathError{Op: "fdatasync", Path: path, Err: syscall.EIO})
}

// Contract (docs/phase-6-network-api.md § Requests and errors): every library
// error maps to its status and code, 503s and divergence carry the broker
// ids, regressions the committed and requested offsets; and the message
// says what failed in PyStream's terms, built from the typed errors'
// fields: no path, no package prefix, nothing said twice.
func TestAPIErrorClassify(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("context: %w", err) }
	offsetMismatch := fmt.Errorf("log: append to %s: record 0 has offset 1055, want 1053: %w", followerLog, log.ErrOffsetMismatch)
	tests := []struct {
		name    string
		err     error
		status  int
		code    string
		brokers []int
		message string
	}{
		{"invalid name", fmt.Errorf("topic: name %q: %w", "a b", topic.ErrInvalidName), 400, CodeInvalidArgument, nil,
			`name "a b": invalid name`},
		{"partition count", wrap(cluster.ErrInvalidPartitionCount), 400, CodeInvalidArgument, nil,
			"context: invalid partition count"},
		{"replication factor", wrap(cluster.ErrInvalidReplicationFactor), 400, CodeInvalidArgument, nil,
			"context: invalid replication factor"},
		{"cluster argument", wrap(cluster.ErrInvalidArgument), 400, CodeInvalidArgument, nil,
			"context: invalid argument"},
		{"unknown topic", fmt.Errorf("cluster: topic %q: %w", "nope", cluster.ErrUnknownTopic), 404, CodeNotFound, nil,
			`topic "nope": unknown topic`},
		{"partition out of range", fmt.Errorf("cluster: topic %q has %d partition(s), no partition %d: %w", "orders", 2, 7, topic.ErrPartitionOutOfRange), 404, CodeNotFound, nil,
			`topic "orders" has 2 partition(s), no partition 7: partition out of range`},
		{"unknown broker", fmt.Errorf("cluster: stop broker %d: %w", 9, cluster.ErrUnknownBroker), 404, CodeNotFound, nil,
			"stop broker 9: unknown broker"},
		{"not assigned", fmt.Errorf("cluster: catch up orders/0 on broker 3: broker 3: %w", cluster.ErrNotAssigned), 404, CodeNotFound, nil,
			"catch up orders/0 on broker 3: broker is not assigned to the partition"},
		{"topic exists, other settings", &cluster.TopicExistsError{Topic: "t", PartitionCount: 3, ReplicationFactor: 2}, 409, CodeConflict, nil,
			`topic "t" exists with 3 partition(s) and replication factor 2, not the settings requested`},
		{"deletion pending", &cluster.DeletionPendingError{Topic: "orders", Brokers: []int{2, 3}}, 409, CodeConflict, []int{2, 3},
			`topic "orders" is still being deleted: broker(s) 2 and 3 have not yet removed its files; it can be created again once they have (each does as soon as it runs)`},
		{"topic name case twin", &cluster.TopicNameConflictError{Topic: "orders", Existing: "Orders"}, 409, CodeConflict, nil,
			`create topic "orders": differs only in letter case from the existing topic "Orders"`},
		{"open logs limit", &cluster.OpenLogsLimitError{Topic: "big", Requested: 3072, Held: 9, Limit: 768}, 409, CodeConflict, nil,
			`create topic "big": 3072 replica log(s) (partitions x replication factor) with the 9 the cluster holds would exceed the limit of 768 open replica logs (PYSTREAM_MAX_OPEN_LOGS)`},
		{"leader still available", wrap(&cluster.LeaderStillAvailableError{Topic: "orders", BrokerID: 1}), 409, CodeConflict, nil,
			"orders/0: leader broker 1 is still available; failover replaces a failed leader (move-leader moves a live one)"},
		{"replica active", fmt.Errorf("cluster: recover orders/0 on broker 2: %w", cluster.ErrReplicaActive), 409, CodeConflict, nil,
			"recover orders/0 on broker 2: replica is already active"},
		{"replica is leader", fmt.Errorf("cluster: catch up orders/0 on broker 1: broker 1: %w", cluster.ErrReplicaIsLeader), 409, CodeConflict, nil,
			"catch up orders/0 on broker 1: replica is the partition's leader"},
		{"replica inactive", fmt.Errorf("cluster: move leader of orders/0 to broker 3: broker 3: %w", cluster.ErrReplicaInactive), 409, CodeConflict, nil,
			"move leader of orders/0 to broker 3: replica is not active"},
		// A failed operation whose failure could not be journaled either
		// is answered for its own error.
		{"refused, journal failed too", errors.Join(wrap(&cluster.ReplicaDivergenceError{Topic: "orders", BrokerID: 2, Offset: 4, Reason: "payload differs"}), errJournalFailed), 409, CodeConflict, []int{2},
			"orders/0: broker 2's replica diverges at offset 4: payload differs"},
		{"failed, journal failed too", errors.Join(errors.New("cluster: leadership not changed: disk full"), errJournalFailed), 500, CodeInternal, nil,
			"internal server error; the server log has the cause"},
		{"divergence", wrap(&cluster.ReplicaDivergenceError{Topic: "orders", Partition: 1, BrokerID: 3, Offset: 7, Reason: "timestamp 5 vs 6"}), 409, CodeConflict, []int{3},
			"orders/1: broker 3's replica diverges at offset 7: timestamp 5 vs 6"},
		{"payload too large", fmt.Errorf("cluster: orders/0: record 2: 2000000 bytes, maximum 1048576: %w", log.ErrPayloadTooLarge), 413, CodePayloadTooLarge, nil,
			"orders/0: record 2: 2000000 bytes, maximum 1048576: payload too large"},
		{"leader unavailable", wrap(&cluster.LeaderUnavailableError{Topic: "orders", BrokerID: 1, Err: fmt.Errorf("cluster: broker 1: %w", cluster.ErrBrokerUnavailable)}), 503, CodeUnavailable, []int{1},
			"orders/0: leader broker 1 is unavailable (the broker is stopped)"},
		// The example: a follower whose log is not where the
		// leader's was.
		{"replication failed, offset mismatch", wrap(&cluster.ReplicationError{Topic: "orders", Offset: 1053, Count: 3, BrokerIDs: []int{2},
			Err: errors.Join(fmt.Errorf("broker 2: %w", offsetMismatch))}), 503, CodeUnavailable, []int{2},
			"orders/0: broker 2's replica did not take records 1053..1055 (its log does not end where the leader's did); not acknowledged: the leader holds them, broker 2 lags until a catch-up"},
		{"replication failed on two", &cluster.ReplicationError{Topic: "orders", Offset: 9, Count: 1, BrokerIDs: []int{2, 3},
			Err: errors.Join(fmt.Errorf("broker 2: %w", fsyncFailed(followerLog)), fmt.Errorf("broker 3: cluster: broker 3: %w", cluster.ErrBrokerUnavailable))}, 503, CodeUnavailable, []int{2, 3},
			"orders/0: brokers 2 and 3 did not take record 9 (broker 2: fsync failed: input/output error; broker 3: the broker is stopped); not acknowledged: the leader holds it, the followers lag until a catch-up"},
		{"replication failed, cause unknown", &cluster.ReplicationError{Topic: "orders", Offset: 9, Count: 1, BrokerIDs: []int{2}, Err: errors.New("x")}, 503, CodeUnavailable, []int{2},
			"orders/0: broker 2's replica did not take record 9; not acknowledged: the leader holds it, broker 2 lags until a catch-up"},
		{"no eligible replica", wrap(&cluster.NoEligibleReplicaError{Topic: "orders", LeaderBrokerID: 1,
			Reason: "broker 2: cluster: broker 2: cluster: broker unavailable; broker 3: inactive"}), 503, CodeUnavailable, []int{1},
			"orders/0: no follower can replace leader broker 1: broker 2: broker unavailable; broker 3: inactive"},
		{"broker unavailable", fmt.Errorf("cluster: broker 2: %w", cluster.ErrBrokerUnavailable), 503, CodeUnavailable, nil,
			"broker 2: broker unavailable"},
		// Cluster mode: a node the request was forwarded to does not
		// answer; the network's own words are the server log's.
		{"node unavailable", fmt.Errorf("cluster: failover orders/0 on the controller: %w", fmt.Errorf("replication: operate: node 127.0.0.1:7002 does not answer: %w: %w",
			cluster.ErrBrokerUnavailable, &url.Error{Op: "Post", URL: "http://127.0.0.1:7002/v1/operate", Err: io.ErrClosedPipe})), 503, CodeUnavailable, nil,
			"failover orders/0 on the controller: operate: node 127.0.0.1:7002 does not answer: broker unavailable"},
		{"closed", cluster.ErrClosed, 503, CodeUnavailable, nil,
			"the cluster is closed; the server is shutting down"},
		{"leader fsync failed", fmt.Errorf("cluster: orders/0: leader broker 1: %w", fsyncFailed(leaderLog)), 500, CodeInternal, nil,
			"orders/0: broker 1's replica log: fsync failed: input/output error"},
		{"leader failed earlier", fmt.Errorf("cluster: orders/0: leader broker 1: log: append to %s: %w", leaderLog, fmt.Errorf("%w: %w", log.ErrFailed, fsyncFailed(leaderLog))), 500, CodeInternal, nil,
			"orders/0: broker 1's replica log refuses writes since an earlier write failed (fsync failed: input/output error); stop and start broker 1 to reopen it"},
		{"corruption", fmt.Errorf("cluster: broker 3: open replica orders/1: log: open %s: %w", thirdReplica,
			&log.CorruptionError{Path: thirdReplica, Pos: 120, Offset: 3, OffsetKnown: true, Reason: "record_length 9 disagrees with payload_length 4"}), 500, CodeInternal, nil,
			"orders/1: broker 3's replica log is damaged at byte 120 (offset 3): record_length 9 disagrees with payload_length 4"},
		{"torn tail", &log.CorruptionError{Path: journalLog, Pos: 40, Reason: "4 bytes left, fewer than a header", TornTail: true}, 500, CodeInternal, nil,
			"the cluster journal is cut short (a torn tail) at byte 40: 4 bytes left, fewer than a header"},
		{"offset file damaged", &client.OffsetCorruptionError{Path: offsetFile, Reason: "not an offset file"}, 500, CodeInternal, nil,
			"consumer billing's committed offset of orders/0 is damaged: not an offset file; it is never overwritten, an operator must deal with it"},
		{"offset store failed", fmt.Errorf("client: commit: %w", client.ErrStoreFailed), 500, CodeInternal, nil,
			"the consumer offset store refuses writes since an earlier write failed; restart the server to reopen it"},
		{"cluster metadata failed", fmt.Errorf("%w: %w", cluster.ErrMetadataFailed, fmt.Errorf("cluster: write %s: %w", clusterMeta, syscall.ENOSPC)), 507, CodeInsufficientStorage, nil,
			"the cluster metadata (cluster.meta): a write met a full disk (no space left on device) and the file's content is in doubt; restart the server to reopen the cluster"},
		{"cluster metadata write", fmt.Errorf("cluster: write %s: %w", clusterMeta, &fs.PathError{Op: "rename", Path: clusterMeta + ".tmp", Err: syscall.ENOSPC}), 507, CodeInsufficientStorage, nil,
			"the cluster metadata (cluster.meta): the disk is full (no space left on device); nothing was acknowledged"},
		// A full disk is 507 naming the broker, never a path, and a
		// follower's is not "unavailable" (docs/phase-6-network-api.md, 507).
		{"follower disk full", &cluster.ReplicationError{Topic: "orders", Partition: 0, BrokerIDs: []int{2}, Offset: 5, Count: 3,
			Err: fmt.Errorf("broker 2: %w", &fs.PathError{Op: "write", Path: thirdReplica, Err: syscall.ENOSPC})}, 507, CodeInsufficientStorage, []int{2},
			"orders/0: broker 2's replica did not take records 5..7: the disk is full (no space left on device); not acknowledged: the leader holds them, and once space returns a catch-up reopens the follower and copies them"},
		{"leader disk full, sticky", fmt.Errorf("cluster: orders/1: leader broker 3: %w", fmt.Errorf("%w: %w", log.ErrFailed, &fs.PathError{Op: "fdatasync", Path: thirdReplica, Err: syscall.EDQUOT})), 507, CodeInsufficientStorage, []int{3},
			"orders/1: broker 3's replica log: broker 3's disk is full (disk quota exceeded); nothing was acknowledged; once space returns, reopen broker 3's failed logs (stop and start it)"},
		{"offset disk full", fmt.Errorf("client: commit: %w (%w)", client.ErrStoreFailed, &fs.PathError{Op: "write", Path: offsetFile + ".tmp", Err: syscall.ENOSPC}), 507, CodeInsufficientStorage, nil,
			"consumer billing's committed offset of orders/0: the disk is full (no space left on device); nothing was acknowledged; consumer billing's commits are refused until the offset store is reopened (a server restart); other consumers' are not"},
		// Cluster mode (server/clusternode), as server/nodebackend marks
		// its node's errors (TestNodeBackendMarksErrors): an operation of
		// the embedded cluster it does not offer, a metadata group
		// without a leader, a peer's refusal. The texts are the node's.
		{"broker is a process", backend.Mark(fmt.Errorf("stop broker 1: stop its process instead: %w", errBrokerIsProcess), backend.ErrNotInThisMode), 409, CodeConflict, nil,
			"stop broker 1: stop its process instead: in cluster mode a broker is a process of its own"},
		{"no leader", backend.Mark(fmt.Errorf("%w: %w", errNoLeader, errNotLeader), backend.ErrNoController), 503, CodeUnavailable, nil,
			"the cluster has no controller: its metadata group has no leader (an election is under way, or a majority of the nodes is unreachable); try again"},
		{"not the leader", backend.Mark(errNotLeader, backend.ErrLeaderMoved), 503, CodeUnavailable, nil,
			"the metadata group's leadership moved while the request was on its way; try again"},
		{"leadership lost", backend.Mark(fmt.Errorf("raftmeta: add voter 4: %w", errLeadershipLost), backend.ErrOutcomeUnknown), 503, CodeUnavailable, nil,
			"the metadata group's leader lost its place before the change committed; its outcome is unknown (a majority of the nodes must be reachable)"},
		{"node closed", backend.Mark(fmt.Errorf("raftmeta: servers: %w", errRaftClosed), backend.ErrNodeClosed), 503, CodeUnavailable, nil,
			"this node is closed: it is shutting down, or was removed from the metadata group"},
		{"no healing switch", backend.ErrNoHealingSwitch, 409, CodeConflict, nil,
			"this server runs no controller to switch"},
		{"peer refused a bad request", peerError(backend.ErrPeerBadRequest, "bad-request", "adding node 4 needs its internal address"), 400, CodeInvalidArgument, nil,
			"adding node 4 needs its internal address"},
		{"peer unavailable", peerError(backend.ErrPeerUnavailable, "unavailable", "raftmeta: add voter 4: "+errLeadershipLost.Error()), 503, CodeUnavailable, nil,
			"the node that was asked cannot serve it now: add voter 4: leadership lost before the command committed; its outcome is unknown"},
		{"unknown", errors.New("something: at /srv/other/x.go"), 500, CodeInternal, nil,
			"internal server error; the server log has the cause"},
		{"batch", &topic.BatchError{Topic: "orders", Partitions: map[int]error{
			2: &cluster.ReplicationError{Topic: "orders", Partition: 2, BrokerIDs: []int{3}, Offset: 5, Count: 1, Err: errors.New("x")},
			0: &cluster.LeaderUnavailableError{Topic: "orders", BrokerID: 1, Err: cluster.ErrBrokerUnavailable},
			1: fmt.Errorf("cluster: orders/1: leader broker 2: %w", errors.New("x")),
		}}, 503, CodeUnavailable, []int{1, 3},
			"the write failed on 3 partitions of topic \"orders\": orders/0: leader broker 1 is unavailable (the broker is stopped); " +
				"orders/1: internal server error; the server log has the cause; " +
				"orders/2: broker 3's replica did not take record 5; not acknowledged: the leader holds it, broker 3 lags until a catch-up"},
		{"batch of one partition", &topic.BatchError{Topic: "orders", Partitions: map[int]error{
			0: &cluster.LeaderUnavailableError{Topic: "orders", BrokerID: 1, Err: cluster.ErrBrokerUnavailable},
		}}, 503, CodeUnavailable, []int{1},
			"orders/0: leader broker 1 is unavailable (the broker is stopped)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify(tt.err)
			require.Equal(t, tt.status, e.status)
			require.Equal(t, tt.code, e.body.Code)
			require.Equal(t, tt.brokers, e.body.BrokerIDs)
			require.Equal(t, tt.message, e.body.Message)
			require.NotContains(t, e.body.Message, testRoot)
			require.NotRegexp(t, apitest.PackagePrefix, e.body.Message)
			require.Equal(t, tt.err, e.cause, "the whole error is kept for the server log")
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

	e = classify(wrap(&client.OffsetRegressionError{ConsumerID: "billing", Topic: "orders", Committed: 5, Requested: 3}))
	require.Equal(t, http.StatusConflict, e.status)
	require.Equal(t, uint64(5), *e.body.Committed)
	require.Equal(t, uint64(3), *e.body.Requested)
	require.Equal(t, "consumer billing: offset 3 of orders/0 is below the committed offset 5; a commit never moves backwards (a reset does)", e.body.Message)

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

// The files of the data directory are named as what they are, from the
// end of their path alone.
func TestAPIErrorDataFileNames(t *testing.T) {
	for path, want := range map[string]string{
		leaderLog:    "orders/0: broker 1's replica log",
		thirdReplica: "orders/1: broker 3's replica log",
		testRoot + "/broker-000001/topics/orders/partition-000000/quarantine-3-4-17.bin": "orders/0: a file beside broker 1's replica log",
		testRoot + "/broker-000002/topics/orders/topic.meta":                             "topic orders: broker 2's topic.meta",
		testRoot + "/broker-000002/topics":                                               "broker 2's directory",
		journalLog:                                                                       "the cluster journal",
		testRoot + "/broker-000003/wal/00000000000000000007.wal":                         "broker 3's commit journal",
		testRoot + "/broker-000003/wal/00000000000000000007.wal.aside-12":                "broker 3's directory",
		offsetFile:           "consumer billing's committed offset of orders/0",
		clusterMeta:          "the cluster metadata (cluster.meta)",
		clusterMeta + ".tmp": "the cluster metadata (cluster.meta)",
		testRoot + "/.lock":  "the data directory's lock file",
		"/etc/passwd":        "a file of the data directory",
		"journal/log.bin":    "the cluster journal",
		"partition-000000/00000000000000000000.log": "a file of the data directory",
		"/x/broker-1/topics/t/p/log.bin":            "a file of the data directory",
	} {
		require.Equal(t, want, parseDataFile(path).String(), path)
	}
}

// tidy: package prefixes dropped, a part repeated down the chain said
// once, absolute paths named as what they are.
func TestAPIErrorTidy(t *testing.T) {
	for in, want := range map[string]string{
		`cluster: topic "nope": cluster: unknown topic`:               `topic "nope": unknown topic`,
		"cluster: broker 2: cluster: broker 2: log: closed":           "broker 2: closed",
		"log: open " + leaderLog + ": permission denied":              "open orders/0: broker 1's replica log: permission denied",
		"log: " + journalLog + ": corrupt at byte 3: payload differs": "the cluster journal: corrupt at byte 3: payload differs",
		"no endpoint": "no endpoint",
		"":            "",
	} {
		require.Equal(t, want, tidy(in), in)
	}
}

// Every path under the data directory in a message becomes the name of
// what it is, and the directory itself "the data directory"; a longer name
// that only starts like it is left alone. relativePaths (the journal's
// entries) makes the same paths relative.
func TestAPIErrorScrubPaths(t *testing.T) {
	msg := "append to " + leaderLog + ": sync " + testRoot + ": no; see " + testRoot + "-old/x and (" + journalLog + ")"
	require.Equal(t, "append to orders/0: broker 1's replica log: sync the data directory: no; see "+testRoot+"-old/x and (the cluster journal)",
		scrubPaths(msg, testRoot))
	require.Equal(t, "append to broker-000001/topics/orders/partition-000000/00000000000000000000.log: sync .: no; see "+testRoot+"-old/x and (journal/log.bin)",
		rewritePaths(msg, testRoot, func(rel string) string {
			if rel == "" {
				return "."
			}
			return rel
		}))
	require.Equal(t, "no endpoint GET /api/nope", scrubPaths("no endpoint GET /api/nope", testRoot))
	require.Equal(t, msg, scrubPaths(msg, ""), "no root, nothing to scrub")
}

// An error answer written through the middleware carries the request id in
// its body and header, names no path of the data directory whoever built
// its message, and leaves the whole error, with the operation's name, in
// the server log under that id.
func TestAPIErrorLoggedWithRequestID(t *testing.T) {
	s, logs := newTestServer(t, defaults())
	root := s.Cluster().Root()
	journal := filepath.Join(root, "journal", "log.bin")
	var lines apitest.SyncBuffer
	logger := jsonLogger(&lines)
	h := observe(logger, testMetrics(t), root, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/op":
			writeAPIError(w, s.opError("recover", fmt.Errorf("cluster: recover orders/0: %w", &log.CorruptionError{Path: journal, Reason: "bad frame"})))
		case "/handler":
			writeError(w, http.StatusNotFound, CodeNotFound, "no replica at "+filepath.Join(root, "broker-000002"))
		}
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, apitest.LocalRequest("GET", "/op", nil))
	resp := rec.Result()
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	body := apitest.DecodeError(t, resp)
	id := resp.Header.Get(RequestIDHeader)
	require.Regexp(t, `^[0-9a-f]{16}$`, id)
	require.Equal(t, id, body.RequestID)
	require.Equal(t, "the cluster journal is damaged at byte 0: bad frame", body.Message)
	failure := apitest.LogLine(t, lines.String(), id, "request failed")
	require.Equal(t, "ERROR", failure["level"])
	require.Equal(t, "recover: cluster: recover orders/0: log: "+journal+": corrupt at byte 0: bad frame", failure["error"],
		"the server log has the whole error")
	require.Equal(t, body.Message, failure["message"])
	require.Equal(t, float64(500), apitest.LogLine(t, lines.String(), id, "request")["status"])
	require.Empty(t, logs.String(), "the server's own logger saw nothing of this handler")

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, apitest.LocalRequest("GET", "/handler", nil))
	body = apitest.DecodeError(t, rec.Result())
	require.Equal(t, "no replica at broker 2's directory", body.Message)
	require.Equal(t, rec.Result().Header.Get(RequestIDHeader), body.RequestID)
}

// A client's own X-Request-Id is kept when it is one of 1 to 64 safe
// characters; anything else (too long, a space, a newline, two of them)
// is replaced by a fresh id.
func TestAPIErrorRequestIDFromClient(t *testing.T) {
	h := observe(slog.New(slog.DiscardHandler), testMetrics(t), "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, CodeNotFound, "nothing here")
	}))
	send := func(ids ...string) (header, body string) {
		req := apitest.LocalRequest("GET", "/", nil)
		for _, id := range ids {
			req.Header.Add(RequestIDHeader, id)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result().Header.Get(RequestIDHeader), apitest.DecodeError(t, rec.Result()).RequestID
	}
	for _, id := range []string{"abc", "0b9f6c2e-3d4a-4f5b-8c7d-1e2f3a4b5c6d", "01J9ZQ3V5K8M2N4P6R8T0V2X4Z", "lb-1:req.42_x", strings.Repeat("a", 64)} {
		header, body := send(id)
		require.Equal(t, id, header)
		require.Equal(t, id, body)
	}
	for _, ids := range [][]string{{strings.Repeat("a", 65)}, {"a b"}, {"a\"b"}, {"ü"}, {"a", "b"}, {""}} {
		header, body := send(ids...)
		require.Regexp(t, `^[0-9a-f]{16}$`, header, ids)
		require.Equal(t, header, body)
	}
	a, _ := send()
	b, _ := send()
	require.NotEqual(t, a, b, "each request its own id")
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

// docs/phase-6-network-api.md § Requests and errors
// A read below the log start is 416 offset_out_of_range, its body carrying
// log_start and high_watermark as Kafka's OFFSET_OUT_OF_RANGE carries the
// range.
func TestHTTPOffsetOutOfRangeBody(t *testing.T) {
	e := classify(&client.OffsetOutOfRangeError{Topic: "orders", Partition: 1, Offset: 2, LogStart: 5, HighWatermark: 9})
	rec := httptest.NewRecorder()
	writeAPIError(rec, e)
	require.Equal(t, http.StatusRequestedRangeNotSatisfiable, rec.Code)
	var raw struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &raw))
	require.Equal(t, "offset_out_of_range", raw.Error["code"])
	require.Equal(t, 5.0, raw.Error["log_start"])
	require.Equal(t, 9.0, raw.Error["high_watermark"])
	require.Contains(t, raw.Error["message"], "orders/1: offset 2 is below the log start 5")
}
