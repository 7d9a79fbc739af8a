package kafka_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group tests run kgo's group consumer (kgo.ConsumerGroup) against
// the listener: members heartbeat every 50 ms so that a rebalance takes
// a few round trips, not Kafka's 3-second heartbeat interval.

// ledger is what the members of a test processed and committed, shared
// by all of them.
type ledger struct {
	mu sync.Mutex
	// processed counts each record's processings by partition and offset.
	processed map[int32]map[int64]int
	// committed is each partition's last committed offset (the next one
	// to read), as the members' successful commits moved it.
	committed map[int32]int64
	// refused are records processed again although their offset had been
	// committed before: what at-least-once from the last commit forbids.
	refused []string
	// committedCh closes, and is replaced, at each successful commit.
	committedCh chan struct{}
}

func newLedger() *ledger {
	return &ledger{processed: map[int32]map[int64]int{}, committed: map[int32]int64{}, committedCh: make(chan struct{})}
}

// awaitCommitted waits until the members' commits reach want on every
// partition it names, failing t after timeout.
func (l *ledger) awaitCommitted(t testing.TB, want map[int32]int64, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		done := true
		for p, off := range want {
			done = done && l.committed[p] >= off
		}
		ch := l.committedCh
		got := maps.Clone(l.committed)
		l.mu.Unlock()
		if done {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("the members committed %v, not %v", got, want)
		}
	}
}

func (l *ledger) process(member string, r *kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.processed[r.Partition] == nil {
		l.processed[r.Partition] = map[int64]int{}
	}
	l.processed[r.Partition][r.Offset]++
	if r.Offset < l.committed[r.Partition] {
		l.refused = append(l.refused, fmt.Sprintf("%s read partition %d offset %d, committed up to %d", member, r.Partition, r.Offset, l.committed[r.Partition]))
	}
}

func (l *ledger) commit(recs []*kgo.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		l.committed[r.Partition] = max(l.committed[r.Partition], r.Offset+1)
	}
	close(l.committedCh)
	l.committedCh = make(chan struct{})
}

// count is how many distinct records were processed.
func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, offs := range l.processed {
		n += len(offs)
	}
	return n
}

// member is one kgo group consumer of a test, with the partitions it
// owns as its rebalance callbacks tell them.
type member struct {
	name string
	cl   *kgo.Client
	mu   sync.Mutex
	// owned is guarded by mu.
	owned map[int32]bool
	stop  context.CancelFunc
	done  chan struct{}
}

func (m *member) assigned(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps["events"] {
		m.owned[p] = true
	}
}

func (m *member) revoked(_ context.Context, _ *kgo.Client, ps map[string][]int32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range ps["events"] {
		delete(m.owned, p)
	}
}

// partitions is what the member owns, ascending.
func (m *member) partitions() []int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.owned))
}

// groupMember starts a kgo group consumer of "events" in group that
// processes into l and commits after every poll, until it is stopped (a
// nil l reads and commits nothing).
// Rebalances wait for the commit (BlockRebalanceOnPoll), so a member
// never loses a partition between reading records and committing them.
func (f *fixture) groupMember(t testing.TB, name, group string, l *ledger, opts ...kgo.Opt) *member {
	t.Helper()
	m := &member{name: name, owned: map[int32]bool{}, done: make(chan struct{})}
	m.cl = f.client(t, append([]kgo.Opt{kgo.ConsumerGroup(group), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(2 * time.Second), kgo.HeartbeatInterval(50 * time.Millisecond), kgo.RebalanceTimeout(5 * time.Second),
		kgo.FetchMaxWait(100 * time.Millisecond), kgo.ClientID(name),
		kgo.OnPartitionsAssigned(m.assigned), kgo.OnPartitionsRevoked(m.revoked), kgo.OnPartitionsLost(m.revoked)}, opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	m.stop = cancel
	go func() {
		defer close(m.done)
		for ctx.Err() == nil {
			fs := m.cl.PollFetches(ctx)
			recs := fs.Records()
			if l == nil { // not counting: a member that only holds partitions
				m.cl.AllowRebalance()
				continue
			}
			for _, r := range recs {
				l.process(name, r)
			}
			if len(recs) > 0 {
				cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := m.cl.CommitRecords(cctx, recs...); err == nil {
					l.commit(recs)
				} else {
					t.Logf("%s: commit: %v", name, err)
				}
				ccancel()
			}
			m.cl.AllowRebalance()
		}
	}()
	t.Cleanup(func() { m.stop(); <-m.done })
	return m
}

// leave stops the member's loop (after its last commit) and closes its
// client, which leaves the group.
func (m *member) leave() {
	m.stop()
	<-m.done
	m.cl.Close()
}

// awaitSplit waits until the members own every partition of "events",
// each partition once, want each, and l has processed n records.
func awaitSplit(t *testing.T, l *ledger, n int, want int, members ...*member) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var got []string
		seen := map[int32]int{}
		even := true
		for _, m := range members {
			ps := m.partitions()
			got = append(got, fmt.Sprintf("%s:%v", m.name, ps))
			even = even && len(ps) == want
			for _, p := range ps {
				seen[p]++
			}
		}
		if even && len(seen) == want*len(members) && l.count() >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("members own %v, %d of %d records processed", got, l.count(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// produceEach writes n records to each of the topic's partitions.
func (f *fixture) produceEach(t *testing.T, partitions, n int) {
	t.Helper()
	cl := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: "events", Partition: int32(p), Value: fmt.Appendf(nil, "p%d-%d", p, i)})
		}
	}
	require.NoError(t, cl.ProduceSync(ctx(t), recs...).FirstErr())
}

