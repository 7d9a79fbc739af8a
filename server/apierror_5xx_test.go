package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/wal"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// faultServer is a server in manual mode (nothing fails over on its own)
// on a logtest.FaultFS, logging JSON at DEBUG to a buffer the test reads.
type faultServer struct {
	srv  *Server
	dir  string
	logs *apitest.SyncBuffer
	// fail decides the fate of a file-system operation; nil: none fails.
	fail atomic.Pointer[logtest.Fault]
}

func newFaultServer(t *testing.T) *faultServer {
	return newFaultServerSyncing(t, Defaults().SharedSync)
}

// newFaultServerSyncing is newFaultServer whose appends are made durable
// as mode says (PYSTREAM_SHARED_SYNC): a fault aimed at a replica log's own
// fsync needs SyncOwnFile, since through the commit journal an append
// fsyncs the journal's file instead.
func newFaultServerSyncing(t *testing.T, mode SyncMode) *faultServer {
	t.Helper()
	f := &faultServer{dir: t.TempDir(), logs: &apitest.SyncBuffer{}}
	cfg := Defaults()
	cfg.SharedSync = mode
	cfg.DataDir = f.dir
	cfg.FailoverAfter = 0
	cfg.LogFormat = FormatJSON
	cfg.LogLevel = LogLevel(LevelDebug)
	fsys := logtest.NewFaultFS(nil)
	fsys.SetFault(func(op logtest.Op, path string) error {
		if fault := f.fail.Load(); fault != nil {
			return (*fault)(op, path)
		}
		return nil
	})
	s, err := newServer(cfg, NewLogger(f.logs, cfg), fsys)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() }) // some tests leave a log failed on purpose
	f.srv = s
	return f
}

// failOn makes op fail on every file whose path ends with suffix (a
// relative path of the data directory), until clear.
func (f *faultServer) failOn(op logtest.Op, suffix string) { f.failFrom(op, suffix, 1) }

// failFrom is failOn from the n-th such operation on (1-based).
func (f *faultServer) failFrom(op logtest.Op, suffix string, n int) {
	var seen atomic.Int64
	fault := logtest.Fault(func(o logtest.Op, path string) error {
		if o == op && strings.HasSuffix(path, filepath.FromSlash(suffix)) && seen.Add(1) >= int64(n) {
			return logtest.ErrInjected
		}
		return nil
	})
	f.fail.Store(&fault)
}

func (f *faultServer) clear() { f.fail.Store(nil) }

// do sends a request through the server's handler.
func (f *faultServer) do(t *testing.T, method, target, body string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := apitest.LocalRequest(method, target, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, req)
	return rec.Result()
}

// ok sends a request that must succeed.
func (f *faultServer) ok(t *testing.T, method, target, body string) {
	t.Helper()
	resp := f.do(t, method, target, body)
	raw, _ := io.ReadAll(resp.Body)
	require.Less(t, resp.StatusCode, 300, string(raw))
}

// failed checks an error answer the way every 5xx must be: the status and
// code, the request id in the header and the body, no path (neither the
// data directory nor any /tmp) and no library prefix anywhere in the body,
// the message in PyStream's terms, and the request's lines in the server
// log under the same id, with the whole error (which names the file) when
// there is a cause. It returns the body.
func (f *faultServer) failed(t *testing.T, resp *http.Response, status int, code, message, logged string) apiclient.ErrorBody {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, status, resp.StatusCode, string(raw))
	var e apiclient.ErrorResponse
	require.NoError(t, json.Unmarshal(raw, &e))
	body := e.Error
	require.Equal(t, code, body.Code)
	id := resp.Header.Get(apiclient.RequestIDHeader)
	require.Regexp(t, `^[0-9a-f]{16}$`, id)
	require.Equal(t, id, body.RequestID)
	for _, bad := range []string{f.dir, os.TempDir(), "/tmp", ".bin", ".offset"} {
		require.NotContains(t, string(raw), bad, "no path in the answer")
	}
	require.NotRegexp(t, apitest.PackagePrefix, body.Message)
	for _, r := range body.Records {
		if r.Error != nil {
			require.NotRegexp(t, apitest.PackagePrefix, r.Error.Message)
		}
	}
	if message != "" {
		require.Equal(t, message, body.Message)
	}

	logs := f.logs.String()
	require.Equal(t, float64(status), apitest.LogLine(t, logs, id, "request")["status"])
	if logged != "" {
		line := apitest.LogLine(t, logs, id, "request failed")
		want := "WARNING"
		if status == http.StatusInternalServerError {
			want = "ERROR"
		}
		require.Equal(t, want, line["level"])
		require.Equal(t, body.Message, line["message"])
		require.Contains(t, line["error"], logged, "the server log has the whole error")
	}
	return body
}

