package kafka

import (
	"path/filepath"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
)

// describeLogDirs answers DescribeLogDirs (key 35) v0-v4 as a Kafka broker
// does: the log directories of the broker whose listener it reached — one,
// the broker's own directory, named by its path relative to the data
// directory ("broker-000001": a client is never told where the data
// directory is; the server's log is) — with each replica the broker
// holds: its bytes on disk, its offset lag (the leader's log end minus
// this replica's, 0 on the leader, -1 when the leader's is not known) and
// IsFuture false (PyStream never moves a replica between directories).
// v4 adds the file system's total and usable bytes (-1 where they cannot
// be read). Null topics describe every replica; named ones only the
// partitions named, and a topic or partition the broker does not hold is
// left out, as Kafka leaves it out. A replica whose log cannot be read is
// left out too, and logged.
func (s *Server) describeLogDirs(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DescribeLogDirsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	var names []string
	var want map[string]map[int32]bool
	if req.Topics != nil {
		names, want = []string{}, map[string]map[int32]bool{}
		for _, t := range req.Topics {
			if want[t.Topic] == nil {
				names, want[t.Topic] = append(names, t.Topic), map[int32]bool{}
			}
			for _, p := range t.Partitions {
				want[t.Topic][p] = true
			}
		}
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir = filepath.Base(cluster.BrokerDir("", x.broker))
	u, err := s.c.BrokerUsage(x.broker, names)
	if err != nil {
		x.fault("err", err)
		dir.ErrorCode = x.code(kerr.KafkaStorageError.Code)
		resp.Dirs = append(resp.Dirs, dir)
		return resp
	}
	dir.TotalBytes, dir.UsableBytes = u.TotalBytes, u.UsableBytes
	for _, rep := range u.Replicas {
		if want != nil && !want[rep.Topic][int32(rep.Partition)] {
			continue
		}
		if rep.Err != nil {
			s.cfg.Logger.Warn("kafka DescribeLogDirs: a replica's log cannot be read; left out", "broker", x.broker,
				"topic", rep.Topic, "partition", rep.Partition, "err", rep.Err)
			continue
		}
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition, p.Size, p.OffsetLag = int32(rep.Partition), rep.Size, s.offsetLag(x.broker, rep)
		if n := len(dir.Topics); n == 0 || dir.Topics[n-1].Topic != rep.Topic {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = rep.Topic
			dir.Topics = append(dir.Topics, t)
		}
		t := &dir.Topics[len(dir.Topics)-1]
		t.Partitions = append(t.Partitions, p)
	}
	resp.Dirs = append(resp.Dirs, dir)
	return resp
}

// offsetLag is how far broker's replica rep trails its leader's log end:
// 0 on the leader (and for a follower the status shows ahead of it, its
// report being older than the leader's), -1 when the leader's log end is
// not known.
func (s *Server) offsetLag(broker int, rep cluster.ReplicaUsage) int64 {
	st, err := s.c.Status(rep.Topic, rep.Partition)
	if err != nil {
		return -1
	}
	if st.Leader == broker {
		return 0
	}
	for _, rs := range st.Replicas {
		if rs.BrokerID == st.Leader {
			if rs.LogEnd == nil {
				return -1
			}
			if *rs.LogEnd <= rep.LogEnd {
				return 0
			}
			return int64(*rs.LogEnd - rep.LogEnd)
		}
	}
	return -1
}

// failDescribeLogDirs answers with code alone and no directory: Kafka's
// answer to a principal without DESCRIBE on the cluster (the code is
// carried from v3, which has the field).
func failDescribeLogDirs(r kmsg.Request, code int16) kmsg.Response {
	resp := r.(*kmsg.DescribeLogDirsRequest).ResponseKind().(*kmsg.DescribeLogDirsResponse)
	resp.ErrorCode = code
	return resp
}
