package kafka

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// deleteRecords answers DeleteRecords (key 21) v0-v2 on the partition's
// leader: each partition's log start is raised to the offset asked (-1:
// the high watermark) on its leader and followers, through the path
// retention takes (cluster.Cluster.AdvanceLogStart, journaled as
// retention's changes are), and the segments wholly below it deleted;
// LowWatermark is the log start after. A log start only moves forward: an
// offset below it answers the current one. An offset above the high
// watermark, or negative other than -1, is OFFSET_OUT_OF_RANGE; a broker
// that does not lead the partition answers NOT_LEADER_OR_FOLLOWER, as
// Fetch does (leaderCheck).
func (s *Server) deleteRecords(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark = p.Partition, -1
			rp.ErrorCode = x.code(s.deleteRecordsOf(x, t.Topic, p, x.broker, &rp))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// deleteRecordsOf raises one partition's log start, fills rp and returns
// its error code.
func (s *Server) deleteRecordsOf(x *exchange, topicName string, p kmsg.DeleteRecordsRequestTopicPartition, broker int, rp *kmsg.DeleteRecordsResponseTopicPartition) int16 {
	if _, code := s.leaderCheck(topicName, p.Partition, broker, -1); code != 0 {
		return code
	}
	offset := cluster.LogStartAtHighWatermark
	switch {
	case p.Offset == -1:
	case p.Offset < 0:
		return kerr.OffsetOutOfRange.Code
	default:
		offset = uint64(p.Offset)
	}
	res, err := s.c.AdvanceLogStart(topicName, int(p.Partition), offset, fmt.Sprintf("Kafka DeleteRecords before offset %d", p.Offset))
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrPastHighWatermark):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, cluster.ErrNotLeader):
		return kerr.NotLeaderForPartition.Code // the leader moved meanwhile
	case errors.Is(err, cluster.ErrJournalFailed) && res.To > res.From:
		// Raised; only its journal entry failed, which the server's log
		// reports.
		s.cfg.Logger.Warn("kafka delete records: done, with an error journaling it", "topic", topicName, "partition", p.Partition, "err", err)
	default:
		if code := errorCode(err); code != kerr.UnknownServerError.Code {
			return code
		}
		x.fault("topic", topicName, "partition", p.Partition, "err", err)
		return kerr.KafkaStorageError.Code
	}
	rp.LowWatermark = int64(res.To)
	return 0
}

func failDeleteRecords(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition, rp.LowWatermark, rp.ErrorCode = p.Partition, -1, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
