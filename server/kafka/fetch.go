package kafka

import (
	"cmp"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// fetch answers Fetch (key 1) v4-v12: for each partition, the records
// from its fetch offset up to the high watermark — up to the last stable
// offset for a read_committed consumer — as uncompressed record batches,
// one per run of records of one producer identity, whose records carry
// the key, headers and timestamp of their envelopes (CreateTime: the
// producer's, else PyStream's append time) and whose headers carry the
// producer id, epoch, base sequence and transactional attribute; a
// transaction's marker is a control batch (fetchPartition). The answer
// stops at partition_max_bytes per partition and
// max_bytes in all, both capped by Config.FetchMaxBytes, except that its
// first record is always there. Until min_bytes are there it waits, up
// to max_wait_ms (capped at MaxWait), woken when one of its partitions'
// high watermark rises (Config.Advances: whichever protocol wrote) and
// otherwise looking again every Config.FetchRecheck: never a busy loop.
// Fetch sessions are declined: the answer's session id is 0, and the
// client sends full fetches. An offset below the log start or past the
// high watermark is OFFSET_OUT_OF_RANGE, with the log start in the
// answer.
func (s *Server) fetch(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.FetchRequest)
	maxBytes := s.cfg.FetchMaxBytes
	if req.MaxBytes > 0 {
		maxBytes = min(maxBytes, int(req.MaxBytes))
	}
	wait := min(time.Duration(max(req.MaxWaitMillis, 0))*time.Millisecond, MaxWait)
	deadline := time.Now().Add(wait)

	var parts []backend.Partition
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			parts = append(parts, backend.Partition{Topic: t.Topic, Partition: int(p.Partition)})
		}
	}
	woken := make(chan struct{}, 1)
	defer s.advances.Watch(woken, parts...)()

	for {
		resp, size, codes := s.fetchOnce(req, x.broker, maxBytes)
		left := time.Until(deadline)
		if size >= int(req.MinBytes) || len(codes) > 0 || left <= 0 || x.ctx.Err() != nil {
			for _, c := range codes {
				x.code(c)
			}
			return resp
		}
		// A rise of the high watermark wakes the fetch at once
		// (Config.Advances); looking again every FetchRecheck finds
		// what no rise reports (a leader that changed).
		t := time.NewTimer(min(s.cfg.FetchRecheck, left))
		select {
		case <-woken:
		case <-t.C:
		case <-x.ctx.Done():
		}
		t.Stop()
	}
}

// fetchOnce reads what the fetch asks for now: the answer, its record
// bytes and its partitions' error codes.
func (s *Server) fetchOnce(req *kmsg.FetchRequest, broker, maxBytes int) (*kmsg.FetchResponse, int, []int16) {
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.SessionID = 0
	var codes []int16
	size := 0
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			// Empty, never null: librdkafka refuses a null record set
			// (size -1) as a protocol error.
			rp.RecordBatches = []byte{}
			epoch := int32(-1)
			if req.Version >= 9 {
				epoch = p.CurrentLeaderEpoch
			}
			budget := maxBytes - size
			if p.PartitionMaxBytes > 0 {
				budget = min(budget, int(p.PartitionMaxBytes), s.cfg.FetchMaxBytes)
			}
			n, code := s.fetchPartition(t.Topic, p, req.IsolationLevel, broker, epoch, budget, size == 0, &rp)
			rp.ErrorCode = code
			if code != 0 {
				codes = append(codes, code)
			}
			size += n
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, size, codes
}

// isolationReadCommitted is Fetch's isolation_level of a read_committed
// consumer (0 is read_uncommitted).
const isolationReadCommitted = 1

