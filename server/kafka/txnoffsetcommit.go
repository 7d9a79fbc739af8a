package kafka

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/group"
)

// txnOffsetCommit answers TxnOffsetCommit (key 28) v0-v3: a consumer
// group's offsets, kept by the transaction coordinator until the
// transaction ends; they become the group's committed offsets when, and
// only if, it commits (the group joined it with AddOffsetsToTxn). Until
// then OffsetFetch with RequireStable answers UNSTABLE_OFFSET_COMMIT for
// those partitions.
//
// v3 names the producer's consumer as a member of the group (generation,
// member id, instance id, KIP-447): it is checked as OffsetCommit checks
// a member (group.ClassicCoordinator.CheckCommit: ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS), every
// partition answered the same when it refuses. A commit naming no member
// (generation -1, no member id, and every v0-v2 commit) is not checked
// against the group, as Kafka's coordinator does not check it: the
// producer's transaction is what fences it. A partition that does not
// exist is UNKNOWN_TOPIC_OR_PARTITION, a negative offset
// OFFSET_OUT_OF_RANGE, and the others are kept. The offsets' metadata
// and leader epochs are not kept, as OffsetCommit's are not.
func (s *Server) txnOffsetCommit(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.TxnOffsetCommitRequest)
	code := int16(0)
	if err := group.ValidateID(req.Group); err != nil {
		code = kerr.InvalidGroupID.Code
		x.noteTxnRefusal(req.TransactionalID, err, "group", req.Group)
	}
	if code == 0 && req.Version >= 3 && (req.Generation >= 0 || req.MemberID != "") {
		member := group.MemberRef{MemberID: req.MemberID, InstanceID: deref(req.InstanceID)}
		// The offsets are kept before the group may fence the member
		// (done): a commit checked in one generation lands in it.
		done, err := s.groups.CheckCommit(req.Group, req.Generation, member)
		defer done()
		if err != nil {
			code = groupErrorCode(err)
			x.noteTxnRefusal(req.TransactionalID, err, "group", req.Group,
				"generation", req.Generation, "member", req.MemberID)
		}
	}
	codes := map[cluster.TxnPartition]int16{}
	var offsets []cluster.TxnOffset
	for _, t := range req.Topics {
		info, terr := s.c.Topic(t.Topic)
		for _, p := range t.Partitions {
			tp := cluster.TxnPartition{Topic: t.Topic, Partition: int(p.Partition)}
			switch {
			case code != 0:
				codes[tp] = code
			case terr != nil || p.Partition < 0 || int(p.Partition) >= info.PartitionCount:
				codes[tp] = kerr.UnknownTopicOrPartition.Code
			case p.Offset < 0:
				codes[tp] = kerr.OffsetOutOfRange.Code
			default:
				offsets = append(offsets, cluster.TxnOffset{Group: req.Group, Topic: t.Topic, Partition: int(p.Partition), Offset: uint64(p.Offset)})
			}
		}
	}
	if len(offsets) > 0 {
		if err := s.c.TxnOffsetCommit(x.ctx, req.TransactionalID, req.ProducerID, req.ProducerEpoch, offsets); err != nil {
			c := txnCode(err, kmsg.TxnOffsetCommit, req.Version)
			x.noteTxnRefusal(req.TransactionalID, err, "group", req.Group)
			for _, o := range offsets {
				codes[cluster.TxnPartition{Topic: o.Topic, Partition: o.Partition}] = c
			}
		}
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = x.code(codes[cluster.TxnPartition{Topic: t.Topic, Partition: int(p.Partition)}])
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func failTxnOffsetCommit(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.TxnOffsetCommitRequest)
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