const createOrders = `{"name":"orders","partitions":1,"replication_factor":3}`

// Contract (docs/phase-6-network-api.md § Requests and errors): every 5xx
// the server can answer, provoked for real, says what failed in PyStream's
// terms with no path and no library chain, carries the request id in
// header and body, and leaves the whole error in the server log under it.
// The leader is broker 1 (placement starts there).
func TestAPIError5xxLeaderUnavailable(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	f.ok(t, "POST", "/api/brokers/1/stop", "")

	body := f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`),
		503, apiclient.CodeUnavailable, "orders/0: leader broker 1 is unavailable (the broker is stopped)", "orders/0: leader broker 1 unavailable")
	require.Equal(t, []int{1}, body.BrokerIDs)
	require.Equal(t, body.Message, body.Records[0].Error.Message)

	f.failed(t, f.do(t, "GET", "/api/topics/orders/partitions/0/records", ""),
		503, apiclient.CodeUnavailable, "orders/0: leader broker 1 is unavailable (the broker is stopped)", "leader broker 1 unavailable")

	// Not ready: a 503 without a library cause; its reasons are the
	// detail, and its request line carries the id.
	var ready *http.Response
	require.Eventually(t, func() bool { // the controller's next pass sees it
		ready = f.do(t, "GET", "/api/ready", "")
		return ready.StatusCode == http.StatusServiceUnavailable
	}, 5*time.Second, 10*time.Millisecond)
	body = f.failed(t, ready, 503, apiclient.CodeUnavailable, "not ready: orders/0: leader 1 is unavailable", "")
	require.NotEmpty(t, body.Reasons)

	// A catch-up that needs a stopped broker.
	f.ok(t, "POST", "/api/brokers/1/start", "")
	f.ok(t, "POST", "/api/brokers/2/stop", "")
	f.failed(t, f.do(t, "POST", "/api/topics/orders/partitions/0/replicas/2/catch-up", ""),
		503, apiclient.CodeUnavailable, "catch up orders/0 on broker 2: broker unavailable", "broker unavailable")
}

// A follower whose fsync fails refuses the write: 503 naming it, the
// record not acknowledged.
func TestAPIError5xxFollowerRefusesWrite(t *testing.T) {
	f := newFaultServerSyncing(t, SyncOwnFile)
	f.ok(t, "POST", "/api/topics", createOrders)
	f.failOn(logtest.OpSync, "broker-000002/topics/orders/partition-000000/00000000000000000000.log")
	defer f.clear()
	body := f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`),
		503, apiclient.CodeUnavailable,
		"orders/0: broker 2's replica did not take record 0 (fsync failed); not acknowledged: the leader holds it, broker 2 lags until a catch-up",
		filepath.Join(f.dir, "broker-000002", "topics", "orders", "partition-000000", "00000000000000000000.log"))
	require.Equal(t, []int{2}, body.BrokerIDs)
}

// The leader's fsync fails: 500 naming the replica log; the log then
// refuses every write until its broker is restarted, and says so.
func TestAPIError5xxLeaderFsyncFails(t *testing.T) {
	f := newFaultServerSyncing(t, SyncOwnFile)
	f.ok(t, "POST", "/api/topics", createOrders)
	leaderLog := filepath.Join(f.dir, "broker-000001", "topics", "orders", "partition-000000", "00000000000000000000.log")
	f.failOn(logtest.OpSync, "broker-000001/topics/orders/partition-000000/00000000000000000000.log")
	f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`),
		500, apiclient.CodeInternal, "orders/0: broker 1's replica log: fsync failed", leaderLog)
	f.clear()
	f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yg=="}]}`),
		500, apiclient.CodeInternal,
		"orders/0: broker 1's replica log refuses writes since an earlier write failed (fsync failed); stop and start broker 1 to reopen it",
		leaderLog)
	// As the message says.
	f.ok(t, "POST", "/api/brokers/1/stop", "")
	f.ok(t, "POST", "/api/brokers/1/start", "")
	f.ok(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yw=="}]}`)
}

