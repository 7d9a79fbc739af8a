package cluster

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error the package returns wraps one of these, is
// one of the typed errors below (which match their own sentinel with
// errors.Is), or wraps an error of the log layer such as a
// *log.CorruptionError.
var (
	// ErrClosed is returned by every operation on a closed Cluster.
	ErrClosed = errors.New("cluster: closed")
	// ErrInvalidBrokerID is returned for a broker id below 1.
	ErrInvalidBrokerID = errors.New("cluster: broker id must be positive")
	// ErrUnknownBroker is returned for a broker id the cluster has never
	// registered.
	ErrUnknownBroker = errors.New("cluster: unknown broker")
	// ErrBrokerUnavailable is returned when a broker is closed (or was never
	// registered since the cluster was opened). It is also what operations on
	// a closed *Broker wrap.
	ErrBrokerUnavailable = errors.New("cluster: broker unavailable")
	// ErrBrokerRegistered is returned by RegisterBroker and StartBroker when
	// an open instance with the same id is already registered.
	ErrBrokerRegistered = errors.New("cluster: an open broker with this id is already registered")
	// ErrBrokerRoot is returned by RegisterBroker for a broker whose storage
	// root is not the cluster's root.
	ErrBrokerRoot = errors.New("cluster: broker belongs to another cluster root")
	// ErrUnknownTopic is returned for a topic the cluster does not have.
	ErrUnknownTopic = errors.New("cluster: unknown topic")
	// ErrTopicExists is wrapped by *TopicExistsError.
	ErrTopicExists = errors.New("cluster: topic exists")
	// ErrInvalidPartitionCount is returned by CreateTopic for a partition
	// count below 1 or past topic.MaxPartitionCount, and by AddPartitions
	// for a count not larger than the topic's.
	ErrInvalidPartitionCount = errors.New("cluster: invalid partition count")
	// ErrInvalidReplicationFactor is returned for a replication factor below
	// 1 or above the number of brokers.
	ErrInvalidReplicationFactor = errors.New("cluster: invalid replication factor")
	// ErrNotAssigned is returned when a broker holds no replica of the
	// partition named.
	ErrNotAssigned = errors.New("cluster: broker is not assigned to the partition")
	// ErrReplicaIsLeader is returned by CatchUp and RecoverReplica when asked
	// to repair the partition's leader, which is authoritative by definition.
	ErrReplicaIsLeader = errors.New("cluster: replica is the partition's leader")
	// ErrReplicaActive is returned by RecoverReplica for a replica that is
	// already in the active set.
	ErrReplicaActive = errors.New("cluster: replica is already active")
	// ErrReplicaInactive is returned by MoveLeader and Deactivate for a
	// replica outside the active set: it may lack acknowledged records, so
	// it can neither lead nor leave the set again.
	ErrReplicaInactive = errors.New("cluster: replica is not active")
	// ErrStaleAction is returned by Apply for an action decided on a leader
	// epoch the partition has since left: the state it was planned on is
	// gone, and the next plan will see the new one.
	ErrStaleAction = errors.New("cluster: action planned on an older leader epoch")
	// ErrHealingOff refuses a controller's change of a partition's
	// leadership or active set while automatic healing is switched off
	// in the replicated metadata (MetaState.Healing): a pass decided
	// before the switch, or by a controller that had not read it yet.
	ErrHealingOff = errors.New("cluster: automatic healing is switched off")
	// ErrReplicaMissing is returned when an assigned replica's log file does
	// not exist on its broker. Replicas are created only by CreateTopic; a
	// missing one is never silently recreated empty.
	ErrReplicaMissing = errors.New("cluster: replica log missing")
	// ErrInvalidArgument is returned for other arguments out of range, such
	// as a maxRecords below 1.
	ErrInvalidArgument = errors.New("cluster: invalid argument")
	// ErrMetadataFailed is returned by every change of cluster.meta after a
	// failed write left the file's content in doubt (it could not be put
	// back to what the cluster holds in memory). Reopen the cluster: Open
	// reads whatever the file holds.
	ErrMetadataFailed = errors.New("cluster: an earlier cluster.meta write failed; reopen the cluster")
	// ErrDeleteUnfinished is wrapped by DeleteTopic and CreateTopic when a
	// deleted topic's files could not all be removed: the topic is
	// deleted, but its name cannot be created again until they are.
	ErrDeleteUnfinished = errors.New("cluster: the topic is deleted, but its files are not all removed yet")

	// ErrTopicNameConflict is matched by *TopicNameConflictError.
	ErrTopicNameConflict = errors.New("cluster: topic name differs only in letter case from an existing topic")
	// ErrAddrTaken is matched by *AddrTakenError: a registration names
	// an internal address another node holds.
	ErrAddrTaken = errors.New("cluster: the internal address is another node's")
	// ErrOpenLogsLimit is matched by *OpenLogsLimitError.
	ErrOpenLogsLimit = errors.New("cluster: too many replica logs")

	// ErrReplicationFailed is matched by *ReplicationError.
	ErrReplicationFailed = errors.New("cluster: replication failed")
	// ErrNotEnoughReplicas is matched by *NotEnoughReplicasError.
	ErrNotEnoughReplicas = errors.New("cluster: not enough in-sync replicas")
	// ErrLeaderUnavailable is matched by *LeaderUnavailableError.
	ErrLeaderUnavailable = errors.New("cluster: leader unavailable")
	// ErrReplicaDivergence is matched by *ReplicaDivergenceError.
	ErrReplicaDivergence = errors.New("cluster: replicas diverge")
	// ErrLeaderStillAvailable is matched by *LeaderStillAvailableError.
	ErrLeaderStillAvailable = errors.New("cluster: leader still available")
	// ErrNoEligibleReplica is matched by *NoEligibleReplicaError.
	ErrNoEligibleReplica = errors.New("cluster: no eligible replica")

	// ErrNotLeader is matched by *NotLeaderError: a request that needs a
	// partition's leader reached another broker.
	ErrNotLeader = errors.New("cluster: not the partition's leader")
	// ErrStaleEpoch is matched by *StaleEpochError: a leader's request at
	// an epoch that is over (the sender was replaced).
	ErrStaleEpoch = errors.New("cluster: leader epoch is over")
	// ErrEpochAhead is matched by *EpochAheadError: a request at an epoch
	// the receiver has not applied yet.
	ErrEpochAhead = errors.New("cluster: leader epoch not applied here yet")
	// ErrBehind is matched by *BehindError: records that start past the
	// follower's log end.
	ErrBehind = errors.New("cluster: follower is behind the records sent")
	// ErrNoController is returned while no process runs the controller
	// (cluster mode: the metadata group has no leader), for what only the
	// controller can do.
	ErrNoController = errors.New("cluster: no controller is known")
	// ErrBrokerIsProcess refuses, in cluster mode, to start or stop a
	// broker through the cluster: a broker is a process there, started and
	// stopped as one.
	ErrBrokerIsProcess = errors.New("cluster: in cluster mode a broker is a process of its own")
	// ErrNoOffsetFiles is returned by OffsetStore in cluster mode, where
	// the committed offsets are part of the replicated metadata.
	ErrNoOffsetFiles = errors.New("cluster: the offsets are kept in the replicated metadata, not in offset files")
	// ErrNotReady is returned while a Cluster's copy of the metadata is
	// not yet known to be current (a process of cluster mode replaying
	// its metadata after a start): an answer from it could say a topic
	// or an offset does not exist when it does.
	ErrNotReady = errors.New("cluster: the metadata is not replayed yet")
	// ErrPastHighWatermark refuses to raise a log start past the high
	// watermark (AdvanceLogStart): records above it are not committed.
	ErrPastHighWatermark = errors.New("cluster: offset past the high watermark")
	// ErrProducerIDsExhausted refuses a reservation of producer ids past
	// 2^63-1: every id was handed out, and none is ever reused.
	ErrProducerIDsExhausted = errors.New("cluster: producer ids exhausted")
)

