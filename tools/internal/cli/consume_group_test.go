package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server"
	"github.com/pystream/pystream/server/apiclient"
)

// groupTestServer serves an in-process server whose groups heartbeat
// every 50 ms and time out after a second, with topic orders of four
// partitions.
func groupTestServer(t *testing.T) *apiclient.Client {
	t.Helper()
	cfg := server.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.KafkaPort = 0
	cfg.Brokers = 1
	cfg.GroupSessionTimeout = server.GroupTimeout(time.Second)
	cfg.GroupHeartbeatInterval = server.GroupTimeout(50 * time.Millisecond)
	s, err := server.New(cfg, server.NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		hs.Close()
		require.NoError(t, s.Close())
	})
	c := apiclient.New(hs.URL)
	_, _, err = c.CreateTopic(context.Background(), "orders", 4, 1)
	require.NoError(t, err)
	return c
}

// produceN produces n records "<prefix>-<i>" round robin.
func produceN(t *testing.T, c *apiclient.Client, prefix string, n int) []string {
	t.Helper()
	var out []string
	var recs []apiclient.ProduceRecord
	for i := range n {
		v := fmt.Sprintf("%s-%d", prefix, i)
		out = append(out, v)
		recs = append(recs, apiclient.ProduceRecord{Value: []byte(v)})
	}
	_, err := c.Produce(context.Background(), "orders", recs)
	require.NoError(t, err)
	return out
}

// groupRun is one consume -G run in a goroutine.
type groupRun struct {
	stdout, stderr lockedBuffer
	cancel         func()
	done           chan error
}

// lockedBuffer is a bytes.Buffer a test reads while a run writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func startGroupMember(c *apiclient.Client, o consumeOptions) *groupRun {
	r := &groupRun{done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	a := &app{env: Env{Stdout: &r.stdout, Stderr: &r.stderr}}
	o.format, _ = compileFormat(`%v\n`)
	go func() { r.done <- a.consumeGroup(ctx, func() {}, c, o) }()
	return r
}

// stop interrupts the run (Ctrl-C) and returns what it printed.
func (r *groupRun) stop(t *testing.T) []string {
	t.Helper()
	r.cancel()
	select {
	case err := <-r.done:
		require.NoError(t, err, r.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("consume -G did not stop")
	}
	return strings.Fields(r.stdout.String())
}

// awaitGroup polls the group until ok accepts it (bounded).
func awaitGroup(t *testing.T, c *apiclient.Client, what string, ok func(*apiclient.GroupDescription) bool) {
	t.Helper()
	var last *apiclient.GroupDescription
	var lastErr error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		d, err := c.Group(context.Background(), "billing")
		if err == nil && ok(d) {
			return
		}
		last, lastErr = d, err
	}
	t.Fatalf("%s: last %+v, %v", what, last, lastErr)
}

// caughtUp is true once every partition's committed offset is its log end.
func caughtUp(d *apiclient.GroupDescription) bool {
	if len(d.Offsets) != 4 {
		return false
	}
	for _, o := range d.Offsets {
		if o.Lag == nil || *o.Lag != 0 {
			return false
		}
	}
	return true
}

// holders counts the partitions each member is assigned.
func holders(d *apiclient.GroupDescription) []int {
	var n []int
	for _, m := range d.Members {
		k := 0
		for _, tp := range m.Assignment {
			k += len(tp.Partitions)
		}
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// consume -G: two members split the topic's partitions, each reading its
// own from the group's committed offsets; when one stops (Ctrl-C: it
// commits and leaves), the other takes its partitions from there on.
// Every record is printed exactly once over both, since every handover
// commits first.
func TestCLIConsumeGroupSplitAndHandOver(t *testing.T) {
	c := groupTestServer(t)
	want := produceN(t, c, "first", 8)
	o := consumeOptions{group: "billing", topics: []string{"orders"}, reset: "earliest"}

	a := startGroupMember(c, o)
	awaitGroup(t, c, "a reads everything", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(holders(d), []int{4}) && caughtUp(d)
	})
	b := startGroupMember(c, o)
	awaitGroup(t, c, "two members, two partitions each", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(holders(d), []int{2, 2}) && d.State == "Stable"
	})
	want = append(want, produceN(t, c, "second", 8)...)
	awaitGroup(t, c, "both read theirs", caughtUp)
	fromA := a.stop(t)

	want = append(want, produceN(t, c, "third", 8)...)
	awaitGroup(t, c, "b took every partition and read them", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(holders(d), []int{4}) && caughtUp(d)
	})
	fromB := b.stop(t)
	require.NotEmpty(t, fromB)
	got := append(fromA, fromB...)
	slices.Sort(got)
	slices.Sort(want)
	require.Equal(t, want, got, "every record once")

	_, err := c.Group(context.Background(), "billing")
	require.NoError(t, err)
	list, err := c.Groups(context.Background())
	require.NoError(t, err)
	require.Equal(t, []apiclient.GroupSummary{{Group: "billing", State: "Empty"}}, list.Groups, "both left")
}

// A member whose session timed out (it stopped heartbeating) is told it
// is unknown: it gives up its partitions, joins again, and goes on from
// the committed offsets.
func TestCLIConsumeGroupRejoinsAfterTimeout(t *testing.T) {
	c := groupTestServer(t)
	produceN(t, c, "r", 4)
	fake := &pausingAPI{Client: c}
	run := &groupRun{done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	run.cancel = cancel
	a := &app{env: Env{Stdout: &run.stdout, Stderr: &run.stderr}}
	o := consumeOptions{group: "billing", topics: []string{"orders"}, reset: "earliest"}
	o.format, _ = compileFormat(`%v\n`)
	go func() { run.done <- a.consumeGroup(ctx, func() {}, fake, o) }()
	awaitGroup(t, c, "joined and caught up", caughtUp)

	fake.pause(1500 * time.Millisecond) // past the 1 s session timeout
	require.Eventually(t, func() bool { return strings.Contains(run.stderr.String(), "joining again") }, 10*time.Second, 20*time.Millisecond)
	awaitGroup(t, c, "joined again", func(d *apiclient.GroupDescription) bool {
		return slices.Equal(holders(d), []int{4})
	})
	produceN(t, c, "after", 4)
	awaitGroup(t, c, "reads on", caughtUp)
	got := run.stop(t)
	require.Contains(t, run.stderr.String(), `group "billing" has no member`)
	require.Subset(t, got, []string{"after-0", "after-1", "after-2", "after-3"})
}

// pausingAPI is the real client whose heartbeats can be held back.
type pausingAPI struct {
	*apiclient.Client
	mu    sync.Mutex
	until time.Time
}

func (p *pausingAPI) pause(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.until = time.Now().Add(d)
}

func (p *pausingAPI) GroupHeartbeat(ctx context.Context, group string, req apiclient.GroupHeartbeatRequest) (*apiclient.GroupHeartbeatResponse, error) {
	p.mu.Lock()
	wait := time.Until(p.until)
	p.mu.Unlock()
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return &apiclient.GroupHeartbeatResponse{}, ctx.Err()
		}
	}
	return p.Client.GroupHeartbeat(ctx, group, req)
}