// Through the commit journal (the default), the follower's append is made
// durable by an fsync of its broker's journal: its failure is the
// follower's failed write, as above.
func TestAPIError5xxFollowerJournalFsyncFails(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	f.failOn(logtest.OpSync, "broker-000002/wal/"+wal.GenerationFileName(1))
	defer f.clear()
	body := f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`),
		503, apiclient.CodeUnavailable,
		"orders/0: broker 2's replica did not take record 0 (fsync failed); not acknowledged: the leader holds it, broker 2 lags until a catch-up",
		filepath.Join(f.dir, "broker-000002", "wal", wal.GenerationFileName(1)))
	require.Equal(t, []int{2}, body.BrokerIDs)
}

// The leader's journal fsync fails: the write is refused, the journal
// (and every log that met its failure) refuses writes until the broker is
// restarted, and the restart replays the journal.
func TestAPIError5xxLeaderJournalFsyncFails(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	journal := filepath.Join(f.dir, "broker-000001", "wal", wal.GenerationFileName(1))
	f.failOn(logtest.OpSync, "broker-000001/wal/"+wal.GenerationFileName(1))
	f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`),
		500, apiclient.CodeInternal, "broker 1's commit journal: fsync failed", journal)
	f.clear()
	f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yg=="}]}`),
		500, apiclient.CodeInternal,
		"broker 1's commit journal refuses writes since an earlier write failed (fsync failed); stop and start broker 1 to reopen it",
		journal)
	f.ok(t, "POST", "/api/brokers/1/stop", "")
	f.ok(t, "POST", "/api/brokers/1/start", "")
	f.ok(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yw=="}]}`)
}

