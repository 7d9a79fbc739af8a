package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/group"
)

// groupServer serves a fresh server with topic orders of 4 partitions
// holding 3 records each.
func groupServer(t *testing.T) *running {
	t.Helper()
	r := startServer(t, t.TempDir(), 1)
	ctx := context.Background()
	_, _, err := r.client.CreateTopic(ctx, "orders", 4, 1)
	require.NoError(t, err)
	for p := range 4 {
		_, err := r.client.ProduceTo(ctx, "orders", p, []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
		require.NoError(t, err)
	}
	return r
}

func joinGroup(t *testing.T, c *apiclient.Client, g string) *apiclient.GroupHeartbeatResponse {
	t.Helper()
	res, err := c.GroupHeartbeat(context.Background(), g, apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}, ClientID: "test"})
	require.NoError(t, err)
	return res
}

func beatGroup(t *testing.T, c *apiclient.Client, g string, m *apiclient.GroupHeartbeatResponse) *apiclient.GroupHeartbeatResponse {
	t.Helper()
	res, err := c.GroupHeartbeat(context.Background(), g, apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, Owned: m.Assignment})
	require.NoError(t, err)
	return res
}

// errorOf decodes an error answer's body.
func errorOf(t *testing.T, body string) apiclient.ErrorBody {
	t.Helper()
	var er apiclient.ErrorResponse
	require.NoError(t, json.Unmarshal([]byte(body), &er), body)
	return er.Error
}

func groupAPIErr(t *testing.T, err error, status int, code string) *apiclient.Error {
	t.Helper()
	var e *apiclient.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, status, e.Status, e.Message)
	require.Equal(t, code, e.Code, e.Message)
	return e
}

// docs/groups.md § Commits: a member commits the partitions it holds;
// describe shows it with its assignment, the committed offsets, log ends
// and lag; a plain commit for the group is refused while it has members;
// once they have left the group lists as Empty and can be deleted with
// its offsets.
func TestGroupHTTPLifecycle(t *testing.T) {
	r := groupServer(t)
	c, ctx := r.client, context.Background()
	m := joinGroup(t, c, "billing")
	require.Equal(t, []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1, 2, 3}}}, m.Assignment)
	require.Equal(t, int64(5000), m.HeartbeatIntervalMS)
	require.Equal(t, int64(45000), m.SessionTimeoutMS)
	m = beatGroup(t, c, "billing", m)

	res, err := c.CommitGroupOffset(ctx, "billing", "orders", 1, m.MemberID, m.MemberEpoch, 2)
	require.NoError(t, err)
	require.Equal(t, uint64(2), *res.Offset)

	_, err = c.CommitOffset(ctx, "billing", "orders", 1, 3)
	e := groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, `consumer "billing" is a consumer group with members`)
	_, err = c.ResetOffset(ctx, "billing", "orders", 1, 0)
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

	d, err := c.Group(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, "consumer", d.Protocol)
	require.Equal(t, group.StateStable, d.State)
	require.Equal(t, group.AssignorName, d.Assignor)
	require.Len(t, d.Members, 1)
	require.Equal(t, "test", d.Members[0].ClientID)
	require.Equal(t, "127.0.0.1", d.Members[0].ClientHost)
	require.Len(t, d.Offsets, 4)
	row := d.Offsets[1]
	require.Equal(t, 1, row.Partition)
	require.Equal(t, uint64(2), *row.CommittedOffset)
	require.Equal(t, uint64(3), *row.LogEndOffset)
	require.Equal(t, uint64(1), *row.Lag)
	require.Equal(t, m.MemberID, row.MemberID)
	require.Nil(t, d.Offsets[0].CommittedOffset)
	require.Nil(t, d.Offsets[0].Lag)

	_, err = c.DeleteGroup(ctx, "billing")
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

	status, metrics := rawRequest(t, r.base, http.MethodGet, "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, metrics, `pystream_group_members{group="billing",protocol="consumer"} 1`)
	require.Contains(t, metrics, `pystream_group_generation{group="billing",protocol="consumer"} 1`)
	require.Contains(t, metrics, `pystream_group_rebalances_total{group="billing",protocol="consumer"} 1`)

	_, err = c.CommitOffset(ctx, "audit", "orders", 0, 1) // a consumer id with offsets only
	require.NoError(t, err)
	list, err := c.Groups(ctx)
	require.NoError(t, err)
	require.Equal(t, []apiclient.GroupSummary{{Group: "audit", State: group.StateEmpty},
		{Group: "billing", Protocol: "consumer", State: group.StateStable, Members: 1}}, list.Groups)

	left, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: -1})
	require.NoError(t, err)
	require.Equal(t, int32(-1), left.MemberEpoch)
	require.Empty(t, left.Assignment)
	_, err = c.CommitOffset(ctx, "billing", "orders", 1, 3)
	require.NoError(t, err, "no members: plain commits again")
	d, err = c.Group(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, group.StateEmpty, d.State)
	require.Empty(t, d.Members)

	del, err := c.DeleteGroup(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, 1, del.OffsetsDeleted)
	_, err = c.DeleteGroup(ctx, "billing")
	groupAPIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	_, err = c.Group(ctx, "billing")
	groupAPIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	co, err := c.ConsumerOffset(ctx, "billing", "orders", 1)
	require.NoError(t, err)
	require.Nil(t, co.Offset, "deleted with the group")
}

