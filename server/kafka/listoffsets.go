package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The special timestamps of a ListOffsets request.
const (
	latestTimestamp   = -1 // the high watermark
	earliestTimestamp = -2 // the log start
	maxTimestamp      = -3 // the last record (v7+)
)

// listOffsets answers ListOffsets (key 2) v1-v7: earliest (-2) is the log
// start, latest (-1) the high watermark, the max timestamp (-3) the last
// record, and a time in milliseconds the first offset whose PyStream
// append time is at or after it (the backend's OffsetForTime; a record's
// create time in its envelope is not searched), offset -1 when there is
// none. At isolation level read_committed (v2+) the end is the last
// stable offset instead of the high watermark, as a read_committed fetch
// reads: latest is it, and no offset at or past it is found by time.
func (s *Server) listOffsets(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			epoch := int32(-1)
			if req.Version >= 4 {
				epoch = p.CurrentLeaderEpoch
			}
			committed := req.Version >= 2 && req.IsolationLevel == isolationReadCommitted
			rp.ErrorCode = x.code(s.listOffset(t.Topic, p, x.broker, epoch, committed, &rp))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// listOffset fills rp for one partition and returns its error code.
func (s *Server) listOffset(topicName string, p kmsg.ListOffsetsRequestTopicPartition, broker int, epoch int32, committed bool, rp *kmsg.ListOffsetsResponseTopicPartition) int16 {
	rp.Offset, rp.Timestamp = -1, -1
	st, code := s.leaderCheck(topicName, p.Partition, broker, epoch)
	if code != 0 {
		return code
	}
	rp.LeaderEpoch = int32(st.LeaderEpoch)
	part := int(p.Partition)
	logStart, hwm, err := s.c.Bounds(topicName, part)
	if err != nil {
		return errorCode(err)
	}
	end := hwm
	if committed {
		st, err := s.c.ReadStable(topicName, part, 0, 0)
		if err != nil {
			return errorCode(err)
		}
		end = min(end, st.LastStable)
	}
	switch p.Timestamp {
	case earliestTimestamp:
		rp.Offset = int64(logStart)
	case latestTimestamp:
		rp.Offset = int64(end)
	case maxTimestamp:
		if hwm > logStart {
			return s.offsetAt(topicName, part, hwm-1, rp)
		}
	default:
		if p.Timestamp < 0 {
			return 0 // an unknown special timestamp: no offset
		}
		off, found, err := s.c.OffsetForTime(topicName, part, p.Timestamp*int64(time.Millisecond))
		if err != nil {
			return errorCode(err)
		}
		if found && off < end {
			return s.offsetAt(topicName, part, off, rp)
		}
	}
	return 0
}

// offsetAt sets rp to the record at offset and its timestamp.
func (s *Server) offsetAt(topicName string, part int, offset uint64, rp *kmsg.ListOffsetsResponseTopicPartition) int16 {
	recs, err := s.c.ReadCommitted(topicName, part, offset, 1)
	if err != nil {
		return errorCode(err)
	}
	rp.Offset = int64(offset)
	if len(recs) == 1 {
		rp.Timestamp = recs[0].Timestamp / int64(time.Millisecond)
	}
	return 0
}

func failListOffsets(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.Offset, rp.Timestamp = p.Partition, code, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
