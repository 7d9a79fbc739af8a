package clusternode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
)

// This file is what the HTTP API serves in cluster mode (the server's
// Backend): any node answers every request, forwarding a partition's
// writes and reads to the node that leads it.

// requestTimeout bounds a client request's work on the nodes it reaches:
// well inside the HTTP server's write timeout, so that a request that
// cannot finish (no leader) is answered with why, not cut off.
const requestTimeout = 15 * time.Second

// Root is the node's data directory.
func (n *Node) Root() string { return n.cfg.DataDir }

// Brokers lists the registered brokers. The node that leads the metadata
// group knows which report; every other node counts a broker available
// while it is registered.
func (n *Node) Brokers() []cluster.BrokerInfo {
	if n.raft.IsLeader() {
		return (&controlView{n: n}).Brokers()
	}
	var out []cluster.BrokerInfo
	n.fsm.read(func(s *cluster.MetaState) {
		for _, id := range s.Meta.Brokers {
			out = append(out, cluster.BrokerInfo{ID: id, Available: true})
		}
	})
	return out
}

// Nodes lists the registered brokers' addresses, by id.
func (n *Node) Nodes() []cluster.NodeInfo {
	var out []cluster.NodeInfo
	n.fsm.read(func(s *cluster.MetaState) {
		for _, info := range s.Nodes {
			out = append(out, info)
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Topics lists the topics by name.
func (n *Node) Topics() []cluster.TopicInfo {
	var out []cluster.TopicInfo
	n.fsm.read(func(s *cluster.MetaState) {
		for name, t := range s.Meta.Topics {
			out = append(out, cluster.TopicInfo{Name: name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor})
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// catchUpWait bounds how long a node waits for its own copy of the
// metadata to learn a topic another node has just created: a client that
// created a topic through one node and writes through another at once
// finds it, rather than a 404 from a copy a few milliseconds behind.
const catchUpWait = 500 * time.Millisecond

// awaitTopic waits up to catchUpWait for topicName to be known here.
func (n *Node) awaitTopic(topicName string) {
	ctx, cancel := context.WithTimeout(n.ctx, catchUpWait)
	defer cancel()
	n.fsm.waitFor(ctx, func(s *cluster.MetaState) bool { _, ok := s.Meta.Topics[topicName]; return ok })
}

// partitionMeta is a partition's metadata, waiting for a topic this node
// has not heard of yet (awaitTopic).
func (n *Node) partitionMeta(topicName string, partition int) (cluster.PartitionMetadata, error) {
	pm, err := n.fsm.partition(topicName, partition)
	if errors.Is(err, cluster.ErrUnknownTopic) {
		n.awaitTopic(topicName)
		pm, err = n.fsm.partition(topicName, partition)
	}
	return pm, err
}

// Topic describes one topic.
func (n *Node) Topic(name string) (cluster.TopicInfo, error) {
	var info cluster.TopicInfo
	var ok bool
	n.awaitTopic(name)
	n.fsm.read(func(s *cluster.MetaState) {
		var t cluster.TopicMetadata
		if t, ok = s.Meta.Topics[name]; ok {
			info = cluster.TopicInfo{Name: name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor}
		}
	})
	if !ok {
		return info, fmt.Errorf("cluster: topic %q: %w", name, cluster.ErrUnknownTopic)
	}
	return info, nil
}

// Status describes a partition: its metadata, and the log ends this node
// can see (its own replica's; on the metadata leader, every reported one).
func (n *Node) Status(topicName string, partition int) (cluster.PartitionStatus, error) {
	var st cluster.PartitionStatus
	var err error
	if n.raft.IsLeader() {
		st, err = (&controlView{n: n}).Status(topicName, partition)
	} else {
		var pm cluster.PartitionMetadata
		if pm, err = n.partitionMeta(topicName, partition); err == nil {
			st = statusOf(topicName, pm)
		}
	}
	if err != nil {
		return st, err
	}
	for i := range st.Replicas {
		rs := &st.Replicas[i]
		if rs.BrokerID == n.cfg.ID {
			rs.Available = true
			if l, err := n.broker.Replica(topicName, partition, false); err == nil {
				end := l.NextOffset()
				rs.LogEnd = &end
			}
		}
	}
	// The leader knows the high watermark and its own log end; a status
	// does not wait long for a leader that hangs (stopped, cut off).
	if res, err := n.readWithin(statusWait, topicName, partition, 0, 0); err == nil {
		st.HighWatermark = res.HighWatermark
		for i := range st.Replicas {
			if rs := &st.Replicas[i]; rs.BrokerID == st.Leader {
				end := res.LogEnd
				rs.LogEnd, rs.Available = &end, true
			}
		}
	}
	return st, nil
}

// CreateTopic places a topic over the registered brokers through Raft.
func (n *Node) CreateTopic(name string, partitions, replicationFactor int) error {
	return n.CreateTopicWithConfig(name, partitions, replicationFactor, nil)
}

// CreateTopicWithConfig is CreateTopic with configuration overrides
// (cluster.Cluster.CreateTopicWithConfig): checked here first, carried by
// the create-topic command, checked again where it is applied.
func (n *Node) CreateTopicWithConfig(name string, partitions, replicationFactor int, config map[string]string) error {
	overrides, err := topic.ParseConfigOverrides(config)
	if err != nil {
		return fmt.Errorf("cluster: create topic %q: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(n.ctx, requestTimeout)
	defer cancel()
	// Checked here first, so that the caller gets the full refusal even
	// when the proposal would travel to another node.
	var refusal error
	n.fsm.read(func(s *cluster.MetaState) {
		if t, ok := s.Meta.Topics[name]; ok {
			refusal = &cluster.TopicExistsError{Topic: name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor,
				SameSettings: t.PartitionCount == partitions && t.ReplicationFactor == replicationFactor && maps.Equal(t.Config, overrides)}
		}
		for other := range s.Meta.Topics {
			if other != name && strings.EqualFold(other, name) {
				refusal = &cluster.TopicNameConflictError{Topic: name, Existing: other}
			}
		}
	})
	if refusal != nil {
		return refusal
	}
	_, err = n.propose(ctx, cluster.MetaCommand{Op: cluster.OpCreateTopic, Topic: name, Partitions: partitions, ReplicationFactor: replicationFactor,
		Config: overrides})
	return err
}

// DeleteTopic is not offered in cluster mode yet.
func (n *Node) DeleteTopic(name string) (cluster.DeleteTopicResult, error) {
	return cluster.DeleteTopicResult{}, fmt.Errorf("delete topic %q: %w", name, ErrNotInClusterMode)
}

// MaxPayloadSize is the largest record a broker takes.
func (n *Node) MaxPayloadSize() int { return log.DefaultMaxPayloadSize }

// Send writes msgs, routed as cluster.Producer routes them, each
// partition's share through its leader.
func (n *Node) Send(topicName string, partition *int, msgs []topic.Message) ([]cluster.SendResult, error) {
	info, err := n.Topic(topicName)
	if err != nil {
		return nil, err
	}
	if err := topic.CheckPayloads(msgs, n.MaxPayloadSize()); err != nil {
		return nil, fmt.Errorf("cluster: %s: send batch: %w", topicName, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(n.ctx, requestTimeout)
	defer cancel()
	results := make([]cluster.SendResult, len(msgs))
	write := func(pi int, idx []int) error {
		for _, i := range idx {
			results[i].Topic, results[i].Partition = topicName, pi
		}
		res, err := n.produce(ctx, topicName, pi, topic.Payloads(msgs, idx))
		if err != nil {
			return err
		}
		for k, i := range idx {
			results[i].Offset, results[i].Timestamp = res.Records[k].Offset, res.Records[k].Timestamp
			results[i].LeaderBrokerID, results[i].Brokers = res.Leader, slices.Clone(res.Brokers)
		}
		return nil
	}
	if partition != nil {
		if *partition < 0 || *partition >= info.PartitionCount {
			return nil, fmt.Errorf("cluster: topic %q has %d partition(s), no partition %d: %w", topicName, info.PartitionCount, *partition, topic.ErrPartitionOutOfRange)
		}
		idx := make([]int, len(msgs))
		for i := range idx {
			idx[i] = i
		}
		return results, write(*partition, idx)
	}
	pl := n.router(topicName, info.PartitionCount).Plan(msgs)
	err = pl.Write(topicName, write)
	if len(msgs) == 1 {
		// One record answers with its partition's error, as
		// cluster.Producer.Send does.
		var be *topic.BatchError
		if errors.As(err, &be) {
			for _, perr := range be.Partitions {
				err = perr
			}
		}
	}
	return results, err
}

// router is a topic's router, one per topic name and partition count.
func (n *Node) router(topicName string, partitions int) *topic.Router {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.routers == nil {
		n.routers = map[string]*topic.Router{}
	}
	key := fmt.Sprintf("%s/%d", topicName, partitions)
	r, ok := n.routers[key]
	if !ok {
		r = topic.NewRouter(partitions)
		n.routers[key] = r
	}
	return r
}

// produce writes one partition's share through its leader: here when this
// node leads it, else forwarded. A leader that moves meanwhile is
// followed, a few times.
func (n *Node) produce(ctx context.Context, topicName string, partition int, payloads [][]byte) (replication.ProduceResponse, error) {
	for attempt := 0; ; attempt++ {
		pm, err := n.partitionMeta(topicName, partition)
		if err != nil {
			return replication.ProduceResponse{}, err
		}
		var res replication.ProduceResponse
		if pm.Leader == n.cfg.ID {
			res, err = n.Produce(ctx, replication.ProduceRequest{Topic: topicName, Partition: partition, Payloads: payloads})
		} else {
			addr, aerr := n.addrOf(pm.Leader)
			if aerr != nil {
				return res, aerr
			}
			res, err = n.rpc.Produce(ctx, addr, replication.ProduceRequest{Topic: topicName, Partition: partition, Payloads: payloads})
		}
		if err == nil || attempt >= 3 || replication.CodeOf(err) != replication.CodeNotLeader {
			return res, n.producerError(topicName, partition, pm.Leader, err)
		}
		time.Sleep(50 * time.Millisecond) // the new leadership is being applied here
	}
}

// producerError turns a failure of the internal API into the cluster's
// own errors, so that the HTTP API answers as in one process: a leader
// that cannot be reached is unavailable, a write its followers did not
// all take was not acknowledged.
func (n *Node) producerError(topicName string, partition, leader int, err error) error {
	if err == nil {
		return nil
	}
	var re *replication.Error
	if errors.As(err, &re) {
		switch re.Code {
		case replication.CodeOffsetOutOfRange:
			return outOfRange(topicName, partition, re)
		case replication.CodeNotReplicated:
			return &cluster.ReplicationError{Topic: topicName, Partition: partition, Offset: re.Offset, Count: re.Count,
				BrokerIDs: re.Brokers, Err: errors.New(re.Message)}
		case replication.CodeRefused:
			if s := refusals[re.Reason]; s != nil {
				return &remoteRefusal{msg: re.Message, sentinel: s}
			}
		}
		return &cluster.LeaderUnavailableError{Topic: topicName, Partition: partition, BrokerID: leader, Err: errors.New(re.Message)}
	}
	var repl *cluster.ReplicationError
	var lu *cluster.LeaderUnavailableError
	if errors.As(err, &repl) || errors.As(err, &lu) || refusalName(err) != "" {
		return err
	}
	return &cluster.LeaderUnavailableError{Topic: topicName, Partition: partition, BrokerID: leader, Err: err}
}

// Produce writes a forwarded share to a partition this node leads
// (replication.Peer).
func (n *Node) Produce(ctx context.Context, req replication.ProduceRequest) (replication.ProduceResponse, error) {
	sr, err := n.produceLocal(ctx, req.Topic, req.Partition, req.Payloads)
	if err != nil {
		var repl *cluster.ReplicationError
		if errors.As(err, &repl) {
			msg := err.Error()
			if repl.Err != nil {
				msg = repl.Err.Error() // the followers' errors; the rest travels in fields
			}
			return replication.ProduceResponse{}, &replication.Error{Code: replication.CodeNotReplicated, Message: msg,
				Offset: repl.Offset, Count: repl.Count, Brokers: repl.BrokerIDs}
		}
		if _, ok := err.(*replication.Error); ok {
			return replication.ProduceResponse{}, err
		}
		if name := refusalName(err); name != "" {
			return replication.ProduceResponse{}, &replication.Error{Code: replication.CodeRefused, Reason: name, Message: err.Error()}
		}
		return replication.ProduceResponse{}, &replication.Error{Code: replication.CodeUnavailable, Message: err.Error()}
	}
	res := replication.ProduceResponse{Leader: n.cfg.ID, Brokers: sr.brokers}
	for _, r := range sr.recs {
		res.Records = append(res.Records, replication.Placement{Offset: r.Offset, Timestamp: r.Timestamp})
	}
	return res, nil
}

// CatchUp brings a follower of a partition this node leads level
// (replication.Peer).
func (n *Node) CatchUp(ctx context.Context, topicName string, partition, follower int) (replication.CatchUpResponse, error) {
	return n.catchUp(ctx, topicName, partition, follower)
}

// ReadCommitted reads a partition below its high watermark, from its
// leader.
func (n *Node) ReadCommitted(topicName string, partition int, start uint64, maxRecords int) ([]log.Record, error) {
	res, err := n.read(topicName, partition, start, maxRecords)
	if err != nil {
		return nil, err
	}
	if len(res.Records) > maxRecords {
		res.Records = res.Records[:maxRecords]
	}
	return res.Records, nil
}

// statusWait bounds what a partition's status waits for its leader.
const statusWait = time.Second

// read asks the partition's leader for committed records.
func (n *Node) read(topicName string, partition int, start uint64, maxRecords int) (replication.RecordsResponse, error) {
	return n.readWithin(requestTimeout, topicName, partition, start, maxRecords)
}

// readWithin is read, given up after timeout.
func (n *Node) readWithin(timeout time.Duration, topicName string, partition int, start uint64, maxRecords int) (replication.RecordsResponse, error) {
	ctx, cancel := context.WithTimeout(n.ctx, timeout)
	defer cancel()
	pm, err := n.partitionMeta(topicName, partition)
	if err != nil {
		return replication.RecordsResponse{}, err
	}
	req := replication.RecordsRequest{Topic: topicName, Partition: partition, From: start, Committed: true,
		MaxBytes: maxRecords * log.FrameSize(0)}
	if maxRecords > 0 {
		req.MaxBytes = maxPushBytes
	}
	if pm.Leader == n.cfg.ID {
		res, err := n.Records(ctx, req)
		return res, outOfRange(topicName, partition, err)
	}
	addr, err := n.addrOf(pm.Leader)
	if err != nil {
		return replication.RecordsResponse{}, err
	}
	res, err := n.rpc.Records(ctx, addr, req)
	if err != nil {
		return res, n.producerError(topicName, partition, pm.Leader, err)
	}
	return res, nil
}

// Bounds is the partition's readable range, its leader's log start and
// high watermark.
func (n *Node) Bounds(topicName string, partition int) (logStart, highWatermark uint64, err error) {
	res, err := n.read(topicName, partition, 0, 0)
	return res.LogStart, res.HighWatermark, err
}

// PartitionOffsetForTime is cluster.Cluster.OffsetForTime, asked of the
// partition's leader: the first offset whose record's timestamp
// (nanoseconds) is at or after ts; found false and the high watermark
// when none below the high watermark is.
func (n *Node) PartitionOffsetForTime(topicName string, partition int, ts int64) (offset uint64, found bool, err error) {
	ctx, cancel := context.WithTimeout(n.ctx, requestTimeout)
	defer cancel()
	pm, err := n.partitionMeta(topicName, partition)
	if err != nil {
		return 0, false, err
	}
	req := replication.OffsetForTimeRequest{Topic: topicName, Partition: partition, Timestamp: max(ts, 0)}
	var res replication.OffsetForTimeResponse
	if pm.Leader == n.cfg.ID {
		res, err = n.OffsetForTime(ctx, req)
	} else {
		var addr string
		if addr, err = n.addrOf(pm.Leader); err != nil {
			return 0, false, err
		}
		if res, err = n.rpc.OffsetForTime(ctx, addr, req); err != nil {
			err = n.producerError(topicName, partition, pm.Leader, err)
		}
	}
	return res.Offset, res.Found, err
}

// HighWatermark is the partition's, as its leader knows it.
func (n *Node) HighWatermark(topicName string, partition int) (uint64, error) {
	res, err := n.read(topicName, partition, 0, 0)
	return res.HighWatermark, err
}

// ListOffsets lists a consumer's committed offsets.
func (n *Node) ListOffsets(consumerID string) ([]client.CommittedOffset, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return nil, fmt.Errorf("client: consumer id: %w", err)
	}
	var out []client.CommittedOffset
	n.fsm.read(func(s *cluster.MetaState) {
		for k, off := range s.Offsets {
			if k.Consumer == consumerID {
				out = append(out, client.CommittedOffset{Topic: k.Topic, Partition: k.Partition, Offset: off})
			}
		}
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out, nil
}

// LoadOffset reads one committed offset.
func (n *Node) LoadOffset(consumerID, topicName string, partition int) (uint64, bool, error) {
	var off uint64
	var ok bool
	n.fsm.read(func(s *cluster.MetaState) {
		off, ok = s.Offsets[cluster.OffsetKey{Consumer: consumerID, Topic: topicName, Partition: partition}]
	})
	return off, ok, nil
}

// ListAllOffsets lists every committed offset.
func (n *Node) ListAllOffsets() ([]client.StoredOffset, error) {
	var out []client.StoredOffset
	n.fsm.read(func(s *cluster.MetaState) {
		for k, off := range s.Offsets {
			out = append(out, client.StoredOffset{ConsumerID: k.Consumer, CommittedOffset: client.CommittedOffset{Topic: k.Topic, Partition: k.Partition, Offset: off}})
		}
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return fmt.Sprintf("%s\x00%s\x00%09d", a.ConsumerID, a.Topic, a.Partition) < fmt.Sprintf("%s\x00%s\x00%09d", b.ConsumerID, b.Topic, b.Partition)
	})
	return out, nil
}

// CommitOffset commits a consumer's offset through Raft: never backwards,
// never past the high watermark.
func (n *Node) CommitOffset(consumerID, topicName string, partition int, offset uint64) error {
	return n.setOffset(cluster.OpCommitOffset, "commit", consumerID, topicName, partition, offset)
}

// ResetOffset sets a consumer's offset through Raft, backwards too.
func (n *Node) ResetOffset(consumerID, topicName string, partition int, offset uint64) error {
	return n.setOffset(cluster.OpResetOffset, "reset", consumerID, topicName, partition, offset)
}

func (n *Node) setOffset(op cluster.MetaOp, verb, consumerID, topicName string, partition int, offset uint64) error {
	if err := topic.ValidateName(consumerID); err != nil {
		return fmt.Errorf("cluster: %s offset: consumer id: %w", verb, err)
	}
	hw, err := n.HighWatermark(topicName, partition)
	if err != nil {
		return err
	}
	if offset > hw {
		return &client.OffsetBeyondEndError{Op: verb, ConsumerID: consumerID, Topic: topicName, Partition: partition, Requested: offset, End: hw}
	}
	if old, ok, _ := n.LoadOffset(consumerID, topicName, partition); ok && op == cluster.OpCommitOffset && offset < old {
		return &client.OffsetRegressionError{ConsumerID: consumerID, Topic: topicName, Partition: partition, Committed: old, Requested: offset}
	}
	ctx, cancel := context.WithTimeout(n.ctx, requestTimeout)
	defer cancel()
	_, err = n.propose(ctx, cluster.MetaCommand{Op: op, Consumer: consumerID, Topic: topicName, Partition: partition, Offset: offset})
	return err
}

// DeleteOffsets deletes every offset of a consumer through Raft and
// returns how many this node's copy held just before.
func (n *Node) DeleteOffsets(consumerID string) (int, error) {
	if err := topic.ValidateName(consumerID); err != nil {
		return 0, fmt.Errorf("cluster: delete offsets: consumer id: %w", err)
	}
	list, err := n.ListOffsets(consumerID)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(n.ctx, requestTimeout)
	defer cancel()
	if _, err := n.propose(ctx, cluster.MetaCommand{Op: cluster.OpDeleteOffsets, Consumer: consumerID}); err != nil {
		return 0, err
	}
	return len(list), nil
}

// Journal reads the journal from offset since, at most max entries.
func (n *Node) Journal(since uint64, max int) ([]cluster.JournalEntry, error) {
	var out []cluster.JournalEntry
	n.fsm.read(func(s *cluster.MetaState) {
		for _, e := range s.Journal {
			if e.Offset >= since && (max <= 0 || len(out) < max) {
				out = append(out, e)
			}
		}
	})
	return out, nil
}

// The operations of the embedded cluster that a cluster of processes
// leaves to its controller or to the operator's process manager.

func (n *Node) StopBroker(id int) error {
	return fmt.Errorf("stop broker %d: stop its process instead: %w", id, ErrNotInClusterMode)
}

func (n *Node) StartBroker(id int) error {
	return fmt.Errorf("start broker %d: start its process instead: %w", id, ErrNotInClusterMode)
}

func (n *Node) ReopenBroker(id int) (cluster.ReopenResult, error) {
	return cluster.ReopenResult{}, fmt.Errorf("reopen broker %d: restart its process instead: %w", id, ErrNotInClusterMode)
}

func (n *Node) Failover(topicName string, partition int) (cluster.FailoverResult, error) {
	return cluster.FailoverResult{}, fmt.Errorf("fail over %s/%d: the controller fails over a silent broker's partitions: %w", topicName, partition, ErrNotInClusterMode)
}

func (n *Node) RecoverReplica(topicName string, partition, brokerID int) (cluster.RecoveryResult, error) {
	return cluster.RecoveryResult{}, fmt.Errorf("recover %s/%d: the controller recovers returning brokers: %w", topicName, partition, ErrNotInClusterMode)
}

func (n *Node) MoveLeader(topicName string, partition, brokerID int) (cluster.MoveResult, error) {
	return cluster.MoveResult{}, fmt.Errorf("move leader of %s/%d: %w", topicName, partition, ErrNotInClusterMode)
}
