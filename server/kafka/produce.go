package kafka

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// produce answers Produce (key 0) v3-v9. Each partition's record batches
// are validated whole before anything is written (CORRUPT_MESSAGE writes
// nothing); each Kafka record becomes one PyStream record, its payload
// the envelope of key, headers, create time and value, appended to the
// partition the client chose, on the broker that leads it. The answer
// comes once every active replica has fsynced the records, for acks=1 as
// for acks=all: PyStream's Kafka path is never weaker than its HTTP path.
// acks=0 writes the same way and answers nothing. Partitions are written
// in parallel: each is queued for its leader's writer before the first is
// waited for, and the connection's own goroutine waits for them in turn
// (a partition whose leader is in another process, forwarded, is waited
// for on a goroutine of its own).
//
// Two bounds hold before anything is written: the records the request's
// batches say they hold, all partitions together, against
// Config.MaxRequestRecords (the HTTP API's PYSTREAM_MAX_REQUEST_RECORDS,
// one rule: server/bounds), answered MESSAGE_TOO_LARGE for every
// partition; and the bytes its compressed batches inflate to, charged as
// they inflate against Config.MaxDecompressedBytes (MESSAGE_TOO_LARGE for
// the partition that passes it) and the server-wide
// Config.MaxInflightBytes (POLICY_VIOLATION), held until the request is
// answered. The partitions of a request decode their batches one at a
// time, each queued for its leader as soon as it is decoded, and are
// written in parallel: one request holds at most one decoder's history,
// charged to both budgets while it decodes (MaxZstdWindow), however many
// partitions it names.
func (s *Server) produce(x *exchange, r kmsg.Request) kmsg.Response {
	return s.produceBegin(x, r)()
}