// docs/groups.md § Restarts and a new coordinator: a server restarted on
// its data directory knows no member, while the members of the one before
// may still read. A member that joins again claiming what it held keeps
// it; a partition nobody claims goes to nobody for a session timeout.
func TestGroupHTTPRestartWithholds(t *testing.T) {
	dir := t.TempDir()
	r := startServer(t, dir, 1)
	ctx := context.Background()
	_, _, err := r.client.CreateTopic(ctx, "orders", 4, 1)
	require.NoError(t, err)
	m := joinGroup(t, r.client, "billing")
	require.Len(t, m.Assignment[0].Partitions, 4, "a server on a new data directory withholds nothing")
	r.stop()

	r = startServer(t, dir, 1)
	c := r.client
	start := time.Now()
	fresh := joinGroup(t, c, "audit")
	require.Len(t, fresh.Assignment[0].Partitions, 4, "a group with no live lease is assigned at once")
	require.Less(t, time.Since(start), group.DefaultHeartbeatInterval)
	other := joinGroup(t, c, "billing")
	require.Empty(t, other.Assignment, "m's lease has not ended: its partitions are nobody else's")
	_, err = c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, Owned: m.Assignment})
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeUnknownMemberID)
	back, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: 0, Topics: []string{"orders"},
		Owned: []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}})
	require.NoError(t, err)
	require.Equal(t, []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}, back.Assignment, "its claims, and no more")
	other = beatGroup(t, c, "billing", other)
	require.Equal(t, []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{2, 3}}}, other.Assignment,
		"m said it holds 0 and 1 only: 2 and 3 are free at once")
}

// A second member gets partitions only once the first released them; the
// first, waiting in a long-polled heartbeat, learns of the rebalance at
// once rather than a heartbeat interval (5 s) later.
func TestGroupHTTPRebalanceLongPoll(t *testing.T) {
	r := groupServer(t)
	c, ctx := r.client, context.Background()
	m1 := beatGroup(t, c, "billing", joinGroup(t, c, "billing"))

	answered := make(chan *apiclient.GroupHeartbeatResponse, 1)
	go func() {
		res, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m1.MemberID, MemberEpoch: m1.MemberEpoch,
			Owned: m1.Assignment, MaxWaitMS: 60000})
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	time.Sleep(50 * time.Millisecond) // let it wait
	start := time.Now()
	m2 := joinGroup(t, c, "billing")
	require.Empty(t, m2.Assignment, "m1 holds every partition")
	revoked := <-answered
	require.Less(t, time.Since(start), 2*time.Second, "answered at the rebalance, not after the interval")
	require.Equal(t, []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}, revoked.Assignment)

	_, err := c.CommitGroupOffset(ctx, "billing", "orders", 3, m2.MemberID, m2.MemberEpoch, 1)
	e := groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, "does not hold orders/3")
	_, err = c.CommitGroupOffset(ctx, "billing", "orders", 3, revoked.MemberID, revoked.MemberEpoch, 1)
	require.NoError(t, err, "the old owner commits before it releases")

	m1 = beatGroup(t, c, "billing", revoked) // releases 2 and 3
	m2 = beatGroup(t, c, "billing", m2)
	require.Equal(t, []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{2, 3}}}, m2.Assignment)
	_, err = c.CommitGroupOffset(ctx, "billing", "orders", 3, m2.MemberID, m2.MemberEpoch, 2)
	require.NoError(t, err)
}

