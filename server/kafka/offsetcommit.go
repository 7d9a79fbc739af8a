package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/topic"
)

// offsetCommit answers OffsetCommit (key 8) v0-v8: PyStream's phase-3
// durable offsets, the group id being the consumer id
// (Cluster.CommitOffset). Group membership is checked first
// (group.ClassicCoordinator.CheckCommit), every partition answered the
// same when it refuses: in a group with classic members only a member of
// the current generation commits (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, and REBALANCE_IN_PROGRESS while
// the generation's assignment is not known yet); Kafka's simple commit —
// generation -1, no member id — stores offsets for a group without
// members of either protocol and is UNKNOWN_MEMBER_ID while it has some,
// as Kafka answers it. v0 names no generation or member: it is a simple
// commit. In a cluster of processes commits go to the group coordinator
// (NOT_COORDINATOR elsewhere). The offset's metadata string is not kept.
//
// PyStream's commit rules hold on this path too: a commit is durable
// before it is answered, takes offsets from the one committed up to the
// partition's high watermark (outside that range is OFFSET_OUT_OF_RANGE:
// progress never moves backwards; an operator resets it over HTTP), and a
// group id that is not a valid consumer id is INVALID_GROUP_ID.
func (s *Server) offsetCommit(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	groupCode := s.coordinatorCode()
	if group.ValidateID(req.Group) != nil {
		groupCode = kerr.InvalidGroupID.Code
	}
	if groupCode == 0 {
		generation, member := req.Generation, group.MemberRef{MemberID: req.MemberID, InstanceID: deref(req.InstanceID)}
		if req.Version == 0 {
			generation, member = -1, group.MemberRef{}
		}
		// The offsets are stored before the group may fence the member
		// (done): a commit checked in one generation lands in it.
		done, err := s.groups.CheckCommit(req.Group, generation, member)
		defer done()
		if err != nil {
			groupCode = groupErrorCode(err)
			x.note("group", req.Group, "generation", generation, "member", member.MemberID, "err", err)
		}
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			code := groupCode
			if code == 0 {
				code = s.commitOffset(x, req.Group, t.Topic, p.Partition, p.Offset)
			}
			rp.ErrorCode = x.code(code)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// commitOffset stores one offset and returns its error code.
func (s *Server) commitOffset(x *exchange, groupID, topicName string, partition int32, offset int64) int16 {
	if partition < 0 {
		return kerr.UnknownTopicOrPartition.Code
	}
	if offset < 0 {
		return kerr.OffsetOutOfRange.Code
	}
	err := s.c.CommitOffset(groupID, topicName, int(partition), uint64(offset))
	code := offsetCode(err)
	if code == kerr.OffsetOutOfRange.Code || code == kerr.KafkaStorageError.Code || code == kerr.UnknownServerError.Code {
		x.note("group", groupID, "topic", topicName, "partition", partition, "offset", offset, "err", err)
	}
	return code
}

// offsetCode maps an error of the offset store to the Kafka error code
// of OffsetCommit and OffsetFetch.
func offsetCode(err error) int16 {
	var regression *client.OffsetRegressionError
	var corrupt *client.OffsetCorruptionError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, client.ErrOffsetBeyondEnd), errors.As(err, &regression):
		// Beyond the high watermark, or below the committed offset:
		// outside the range a commit takes.
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, cluster.ErrUnknownTopic), errors.Is(err, topic.ErrPartitionOutOfRange),
		errors.Is(err, topic.ErrTopicNotFound):
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, topic.ErrInvalidName):
		// The group id was checked first, so this is the topic's name.
		return kerr.UnknownTopicOrPartition.Code
	case errors.Is(err, client.ErrStoreFailed), errors.As(err, &corrupt):
		return kerr.KafkaStorageError.Code
	case unavailableNow(err):
		// The node closing, or the metadata group changing leaders (the
		// coordinator moving, in a cluster of processes): the client
		// finds the coordinator again and commits again. A commit whose
		// outcome is unknown is safe to repeat: the same offset again is
		// no regression.
		return kerr.CoordinatorNotAvailable.Code
	}
	return kerr.UnknownServerError.Code
}

func failOffsetCommit(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.OffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
