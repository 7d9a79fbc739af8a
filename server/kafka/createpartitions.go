package kafka

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/topic"
)

// createPartitions answers CreatePartitions (key 37) v0-v3 on any broker,
// in either mode: each topic grows to its count
// (Cluster.AddPartitions), the new partitions placed as a creation places
// them, their replicas created before the new count is committed. Records
// already written stay where they are; keyed records sent afterwards
// route by the new count (key hash mod partition count), so a key may
// land on another partition than before.
//
// Each topic is checked before it is grown, and validate_only answers the
// same checks without growing anything: an unknown topic (a deleted one
// too, its files removed or not: PyStream's deletion commits at once, as
// a KRaft cluster's does) is UNKNOWN_TOPIC_OR_PARTITION; a count not
// larger than the topic's, or past bounds.MaxTopicPartitions, is
// INVALID_PARTITIONS; a manual assignment INVALID_REPLICA_ASSIGNMENT
// (PyStream places replicas itself, as for CreateTopics); a topic named
// twice INVALID_REQUEST. The request as a whole is bounded as
// CreateTopics is: more than bounds.MaxCreateTopics topics is
// INVALID_REQUEST, new partitions past bounds.MaxCreatePartitions
// together POLICY_VIOLATION, for every topic, and nothing grows. Then the
// topics grow one at a time, each only while its client is there and
// before timeout_ms has passed (REQUEST_TIMED_OUT otherwise, as
// createTopics answers).
func (s *Server) createPartitions(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	turns := newTurns(x, req.TimeoutMillis)
	plan, code, msg := s.planCreatePartitions(req.Topics)
	for i, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		c, m := code, msg
		switch {
		case c != 0: // the request is refused whole
		case plan[i].code != 0:
			c, m = plan[i].code, plan[i].msg
		case req.ValidateOnly:
		case turns.missed():
			c, m = kerr.RequestTimedOut.Code, "not grown: "+turns.why()
		default:
			c, m = s.addPartitions(t.Topic, int(t.Count))
		}
		rt.ErrorCode = x.code(c)
		if c != 0 {
			rt.ErrorMessage = kmsg.StringPtr(m)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// planCreatePartitions checks a CreatePartitions request's topics before
// anything grows: each topic against the topic as it is now, then the
// request as a whole. A non-zero code refuses the whole request; else
// plan holds each topic's refusal (code 0: it may grow).
func (s *Server) planCreatePartitions(topics []kmsg.CreatePartitionsRequestTopic) (plan []topicPlan, code int16, msg string) {
	if n := len(topics); n > bounds.MaxCreateTopics {
		return nil, kerr.InvalidRequest.Code, fmt.Sprintf("%d topics in one request: give at most %d", n, bounds.MaxCreateTopics)
	}
	seen := make(map[string]int, len(topics))
	for _, t := range topics {
		seen[t.Topic]++
	}
	have := map[string]int{}
	for _, info := range s.c.Topics() {
		have[info.Name] = info.PartitionCount
	}
	plan = make([]topicPlan, len(topics))
	added := 0
	for i, t := range topics {
		current, ok := have[t.Topic]
		switch {
		case seen[t.Topic] > 1:
			plan[i] = topicPlan{code: kerr.InvalidRequest.Code, msg: "the topic is named more than once in the request"}
		case !ok:
			plan[i] = topicPlan{code: kerr.UnknownTopicOrPartition.Code, msg: fmt.Sprintf("no topic %q", t.Topic)}
		case len(t.Assignment) > 0:
			plan[i] = topicPlan{code: kerr.InvalidReplicaAssignment.Code, msg: "PyStream places replicas itself: give the new partition count, not an assignment"}
		case int(t.Count) <= current:
			plan[i] = topicPlan{code: kerr.InvalidPartitions.Code, msg: fmt.Sprintf("topic %q has %d partition(s) and a topic's partitions can only be added to: give more than %d", t.Topic, current, current)}
		case int(t.Count) > bounds.MaxTopicPartitions:
			plan[i] = topicPlan{code: kerr.InvalidPartitions.Code, msg: fmt.Sprintf("%d partitions: a topic has at most %d", t.Count, bounds.MaxTopicPartitions)}
		default:
			added += int(t.Count) - current // each at most MaxTopicPartitions: no overflow
		}
	}
	if added > bounds.MaxCreatePartitions {
		return nil, kerr.PolicyViolation.Code, fmt.Sprintf("the request adds %d partitions together: add at most %d in one request", added, bounds.MaxCreatePartitions)
	}
	return plan, 0, ""
}

// addPartitions grows one topic that passed planCreatePartitions and
// returns the error code and message.
func (s *Server) addPartitions(name string, count int) (int16, string) {
	err := s.c.AddPartitions(name, count)
	code := kerr.UnknownServerError.Code
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, cluster.ErrUnknownTopic), errors.Is(err, topic.ErrInvalidName):
		return kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("no topic %q", name)
	case errors.Is(err, cluster.ErrInvalidPartitionCount):
		// Grown by another request since the check.
		code = kerr.InvalidPartitions.Code
	case errors.Is(err, cluster.ErrInvalidReplicationFactor), errors.Is(err, cluster.ErrBrokerUnavailable):
		// Kafka's answer when fewer brokers are up than the factor asks.
		code = kerr.InvalidReplicationFactor.Code
	case errors.Is(err, cluster.ErrOpenLogsLimit):
		code = kerr.PolicyViolation.Code
	case errors.Is(err, cluster.ErrClosed):
		return kerr.NotController.Code, "the cluster is closing"
	default:
		// The text may name files of the data directory: it goes to
		// the log, not to the client.
		s.cfg.Logger.Warn("kafka create partitions failed", "topic", name, "err", err)
		return code, "the partitions could not be added; the server's log says why"
	}
	return code, err.Error()
}

func failCreatePartitions(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.CreatePartitionsRequest)
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
