package kafka_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkKafkaGroupRebalance measures a classic group's rebalance
// time: from a member joining (or leaving) a group of three kgo group
// consumers on a topic of six partitions to every member holding its new
// assignment, as the members' OnPartitionsAssigned and
// OnPartitionsRevoked callbacks report it. Each iteration is one join of
// a fourth member and its leave, each after a pause of a random part of
// the heartbeat interval. The coordinator has the server's
// defaults (no initial delay); members run kgo's defaults but for the
// heartbeat interval of the sub-benchmark, since members of a settled
// group learn of a rebalance from their next heartbeat: kgo's default
// 3 s interval bounds the rebalance time from below, whatever the
// coordinator does. Reported: p50 and max over every join and leave, in
// milliseconds.
//
//	go test ./server/kafka -run '^$' -bench KafkaGroupRebalance -benchtime 10x
func BenchmarkKafkaGroupRebalance(b *testing.B) {
	for _, bc := range []struct {
		name      string
		heartbeat time.Duration
		balancer  kgo.GroupBalancer
	}{
		{"cooperative-sticky-heartbeat-100ms", 100 * time.Millisecond, kgo.CooperativeStickyBalancer()},
		{"range-heartbeat-100ms", 100 * time.Millisecond, kgo.RangeBalancer()},
		{"cooperative-sticky-heartbeat-3s", 3 * time.Second, kgo.CooperativeStickyBalancer()},
		{"range-heartbeat-3s", 3 * time.Second, kgo.RangeBalancer()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			const partitions = 6
			f := start(b, 1, partitions, 1)
			opts := []kgo.Opt{kgo.Balancers(bc.balancer), kgo.HeartbeatInterval(bc.heartbeat), kgo.SessionTimeout(45 * time.Second),
				kgo.RebalanceTimeout(60 * time.Second)}
			group := fmt.Sprintf("bench-%d", b.N)
			members := []*member{
				f.groupMember(b, "a", group, nil, opts...),
				f.groupMember(b, "b", group, nil, opts...),
				f.groupMember(b, "c", group, nil, opts...),
			}
			if err := balanced(members, partitions, 30*time.Second); err != nil {
				b.Fatal(err)
			}
			var samples []time.Duration
			b.ResetTimer()
			// A settled member's next heartbeat comes one interval after
			// its last sync; a pause of a random part of the interval
			// before each change puts the change anywhere in that cycle,
			// as it is when members come and go on their own.
			pause := func() { time.Sleep(rand.N(bc.heartbeat)) }
			for i := range b.N {
				pause()
				start := time.Now()
				d := f.groupMember(b, fmt.Sprintf("d%d", i), group, nil, opts...)
				if err := balanced(append(members, d), partitions, 30*time.Second); err != nil {
					b.Fatal("join: ", err)
				}
				samples = append(samples, time.Since(start))
				pause()
				start = time.Now()
				d.leave()
				if err := balanced(members, partitions, 30*time.Second); err != nil {
					b.Fatal("leave: ", err)
				}
				samples = append(samples, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(samples[len(samples)-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// balanced waits until members own every one of the partitions, each
// once, as evenly as possible (no member more than one above another).
func balanced(members []*member, partitions int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		seen := map[int32]int{}
		least, most := partitions, 0
		var got []string
		for _, m := range members {
			ps := m.partitions()
			got = append(got, fmt.Sprintf("%s:%v", m.name, ps))
			least, most = min(least, len(ps)), max(most, len(ps))
			for _, p := range ps {
				seen[p]++
			}
		}
		total := 0
		for _, n := range seen {
			total += n
		}
		if len(seen) == partitions && total == partitions && most-least <= 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("members own %v after %v", got, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
