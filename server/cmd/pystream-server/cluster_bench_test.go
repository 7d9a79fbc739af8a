package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// The measures of cluster mode (docs/performance.md § Cluster mode):
// failover time after a SIGKILL, and the throughput of replication factor
// 3 across processes beside the embedded cluster's.

// failoverKills is how many partition leaders BenchmarkClusterFailover
// kills per setting.
const failoverKills = 20

// BenchmarkClusterFailover kills the process leading a partition
// failoverKills times, at the default PYSTREAM_FAILOVER_AFTER and at 1s,
// and reports the time from the SIGKILL to the first write acknowledged
// through the new leader: p50 and max, in milliseconds. The partition
// killed is one whose leader is not also the controller, so the figure is
// the failure detector's and the failover's, without a Raft election
// (docs/phase-7-processes.md has that case's timeline). The killed node
// is restarted and back in every active set before the next kill.
func BenchmarkClusterFailover(b *testing.B) {
	for _, setting := range []time.Duration{3 * time.Second, time.Second} {
		b.Run(fmt.Sprintf("failover_after=%v", setting), func(b *testing.B) {
			for range b.N {
				took := measureFailovers(b, setting)
				slices.Sort(took)
				b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "p50-ms")
				b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-ms")
				b.Logf("failover_after=%v: %d kills, p50 %v, max %v", setting, len(took), took[len(took)/2], took[len(took)-1])
			}
		})
	}
}

func measureFailovers(b *testing.B, setting time.Duration) []time.Duration {
	ctx := context.Background()
	c := startCluster(b, clusterOptions{failoverAfter: setting})
	const partitions = 3
	topics := 0
	name := ""
	newTopic := func() {
		topics++
		name = fmt.Sprintf("failover-%d", topics)
		c.createTopic(ctx, 1, name, partitions, 3)
	}
	newTopic()
	var took []time.Duration
	for len(took) < failoverKills {
		controller := c.controller(ctx, c.ids(), 30*time.Second)
		d, err := c.topic(ctx, controller, name)
		require.NoError(b, err)
		p := -1
		for _, ps := range d.Partitions {
			if ps.Leader != controller {
				p = ps.Partition
				break
			}
		}
		if p < 0 {
			// Failovers gathered every leadership on the controller (cluster
			// mode does not move leaders back): a new topic is placed
			// round the brokers again.
			newTopic()
			continue
		}
		leader := d.Partitions[p].Leader
		via := controller // a survivor
		killed := time.Now()
		c.kill(leader)
		for {
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := c.client(via).ProduceTo(rctx, name, p, []apiclient.ProduceRecord{{Value: []byte("after")}})
			cancel()
			if err == nil {
				break
			}
			require.Less(b, time.Since(killed), 60*time.Second, "no write acknowledged a minute after the kill: %v", err)
			time.Sleep(5 * time.Millisecond)
		}
		took = append(took, time.Since(killed))
		c.restart(ctx, leader)
		c.waitActive(ctx, via, name, 60*time.Second)
	}
	return took
}

// BenchmarkClusterThroughput produces with 64 concurrent producers, one
// record per request, to a topic of 3 partitions and replication factor
// 3, first on one server of three logical brokers (phases 4-6), then on
// three server processes (cluster mode, each producer sending to one node
// in turn), and reports both rates and their ratio (cluster mode over the
// embedded cluster).
func BenchmarkClusterThroughput(b *testing.B) {
	const producers, records = 64, 20000
	ctx := context.Background()
	for range b.N {
		embedded := startBinary(b, ctx, buildBinary(b), b.TempDir())
		waitReady(b, ctx, embedded)
		_, _, err := embedded.client.CreateTopic(ctx, "through", 3, 3)
		require.NoError(b, err)
		one := produceLoad(b, []*apiclient.Client{embedded.client}, producers, records)

		c := startCluster(b, clusterOptions{failoverAfter: 3 * time.Second})
		c.createTopic(ctx, 1, "through", 3, 3)
		var clients []*apiclient.Client
		for _, id := range c.ids() {
			clients = append(clients, c.client(id))
		}
		three := produceLoad(b, clients, producers, records)

		b.ReportMetric(one, "embedded-rec/s")
		b.ReportMetric(three, "processes-rec/s")
		b.ReportMetric(three/one, "ratio")
		b.Logf("%d producers, %d records: embedded %.0f rec/s, three processes %.0f rec/s, ratio %.2f", producers, records, one, three, three/one)
		embedded.stop(b)
	}
}

// produceLoad sends records records through clients (producer i uses
// clients[i % len]), producers at once, and returns the acknowledged
// records per second.
func produceLoad(b *testing.B, clients []*apiclient.Client, producers, records int) float64 {
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	start := time.Now()
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[i%len(clients)]
			for next.Add(1) <= int64(records) {
				rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, err := cl.Produce(rctx, "through", []apiclient.ProduceRecord{{Value: []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123")}})
				cancel()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	return float64(records) / elapsed.Seconds()
}
