package clusternode_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
)

// BenchmarkHeartbeatSize measures the bodies of one heartbeat of cluster
// mode, as the internal API sends them (JSON, uncompressed), for a node
// holding 30, 300, 3,000 and 10,000 replicas: the node's report
// (replication.Heartbeat, one cluster.ReplicaReport per replica it holds,
// led or followed alike) and the controller's answer to it
// (replication.Observation), which carries every broker's last reports: in
// a cluster of 3 nodes with rf 3, three times as many. The reports are
// built, not read from logs: topics of at most topic.MaxPartitionCount
// partitions named like BenchmarkScale's (scale-000, ...), log ends and
// high watermarks of seven digits, times with nanoseconds. It reports
// heartbeat-B and answer-B per heartbeat, heartbeat-B/replica, and the time
// to encode a heartbeat (ns/op).
//
//	go test -run '^$' -bench BenchmarkHeartbeatSize -benchtime 20x ./server/clusternode
func BenchmarkHeartbeatSize(b *testing.B) {
	const nodes = 3
	at := time.Date(2026, 12, 5, 0, 0, 0, 123456789, time.UTC)
	for _, size := range []int{30, 300, 3000, 10000} {
		b.Run(fmt.Sprintf("replicas=%d", size), func(b *testing.B) {
			reports := fakeReports(size, at)
			hb := replication.Heartbeat{Node: 1, Replicas: reports}
			obs := replication.Observation{Controller: 1, At: at}
			for id := 1; id <= nodes; id++ {
				obs.Brokers = append(obs.Brokers, replication.BrokerSeen{ID: id, Available: true, LastSeen: at, Replicas: reports})
			}
			answer, err := json.Marshal(obs)
			if err != nil {
				b.Fatal(err)
			}
			var body []byte
			for b.Loop() {
				if body, err = json.Marshal(hb); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(body)), "heartbeat-B")
			b.ReportMetric(float64(len(body))/float64(size), "heartbeat-B/replica")
			b.ReportMetric(float64(len(answer)), "answer-B")
		})
	}
}

// fakeReports is one node's reports of size replicas, spread over topics
// of at most topic.MaxPartitionCount partitions.
func fakeReports(size int, at time.Time) []cluster.ReplicaReport {
	out := make([]cluster.ReplicaReport, 0, size)
	for i := range size {
		end := uint64(1_000_000 + i)
		out = append(out, cluster.ReplicaReport{
			Topic:         fmt.Sprintf("scale-%03d", i/topic.MaxPartitionCount),
			Partition:     i % topic.MaxPartitionCount,
			LogEnd:        &end,
			HighWatermark: end,
			At:            at,
		})
	}
	return out
}
