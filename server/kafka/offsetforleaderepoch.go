package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// undefinedEpoch is Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET:
// no epoch, no end offset.
const undefinedEpoch = -1

// offsetForLeaderEpoch answers OffsetForLeaderEpoch (key 23) v0-v4 on the
// partition's leader: for each partition and leader epoch asked, the end
// offset of that epoch in the leader's log and (v1+) the epoch itself, as
// Kafka's leader-epoch cache answers (epochEndOffset), from the leader's
// leader-epoch history (cluster.Cluster.LeaderEpochs). A consumer asks it
// after a leader change to learn whether the records it read are still
// there (KIP-320). CurrentLeaderEpoch (v2+) is checked as Fetch checks it
// (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH); ReplicaID (v3+) is -1 for a
// consumer, and a broker's id is answered the same, from the leader.
func (s *Server) offsetForLeaderEpoch(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition = p.Partition
			current := int32(-1)
			if req.Version >= 2 {
				current = p.CurrentLeaderEpoch
			}
			rp.ErrorCode = x.code(s.epochEnd(t.Topic, p.Partition, x.broker, current, p.LeaderEpoch, &rp))
			if req.Version < 1 {
				rp.LeaderEpoch = undefinedEpoch // not in a v0 answer
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// epochEnd fills rp for one partition and returns its error code.
func (s *Server) epochEnd(topicName string, partition int32, broker int, current, asked int32, rp *kmsg.OffsetForLeaderEpochResponseTopicPartition) int16 {
	if _, code := s.leaderCheck(topicName, partition, broker, current); code != 0 {
		return code
	}
	h, err := s.c.LeaderEpochs(topicName, int(partition))
	if err != nil {
		return errorCode(err)
	}
	if h.Leader != broker {
		return kerr.NotLeaderForPartition.Code // the leader moved meanwhile
	}
	epoch, end := epochEndOffset(h, asked)
	rp.LeaderEpoch, rp.EndOffset = epoch, end
	return 0
}

// epochStart is where an epoch's records begin in a leader's log.
type epochStart struct {
	epoch int64
	start uint64
}

// epochStarts turns a leader's history into Kafka's leader-epoch cache:
// each known epoch with the start of its first run (a log reopened within
// an epoch starts another run of the same epoch), unknown runs left out;
// the epochs wholly below the log start dropped and the last of those
// starting at it instead, as Kafka truncates its cache from the start;
// and the partition's current epoch starting at the log end when its
// leader has appended nothing yet, as a Kafka leader records its epoch
// when it is elected.
func epochStarts(h cluster.LeaderEpochs) []epochStart {
	var out []epochStart
	for _, r := range h.Runs {
		if !r.Known() || len(out) > 0 && out[len(out)-1].epoch == int64(r.Epoch) {
			continue
		}
		out = append(out, epochStart{int64(r.Epoch), r.Start})
	}
	first := 0
	for first+1 < len(out) && out[first+1].start <= h.LogStart {
		first++
	}
	out = out[first:]
	if len(out) > 0 && out[0].start < h.LogStart {
		out[0].start = h.LogStart
	}
	if len(out) == 0 || out[len(out)-1].epoch < int64(h.LeaderEpoch) {
		out = append(out, epochStart{int64(h.LeaderEpoch), h.LogEnd})
	}
	return out
}

// epochEndOffset is Kafka's answer for epoch asked from a leader's
// history (LeaderEpochFileCache.endOffsetFor): the latest epoch ends at
// the log end; an earlier one at the start of the first larger epoch,
// with the largest epoch at or below it that the cache holds — or asked
// itself when the cache holds none that old (retention removed them); an
// epoch above every one held, or -1, is undefined (-1, -1).
func epochEndOffset(h cluster.LeaderEpochs, asked int32) (epoch int32, end int64) {
	if asked < 0 {
		return undefinedEpoch, undefinedEpoch
	}
	starts := epochStarts(h)
	a := int64(asked)
	if starts[len(starts)-1].epoch == a {
		return asked, int64(h.LogEnd)
	}
	higher := -1
	for i, e := range starts {
		if e.epoch > a {
			higher = i
			break
		}
	}
	switch higher {
	case -1:
		return undefinedEpoch, undefinedEpoch
	case 0:
		return asked, int64(starts[0].start)
	}
	return int32(starts[higher-1].epoch), int64(starts[higher].start)
}

func failOffsetForLeaderEpoch(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