// A damaged replica log: 500 naming the replica, the byte and the offset.
func TestAPIError5xxCorruptReplicaLog(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	f.ok(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="},{"value":"Yg=="}]}`)
	f.ok(t, "POST", "/api/brokers/1/stop", "")
	leaderLog := filepath.Join(f.dir, "broker-000001", "topics", "orders", "partition-000000", "00000000000000000000.log")
	data, err := os.ReadFile(leaderLog)
	require.NoError(t, err)
	for i := range data[:8] { // the first frame's length fields
		data[i] ^= 0xff
	}
	require.NoError(t, os.WriteFile(leaderLog, data, 0o644))
	f.ok(t, "POST", "/api/brokers/1/start", "")

	damaged := "orders/0: broker 1's replica log is damaged at byte 0 (offset 0): record_length 4294967274 is not 20 + payload_length 1"
	f.failed(t, f.do(t, "GET", "/api/topics/orders/partitions/0/records", ""), 500, apiclient.CodeInternal, damaged, leaderLog)
	f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yw=="}]}`), 500, apiclient.CodeInternal, damaged, leaderLog)
}

// No follower can take over: 503 naming the leader and why each follower
// was passed over.
func TestAPIError5xxNoEligibleReplica(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", `{"name":"pair","partitions":1,"replication_factor":2}`)
	f.ok(t, "POST", "/api/brokers/1/stop", "")
	f.ok(t, "POST", "/api/brokers/2/stop", "")
	body := f.failed(t, f.do(t, "POST", "/api/topics/pair/partitions/0/failover", ""), 503, apiclient.CodeUnavailable,
		"pair/0: no follower can replace leader broker 1: broker 2: broker unavailable", "cluster: pair/0: no follower can replace leader broker 1")
	require.Equal(t, []int{1}, body.BrokerIDs)
}

// The journal cannot be written: before an operation (its intent) the
// operation does not start, 500 naming the journal; after it (its
// outcome), 500 that says the operation took effect all the same. The
// journal's file is in the log only.
func TestAPIError5xxJournalFails(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	journal := filepath.Join(f.dir, "journal", "log.bin")
	f.failOn(logtest.OpSync, "journal/log.bin")
	f.failed(t, f.do(t, "POST", "/api/topics/orders/partitions/0/replicas/2/move-leader", ""),
		500, apiclient.CodeInternal, "the cluster journal: fsync failed", journal)

	f = newFaultServer(t) // a failed journal refuses writes until the cluster is reopened
	f.ok(t, "POST", "/api/topics", createOrders)
	journal = filepath.Join(f.dir, "journal", "log.bin")
	f.failFrom(logtest.OpSync, "journal/log.bin", 2)
	defer f.clear()
	f.failed(t, f.do(t, "POST", "/api/topics/orders/partitions/0/replicas/2/move-leader", ""),
		500, apiclient.CodeInternal, "the operation took effect, but its journal entry was not written; the server log has the cause", journal)
}

// The cluster metadata cannot be written: 500 naming it.
func TestAPIError5xxClusterMetaFails(t *testing.T) {
	f := newFaultServer(t)
	f.failOn(logtest.OpRename, "cluster.meta")
	f.failed(t, f.do(t, "POST", "/api/topics", createOrders), 500, apiclient.CodeInternal,
		"the cluster metadata (cluster.meta): rename failed", filepath.Join(f.dir, "cluster.meta"))
}

// A damaged committed offset, read through a handler this change did not
// touch: classify alone keeps its path out of the answer.
func TestAPIError5xxOffsetFileDamaged(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	f.ok(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`)
	f.ok(t, "PUT", "/api/consumers/billing/offsets/orders/0", `{"offset":1}`)
	file := filepath.Join(f.dir, "offsets", "billing", "orders", "partition-000000.offset")
	require.NoError(t, os.WriteFile(file, []byte("garbage"), 0o644))
	f.failed(t, f.do(t, "GET", "/api/consumers/billing/offsets/orders/0", ""), 500, apiclient.CodeInternal,
		"consumer billing's committed offset of orders/0 is damaged: not JSON; it is never overwritten, an operator must deal with it", file)
}

// docs/phase-6-network-api.md: a full disk says so. A follower whose disk
// is full answers 507 insufficient_storage naming the broker (not 503
// "unavailable": the broker is up), with no path; once space returns, the
// admin reopen (POST /api/brokers/{id}/reopen) opens its log again, a
// catch-up brings it level, and writes are acknowledged again — no restart
// of the server.
func TestAPIError507FollowerDiskFull(t *testing.T) {
	f := newFaultServer(t)
	f.ok(t, "POST", "/api/topics", createOrders)
	f.ok(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"YQ=="}]}`)
	full := logtest.FullDisk(func(path string) bool { return strings.Contains(path, "broker-000002") })
	f.fail.Store(&full)
	body := f.failed(t, f.do(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yg=="}]}`),
		http.StatusInsufficientStorage, apiclient.CodeInsufficientStorage, "", "")
	require.Equal(t, []int{2}, body.BrokerIDs)
	require.Contains(t, body.Message, "broker 2")

	f.clear() // space returns
	// The admin reopen opens broker 2's failed log again from disk, without
	// stopping the broker; a catch-up brings it level.
	resp := f.do(t, "POST", "/api/brokers/2/reopen", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var reopened apiclient.ReopenResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&reopened))
	// The controller's catch-up (planned in manual mode too) reopens a
	// failed follower itself and may have come first: then the reopen
	// finds nothing left to do. Either way what follows must work.
	require.Subset(t, []apiclient.ReplicaRef{{Topic: "orders", Partition: 0}}, reopened.Reopened, f.logs.String())
	f.ok(t, "POST", "/api/topics/orders/partitions/0/replicas/2/catch-up", "")
	f.ok(t, "POST", "/api/topics/orders/records", `{"records":[{"value":"Yw=="}]}`)
	// Nothing failed any more: a second reopen changes nothing.
	resp = f.do(t, "POST", "/api/brokers/2/reopen", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&reopened))
	require.Empty(t, reopened.Reopened)
}
