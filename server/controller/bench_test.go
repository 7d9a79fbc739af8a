package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pystream/pystream/cluster"
)

// BenchmarkStopToFirstWrite measures, per stop of a partition's leader
// broker, the time from the stop to the first write acknowledged through
// the new leader; it reports the median and the maximum over the run, in
// milliseconds, beside the setting. Run it over 50 stops:
//
//	go test -run '^$' -bench StopToFirstWrite -benchtime 50x ./server/controller
//
// "operator" is the baseline, the floor of the operation itself: a failover
// called the moment the broker stops. "controller" is the loop with
// PYSTREAM_FAILOVER_AFTER at 200 ms; the goal is the setting plus at most
// 100 ms. Between stops the broker starts again and gets its leadership back
// (recovery and a leader move), outside the timed span.
func BenchmarkStopToFirstWrite(b *testing.B) {
	const after = 200 * time.Millisecond
	b.Run("operator", func(b *testing.B) { benchStops(b, 0) })
	b.Run(fmt.Sprintf("controller-after=%v", after), func(b *testing.B) { benchStops(b, after) })
}

// benchStops runs b.N stops of partition 0's leader; after 0 means the
// benchmark itself fails over at once, as an operator would.
func benchStops(b *testing.B, after time.Duration) {
	cl, err := cluster.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	for id := 1; id <= 3; id++ {
		if _, err := cl.StartBroker(id); err != nil {
			b.Fatal(err)
		}
	}
	if err := cl.CreateTopic("t", 1, 3); err != nil {
		b.Fatal(err)
	}
	prod := cluster.NewProducer(cl, "t")
	if after > 0 {
		k, err := New(cl, Config{FailoverAfter: after, Rebalance: true})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); k.Run(ctx) }()
		defer func() { cancel(); <-done }()
	}
	var spans []time.Duration
	b.ResetTimer()
	for range b.N {
		leader := cl.Metadata().Topics["t"].Partitions[0].Leader
		if err := cl.StopBroker(leader); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if after == 0 {
			if _, err := cl.Failover("t", 0); err != nil {
				b.Fatal(err)
			}
		}
		for deadline := start.Add(after + 5*time.Second); ; {
			if _, err := prod.Send(nil, []byte("v")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("no write acknowledged %v after the stop", time.Since(start))
			}
			time.Sleep(time.Millisecond)
		}
		spans = append(spans, time.Since(start))
		b.StopTimer()
		if _, err := cl.StartBroker(leader); err != nil {
			b.Fatal(err)
		}
		heal(b, cl, leader, after == 0)
		b.StartTimer()
	}
	slices.Sort(spans)
	b.ReportMetric(float64(spans[len(spans)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(spans[len(spans)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(after.Milliseconds()), "setting-ms")
}

// heal waits until broker id is active again and leads partition 0, doing
// the recovery and the move itself when byHand.
func heal(b *testing.B, cl *cluster.Cluster, id int, byHand bool) {
	b.Helper()
	if byHand {
		if _, err := cl.RecoverReplica("t", 0, id); err != nil {
			b.Fatal(err)
		}
		if _, err := cl.MoveLeader("t", 0, id); err != nil {
			b.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		pm := cl.Metadata().Topics["t"].Partitions[0]
		if pm.Leader == id && len(pm.Active) == 3 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("broker %d not back as leader: %+v", id, pm)
		}
	}
}
