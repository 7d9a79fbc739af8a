package kafka

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/group"
)

// fetchedOffset is one partition's answer in OffsetFetch.
type fetchedOffset struct {
	partition int32
	offset    int64 // -1: nothing committed
	code      int16
}

// fetchedTopic is one topic's answer in OffsetFetch.
type fetchedTopic struct {
	topic      string
	partitions []fetchedOffset
}

// offsetFetch answers OffsetFetch (key 9) v0-v8: the offsets a group (a
// consumer id) committed through OffsetCommit or over HTTP, -1 for a
// partition it never committed. No topics (v2+) asks for every offset
// the group committed. v8 asks for several groups at once. The leader
// epoch is -1 and the metadata empty: PyStream keeps neither with an
// offset. RequireStable (v7+, KIP-447) answers a partition for which an
// open transaction holds an offset of the group (TxnOffsetCommit, not
// yet committed or aborted) UNSTABLE_OFFSET_COMMIT, which the client
// retries until the transaction ends.
func (s *Server) offsetFetch(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, g := range req.Groups {
			var asked []kmsg.OffsetFetchRequestTopic
			for _, t := range g.Topics {
				asked = append(asked, kmsg.OffsetFetchRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
			}
			if g.Topics == nil {
				asked = nil
			}
			topics, code := s.fetchOffsets(x, g.Group, asked, req.RequireStable)
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, code
			for _, t := range topics {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.topic
				for _, p := range t.partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.ErrorCode = p.partition, p.offset, p.code
					rp.Metadata = kmsg.StringPtr("")
					rt.Partitions = append(rt.Partitions, rp)
				}
				rg.Topics = append(rg.Topics, rt)
			}
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	}
	asked := req.Topics
	if req.Version < 2 && asked == nil {
		asked = []kmsg.OffsetFetchRequestTopic{} // "all" is v2+
	}
	topics, code := s.fetchOffsets(x, req.Group, asked, req.Version >= 7 && req.RequireStable)
	resp.ErrorCode = code
	for _, t := range topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.topic
		for _, p := range t.partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.ErrorCode = p.partition, p.offset, p.code
			if code != 0 {
				rp.ErrorCode = code // v0-v1 have no group error
			}
			rp.Metadata = kmsg.StringPtr("")
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// fetchOffsets is a group's offsets for the topics asked (every offset
// it committed when asked is nil) and the group's error code; with
// requireStable, a partition with a pending transactional offset is
// UNSTABLE_OFFSET_COMMIT (markUnstable). The transactions are listed
// before the offsets are read and again after, and a partition pending in
// either list is unstable: a transaction that commits in between has made
// its offset the committed one only after the read, which must not answer
// the offset from before it as stable.
func (s *Server) fetchOffsets(x *exchange, groupID string, asked []kmsg.OffsetFetchRequestTopic, requireStable bool) ([]fetchedTopic, int16) {
	if !requireStable {
		return s.committedOffsets(x, groupID, asked)
	}
	pending, err := s.pendingOffsets(groupID)
	out, code := s.committedOffsets(x, groupID, asked)
	if code == 0 {
		if err == nil {
			var after map[cluster.TxnPartition]bool
			after, err = s.pendingOffsets(groupID)
			maps.Copy(pending, after)
		}
		s.markUnstable(x, groupID, out, pending, err)
	}
	return out, code
}

// pendingOffsets is the partitions for which an open transaction holds
// an offset of groupID.
func (s *Server) pendingOffsets(groupID string) (map[cluster.TxnPartition]bool, error) {
	txns, err := s.c.Transactions()
	if err != nil {
		return nil, err
	}
	pending := map[cluster.TxnPartition]bool{}
	for _, t := range txns {
		if t.State != cluster.TxnOngoing && t.State != cluster.TxnPrepareCommit && t.State != cluster.TxnPrepareAbort {
			continue
		}
		for _, o := range t.Offsets {
			if o.Group == groupID {
				pending[cluster.TxnPartition{Topic: o.Topic, Partition: o.Partition}] = true
			}
		}
	}
	return pending, nil
}

// markUnstable answers every partition of out that is pending
// UNSTABLE_OFFSET_COMMIT, offset -1; when the transactions could not be
// listed (err), every partition is answered the coordinator's code.
func (s *Server) markUnstable(x *exchange, groupID string, out []fetchedTopic, pending map[cluster.TxnPartition]bool, err error) {
	errCode := int16(0)
	if err != nil {
		errCode = txnCode(err, kmsg.OffsetFetch, 0)
		x.note("group", groupID, "err", fmt.Errorf("listing the transactions for RequireStable: %w", err))
	}
	for i := range out {
		for j := range out[i].partitions {
			p := &out[i].partitions[j]
			switch {
			case p.code != 0:
			case errCode != 0:
				p.offset, p.code = -1, x.code(errCode)
			case pending[cluster.TxnPartition{Topic: out[i].topic, Partition: int(p.partition)}]:
				p.offset, p.code = -1, x.code(kerr.UnstableOffsetCommit.Code)
			}
		}
	}
}

// committedOffsets is fetchOffsets without RequireStable.
func (s *Server) committedOffsets(x *exchange, groupID string, asked []kmsg.OffsetFetchRequestTopic) ([]fetchedTopic, int16) {
	if group.ValidateID(groupID) != nil {
		code := x.code(kerr.InvalidGroupID.Code)
		var out []fetchedTopic
		for _, t := range asked {
			ft := fetchedTopic{topic: t.Topic}
			for _, p := range t.Partitions {
				ft.partitions = append(ft.partitions, fetchedOffset{p, -1, code})
			}
			out = append(out, ft)
		}
		return out, code
	}
	if asked == nil {
		list, err := s.c.ListOffsets(groupID)
		if err != nil {
			return nil, x.code(offsetCode(err))
		}
		slices.SortFunc(list, func(a, b client.CommittedOffset) int {
			return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		var out []fetchedTopic
		for _, o := range list {
			if len(out) == 0 || out[len(out)-1].topic != o.Topic {
				out = append(out, fetchedTopic{topic: o.Topic})
			}
			ft := &out[len(out)-1]
			ft.partitions = append(ft.partitions, fetchedOffset{int32(o.Partition), int64(o.Offset), 0})
		}
		return out, 0
	}
	out := make([]fetchedTopic, 0, len(asked))
	for _, t := range asked {
		ft := fetchedTopic{topic: t.Topic}
		info, terr := s.c.Topic(t.Topic)
		for _, p := range t.Partitions {
			fo := fetchedOffset{partition: p, offset: -1}
			switch {
			case terr != nil || p < 0 || int(p) >= info.PartitionCount:
				fo.code = x.code(kerr.UnknownTopicOrPartition.Code)
			default:
				off, ok, err := s.c.LoadOffset(groupID, t.Topic, int(p))
				if fo.code = x.code(offsetCode(err)); fo.code == 0 && ok {
					fo.offset = int64(off)
				}
			}
			ft.partitions = append(ft.partitions, fo)
		}
		out = append(out, ft)
	}
	return out, 0
}

func failOffsetFetch(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.OffsetFetchRequest)
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	resp.ErrorCode = code
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.ErrorCode = p, -1, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	for _, g := range req.Groups {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group, rg.ErrorCode = g.Group, code
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}
