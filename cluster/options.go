package cluster

import (
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/topic"
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
	// CatchUpOnWrite, when true, lets a write bring a follower that lags
	// its leader level before it takes the write's records: the leader
	// sends what the follower misses first. False (the default, phase 4's
	// rule) fails the write instead — a *ReplicationError naming the
	// follower — and the follower lags until a catch-up (CatchUp, or the
	// controller's). Cluster mode sets it: between processes a follower
	// that missed one write (a timeout, a dropped connection) is then not
	// left failing every write until the controller next looks.
	CatchUpOnWrite bool
	// MaxOpenLogs caps the replica logs (one open file each) of all topics
	// together: CreateTopic refuses a topic whose partitions × replication
	// factor would take the cluster past it (*OpenLogsLimitError). Zero
	// means DefaultMaxOpenLogs of the process's file limit when the
	// cluster is opened; a negative value means no limit.
	MaxOpenLogs int
	// TopicDefaults is the server-wide topic configuration: a topic's
	// effective configuration (TopicConfig) is it with the topic's
	// overrides laid over it. Nil means topic.DefaultConfig();
	// OpenWithOptions refuses a value outside a key's rule
	// (*topic.ConfigError).
	TopicDefaults *topic.Config
	// Advanced, if set, is told each time a partition's high watermark
	// rises: the one "partition advanced" event, where records become
	// readable, that a server feeds its waiting fetches, pages and
	// metrics from. It is called with the partition's lock held, so it
	// must return at once and must not call back into the cluster (a
	// non-blocking send, a counter).
	Advanced func(topic string, partition int, highWatermark uint64)
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
	if o.TopicDefaults == nil {
		d := topic.DefaultConfig()
		o.TopicDefaults = &d
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
	// Logf, if set, is told about every repair a replica log makes when
	// it opens (a sidecar rebuilt, a log.bin upgraded to segments,
	// segments below the log start deleted: segment.Options.Logf). A
	// server passes its logger.
	Logf func(format string, args ...any)
	// Sync makes a replica log's append durable (log.Options.Sync). A
	// Cluster's brokers (StartBroker, NewMember) left with nil share the
	// process's sync group: the appends in flight on all of its replicas
	// share one sync of the file system (durable.SyncGroup: syncfs(2) on
	// Linux; where the file system cannot, each log syncs its own file
	// anyway), so that writes spread over a thousand partitions cost
	// about what writes to three do
	// (docs/design.md § One sync for many partitions). durable.File.Sync has each log fsync its own file
	// after each batch, as phase 1's log does. Either way nothing is
	// acknowledged before it is durable on every active replica. A broker
	// opened on its own (OpenBroker) with nil syncs each file.
	Sync func(durable.File) error
	// Journal, if set, has the broker's replica logs make their appends
	// durable through one commit journal in the broker's directory
	// (package wal): an append costs one fsync of the journal, shared by
	// every append in flight on any of the broker's replicas, and the
	// segment files are synced later, at a checkpoint
	// (docs/design.md § The commit journal). Sync is then the journal's
	// affair and is ignored. Whatever the setting, a broker replays a
	// journal it finds in its directory before it opens a replica.
	Journal bool
	// TopicConfig gives a topic's effective configuration to whoever
	// opens its replica logs (Broker.TopicConfig). Nil means
	// topic.DefaultConfig() for every topic. Cluster.StartBroker sets it
	// to the cluster's own TopicConfig when it is nil.
	TopicConfig func(topicName string) (topic.Config, error)
}

// withDefaults returns o with every zero field set to its default: the
// log's, since every field is handed to the replica logs.
// OpenBrokerWithOptions calls it once, on entry.
func (o BrokerOptions) withDefaults() BrokerOptions {
	sync := o.Sync
	l := o.logOptions().WithDefaults()
	o.FS, o.MaxPayloadSize, o.Now = l.FS, l.MaxPayloadSize, l.Now
	o.Sync = sync // nil stays nil: the logs' own default
	return o
}

// segmentOptions are the options of the broker's replica logs of one
// topic: its segment.bytes and segment.ms. A topic whose configuration
// cannot be had (being deleted) gets the defaults: they only decide when
// the log rolls.
func (b *Broker) segmentOptions(topicName string) segment.Options {
	so := segment.Options{Log: b.opts.logOptions(), Logf: b.opts.Logf}
	if cfg, err := b.TopicConfig(topicName); err == nil {
		so.SegmentBytes, so.SegmentAge = SegmentSettings(cfg)
	}
	return so
}

// SegmentSettings are a topic configuration's segment.bytes and
// segment.ms as the segment package takes them.
func SegmentSettings(cfg topic.Config) (bytes int64, age time.Duration) {
	return cfg.SegmentBytes, time.Duration(cfg.SegmentMs) * time.Millisecond
}

// RetentionPolicy is a topic configuration's retention.ms and
// retention.bytes as segment.PlanRetention takes them (-1: no limit).
func RetentionPolicy(cfg topic.Config) segment.RetentionPolicy {
	age := time.Duration(-1)
	if cfg.RetentionMs >= 0 {
		age = time.Duration(cfg.RetentionMs) * time.Millisecond
	}
	return segment.RetentionPolicy{Age: age, Bytes: cfg.RetentionBytes}
}

// logOptions are the phase-1 options of every replica log of the broker.
func (o BrokerOptions) logOptions() log.Options {
	return log.Options{FS: o.FS, MaxPayloadSize: o.MaxPayloadSize, Now: o.Now, Sync: o.Sync}
}