// Bad input is refused in PyStream's error shape, and changes nothing:
// an unknown member, a stale epoch, a group id that is not a consumer id,
// malformed or incomplete JSON, a commit for a partition not held.
func TestGroupHTTPBadInput(t *testing.T) {
	r := groupServer(t)
	c, ctx := r.client, context.Background()
	m := beatGroup(t, c, "billing", joinGroup(t, c, "billing"))

	_, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: "nobody", MemberEpoch: 1})
	e := groupAPIErr(t, err, http.StatusConflict, apiclient.CodeUnknownMemberID)
	require.ErrorIs(t, err, apiclient.ErrUnknownMemberID)
	require.ErrorIs(t, err, apiclient.ErrConflict)
	require.Contains(t, e.Message, `group "billing" has no member "nobody"`)

	_, err = c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch + 1})
	e = groupAPIErr(t, err, http.StatusConflict, apiclient.CodeFencedMemberEpoch)
	require.ErrorIs(t, err, apiclient.ErrFencedMemberEpoch)
	require.Contains(t, e.Message, "it is fenced")
	_, err = c.CommitGroupOffset(ctx, "billing", "orders", 0, m.MemberID, m.MemberEpoch-1, 1)
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeFencedMemberEpoch)
	_, err = c.CommitGroupOffset(ctx, "billing", "orders", 0, "nobody", 1, 1)
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeUnknownMemberID)

	for _, bad := range []string{"a b", "a/b", "~x", strings.Repeat("g", 250)} {
		_, err = c.GroupHeartbeat(ctx, bad, apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
		e = groupAPIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
		require.Contains(t, e.Message, "invalid group id")
	}
	_, err = c.Group(ctx, "a b")
	groupAPIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)

	for _, tt := range []struct{ body, want string }{
		{`{"member_epoch":`, "invalid JSON"},
		{`{"topics":["orders"]}`, `"member_epoch" is required`},
		{`{"member_epoch":0,"topics":["orders"],"colour":1}`, "unknown field"},
		{`{"member_epoch":0}`, "needs the topics"},
		{`{"member_epoch":0,"topics":["a b"]}`, "invalid"},
		{`{"member_epoch":-2,"member_id":"x"}`, "member epoch -2"},
		{`{"member_epoch":2147483648,"member_id":"x"}`, "member_epoch"},
		{`{"member_epoch":1,"member_id":"x","owned":[{"topic":"orders"}]}`, `"owned[0].partitions" is required`},
		{`{"member_epoch":1,"member_id":"x","owned":[{"topic":"orders","partitions":[-1]}]}`, "owned partition -1"},
	} {
		status, body := rawRequest(t, r.base, http.MethodPost, "/api/groups/billing/heartbeat", tt.body)
		require.Equal(t, http.StatusBadRequest, status, tt.body)
		e := errorOf(t, body)
		require.Equal(t, apiclient.CodeInvalidArgument, e.Code)
		require.Contains(t, e.Message, tt.want, tt.body)
	}
	for _, tt := range []struct{ body, want string }{
		{`{"member_epoch":1,"offset":1}`, `"member_id" is required`},
		{`{"member_id":"x","offset":1}`, `"member_epoch" is required`},
		{`{"member_id":"x","member_epoch":1}`, `"offset" is required`},
	} {
		status, body := rawRequest(t, r.base, http.MethodPut, "/api/groups/billing/offsets/orders/0", tt.body)
		require.Equal(t, http.StatusBadRequest, status, tt.body)
		require.Contains(t, errorOf(t, body).Message, tt.want, tt.body)
	}
	status, _ := rawRequest(t, r.base, http.MethodPut, "/api/groups/billing/offsets/orders/9", `{"member_id":"x","member_epoch":1,"offset":1}`)
	require.Equal(t, http.StatusNotFound, status)

	d, err := c.Group(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, d.Members, 1, "nothing changed the group")
	require.Equal(t, m.MemberEpoch, beatGroup(t, c, "billing", m).MemberEpoch)
}

