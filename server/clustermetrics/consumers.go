package clustermetrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pystream/pystream/server/backend"
)

// consumerCollector reports every committed consumer offset and the
// consumer lag Kafka users watch most: how many records a consumer's
// committed offset trails the partition's high watermark. Like
// clusterCollector it computes everything at scrape time, from the offset
// files (client.OffsetStore.ListAll) and Cluster.HighWatermark; nothing is
// tracked between scrapes and commits pay nothing for it.
//
// The work of one scrape is bounded: each offset file is read once and each
// partition's high watermark is asked once, however many consumers commit
// to it. Reading changes nothing on disk and cannot fail the offset store.
//
// A scrape never fails for one bad offset file: a file (or a directory of
// them) that cannot be read loses its series for that scrape and is counted
// in pystream_consumer_offset_unreadable_files, so an alert on that gauge
// being above 0 says it; `pystream log verify` or
// GET /api/consumers/{id}/offsets then names the file.
type consumerCollector struct {
	c backend.Data
}

var (
	descConsumerCommitted = prometheus.NewDesc("pystream_consumer_committed_offset",
		"Offset a consumer committed on a partition: the next one it fetches after a restart.",
		[]string{"consumer", "topic", "partition"}, nil)
	descConsumerLag = prometheus.NewDesc("pystream_consumer_lag_records",
		"Records between a consumer's committed offset and the partition's high watermark (0 at or past it; absent while the high watermark is unknown).",
		[]string{"consumer", "topic", "partition"}, nil)
	descOffsetUnreadable = prometheus.NewDesc("pystream_consumer_offset_unreadable_files",
		"Offset files, or directories of them, this scrape could not read (damaged, or an I/O error); their series are absent.",
		nil, nil)
)

func (cc *consumerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConsumerCommitted, descConsumerLag, descOffsetUnreadable} {
		ch <- d
	}
}

// partitionKey names one partition of one topic.
type partitionKey struct {
	topic     string
	partition int
}

// highWatermark is one answer of Cluster.HighWatermark; ok is false when
// the cluster does not know the partition (offsets committed for a topic it
// no longer has, or closed during the scrape).
type highWatermark struct {
	offset uint64
	ok     bool
}

func (cc *consumerCollector) Collect(ch chan<- prometheus.Metric) {
	offsets, err := cc.c.ListAllOffsets()
	unreadable := countErrors(err)
	hws := map[partitionKey]highWatermark{}
	for _, o := range offsets {
		if o.Err != nil {
			unreadable++
			continue
		}
		labels := []string{o.ConsumerID, o.Topic, strconv.Itoa(o.Partition)}
		ch <- prometheus.MustNewConstMetric(descConsumerCommitted, prometheus.GaugeValue, float64(o.Offset), labels...)
		k := partitionKey{o.Topic, o.Partition}
		hw, seen := hws[k]
		if !seen {
			off, err := cc.c.HighWatermark(o.Topic, o.Partition)
			hw = highWatermark{offset: off, ok: err == nil}
			hws[k] = hw
		}
		if hw.ok {
			ch <- prometheus.MustNewConstMetric(descConsumerLag, prometheus.GaugeValue, float64(consumerLag(hw.offset, o.Offset)), labels...)
		}
	}
	ch <- prometheus.MustNewConstMetric(descOffsetUnreadable, prometheus.GaugeValue, float64(unreadable))
}

// consumerLag is how many records a consumer that committed committed
// trails a partition whose high watermark is hw: 0 when it is at or past
// it. A commit is not checked against the high watermark, and after a
// restart the high watermark starts again from 0 until every active
// replica's log has been read, so a committed offset above it is possible.
func consumerLag(hw, committed uint64) uint64 {
	if committed >= hw {
		return 0
	}
	return hw - committed
}

// countErrors counts the errors in err: those errors.Join joined, or one.
func countErrors(err error) int {
	if err == nil {
		return 0
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return len(joined.Unwrap())
	}
	return 1
}
