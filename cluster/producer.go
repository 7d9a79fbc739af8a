package cluster

import (
	"fmt"
	"slices"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// Producer writes to a replicated topic through each partition's leader. It
// routes with the topic package's own rule, a topic.Router the topic's
// producers share: a non-nil key (even an empty one) goes to
// topic.PartitionForKey, a nil key round robin. A Producer borrows the Cluster
// and never closes it. It is safe for concurrent use.
type Producer struct {
	c     *Cluster
	topic string
}

// NewProducer returns a producer for one topic of c. An unknown topic is
// reported by the first Send.
func NewProducer(c *Cluster, topicName string) *Producer {
	return &Producer{c: c, topic: topicName}
}

// SendResult says where a record landed and who holds it: the result every
// PyStream producer returns (client.SendResult: topic, partition, offset,
// timestamp), plus the replicas that hold it.
type SendResult struct {
	client.SendResult
	// LeaderBrokerID is the broker that accepted the write.
	LeaderBrokerID int
	// Brokers are the brokers that durably hold the record: the partition's
	// active replicas, ascending.
	Brokers []int
}

// Send writes one record and returns only when every active replica of its
// partition holds it durably. The leader assigns offset and timestamp and
// appends first; then every active follower stores that exact record, the
// followers in parallel.
//
// Errors: *LeaderUnavailableError when the leader's broker is closed (nothing
// fails over on its own); *ReplicationError when the leader stored the
// record but a follower did not — the write is not acknowledged, the leader
// keeps the record and the follower lags until CatchUp.
func (p *Producer) Send(key, payload []byte) (SendResult, error) {
	t, err := p.c.topic(p.topic)
	if err != nil {
		return SendResult{}, err
	}
	part := t.parts[t.router.Route(key)]
	res, err := p.c.write(part, [][]byte{payload})
	if err != nil {
		return SendResult{}, err
	}
	return resultOf(part, res, 0), nil
}

// SendBatch writes many records: every partition's share with one leader
// append and one append per follower (one fsync each), the partitions in
// parallel. Results are in input order and every one carries its Topic and
// Partition.
//
// The result has the topic's shape (topic.Topic.AppendBatch). A payload
// above MaxPayloadSize fails the whole batch before anything is written or
// routed (an error wrapping log.ErrPayloadTooLarge, nil results). If the
// sends to some partitions fail, SendBatch returns every result together
// with a *topic.BatchError naming those partitions. A record whose
// Partition the error names (BatchError.Failed) was not acknowledged and
// its result carries only Topic and Partition; every other record was
// acknowledged and its result is complete. An empty batch does nothing.
func (p *Producer) SendBatch(msgs []topic.Message) ([]SendResult, error) {
	t, err := p.c.topic(p.topic)
	if err != nil {
		return nil, err
	}
	if err := topic.CheckPayloads(msgs, p.c.MaxPayloadSize()); err != nil {
		return nil, fmt.Errorf("cluster: %s: send batch: %w", t.name, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	pl := t.router.Plan(msgs)
	results := make([]SendResult, len(msgs))
	for i, pi := range pl.Partition {
		results[i].Topic, results[i].Partition = t.name, pi
	}
	err = pl.Write(t.name, func(pi int, idx []int) error {
		res, err := p.c.write(t.parts[pi], topic.Payloads(msgs, idx))
		if err != nil {
			return err
		}
		for k, i := range idx {
			results[i] = resultOf(t.parts[pi], res, k)
		}
		return nil
	})
	return results, err
}

// SendBatchTo writes every record of msgs to one partition, whatever their
// keys: Kafka's explicit partition, for a caller that does its own
// placement. The records are written as one batch (one leader append and
// one append per follower), acknowledged together or not at all. A
// partition the topic does not have is an error wrapping
// topic.ErrPartitionOutOfRange, and payloads are checked as SendBatch checks them,
// before anything is written. On failure every result carries its Topic
// and Partition only. An empty batch does nothing.
func (p *Producer) SendBatchTo(partition int, msgs []topic.Message) ([]SendResult, error) {
	part, err := p.c.partition(p.topic, partition)
	if err != nil {
		return nil, err
	}
	if err := topic.CheckPayloads(msgs, p.c.MaxPayloadSize()); err != nil {
		return nil, fmt.Errorf("cluster: %s: send batch: %w", part, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	idx := make([]int, len(msgs))
	for i := range idx {
		idx[i] = i
	}
	results := make([]SendResult, len(msgs))
	res, err := p.c.write(part, topic.Payloads(msgs, idx))
	if err != nil {
		for i := range results {
			results[i].Topic, results[i].Partition = p.topic, partition
		}
		return results, err
	}
	for i := range results {
		results[i] = resultOf(part, res, i)
	}
	return results, nil
}

// Queued is a batch queued for a partition (SendBatchToQueued).
type Queued struct {
	// Wait returns the batch's results once it is written. Call it once,
	// in the order the batches were queued.
	Wait func() ([]SendResult, error)
	// Forwarded says the partition's leader is not in this process (or
	// its metadata could not be read here): Wait
	// writes the batch itself, a round trip to the leader's process, so
	// a caller with several batches to wait for waits for such ones
	// together rather than one after another. (A batch queued here may
	// still be forwarded within Wait, when the leadership moves meanwhile.)
	Forwarded bool
}

// SendBatchToQueued is SendBatchTo in two steps: the batch is checked
// and, where this process hosts the partition's leader, queued for it
// before SendBatchToQueued returns; Queued.Wait returns SendBatchTo's
// results. Batches queued one after the other reach the partition in that
// order and may share its next append and fsync: what a Kafka
// connection's pipelined produce requests need (cluster.writeQueued).
func (p *Producer) SendBatchToQueued(partition int, msgs []topic.Message) Queued {
	part, err := p.c.partition(p.topic, partition)
	if err != nil {
		return Queued{Wait: func() ([]SendResult, error) { return nil, err }}
	}
	if err := topic.CheckPayloads(msgs, p.c.MaxPayloadSize()); err != nil {
		err = fmt.Errorf("cluster: %s: send batch: %w", part, err)
		return Queued{Wait: func() ([]SendResult, error) { return nil, err }}
	}
	if len(msgs) == 0 {
		return Queued{Wait: func() ([]SendResult, error) { return nil, nil }}
	}
	idx := make([]int, len(msgs))
	for i := range idx {
		idx[i] = i
	}
	written, forwarded := p.c.writeQueued(part, topic.Payloads(msgs, idx))
	return Queued{Forwarded: forwarded, Wait: func() ([]SendResult, error) {
		res, err := written()
		results := make([]SendResult, len(msgs))
		for i := range results {
			if err != nil {
				results[i].Topic, results[i].Partition = p.topic, partition
				continue
			}
			results[i] = resultOf(part, res, i)
		}
		return results, err
	}}
}

// MaxPayloadSize is the largest payload a record may carry: the limit the
// replica logs of every broker the cluster starts enforce,
// Options.Broker.MaxPayloadSize after defaults. A broker opened elsewhere and
// handed to RegisterBroker enforces its own BrokerOptions; a leader refuses a
// payload above its log's limit either way. A caller that must refuse a record
// before anything of its request is written checks it against this.
func (c *Cluster) MaxPayloadSize() int {
	return c.opts.Broker.MaxPayloadSize
}

// resultOf is the result of record i of a write to p.
func resultOf(p *partition, res ProduceResponse, i int) SendResult {
	return sendResultOf(p.topic, p.index, res.Leader, res.Brokers, res.Records[i].Offset, res.Records[i].Timestamp)
}

func sendResultOf(topicName string, partition, leader int, brokers []int, offset uint64, timestamp int64) SendResult {
	return SendResult{
		SendResult:     client.SendResult{Topic: topicName, Partition: partition, Offset: offset, Timestamp: timestamp},
		LeaderBrokerID: leader,
		Brokers:        slices.Clone(brokers),
	}
}