// MetadataError reports a cluster.meta that cannot be trusted: unreadable,
// not JSON, or JSON that breaks a rule of the format. The file is never
// changed by the code that reports it.
type MetadataError struct {
	// Path is the metadata file ("" when parsing bytes that came from
	// nowhere in particular).
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

func (e *MetadataError) Error() string {
	return fileErrorText("cluster: malformed metadata", e.Path, e.Reason, e.Err)
}

// fileErrorText is the text of the package's errors about a file it
// refuses: what, the path when known, why, and the cause.
func fileErrorText(what, path, reason string, cause error) string {
	s := what
	if path != "" {
		s += " " + path
	}
	s += ": " + reason
	if cause != nil {
		s += ": " + cause.Error()
	}
	return s
}

func (e *MetadataError) Unwrap() error { return e.Err }

// TopicExistsError is returned by CreateTopic for a name that is taken. It
// carries the existing topic's settings and whether they equal the ones
// requested, so a caller can treat an identical re-create as a no-op and a
// conflicting one as a conflict.
type TopicExistsError struct {
	// Topic is the name asked for.
	Topic string
	// PartitionCount and ReplicationFactor are the existing topic's.
	PartitionCount    int
	ReplicationFactor int
	// SameSettings is true when the request asked for exactly these.
	SameSettings bool
}

func (e *TopicExistsError) Error() string {
	s := fmt.Sprintf("cluster: topic %q exists with %d partition(s), replication factor %d", e.Topic, e.PartitionCount, e.ReplicationFactor)
	if !e.SameSettings {
		s += " (different from the settings requested)"
	}
	return s
}

func (e *TopicExistsError) Unwrap() error { return ErrTopicExists }

// AddrTakenError refuses the registration of a node at an internal
// address another node is registered at: the nodes dial each other by
// that address, and with TLS want the node id it belongs to, so one
// member must not take another's (it would send that node's connections
// to the wrong id). It wraps ErrAddrTaken.
type AddrTakenError struct {
	// Node is the node that asked to register; Addr the address it named.
	Node int
	Addr string
	// Holder is the node registered at Addr.
	Holder int
}

func (e *AddrTakenError) Error() string {
	return fmt.Sprintf("cluster: node %d cannot register at %s: node %d is registered there", e.Node, e.Addr, e.Holder)
}

func (e *AddrTakenError) Unwrap() error { return ErrAddrTaken }

// DeletionPendingError refuses a topic's creation, in cluster mode, while
// a topic deleted under the same name still has files on some brokers:
// the name is kept until every broker that held replicas removed them
// (each does as soon as it learns of the delete, or when it starts
// again). It wraps ErrDeleteUnfinished; unlike a removal that failed, it
// passes by itself.
type DeletionPendingError struct {
	Topic string
	// Brokers are the brokers that have not yet confirmed the removal.
	Brokers []int
}

func (e *DeletionPendingError) Error() string {
	return fmt.Sprintf("cluster: topic %q is still being deleted: brokers %v have not yet removed its files", e.Topic, e.Brokers)
}

func (e *DeletionPendingError) Unwrap() error { return ErrDeleteUnfinished }

// ReplicationError reports a write that the leader stored but at least one
// active follower did not. The write was not acknowledged. The leader keeps
// its records (an append-only log is never rolled back), so the named
// followers now lag behind it until CatchUp repairs them.
type ReplicationError struct {
	Topic     string
	Partition int
	// Offset is the first offset of the refused records on the leader and
	// Count how many records they are.
	Offset uint64
	Count  int
	// BrokerIDs are the followers that failed, ascending.
	BrokerIDs []int
	// Err joins the followers' errors.
	Err error
}

func (e *ReplicationError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: records %d..%d stored by the leader but not by broker(s) %s; not acknowledged: %v",
		e.Topic, e.Partition, e.Offset, e.Offset+uint64(e.Count)-1, joinIDs(e.BrokerIDs), e.Err)
}