// TestKafkaGroupKgoSplitAndLeave: three kgo group consumers split a
// topic's six partitions, two each; one leaves (LeaveGroup), the other
// two rebalance to three each and read on from the committed offsets.
// Every record is processed, and none is processed again once its offset
// was committed (at least once from the last commit, here exactly
// once since members commit before they give a partition up). Run with
// the eager range balancer and the cooperative-sticky one: the
// coordinator relays the leader's assignment whichever it is.
func TestKafkaGroupKgoSplitAndLeave(t *testing.T) {
	for name, balancer := range map[string]kgo.GroupBalancer{
		"range":              kgo.RangeBalancer(),
		"cooperative-sticky": kgo.CooperativeStickyBalancer(),
	} {
		t.Run(name, func(t *testing.T) {
			const partitions, per = 6, 20
			f := startGroups(t, 3, partitions, 1)
			f.produceEach(t, partitions, per)
			l := newLedger()
			a := f.groupMember(t, "a", "billing", l, kgo.Balancers(balancer))
			b := f.groupMember(t, "b", "billing", l, kgo.Balancers(balancer))
			c := f.groupMember(t, "c", "billing", l, kgo.Balancers(balancer))
			awaitSplit(t, l, partitions*per, 2, a, b, c)

			c.leave()
			f.produceEach(t, partitions, per)
			awaitSplit(t, l, 2*partitions*per, 3, a, b)

			l.mu.Lock()
			defer l.mu.Unlock()
			require.Empty(t, l.refused, "no record is read again after its offset was committed")
			for p := range int32(partitions) {
				require.Len(t, l.processed[p], 2*per, "partition %d: every record processed", p)
			}
			d, ok := f.groups.Describe("billing")
			require.True(t, ok)
			require.Len(t, d.Members, 2)
			require.Equal(t, name, d.Assignor)
		})
	}
}

// freezer cuts a kgo client off as a frozen process is (SIGSTOP, or a
// network that drops everything): while frozen, what the client sends on
// its connections is dropped and nothing comes back, and new connections
// are not made. unfreeze closes the connections it cut off, so that the
// client's requests fail at once and it can be closed.
type freezer struct {
	mu     sync.Mutex
	frozen bool
	thaw   chan struct{}
	conns  []net.Conn
}

func newFreezer() *freezer { return &freezer{thaw: make(chan struct{})} }

// dial is the client's kgo.Dialer.
func (f *freezer) dial(ctx context.Context, network, host string) (net.Conn, error) {
	if f.isFrozen() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns = append(f.conns, c)
	return &frozenConn{Conn: c, f: f}, nil
}

func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = true
}

func (f *freezer) unfreeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen {
		f.frozen = false
		for _, c := range f.conns {
			_ = c.Close()
		}
		close(f.thaw)
	}
}

func (f *freezer) isFrozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen
}

// frozenConn is one connection of a freezer's client.
type frozenConn struct {
	net.Conn
	f *freezer
}

func (c *frozenConn) Write(p []byte) (int, error) {
	if c.f.isFrozen() {
		return len(p), nil // dropped
	}
	return c.Conn.Write(p)
}