// A group held by classic (Kafka client) members is refused to HTTP
// members, and to plain commits and deletion, naming the protocol.
func TestGroupHTTPClassicGroupRefused(t *testing.T) {
	r := groupServer(t)
	c, ctx := r.client, context.Background()
	require.NoError(t, r.srv.groups.Claim("kafka-app", group.Classic))

	_, err := c.GroupHeartbeat(ctx, "kafka-app", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
	e := groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, `group "kafka-app" has classic (Kafka client) members`)
	_, err = c.CommitOffset(ctx, "kafka-app", "orders", 0, 1)
	e = groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, "Kafka's OffsetCommit")
	_, err = c.CommitGroupOffset(ctx, "kafka-app", "orders", 0, "m", 1, 1)
	e = groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, "classic (Kafka client) members")
	_, err = c.DeleteGroup(ctx, "kafka-app")
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)

	r.srv.groups.Release("kafka-app", group.Classic)
	joinGroup(t, c, "kafka-app")
}

// A heartbeat storm, bounded: many concurrent heartbeats of one member
// all answer the same epoch and assignment, and joins past nothing but
// the member cap leave a consistent group that empties when they leave.
func TestGroupHTTPHeartbeatStorm(t *testing.T) {
	r := groupServer(t)
	c, ctx := r.client, context.Background()
	m := beatGroup(t, c, "billing", joinGroup(t, c, "billing"))

	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				res, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, Owned: m.Assignment})
				if err == nil && (res.MemberEpoch != m.MemberEpoch || len(res.Assignment[0].Partitions) != 4) {
					err = errors.New("the answer changed under a storm of identical heartbeats")
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	var joined []*apiclient.GroupHeartbeatResponse
	for range 40 {
		joined = append(joined, joinGroup(t, c, "billing"))
	}
	d, err := c.Group(ctx, "billing")
	require.NoError(t, err)
	require.Len(t, d.Members, 41)
	for _, j := range joined {
		_, err := c.GroupHeartbeat(ctx, "billing", apiclient.GroupHeartbeatRequest{MemberID: j.MemberID, MemberEpoch: -1})
		require.NoError(t, err)
	}
	m = beatGroup(t, c, "billing", m)
	m = beatGroup(t, c, "billing", m)
	require.Equal(t, []int32{0, 1, 2, 3}, m.Assignment[0].Partitions)
}

// docs/groups.md § Listing, describing, deleting: while a group's offsets
// are being deleted, it is held: a member that would join it is refused
// with a 409 saying so, and so is another delete; a Kafka member's join
// is COORDINATOR_NOT_AVAILABLE, which Kafka clients retry.
func TestGroupHTTPDeleteHoldsTheGroup(t *testing.T) {
	r := groupServer(t)
	release, err := r.srv.groups.Hold("billing")
	require.NoError(t, err)
	_, err = r.client.GroupHeartbeat(context.Background(), "billing", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
	e := groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	require.Contains(t, e.Message, "being deleted")
	_, err = r.client.DeleteGroup(context.Background(), "billing")
	groupAPIErr(t, err, http.StatusConflict, apiclient.CodeConflict)
	_, err = r.srv.classic.Join(context.Background(), group.JoinRequest{Group: "billing", SessionTimeout: 10 * time.Second,
		ProtocolType: "consumer", Protocols: []group.ProtocolMetadata{{Name: "range"}}})
	require.ErrorIs(t, err, group.ErrDeleting)
	release()
	joinGroup(t, r.client, "billing")
}

// docs/groups.md § The protocol: a held heartbeat is answered within two
// thirds of the server's write timeout, counted from when the request came
// in, whatever the heartbeat interval (5 s here) and max_wait_ms say: the
// answer is written before the server would cut the connection.
func TestGroupHTTPHeldWithinWriteTimeout(t *testing.T) {
	cfg := Defaults()
	cfg.DataDir, cfg.Brokers, cfg.KafkaPort, cfg.LogLevel = t.TempDir(), 1, 0, LogLevel(LevelError)
	srv, err := newServer(cfg, NewLogger(io.Discard, cfg), durable.OS, func(s *Server) { s.writeTimeout = 300 * time.Millisecond })
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := serveOn(t, srv, ln)
	_, _, err = r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	m := beatGroup(t, r.client, "billing", joinGroup(t, r.client, "billing"))

	start := time.Now()
	held, err := r.client.GroupHeartbeat(t.Context(), "billing", apiclient.GroupHeartbeatRequest{MemberID: m.MemberID,
		MemberEpoch: m.MemberEpoch, Owned: m.Assignment, MaxWaitMS: 5000})
	require.NoError(t, err)
	require.Equal(t, m.Assignment, held.Assignment)
	require.Less(t, time.Since(start), time.Second, "held for at most 200 ms, not the 5 s interval")
}
