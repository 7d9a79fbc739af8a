package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
	"github.com/pystream/pystream/topic"
)

// produceValues writes one record per value to topic (round robin), each
// acknowledged.
func produceValues(t *testing.T, r *running, topicName string, values ...string) {
	t.Helper()
	for _, v := range values {
		_, err := r.client.ProduceRaw(t.Context(), topicName, nil, []byte(v))
		require.NoError(t, err)
	}
}

// partitionOf returns the status of topic/p.
func partitionOf(t *testing.T, r *running, topicName string, p int) apiclient.PartitionStatus {
	t.Helper()
	detail, err := r.client.Topic(t.Context(), topicName)
	require.NoError(t, err)
	return detail.Partitions[p]
}

// docs/phase-6-network-api.md § Move the leader: the status carries the
// leader epoch, the preferred replica and the placement; a move hands
// leadership to an active follower, the epoch goes up by one, the old
// leader stays an active follower, writes go through the new leader and
// nothing is lost.
func TestE2EMoveLeader(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 3, manual)
	c := r.client
	_, _, err := c.CreateTopic(ctx, "orders", 2, 3)
	require.NoError(t, err)
	k0 := []byte(keyForPartition(0, 2))
	produce0 := func(v string) apiclient.ProduceResult {
		t.Helper()
		res, err := c.Produce(ctx, "orders", []apiclient.ProduceRecord{{Key: k0, Value: []byte(v)}})
		require.NoError(t, err)
		require.Equal(t, 0, res.Records[0].Partition)
		return res.Records[0]
	}
	produce0("a")
	produce0("b")

	// docs/design.md § Placement: partition p is led by broker p+1, its
	// followers the next ones, ascending. The placement lists the preferred
	// leader first, then those followers; assigned is ascending.
	p0, p1 := partitionOf(t, r, "orders", 0), partitionOf(t, r, "orders", 1)
	require.Equal(t, []int{1, 2, 3}, p0.Placement)
	require.Equal(t, 1, p0.Preferred)
	require.Equal(t, uint64(0), p0.LeaderEpoch)
	require.Equal(t, []int{2, 1, 3}, p1.Placement)
	require.Equal(t, 2, p1.Preferred)
	require.Equal(t, []int{1, 2, 3}, p1.Assigned)

	mv, err := c.MoveLeader(ctx, "orders", 0, 3)
	require.NoError(t, err)
	require.Equal(t, apiclient.MoveLeaderResponse{OldLeader: 1, NewLeader: 3, LeaderEpoch: 1, LogEndOffset: 2, Copied: 0}, *mv)
	p0 = partitionOf(t, r, "orders", 0)
	require.Equal(t, 3, p0.Leader)
	require.Equal(t, uint64(1), p0.LeaderEpoch)
	require.Equal(t, 1, p0.Preferred, "a move does not change the placement")
	require.Equal(t, []int{1, 2, 3}, p0.Placement)
	require.Equal(t, []int{1, 2, 3}, p0.Active, "the old leader stays active")
	require.Equal(t, apiclient.RoleFollower, p0.Replicas[0].Role)
	require.Equal(t, apiclient.RoleLeader, p0.Replicas[2].Role)
	p1 = partitionOf(t, r, "orders", 1)
	require.Equal(t, [2]uint64{2, 0}, [2]uint64{uint64(p1.Leader), p1.LeaderEpoch}, "the other partition is untouched")

	placed := produce0("c")
	require.Equal(t, 3, placed.Leader, "writes go through the new leader")
	require.Equal(t, uint64(2), placed.Offset)

	// Back to the preferred replica: the epoch goes up again.
	mv, err = c.MoveLeader(ctx, "orders", 0, 1)
	require.NoError(t, err)
	require.Equal(t, apiclient.MoveLeaderResponse{OldLeader: 3, NewLeader: 1, LeaderEpoch: 2, LogEndOffset: 3}, *mv)
	got, err := c.Fetch(ctx, "orders", 0, 0, 10)
	require.NoError(t, err)
	var values []string
	for _, rec := range got.Records {
		values = append(values, string(rec.Value))
	}
	require.Equal(t, []string{"a", "b", "c"}, values, "nothing lost across two moves")

	// The status survives a restart, epoch included.
	dir := r.srv.cfg.DataDir
	r.stop()
	r = startServer(t, dir, 3, manual)
	p0 = partitionOf(t, r, "orders", 0)
	require.Equal(t, 1, p0.Leader)
	require.Equal(t, uint64(2), p0.LeaderEpoch)
}

