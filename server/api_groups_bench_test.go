package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pystream/pystream/server/apiclient"
)

// BenchmarkGroupRebalance measures the rebalance time of an HTTP consumer
// group of three members over a topic of six partitions, with the default
// settings (heartbeat interval 5 s, session timeout 45 s): from a member
// joining (or leaving) to every member holding its new assignment, two
// partitions each (or three). Each iteration is one join and one leave.
// Members long-poll their heartbeats (max_wait_ms = the interval) and
// release a revoked partition at once, as `pystream consume -G` does
// after committing it. It reports the p50 and max of the joins and the
// leaves, in milliseconds:
//
//	go test -run '^$' -bench BenchmarkGroupRebalance -benchtime 50x ./server/
func BenchmarkGroupRebalance(b *testing.B) {
	cfg := Defaults()
	cfg.DataDir = b.TempDir()
	cfg.LogLevel = LogLevel(LevelError)
	cfg.KafkaPort = 0
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	if err != nil {
		b.Fatal(err)
	}
	c := apiclient.New(serveBench(b, srv))
	ctx := b.Context()
	if _, _, err := c.CreateTopic(ctx, "orders", 6, 1); err != nil {
		b.Fatal(err)
	}

	g := &benchGroup{c: c, changed: make(chan struct{}, 1)}
	g.start(b)
	g.start(b)
	g.await(b, 3)

	var joins, leaves []time.Duration
	for b.Loop() {
		start := time.Now()
		third := g.start(b)
		g.await(b, 2)
		joins = append(joins, time.Since(start))

		start = time.Now()
		g.stop(third)
		g.await(b, 3)
		leaves = append(leaves, time.Since(start))
	}
	b.StopTimer()
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
		b.ReportMetric(float64(ds[len(ds)-1].Microseconds())/1000, name+"-max-ms")
	}
	report("join", joins)
	report("leave", leaves)
}

// benchGroup is the members of BenchmarkGroupRebalance's group "bench".
type benchGroup struct {
	c *apiclient.Client
	// changed has a value once some member's holdings changed.
	changed chan struct{}

	// mu guards held and quit.
	mu sync.Mutex
	// held is what each running member holds, by member index.
	held map[int][]int32
	quit map[int]chan struct{}
	next int
}

// start runs one more member and returns its index.
func (g *benchGroup) start(tb testing.TB) int {
	g.mu.Lock()
	if g.held == nil {
		g.held, g.quit = map[int][]int32{}, map[int]chan struct{}{}
	}
	i := g.next
	g.next++
	quit := make(chan struct{})
	g.quit[i] = quit
	g.held[i] = nil
	g.mu.Unlock()
	done := make(chan struct{})
	tb.Cleanup(func() {
		g.stop(i)
		<-done
	})
	go func() {
		defer close(done)
		g.member(tb, i, quit)
	}()
	return i
}

// stop makes member i leave.
func (g *benchGroup) stop(i int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if q, ok := g.quit[i]; ok {
		close(q)
		delete(g.quit, i)
		delete(g.held, i)
	}
}

// member heartbeats as member i until quit, holding what it is assigned.
func (g *benchGroup) member(tb testing.TB, i int, quit chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-quit
		cancel()
	}()
	res, err := g.c.GroupHeartbeat(ctx, "bench", apiclient.GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
	id := res.MemberID
	for err == nil {
		g.publish(i, res.Assignment)
		res, err = g.c.GroupHeartbeat(ctx, "bench", apiclient.GroupHeartbeatRequest{MemberID: res.MemberID, MemberEpoch: res.MemberEpoch,
			Owned: res.Assignment, MaxWaitMS: uint32(res.HeartbeatIntervalMS)})
	}
	if ctx.Err() == nil {
		tb.Error(err)
		return
	}
	if id != "" {
		_, err := g.c.GroupHeartbeat(context.Background(), "bench", apiclient.GroupHeartbeatRequest{MemberID: id, MemberEpoch: -1})
		var e *apiclient.Error
		if err != nil && !(errors.As(err, &e) && e.Code == apiclient.CodeUnknownMemberID) {
			tb.Error(err)
		}
	}
}

// publish records what member i holds now.
func (g *benchGroup) publish(i int, a []apiclient.GroupTopicPartitions) {
	var ps []int32
	for _, tp := range a {
		ps = append(ps, tp.Partitions...)
	}
	g.mu.Lock()
	if _, running := g.quit[i]; running {
		g.held[i] = ps
	}
	g.mu.Unlock()
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// await waits until every running member holds per partitions and they
// hold the six between them.
func (g *benchGroup) await(tb testing.TB, per int) {
	deadline := time.After(time.Minute)
	for {
		g.mu.Lock()
		seen, ok := map[int32]bool{}, true
		for _, ps := range g.held {
			ok = ok && len(ps) == per
			for _, p := range ps {
				seen[p] = true
			}
		}
		g.mu.Unlock()
		if ok && len(seen) == 6 {
			return
		}
		select {
		case <-g.changed:
		case <-deadline:
			g.mu.Lock()
			held := fmt.Sprint(g.held)
			g.mu.Unlock()
			d, err := g.c.Group(context.Background(), "bench")
			tb.Fatalf("the group did not settle in a minute: %s %+v %v", held, d, err)
		}
	}
}