func (e *ReplicationError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrReplicationFailed) true.
func (e *ReplicationError) Is(target error) bool { return target == ErrReplicationFailed }

// NotEnoughReplicasError refuses a write to a partition whose active
// replicas (its in-sync set, the leader included) are fewer than the
// topic's min.insync.replicas. It is returned before anything is
// appended: nothing of the write is stored, and it can be sent again once
// enough replicas are active. errors.Is(err, ErrNotEnoughReplicas) is true.
type NotEnoughReplicasError struct {
	Topic     string
	Partition int
	// Active is how many replicas are active; MinInsync the topic's
	// min.insync.replicas.
	Active    int
	MinInsync int
}

func (e *NotEnoughReplicasError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: %d active replica(s), fewer than min.insync.replicas=%d; nothing was written",
		e.Topic, e.Partition, e.Active, e.MinInsync)
}

// Is makes errors.Is(err, ErrNotEnoughReplicas) true.
func (e *NotEnoughReplicasError) Is(target error) bool { return target == ErrNotEnoughReplicas }

// LeaderUnavailableError reports that a partition's recorded leader cannot be
// reached (its broker is closed or not registered). Nothing fails over on its
// own: call Failover.
type LeaderUnavailableError struct {
	Topic     string
	Partition int
	// BrokerID is the recorded leader.
	BrokerID int
	// Err is the cause, usually wrapping ErrBrokerUnavailable.
	Err error
}