// keyForPartition returns a key that routes to partition p of n.
func keyForPartition(p, n int) string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("key-%d", i)
		if topic.PartitionForKey([]byte(k), n) == p {
			return k
		}
	}
}

// docs/phase-6-network-api.md § Move the leader: every refusal has its
// status and code, and changes neither the leader nor the epoch.
func TestE2EMoveLeaderRefusals(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 4, manual)
	c := r.client
	_, _, err := c.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	produceValues(t, r, "orders", "a", "b")

	unchanged := func() {
		t.Helper()
		p0 := partitionOf(t, r, "orders", 0)
		require.Equal(t, 1, p0.Leader)
		require.Equal(t, uint64(0), p0.LeaderEpoch)
	}
	_, err = c.MoveLeader(ctx, "orders", 0, 1)
	require.Contains(t, apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict).Message, "leader")
	_, err = c.MoveLeader(ctx, "orders", 0, 4)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound) // not assigned
	_, err = c.MoveLeader(ctx, "orders", 0, 9)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound) // unknown broker
	_, err = c.MoveLeader(ctx, "orders", 1, 2)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound) // no partition 1
	_, err = c.MoveLeader(ctx, "nope", 0, 2)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	unchanged()

	// A stopped follower: 503 naming it.
	_, err = c.StopBroker(ctx, 3)
	require.NoError(t, err)
	_, err = c.MoveLeader(ctx, "orders", 0, 3)
	require.Equal(t, []int{3}, apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable).BrokerIDs)
	unchanged()
	_, err = c.StartBroker(ctx, 3)
	require.NoError(t, err)

	// A stopped leader: 503 naming it (a failed leader is failed over, not
	// moved).
	_, err = c.StopBroker(ctx, 1)
	require.NoError(t, err)
	_, err = c.MoveLeader(ctx, "orders", 0, 2)
	require.Equal(t, []int{1}, apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable).BrokerIDs)
	unchanged()

	// An inactive replica (the old leader after a failover): 409.
	_, err = c.Failover(ctx, "orders", 0)
	require.NoError(t, err)
	_, err = c.StartBroker(ctx, 1)
	require.NoError(t, err)
	_, err = c.MoveLeader(ctx, "orders", 0, 1)
	require.Contains(t, apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict).Message, "not active")
	p0 := partitionOf(t, r, "orders", 0)
	require.Equal(t, 2, p0.Leader)
	require.Equal(t, uint64(1), p0.LeaderEpoch)
	require.Equal(t, []int{2, 3}, p0.Active)
}

