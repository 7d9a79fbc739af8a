// Package clustermetrics reports the cluster's state to Prometheus at
// scrape time: every broker's availability, every partition's high
// watermark and log end, every replica's log end, lag and place in the
// active set, every committed consumer offset and the consumer lag Kafka
// users watch most. It reads a backend.Data, so both modes report alike;
// nothing is tracked between scrapes, so the produce and commit paths pay
// nothing for these gauges.
//
// Names follow https://prometheus.io/docs/practices/naming/: a gauge ends
// in its unit. A position in a log is an offset (_offset, Kafka's word,
// what kafka_exporter calls its gauges too); a distance between two
// positions is a number of records (_records). A 0/1 gauge needs no unit.
//
// The high watermarks are read when Prometheus asks, not followed: the
// partition advanced event (backend.Hub) wakes those who wait for records,
// and a scrape is not one of them.
package clustermetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/server/backend"
)

// Register adds the collectors of the partitions' and the consumers'
// gauges over d to reg.
func Register(reg prometheus.Registerer, d backend.Data) error {
	for _, c := range []prometheus.Collector{&clusterCollector{c: d}, &consumerCollector{c: d}} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