func (e *LeaderUnavailableError) Error() string {
	msg := fmt.Sprintf("cluster: %s/%d: leader broker %d unavailable", e.Topic, e.Partition, e.BrokerID)
	if e.Err != nil && !unavailable(e.Err) {
		// A stopped broker needs no further words; anything else does.
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *LeaderUnavailableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrLeaderUnavailable) true.
func (e *LeaderUnavailableError) Is(target error) bool { return target == ErrLeaderUnavailable }

// ReplicaDivergenceError reports two replicas of a partition that disagree:
// a record at a shared offset differs (in offset, timestamp or payload), or a
// follower holds more records than the leader. The operation that found it
// changed nothing.
type ReplicaDivergenceError struct {
	Topic     string
	Partition int
	// BrokerID is the replica that disagrees with the reference (the leader,
	// or the chosen failover candidate).
	BrokerID int
	// Offset is the first offset where they disagree.
	Offset uint64
	// Reason says how, in words.
	Reason string
}

func (e *ReplicaDivergenceError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: replica on broker %d diverges at offset %d: %s", e.Topic, e.Partition, e.BrokerID, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrReplicaDivergence) true.
func (e *ReplicaDivergenceError) Is(target error) bool { return target == ErrReplicaDivergence }

// LeaderStillAvailableError is returned by Failover while the recorded leader
// is usable: failover replaces a failed leader, it does not move leadership
// on request.
type LeaderStillAvailableError struct {
	Topic     string
	Partition int
	BrokerID  int
}

func (e *LeaderStillAvailableError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: leader broker %d is still available; refusing to fail over", e.Topic, e.Partition, e.BrokerID)
}

// Is makes errors.Is(err, ErrLeaderStillAvailable) true.
func (e *LeaderStillAvailableError) Is(target error) bool { return target == ErrLeaderStillAvailable }

// NoEligibleReplicaError is returned by Failover when no active follower is
// available to take over. The recorded leader stays; a partition is never
// left without one.
type NoEligibleReplicaError struct {
	Topic     string
	Partition int
	// LeaderBrokerID is the (unavailable) leader that stays recorded.
	LeaderBrokerID int
	// Reason says why each follower was passed over.
	Reason string
}

func (e *NoEligibleReplicaError) Error() string {
	return fmt.Sprintf("cluster: %s/%d: no follower can replace leader broker %d: %s", e.Topic, e.Partition, e.LeaderBrokerID, e.Reason)
}

// Is makes errors.Is(err, ErrNoEligibleReplica) true.
func (e *NoEligibleReplicaError) Is(target error) bool { return target == ErrNoEligibleReplica }

func joinIDs(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

// HWCheckpointError reports an hw.checkpoint that cannot be trusted:
// unreadable, not JSON, or JSON that breaks a rule of the format. Open
// refuses it and leaves the file as it is. The file only seeds high
// watermarks after a clean shutdown, so an operator who removes it loses
// no record: the watermarks then wait for every active replica, as after a
// crash (docs/design.md § High watermark).
type HWCheckpointError struct {
	// Path is the checkpoint file ("" when parsing bytes that came from
	// nowhere in particular).
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

func (e *HWCheckpointError) Error() string {
	return fileErrorText("cluster: malformed high-watermark checkpoint", e.Path, e.Reason, e.Err)
}

func (e *HWCheckpointError) Unwrap() error { return e.Err }

// ProducerIDsError reports a producer.ids that cannot be trusted:
// unreadable, not JSON, or JSON that breaks a rule of the format. Every
// reservation of producer ids is refused while it stands, and the file is
// never rewritten to "fix" it: reading it as anything but what was last
// written could hand out an id again
// (docs/design.md § Producer id blocks).
type ProducerIDsError struct {
	// Path is the file ("" when parsing bytes that came from nowhere in
	// particular).
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

func (e *ProducerIDsError) Error() string {
	return fileErrorText("cluster: malformed producer ids file", e.Path, e.Reason, e.Err)
}

func (e *ProducerIDsError) Unwrap() error { return e.Err }

// TransactionsError reports a transactions.state that cannot be trusted:
// unreadable, not JSON, or JSON that breaks a rule of the format. Every
// request of the transaction coordinator is refused while it stands, and
// the file is never rewritten to "fix" it: reading it as anything but
// what was last written could hand a transactional id's producer id and
// epoch out again, and unfence a zombie producer.
type TransactionsError struct {
	// Path is the file ("" when parsing bytes that came from nowhere in
	// particular).
	Path string
	// Reason says what is wrong, in words.
	Reason string
	// Err is the underlying cause, if any.
	Err error
}

func (e *TransactionsError) Error() string {
	return fileErrorText("cluster: malformed transactions file", e.Path, e.Reason, e.Err)
}

func (e *TransactionsError) Unwrap() error { return e.Err }

// TopicNameConflictError is returned by CreateTopic for a name that differs
// only in letter case from a topic that exists (or is being created): on a
// file system that ignores case, as a copy of the data directory may land
// on, both would be one directory. Nothing was created.
type TopicNameConflictError struct {
	// Topic is the name asked for.
	Topic string
	// Existing is the topic whose name it folds to.
	Existing string
}

func (e *TopicNameConflictError) Error() string {
	return fmt.Sprintf("cluster: create topic %q: differs only in letter case from the existing topic %q", e.Topic, e.Existing)
}

// Is makes errors.Is(err, ErrTopicNameConflict) true.
func (e *TopicNameConflictError) Is(target error) bool { return target == ErrTopicNameConflict }

// OpenLogsLimitError is returned by CreateTopic when the replica logs of the
// new topic (partitions × replication factor), added to those the
// cluster's topics hold, would exceed Options.MaxOpenLogs: each replica log
// is an open file descriptor. Nothing was created.
type OpenLogsLimitError struct {
	// Topic is the name asked for.
	Topic string
	// Requested is the new topic's replica logs; Held those of the topics
	// that exist or are being created.
	Requested, Held int
	// Limit is Options.MaxOpenLogs.
	Limit int
}

func (e *OpenLogsLimitError) Error() string {
	return fmt.Sprintf("cluster: create topic %q: %d replica log(s) (partitions x replication factor) with the %d the cluster holds would exceed the limit of %d open replica logs",
		e.Topic, e.Requested, e.Held, e.Limit)
}

// Is makes errors.Is(err, ErrOpenLogsLimit) true.
func (e *OpenLogsLimitError) Is(target error) bool { return target == ErrOpenLogsLimit }