// A follower that diverges from the leader is refused with 409 naming it,
// and nothing changes: not the leadership, not a byte of either log.
func TestE2EMoveLeaderDivergence(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	r := startServer(t, dir, 3, manual)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	produceValues(t, r, "orders", "a", "b")
	r.stop()

	// Broker 2's replica gets a record the leader never had.
	followerDir := cluster.ReplicaDir(dir, 2, "orders", 0)
	follower := filepath.Join(followerDir, segment.SegmentFileName(0))
	l, err := segment.Open(followerDir, segment.Options{MustExist: true})
	require.NoError(t, err)
	_, err = l.Append([]byte("only on broker 2"))
	require.NoError(t, err)
	require.NoError(t, l.Close())
	leaderLog, err := os.ReadFile(filepath.Join(cluster.ReplicaDir(dir, 1, "orders", 0), segment.SegmentFileName(0)))
	require.NoError(t, err)
	followerLog, err := os.ReadFile(follower)
	require.NoError(t, err)

	r = startServer(t, dir, 3, manual)
	_, err = r.client.MoveLeader(ctx, "orders", 0, 2)
	e := apitest.APIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Equal(t, []int{2}, e.BrokerIDs)
	require.NotContains(t, e.Message, dir, "no absolute path in an answer")
	p0 := partitionOf(t, r, "orders", 0)
	require.Equal(t, 1, p0.Leader)
	require.Equal(t, uint64(0), p0.LeaderEpoch)
	got, err := os.ReadFile(filepath.Join(cluster.ReplicaDir(dir, 1, "orders", 0), segment.SegmentFileName(0)))
	require.NoError(t, err)
	require.Equal(t, leaderLog, got)
	got, err = os.ReadFile(follower)
	require.NoError(t, err)
	require.Equal(t, followerLog, got)
}

// cutRecord stages the recovery that cuts a record, through HTTP only:
// both followers stop, a write reaches the leader alone (not
// acknowledged), the leader stops, the followers return and one takes
// over, the old leader returns and is recovered. It returns the recovery's
// answer.
func cutRecord(t *testing.T, r *running) *apiclient.RecoverResponse {
	t.Helper()
	ctx := t.Context()
	c := r.client
	_, _, err := c.CreateTopic(ctx, "orders", 1, 3)
	require.NoError(t, err)
	produceValues(t, r, "orders", "a", "b")
	for _, id := range []int{2, 3} {
		_, err = c.StopBroker(ctx, id)
		require.NoError(t, err)
	}
	_, err = c.ProduceRaw(ctx, "orders", nil, []byte("never acknowledged"))
	apitest.APIErr(t, err, http.StatusServiceUnavailable, apiclient.CodeUnavailable)
	_, err = c.StopBroker(ctx, 1)
	require.NoError(t, err)
	for _, id := range []int{2, 3} {
		_, err = c.StartBroker(ctx, id)
		require.NoError(t, err)
	}
	fo, err := c.Failover(ctx, "orders", 0)
	require.NoError(t, err)
	require.Equal(t, apiclient.FailoverResponse{OldLeader: 1, NewLeader: 2, LeaderEpoch: 1, LogEndOffset: 2}, *fo)
	produceValues(t, r, "orders", "c")
	_, err = c.StartBroker(ctx, 1)
	require.NoError(t, err)
	rec, err := c.Recover(ctx, "orders", 0, 1)
	require.NoError(t, err)
	return rec
}

