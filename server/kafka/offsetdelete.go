package kafka

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/group"
)

// offsetDelete answers OffsetDelete (key 47) v0: the group's committed
// offsets on the partitions named are deleted, durably, as Kafka's
// kafka-consumer-groups --delete-offsets does. As Kafka answers it: an
// invalid group id is INVALID_GROUP_ID, a group without members and
// without offsets GROUP_ID_NOT_FOUND, and a group with members whose
// protocol type is not "consumer" NON_EMPTY_GROUP (the whole request);
// a partition of a topic an active member subscribes to is
// GROUP_SUBSCRIBED_TO_TOPIC, one of a topic or partition that does not
// exist UNKNOWN_TOPIC_OR_PARTITION, and a partition the group committed
// nothing on is deleted already (no error). While the offsets go, a group
// without members is held in the registry (no member joins it), and one
// with classic members cannot move to a new generation, which might
// subscribe to the topics (group.ClassicCoordinator.HoldSubscription): no
// member commits to an offset being deleted. In a cluster of processes
// only the group coordinator deletes (NOT_COORDINATOR elsewhere).
func (s *Server) offsetDelete(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.OffsetDeleteRequest)
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	if group.ValidateID(req.Group) != nil {
		resp.ErrorCode = x.code(kerr.InvalidGroupID.Code)
		return resp
	}
	subscribed, done, code := s.holdForOffsetDelete(req.Group)
	defer done()
	if code != 0 {
		resp.ErrorCode = x.code(code)
		return resp
	}
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		info, terr := s.c.Topic(t.Topic)
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case terr != nil || p.Partition < 0 || int(p.Partition) >= info.PartitionCount:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case subscribed(t.Topic):
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			default:
				if _, err := s.c.DeleteOffset(req.Group, t.Topic, int(p.Partition)); err != nil {
					x.fault("group", req.Group, "topic", t.Topic, "partition", p.Partition, "err", err)
					rp.ErrorCode = offsetCode(err)
				}
			}
			rp.ErrorCode = x.code(rp.ErrorCode)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// holdForOffsetDelete holds group for OffsetDelete and says which topics
// its members subscribe to; done ends the hold. A non-zero code refuses
// the whole request (and holds nothing).
func (s *Server) holdForOffsetDelete(id string) (subscribed func(topic string) bool, done func(), code int16) {
	none := func(string) bool { return false }
	// A member may join or leave between the registry's answer and the
	// coordinator's: the group is looked at again, a few times.
	for range 3 {
		release, err := s.groups.Registry().Hold(id)
		switch {
		case err == nil:
			committed, err := s.c.ListOffsets(id)
			switch {
			case err != nil:
				release()
				return none, func() {}, offsetCode(err)
			case len(committed) == 0:
				release()
				return none, func() {}, kerr.GroupIDNotFound.Code
			}
			return none, release, 0
		case !errors.Is(err, group.ErrManaged):
			return none, func() {}, groupErrorCode(err)
		}
		if sub, done, ok := s.groups.HoldSubscription(id); ok {
			if sub.ProtocolType != "consumer" {
				done()
				return none, func() {}, kerr.NonEmptyGroup.Code
			}
			return func(topic string) bool { return !sub.Known || slices.Contains(sub.Topics, topic) }, done, 0
		}
		if s.others == nil {
			continue
		}
		if d, ok := s.others.Describe(id); ok {
			return func(topic string) bool {
				return slices.ContainsFunc(d.Members, func(m group.Member) bool { return m.Topics == nil || slices.Contains(m.Topics, topic) })
			}, func() {}, 0
		}
	}
	return none, func() {}, kerr.CoordinatorLoadInProgress.Code
}

func failOffsetDelete(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.OffsetDeleteRequest).ResponseKind().(*kmsg.OffsetDeleteResponse)
	resp.ErrorCode = code
	return resp
}
