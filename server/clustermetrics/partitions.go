package clustermetrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/server/backend"
)

// clusterCollector reports the replication state of every broker and
// partition at scrape time, from Data.Brokers and Data.Status.
type clusterCollector struct {
	c backend.Data
}

var (
	descBrokerAvailable = prometheus.NewDesc("pystream_broker_available",
		"1 when the broker is open and registered, 0 when it is stopped.", []string{"broker"}, nil)
	descHighWatermark = prometheus.NewDesc("pystream_partition_high_watermark_offset",
		"Offset below which every active replica holds every record; consumers read below it.", []string{"topic", "partition"}, nil)
	descPartitionLogEnd = prometheus.NewDesc("pystream_partition_log_end_offset",
		"Offset the partition leader's next record gets (absent while the leader is unavailable).", []string{"topic", "partition"}, nil)
	descReplicaLogEnd = prometheus.NewDesc("pystream_replica_log_end_offset",
		"Offset a replica's next record gets (absent while unknown: broker stopped).", []string{"topic", "partition", "broker"}, nil)
	descReplicaLag = prometheus.NewDesc("pystream_replica_lag_records",
		"Records a replica's log end trails the leader's (absent while unknown).", []string{"topic", "partition", "broker"}, nil)
	descReplicaActive = prometheus.NewDesc("pystream_replica_active",
		"1 when the replica is in the partition's active set.", []string{"topic", "partition", "broker"}, nil)
)

func (cc *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descBrokerAvailable, descHighWatermark, descPartitionLogEnd, descReplicaLogEnd, descReplicaLag, descReplicaActive} {
		ch <- d
	}
}

func (cc *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range cc.c.Brokers() {
		ch <- prometheus.MustNewConstMetric(descBrokerAvailable, prometheus.GaugeValue, boolFloat(b.Available), strconv.Itoa(b.ID))
	}
	for _, t := range cc.c.Topics() {
		for p := range t.PartitionCount {
			st, err := cc.c.Status(t.Name, p)
			if err != nil {
				continue // closed during the scrape: report what we have
			}
			ps := strconv.Itoa(p)
			ch <- prometheus.MustNewConstMetric(descHighWatermark, prometheus.GaugeValue, float64(st.HighWatermark), t.Name, ps)
			for _, r := range st.Replicas {
				bs := strconv.Itoa(r.BrokerID)
				ch <- prometheus.MustNewConstMetric(descReplicaActive, prometheus.GaugeValue, boolFloat(r.Active), t.Name, ps, bs)
				if r.LogEnd != nil {
					ch <- prometheus.MustNewConstMetric(descReplicaLogEnd, prometheus.GaugeValue, float64(*r.LogEnd), t.Name, ps, bs)
					if r.BrokerID == st.Leader {
						ch <- prometheus.MustNewConstMetric(descPartitionLogEnd, prometheus.GaugeValue, float64(*r.LogEnd), t.Name, ps)
					}
				}
				if r.Lag != nil {
					ch <- prometheus.MustNewConstMetric(descReplicaLag, prometheus.GaugeValue, float64(*r.Lag), t.Name, ps, bs)
				}
			}
		}
	}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
