package cluster

import (
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
)

// Options tune a Cluster. The zero value is ready to use: every zero field
// means its default, named on the field.
type Options struct {
	// FS is the file system used for cluster.meta and the consumer offsets.
	// Nil means durable.OS.
	FS durable.FS
	// Broker is used by StartBroker to open broker instances. A nil
	// Broker.FS means FS; its other zero fields mean BrokerOptions'
	// defaults.
	Broker BrokerOptions
	// ParallelLeaderWrite, when true, writes a batch to the leader and the
	// followers at the same time instead of leader first: the leader still
	// assigns offsets (its log end) and timestamps (its clock), but its
	// fsync overlaps the followers', so an acknowledged write costs one
	// fsync of latency instead of two. The price: if the leader's own write
	// fails while a follower's succeeded, the follower briefly holds a
	// record its leader lacks; the batch is then cut back on those
	// followers (it was never acknowledged), and if even that fails the
	// follower diverges until a failover and recovery. A power loss between
	// a follower's fsync and the leader's leaves the same kind of follower,
	// with nothing left to cut it back. False (the default) keeps the safe
	// order: the leader appends durably, then the followers store its
	// records, in parallel with each other, so a follower is always a
	// prefix of its leader. See docs/phase-4-replication.md.
	ParallelLeaderWrite bool
	// MaxOpenLogs caps the replica logs (one open file each) of all topics
	// together: CreateTopic refuses a topic whose partitions × replication
	// factor would take the cluster past it (*OpenLogsLimitError). Zero
	// means DefaultMaxOpenLogs of the process's file limit when the
	// cluster is opened; a negative value means no limit.
	MaxOpenLogs int
}

// withDefaults returns o with every zero field set to its default, Broker
// included. OpenWithOptions calls it once, on entry.
func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = durable.OS
	}
	if o.Broker.FS == nil {
		o.Broker.FS = o.FS
	}
	o.Broker = o.Broker.withDefaults()
	if o.MaxOpenLogs == 0 {
		o.MaxOpenLogs = DefaultMaxOpenLogs(FileLimit())
	}
	return o
}

// BrokerOptions tune a broker. The zero value is ready to use: every zero
// field means its default, named on the field.
type BrokerOptions struct {
	// FS is the file system the broker's replica logs use. Nil means
	// durable.OS. Tests pass a logtest.FaultFS to fail a chosen write.
	FS durable.FS
	// MaxPayloadSize is the largest payload every replica log accepts.
	// Zero means log.DefaultMaxPayloadSize.
	MaxPayloadSize int
	// Now supplies the timestamps a leader replica assigns. Nil means
	// time.Now.
	Now func() time.Time
	// SegmentConfig gives a topic's segment.bytes and segment.ms when one
	// of its replica logs is opened. Nil, or zeros, mean the segment
	// package's defaults. The cluster sets it from the topics' config.
	SegmentConfig func(topicName string) (bytes int64, age time.Duration)
}

// withDefaults returns o with every zero field set to its default: the
// log's, since every field is handed to the replica logs.
// OpenBrokerWithOptions calls it once, on entry.
func (o BrokerOptions) withDefaults() BrokerOptions {
	l := o.logOptions().WithDefaults()
	o.FS, o.MaxPayloadSize, o.Now = l.FS, l.MaxPayloadSize, l.Now
	return o
}

// segmentOptions are the options of the broker's replica logs of one topic.
func (o BrokerOptions) segmentOptions(topicName string) segment.Options {
	so := segment.Options{Log: o.logOptions()}
	if o.SegmentConfig != nil {
		so.SegmentBytes, so.SegmentAge = o.SegmentConfig(topicName)
	}
	return so
}

// logOptions are the phase-1 options of every replica log of the broker.
func (o BrokerOptions) logOptions() log.Options {
	return log.Options{FS: o.FS, MaxPayloadSize: o.MaxPayloadSize, Now: o.Now}
}