// docs/phase-6-network-api.md § Recover: the records a recovery cuts are
// kept in a quarantine file, named relative to the data directory, never
// absolute; the file holds them at their offsets.
func TestE2ERecoverQuarantine(t *testing.T) {
	dir := t.TempDir()
	r := startServer(t, dir, 3, manual)
	rec := cutRecord(t, r)
	require.Equal(t, uint64(2), rec.CommonPrefix)
	require.Equal(t, uint64(1), rec.Dropped)
	require.Equal(t, uint64(2), *rec.DroppedFrom)
	require.Equal(t, uint64(3), *rec.DroppedTo)
	require.Equal(t, uint64(1), rec.Copied)
	require.False(t, filepath.IsAbs(rec.Quarantine), rec.Quarantine)
	require.Equal(t, filepath.Join("broker-000001", "topics", "orders", "partition-000000"), filepath.Dir(rec.Quarantine))
	from, to, _, ok := cluster.ParseQuarantineName(filepath.Base(rec.Quarantine))
	require.True(t, ok, rec.Quarantine)
	require.Equal(t, [2]uint64{2, 3}, [2]uint64{from, to})
	var cut []string
	require.NoError(t, log.ScanFileFrom(filepath.Join(dir, rec.Quarantine), from, log.Options{}, func(_ int64, r log.Record) error {
		cut = append(cut, fmt.Sprintf("%d:%s", r.Offset, r.Payload))
		return nil
	}))
	require.Equal(t, []string{"2:never acknowledged"}, cut)

	// The raw answer: no absolute path anywhere in it.
	body := rawGet(t, r, "/api/topics/orders")
	require.NotContains(t, body, dir)

	// A recovery that cuts nothing names no file: the key is omitted.
	ctx := t.Context()
	_, err := r.client.StopBroker(ctx, 2)
	require.NoError(t, err)
	fo, err := r.client.Failover(ctx, "orders", 0)
	require.NoError(t, err)
	require.Equal(t, 1, fo.NewLeader)
	_, err = r.client.StartBroker(ctx, 2)
	require.NoError(t, err)
	resp, err := http.Post(r.base+"/api/topics/orders/partitions/0/replicas/2/recover", "", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var answer map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
	require.Equal(t, float64(0), answer["dropped"])
	require.Nil(t, answer["dropped_from"])
	require.NotContains(t, answer, "quarantine")
}

// docs/phase-6-network-api.md § Recover: the records a recovery kept are
// read back through the journal entry that names their file, as a fetch
// gives records; a client never names a path. What is not there, or is
// damaged, is said in PyStream's terms, with no path of the server's.
func TestE2EQuarantineRecords(t *testing.T) {
	dir := t.TempDir()
	r := startServer(t, dir, 3, manual)
	rec := cutRecord(t, r)
	j, err := r.client.Journal(t.Context(), 0, 1000)
	require.NoError(t, err)
	var entries []uint64 // the recovery's intent and outcome
	for _, e := range j.Entries {
		if e.Quarantine != "" {
			require.Equal(t, "recover", e.Event)
			entries = append(entries, e.Offset)
		}
	}
	require.Len(t, entries, 2)
	get := func(path string) (int, string) {
		resp, err := http.Get(r.base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NotContains(t, string(body), dir)
		return resp.StatusCode, string(body)
	}
	for _, n := range entries {
		status, body := get(fmt.Sprintf("/api/journal/%d/quarantine", n))
		require.Equal(t, http.StatusOK, status, body)
		var got apiclient.QuarantineResponse
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Len(t, got.Records, 1)
		require.Equal(t, "never acknowledged", string(got.Records[0].Value))
		got.Records = nil
		require.Equal(t, apiclient.QuarantineResponse{Entry: n, Topic: "orders", Partition: 0, Broker: 1,
			File: filepath.ToSlash(rec.Quarantine), From: 2, To: 3, NextOffset: 3}, got)
	}
	n := entries[1]
	status, body := get(fmt.Sprintf("/api/journal/%d/quarantine?offset=3", n))
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"records":[],"next_offset":3`)

	for path, want := range map[string]int{
		"/api/journal/x/quarantine":                            http.StatusBadRequest,
		"/api/journal/-1/quarantine":                           http.StatusBadRequest,
		fmt.Sprintf("/api/journal/%d/quarantine?max=0", n):     http.StatusBadRequest,
		fmt.Sprintf("/api/journal/%d/quarantine?path=/etc", n): http.StatusBadRequest,
		"/api/journal/0/quarantine":                            http.StatusNotFound, // a broker's start keeps nothing
		fmt.Sprintf("/api/journal/%d/quarantine", j.Next+100):  http.StatusNotFound,
		"/api/journal/18446744073709551615/quarantine":         http.StatusNotFound,
		"/api/journal/18446744073709551616/quarantine":         http.StatusBadRequest,
	} {
		status, body := get(path)
		require.Equal(t, want, status, "%s: %s", path, body)
	}

	// A damaged file is reported, and left as it is.
	file := filepath.Join(dir, rec.Quarantine)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	damaged := bytes.Clone(data)
	damaged[0] ^= 0xff // the first frame's header
	require.NoError(t, os.WriteFile(file, damaged, 0o644))
	status, body = get(fmt.Sprintf("/api/journal/%d/quarantine", n))
	require.Equal(t, http.StatusInternalServerError, status, body)
	require.Contains(t, body, "is damaged at byte 0")
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, damaged, after)

	// So is one that ends before the offsets its name gives.
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	status, body = get(fmt.Sprintf("/api/journal/%d/quarantine", n))
	require.Equal(t, http.StatusInternalServerError, status, body)
	require.Contains(t, body, "ends before offset 2")

	require.NoError(t, os.Remove(file))
	status, body = get(fmt.Sprintf("/api/journal/%d/quarantine", n))
	require.Equal(t, http.StatusNotFound, status, body)
	require.Contains(t, body, "it was removed, or broker 1's node keeps it")
}

// rawGet returns the body of a 200 answer to GET path.
func rawGet(t *testing.T, r *running, path string) string {
	t.Helper()
	resp, err := http.Get(r.base + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return string(body)
}

// docs/phase-6-network-api.md § The journal: every stop, start and
// operation is an entry, in order, with who asked; outcomes point at their
// intents; optional fields are omitted; since and max page through it and
// next says where to continue.
func TestE2EJournal(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	r := startServer(t, dir, 3, manual)
	c := r.client

	// Starting the server the first time, every broker joins the cluster
	// (cluster.meta lists it): an intent and its outcome each, the
	// journal's first entries.
	boot, err := c.Journal(ctx, 0, 0)
	require.NoError(t, err)
	require.Len(t, boot.Entries, 6)
	for i, e := range boot.Entries {
		phase := []string{"intent", "done"}[i%2]
		require.Equal(t, [3]string{"broker-start", phase, "operator"}, [3]string{e.Event, e.Phase, e.By})
		require.Equal(t, i/2+1, e.Broker)
	}
	base := boot.Next
	require.Equal(t, uint64(6), base)
	require.JSONEq(t, `{"entries":[],"next":6}`, rawGet(t, r, "/api/journal?since=6"))

	start := time.Now()
	rec := cutRecord(t, r)
	all, err := c.Journal(ctx, 0, 1000)
	require.NoError(t, err)
	type line struct {
		event, phase, topic string
		broker              int
	}
	var got []line
	for i, e := range all.Entries {
		require.Equal(t, uint64(i), e.Offset)
		require.Equal(t, cluster.ByOperator, e.By, "%+v", e)
		require.NotEmpty(t, e.Summary)
		at, err := time.Parse(time.RFC3339Nano, e.Time)
		require.NoError(t, err, e.Time)
		require.True(t, strings.HasSuffix(e.Time, "Z"), "UTC: %s", e.Time)
		if e.Topic == "" {
			require.Nil(t, e.Partition, "a broker event names no partition")
		} else {
			require.Equal(t, 0, *e.Partition)
		}
		switch e.Phase {
		case string(cluster.PhaseIntent):
			require.Nil(t, e.Intent)
		default:
			if e.Topic != "" && e.Event != string(cluster.EventCatchUp) {
				require.NotNil(t, e.Intent, "%+v", e)
				require.Equal(t, string(cluster.PhaseIntent), all.Entries[*e.Intent].Phase)
				require.Equal(t, e.Event, all.Entries[*e.Intent].Event)
			}
		}
		if uint64(i) < base {
			continue
		}
		require.False(t, at.Before(start.Add(-time.Second)), "written now: %s", e.Time)
		got = append(got, line{e.Event, e.Phase, e.Topic, e.Broker})
	}
	require.Equal(t, []line{
		{"broker-stop", "done", "", 2},
		{"broker-stop", "done", "", 3},
		{"broker-stop", "done", "", 1},
		{"broker-start", "done", "", 2},
		{"broker-start", "done", "", 3},
		{"failover", "intent", "orders", 1},
		{"failover", "done", "orders", 1},
		{"broker-start", "done", "", 1},
		{"recover", "intent", "orders", 1},
		{"recover", "done", "orders", 1},
	}, got)
	require.Equal(t, base+uint64(len(got)), all.Next)
	recoverIntent := all.Entries[base+8]
	require.Equal(t, rec.Quarantine, recoverIntent.Quarantine, "the journal names the same file, relative too")

	// The wire form omits what is empty: a broker event has no topic,
	// partition, intent, reason, quarantine or error.
	var raw struct {
		Entries []map[string]any `json:"entries"`
		Next    uint64           `json:"next"`
	}
	require.NoError(t, json.Unmarshal([]byte(rawGet(t, r, "/api/journal?since=0&max=1")), &raw))
	require.Len(t, raw.Entries, 1)
	require.Equal(t, uint64(1), raw.Next)
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		return out
	}
	require.ElementsMatch(t, []string{"offset", "time", "event", "phase", "by", "broker", "summary"}, keys(raw.Entries[0]))
	// The failover's outcome.
	require.NoError(t, json.Unmarshal([]byte(rawGet(t, r, "/api/journal?since=12&max=1")), &raw))
	require.ElementsMatch(t, []string{"offset", "time", "event", "phase", "by", "topic", "partition", "broker", "summary", "intent"}, keys(raw.Entries[0]))
	require.Equal(t, float64(0), raw.Entries[0]["partition"], "partition 0 is given, not omitted")

	// Paging: since and max, next continues; past the end is empty, next
	// stays at since.
	var paged []apiclient.JournalEntry
	for since := uint64(0); ; {
		page, err := c.Journal(ctx, since, 3)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Entries), 3)
		if len(page.Entries) == 0 {
			require.Equal(t, since, page.Next)
			break
		}
		require.Equal(t, page.Entries[len(page.Entries)-1].Offset+1, page.Next)
		paged = append(paged, page.Entries...)
		since = page.Next
	}
	require.Equal(t, all.Entries, paged)
	past, err := c.Journal(ctx, 1000, 5)
	require.NoError(t, err)
	require.Empty(t, past.Entries)
	require.Equal(t, uint64(1000), past.Next)

	// Bad since or max: 400, and the journal is untouched.
	end := all.Next
	before := treeHash(t, dir)
	for _, q := range []string{"max=0", "max=1001", "max=-1", "max=ten", "max=1.5", "since=-1", "since=1e3", "since=0x10",
		"since=18446744073709551616", "since=", "max=", "sinse=1", "since=1&since=2", "max=%zz"} {
		resp, err := http.Get(r.base + "/api/journal?" + q)
		require.NoError(t, err)
		e := apitest.DecodeError(t, resp)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
		require.Equal(t, apiclient.CodeInvalidArgument, e.Code, q)
		require.NotEmpty(t, e.Message)
	}
	_, err = c.Journal(ctx, 0, 1001)
	apitest.APIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
	require.Equal(t, before, treeHash(t, dir))
	after, err := c.Journal(ctx, 0, 1000)
	require.NoError(t, err)
	require.Equal(t, end, after.Next)
}

// docs/phase-6-network-api.md § Move the leader: the journal records a
// move as an intent with its outcome.
func TestE2EJournalMoveLeader(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 3, manual)
	_, _, err := r.client.CreateTopic(ctx, "orders", 1, 2)
	require.NoError(t, err)
	_, err = r.client.MoveLeader(ctx, "orders", 0, 2)
	require.NoError(t, err)
	j, err := r.client.Journal(ctx, 6, 10) // after the three brokers joined
	require.NoError(t, err)
	require.Len(t, j.Entries, 2)
	intent, done := j.Entries[0], j.Entries[1]
	require.Equal(t, [3]string{"move-leader", "intent", "operator"}, [3]string{intent.Event, intent.Phase, intent.By})
	require.Equal(t, [3]string{"move-leader", "done", "operator"}, [3]string{done.Event, done.Phase, done.By})
	require.Equal(t, 2, intent.Broker)
	require.Contains(t, intent.Summary, "leader 1 -> 2 (epoch 1)")
	require.Equal(t, uint64(6), *done.Intent)
}