// fetchPartition fills rp with one partition's records from the fetch
// offset, about budget bytes of them (at least one when first), and
// returns their bytes and the error code. A read_committed fetch
// (isolation level 1) reads through backend.Transactions.ReadStable:
// never past the last stable offset, which it answers as
// LastStableOffset, with the aborted transactions among the records sent
// (the client skips their records); a read_uncommitted one reads up to
// the high watermark, which it answers as LastStableOffset too. Either
// way a transaction's marker goes out as a control batch (appendBatches).
func (s *Server) fetchPartition(topicName string, p kmsg.FetchRequestTopicPartition, isolation int8, broker int, epoch int32, budget int, first bool, rp *kmsg.FetchResponseTopicPartition) (int, int16) {
	// No records is an empty record set, never a null one (size -1),
	// which librdkafka refuses as a protocol error, as Kafka never sends it.
	rp.RecordBatches = []byte{}
	st, code := s.leaderCheck(topicName, p.Partition, broker, epoch)
	if code != 0 {
		return 0, code
	}
	cfg, err := s.c.TopicConfig(topicName)
	if err != nil {
		return 0, errorCode(err)
	}
	logAppend := cfg.MessageTimestampType == topic.TimestampLogAppendTime
	part := int(p.Partition)
	stable := isolation == isolationReadCommitted
	var logStart, hwm, end uint64
	if stable {
		b, err := s.c.ReadStable(topicName, part, uint64(max(p.FetchOffset, 0)), 0)
		if err != nil {
			return 0, errorCode(err)
		}
		logStart, hwm, end = b.LogStart, b.HighWatermark, b.LastStable
	} else {
		var err error
		if logStart, hwm, err = s.c.Bounds(topicName, part); err != nil {
			return 0, errorCode(err)
		}
		end = hwm
	}
	rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = int64(hwm), int64(end), int64(logStart)
	if p.FetchOffset < int64(logStart) || p.FetchOffset > int64(hwm) {
		return 0, kerr.OffsetOutOfRange.Code
	}
	if budget <= 0 && !first {
		return 0, 0
	}
	var recs []kafkaRecord
	var aborted []cluster.AbortedTxn
	next, size, seen := uint64(p.FetchOffset), 0, 0
	for next < end && (size < budget || len(recs) == 0 && first) {
		n := 16
		if seen > 0 {
			n = max(1, min(1000, (budget-size)/max(1, size/seen)))
		}
		n = int(min(uint64(n), end-next))
		var read []log.Record
		var err error
		if stable {
			var sr cluster.StableRead
			sr, err = s.c.ReadStable(topicName, part, next, n)
			read = sr.Records
			aborted = append(aborted, sr.Aborted...)
		} else {
			read, err = s.c.ReadCommitted(topicName, part, next, n)
		}
		if err != nil {
			if len(recs) == 0 {
				return 0, errorCode(err)
			}
			break
		}
		if len(read) == 0 {
			break
		}
		spent := false
		for _, rec := range read {
			env := asKafka(rec, logAppend)
			sz := recordSize(env)
			// Only the first record of the answer may pass the
			// budget: one of a later partition waits for the next
			// fetch (KIP-74).
			if size+sz > budget && (len(recs) > 0 || !first) {
				spent = true
				break
			}
			recs = append(recs, kafkaRecord{offset: int64(rec.Offset), env: env, logAppend: logAppend})
			size += sz
			seen++
			next = rec.Offset + 1
		}
		if spent {
			break
		}
	}
	if stable {
		rp.AbortedTransactions = abortedAmong(aborted, next)
	}
	rp.RecordBatches = appendBatches(rp.RecordBatches[:0], recs, int32(st.LeaderEpoch))
	return len(rp.RecordBatches), 0
}

// abortedAmong is Fetch's AbortedTransactions: each aborted transaction
// once, those whose first record is below upTo (the offset after the last
// record sent), ascending by first offset.
func abortedAmong(aborted []cluster.AbortedTxn, upTo uint64) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	slices.SortFunc(aborted, func(a, b cluster.AbortedTxn) int {
		return cmp.Or(cmp.Compare(a.FirstOffset, b.FirstOffset), cmp.Compare(a.ProducerID, b.ProducerID))
	})
	aborted = slices.Compact(aborted)
	var out []kmsg.FetchResponseTopicPartitionAbortedTransaction
	for _, a := range aborted {
		if a.FirstOffset < upTo {
			at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
			at.ProducerID, at.FirstOffset = a.ProducerID, int64(a.FirstOffset)
			out = append(out, at)
		}
	}
	return out
}

// asKafka is a stored record as a Kafka record: its envelope, with
// PyStream's append time (ms) when the producer gave no timestamp, or
// always when logAppend (the topic's message.timestamp.type is
// LogAppendTime).
func asKafka(rec log.Record, logAppend bool) envelope.Record {
	env := envelope.Decode(rec.Payload)
	if !env.HasTimestamp || logAppend {
		env.Timestamp, env.HasTimestamp = rec.Timestamp/int64(time.Millisecond), true
	}
	return env
}

// recordSize is about a record's bytes in a batch.
func recordSize(e envelope.Record) int {
	n := len(e.Key) + len(e.Value) + 16
	for _, h := range e.Headers {
		n += len(h.Key) + len(h.Value) + 4
	}
	return n
}

func failFetch(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.FetchRequest)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	resp.ErrorCode = code
	return resp
}