func (c *frozenConn) Read(p []byte) (int, error) {
	if c.f.isFrozen() {
		<-c.f.thaw
	}
	return c.Conn.Read(p)
}

// TestKafkaGroupKgoSessionTimeout: a kgo member whose process freezes
// (its connections cut off: no heartbeat, no LeaveGroup) is removed when
// its session timeout passes, and its partitions move to the members
// still alive, which read on from the committed offsets. With the eager
// range balancer and the cooperative-sticky one.
func TestKafkaGroupKgoSessionTimeout(t *testing.T) {
	for name, balancer := range map[string]kgo.GroupBalancer{
		"range":              kgo.RangeBalancer(),
		"cooperative-sticky": kgo.CooperativeStickyBalancer(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each its own cluster: they wait out their sessions together
			const partitions, per = 6, 5
			const session = 500 * time.Millisecond
			f := startGroups(t, 1, partitions, 1)
			f.produceEach(t, partitions, per)
			l := newLedger()
			a := f.groupMember(t, "a", "billing", l, kgo.Balancers(balancer))
			b := f.groupMember(t, "b", "billing", l, kgo.Balancers(balancer))
			cold := newFreezer()
			c := f.groupMember(t, "c", "billing", l, kgo.Balancers(balancer), kgo.Dialer(cold.dial), kgo.SessionTimeout(session))
			t.Cleanup(cold.unfreeze)
			awaitSplit(t, l, partitions*per, 2, a, b, c)

			cold.freeze()
			start := time.Now()
			f.produceEach(t, partitions, per)
			awaitSplit(t, l, 2*partitions*per, 3, a, b)
			require.Greater(t, time.Since(start), session-100*time.Millisecond, "the partitions moved after the session timeout, not before")
			d, ok := f.groups.Describe("billing")
			require.True(t, ok)
			require.Len(t, d.Members, 2, "the frozen member was removed")
			l.mu.Lock()
			defer l.mu.Unlock()
			require.Empty(t, l.refused)
		})
	}
}

// TestKafkaGroupKgoStaleGenerationCommit: a commit that names the
// group's previous generation is refused ILLEGAL_GENERATION and stores
// nothing; one naming an unknown member is UNKNOWN_MEMBER_ID; the simple
// commit (generation -1, no member) is UNKNOWN_MEMBER_ID while the group
// has members, as Kafka answers it; the member's own commit at its
// generation is stored.
func TestKafkaGroupKgoStaleGenerationCommit(t *testing.T) {
	f := startGroups(t, 1, 2, 1)
	f.produceEach(t, 2, 3)
	l := newLedger()
	a := f.groupMember(t, "a", "billing", l)
	awaitSplit(t, l, 6, 2, a)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		done := l.committed[0] == 3 && l.committed[1] == 3
		l.mu.Unlock()
		if done {
			break // the member's own commits have landed
		}
		require.True(t, time.Now().Before(deadline), "the member commits what it read")
	}
	memberID, generation := a.cl.GroupMetadata()
	require.NotEmpty(t, memberID)
	// The member stops reading but stays in the group (kgo heartbeats
	// on its own); three more records make offset 6 a valid commit.
	a.stop()
	<-a.done
	f.produceEach(t, 1, 3)

	raw := f.client(t)
	commit := func(generation int32, memberID string, offset int64) int16 {
		t.Helper()
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation, req.MemberID = "billing", generation, memberID
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "events"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset = 0, offset
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx(t), raw)
		require.NoError(t, err)
		return resp.Topics[0].Partitions[0].ErrorCode
	}
	store, err := f.c.OffsetStore()
	require.NoError(t, err)
	before, _, err := store.Load("billing", "events", 0)
	require.NoError(t, err)
	require.Equal(t, kerr.IllegalGeneration.Code, commit(generation-1, memberID, 6))
	require.Equal(t, kerr.UnknownMemberID.Code, commit(generation, "nobody", 6))
	require.Equal(t, kerr.UnknownMemberID.Code, commit(-1, "", 6))
	after, _, err := store.Load("billing", "events", 0)
	require.NoError(t, err)
	require.Equal(t, before, after, "no refused commit stored anything")
	require.Zero(t, commit(generation, memberID, 6), "the member's own commit, at its generation")
	after, _, err = store.Load("billing", "events", 0)
	require.NoError(t, err)
	require.Equal(t, uint64(6), after)
}