// produceBegin is produce in two steps, for a connection that pipelines
// its produce requests (conn.serve): it decodes every partition's records
// and queues them for the partitions' leaders, in the request's order,
// before it returns (backend.Data.SendQueued); finish waits for them and
// builds the answer. The requests a connection begins one after the other
// reach each partition in that order and may share its next append.
func (s *Server) produceBegin(x *exchange, r kmsg.Request) (finish func() kmsg.Response) {
	req := r.(*kmsg.ProduceRequest)
	var records int64
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			records += countRecords(p.Records)
		}
	}
	if records > int64(s.cfg.MaxRequestRecords) {
		resp := failProduce(req, x.code(kerr.MessageTooLarge.Code)).(*kmsg.ProduceResponse)
		msg := fmt.Sprintf("%d records in one produce request: at most %d (PYSTREAM_MAX_REQUEST_RECORDS)", records, s.cfg.MaxRequestRecords)
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorMessage = kmsg.StringPtr(msg)
			}
		}
		if req.Acks == 0 {
			return func() kmsg.Response { return nil }
		}
		return func() kmsg.Response { return resp }
	}
	inflated := &inflation{server: s.inflight, left: s.cfg.MaxDecompressedBytes}
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	var waits []partitionWait
	var rps []*kmsg.ProduceResponseTopicPartition
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(t.Partitions))
		for i, p := range t.Partitions {
			rp := &rt.Partitions[i]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			waits = append(waits, s.producePartition(x, t.Topic, p, rp, inflated))
			rps = append(rps, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return func() kmsg.Response {
		defer inflated.release()
		// Every partition's records are queued already, save those whose
		// leader is elsewhere (written, forwarded, within their wait):
		// those are waited for together, on goroutines of their own; the
		// queued ones one after the other on the connection's goroutine,
		// which takes as long as the slowest of them.
		type outcome struct {
			code int16
			msg  string
		}
		outcomes := make([]outcome, len(waits))
		var wg sync.WaitGroup
		for i, w := range waits {
			if w.forwarded {
				wg.Go(func() { outcomes[i].code, outcomes[i].msg = w.wait() })
			}
		}
		for i, w := range waits {
			if !w.forwarded {
				outcomes[i].code, outcomes[i].msg = w.wait()
			}
		}
		wg.Wait()
		for i, o := range outcomes {
			rp := rps[i]
			rp.ErrorCode = x.code(o.code)
			if o.code != 0 {
				rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
				if o.msg != "" {
					rp.ErrorMessage = kmsg.StringPtr(o.msg)
				}
			}
		}
		if req.Acks == 0 {
			return nil
		}
		return resp
	}
}

// partitionWait is one partition's share of a produce request:
// producePartition's wait, and whether it writes the records itself, to
// a leader in another process (cluster.Queued.Forwarded).
type partitionWait struct {
	wait      func() (int16, string)
	forwarded bool
}

// producePartition decodes one partition's records and queues them for
// its leader; the wait it returns fills rp's offsets once they are
// written and returns the error code (and a message for the client's
// log).
func (s *Server) producePartition(x *exchange, topicName string, p kmsg.ProduceRequestTopicPartition, rp *kmsg.ProduceResponseTopicPartition,
	inflated *inflation) partitionWait {
	fail := func(code int16, msg string) partitionWait {
		return partitionWait{wait: func() (int16, string) { return code, msg }}
	}
	if _, code := s.leaderCheck(topicName, p.Partition, x.broker, -1); code != 0 {
		return fail(code, "")
	}
	cfg, err := s.c.TopicConfig(topicName)
	if err != nil {
		return fail(errorCode(err), err.Error())
	}
	if size := largestBatch(p.Records); size > cfg.MaxMessageBytes {
		return fail(kerr.MessageTooLarge.Code, fmt.Sprintf("a record batch of %d bytes (as sent) is larger than the topic's %s, %d bytes",
			size, topic.MaxMessageBytesKey, cfg.MaxMessageBytes))
	}
	recs, err := decodeBatches(p.Records, inflated)
	switch {
	case errors.Is(err, errDecompressedTooLarge):
		return fail(kerr.MessageTooLarge.Code, fmt.Sprintf("the request's records decompress past %d bytes", s.cfg.MaxDecompressedBytes))
	case errors.Is(err, errWindowTooLarge):
		return fail(kerr.MessageTooLarge.Code, fmt.Sprintf("a zstd frame's window is above the %d bytes the server decodes with", MaxZstdWindow))
	case errors.Is(err, errInflightFull):
		return fail(kerr.PolicyViolation.Code, "the server's in-flight budget (PYSTREAM_MAX_INFLIGHT_BYTES) cannot hold the request's decompressed records now")
	case err != nil:
		return fail(kerr.CorruptMessage.Code, err.Error())
	}
	msgs := make([]topic.Message, len(recs))
	// The storage's own limit on each record stays a ceiling, whatever
	// max.message.bytes allows.
	limit := s.c.MaxPayloadSize()
	for i, rec := range recs {
		payload := envelope.Payload(rec)
		if len(payload) > limit {
			return fail(kerr.MessageTooLarge.Code, fmt.Sprintf("record %d: %d bytes to store (its value, key, headers and timestamp), above the server's per-record limit of %d bytes",
				i, len(payload), limit))
		}
		msgs[i] = topic.Message{Key: rec.Key, Payload: payload}
	}
	part := int(p.Partition)
	sent := s.c.SendQueued(topicName, part, msgs)
	return partitionWait{forwarded: sent.Forwarded, wait: func() (int16, string) {
		res, err := sent.Wait()
		if err != nil {
			if errors.Is(err, topic.ErrPartitionOutOfRange) {
				return kerr.UnknownTopicOrPartition.Code, ""
			}
			if s.cfg.WriteFailed != nil {
				s.cfg.WriteFailed()
			}
			return errorCode(err), err.Error()
		}
		if s.feedAdvances {
			s.advances.Advanced(topicName, part, res[len(res)-1].Offset+1)
		}
		rp.BaseOffset = int64(res[0].Offset)
		rp.LogAppendTime = -1
		if cfg.MessageTimestampType == topic.TimestampLogAppendTime {
			// One append, one time: every record of the batch has it.
			rp.LogAppendTime = res[0].Timestamp / int64(time.Millisecond)
		}
		if ls, _, err := s.c.Bounds(topicName, part); err == nil {
			rp.LogStartOffset = int64(ls)
		}
		return 0, ""
	}}
}

func failProduce(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.ProduceRequest)
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.BaseOffset = p.Partition, code, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
