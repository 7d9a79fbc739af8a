package kafka

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/topic"
)

// createTopics answers CreateTopics (key 19) v2-v7 on any broker (every
// broker of the embedded cluster can create a topic; there is no
// controller to send the client to). Each topic is checked whole before
// anything is created — its name, partition count, replication factor
// and configuration — and validate_only answers the same checks without
// creating anything. A topic's configs are PyStream's topic
// configuration keys (topic.ConfigKeys: retention.ms, retention.bytes,
// segment.bytes, segment.ms, min.insync.replicas, cleanup.policy,
// max.message.bytes, message.timestamp.type and what else package topic
// adds); any other key is INVALID_CONFIG.
//
// PyStream has no server default partition count or replication factor
// (the HTTP API asks for both too), so -1 for either (v4+) is refused
// with INVALID_PARTITIONS or INVALID_REPLICATION_FACTOR, and a manual
// replica assignment with INVALID_REPLICA_ASSIGNMENT: PyStream places
// replicas itself.
//
// The request as a whole is bounded (docs/security.md § Bounds) before
// anything is created: more than bounds.MaxCreateTopics topics is
// INVALID_REQUEST for every topic, and topics that would create more than
// bounds.MaxCreatePartitions partitions together are POLICY_VIOLATION for
// every topic; either way nothing is created. Then the topics are created
// one at a time, each only while its client is there (the connection's
// context, conn.watchGone) and before the request's timeout_ms has
// passed: a topic not started by then is REQUEST_TIMED_OUT and not
// created, as Kafka answers a creation its timeout cut short; those
// created stay created. A timeout_ms of 0 or less sets no deadline (Kafka
// reads it as "do not wait"; PyStream creates synchronously).
func (s *Server) createTopics(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	turns := newTurns(x, req.TimeoutMillis)
	plan, code, msg := s.planCreateTopics(req.Topics)
	for i, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		c, m := code, msg
		switch {
		case c != 0: // the request is refused whole
		case plan[i].code != 0:
			c, m = plan[i].code, plan[i].msg
		case req.ValidateOnly:
			c, m = s.createTopic(x, t, plan[i].config, true, &rt)
		case turns.missed():
			c, m = kerr.RequestTimedOut.Code, "not created: "+turns.why()
		default:
			c, m = s.createTopic(x, t, plan[i].config, false, &rt)
		}
		rt.ErrorCode = x.code(c)
		if c != 0 {
			rt.ErrorMessage = kmsg.StringPtr(m)
		} else {
			rt.TopicID = topicID(t.Topic)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// topicPlan is the outcome of a topic's checks: its configuration
// overrides, or the code and message that refuse it.
type topicPlan struct {
	config map[string]string
	code   int16
	msg    string
}

// planCreateTopics checks a CreateTopics request's topics before anything
// is created: each topic alone (planTopic), then the request as a whole.
// A non-zero code refuses the whole request (every topic answers it);
// else plan holds each topic's outcome. It creates and changes nothing.
func (s *Server) planCreateTopics(topics []kmsg.CreateTopicsRequestTopic) (plan []topicPlan, code int16, msg string) {
	if n := len(topics); n > bounds.MaxCreateTopics {
		return nil, kerr.InvalidRequest.Code, fmt.Sprintf("%d topics in one request: give at most %d", n, bounds.MaxCreateTopics)
	}
	seen := make(map[string]int, len(topics))
	for _, t := range topics {
		seen[t.Topic]++
	}
	brokers := len(s.c.Brokers())
	plan = make([]topicPlan, len(topics))
	partitions := 0
	for i, t := range topics {
		if seen[t.Topic] > 1 {
			plan[i].code, plan[i].msg = kerr.InvalidRequest.Code, "the topic is named more than once in the request"
			continue
		}
		plan[i] = planTopic(t, brokers)
		if plan[i].code == 0 {
			partitions += int(t.NumPartitions) // each 1..MaxTopicPartitions: no overflow
		}
	}
	if partitions > bounds.MaxCreatePartitions {
		return nil, kerr.PolicyViolation.Code, fmt.Sprintf("the request's topics have %d partitions together: give at most %d in one request", partitions, bounds.MaxCreatePartitions)
	}
	return plan, 0, ""
}

// planTopic is one topic's checks, against a cluster of brokers brokers:
// its configuration, name, counts and assignment, and the configuration's
// values.
func planTopic(t kmsg.CreateTopicsRequestTopic, brokers int) topicPlan {
	config, code, msg := createTopicConfig(t.Configs)
	if code != 0 {
		return topicPlan{code: code, msg: msg}
	}
	if code, msg := checkCreateTopic(t, brokers); code != 0 {
		return topicPlan{code: code, msg: msg}
	}
	if _, err := topic.ParseConfigOverrides(config); err != nil {
		code, msg := createTopicCode(err)
		return topicPlan{code: code, msg: msg}
	}
	return topicPlan{config: config}
}

// createTopic creates (or, validateOnly, checks) one topic that passed
// planTopic, with its configuration overrides config, filling rt's counts
// and configuration (v5+), and returns the error code and message.
func (s *Server) createTopic(x *exchange, t kmsg.CreateTopicsRequestTopic, config map[string]string, validateOnly bool, rt *kmsg.CreateTopicsResponseTopic) (int16, string) {
	partitions, rf := int(t.NumPartitions), int(t.ReplicationFactor)
	if validateOnly {
		if code, msg := s.checkTopicFree(t.Topic); code != 0 {
			return code, msg
		}
	} else if err := s.c.CreateTopicWithConfig(t.Topic, partitions, rf, config); err != nil {
		code, msg := createTopicCode(err)
		if code == kerr.UnknownServerError.Code {
			// The text may name files of the data directory: it goes
			// to the log, not to the client.
			x.fault("topic", t.Topic, "err", err)
			msg = "the topic could not be created; the server's log says why"
		}
		return code, msg
	}
	rt.NumPartitions, rt.ReplicationFactor = t.NumPartitions, t.ReplicationFactor
	effective, err := s.c.TopicConfig(t.Topic)
	if validateOnly || err != nil {
		// Not created (or deleted again since): the counts are the
		// answer, the configuration left out.
		return 0, ""
	}
	strs := effective.Strings()
	for _, key := range slices.Sorted(maps.Keys(strs)) {
		c := kmsg.NewCreateTopicsResponseTopicConfig()
		c.Name, c.Value = key, kmsg.StringPtr(strs[key])
		c.Source = 5 // DEFAULT_CONFIG
		if _, ok := config[key]; ok {
			c.Source = 1 // DYNAMIC_TOPIC_CONFIG
		}
		rt.Configs = append(rt.Configs, c)
	}
	return 0, ""
}

// createTopicConfig turns a request's configs into PyStream's overrides:
// a key given twice, or without a value, is INVALID_CONFIG.
func createTopicConfig(configs []kmsg.CreateTopicsRequestTopicConfig) (map[string]string, int16, string) {
	if len(configs) == 0 {
		return nil, 0, ""
	}
	out := map[string]string{}
	for _, c := range configs {
		if c.Value == nil {
			return nil, kerr.InvalidConfig.Code, fmt.Sprintf("config %q has no value", c.Name)
		}
		if _, dup := out[c.Name]; dup {
			return nil, kerr.InvalidConfig.Code, fmt.Sprintf("config %q is given more than once", c.Name)
		}
		out[c.Name] = *c.Value
	}
	return out, 0, ""
}

// checkCreateTopic is the check of a topic's name, counts and assignment
// against a cluster of brokers brokers, before the cluster is asked.
func checkCreateTopic(t kmsg.CreateTopicsRequestTopic, brokers int) (int16, string) {
	if err := topic.ValidateName(t.Topic); err != nil {
		return kerr.InvalidTopicException.Code, err.Error()
	}
	if len(t.ReplicaAssignment) > 0 {
		return kerr.InvalidReplicaAssignment.Code, "PyStream places replicas itself: give a partition count and a replication factor, not an assignment"
	}
	switch {
	case t.NumPartitions == -1:
		return kerr.InvalidPartitions.Code, fmt.Sprintf("PyStream has no default partition count: give one, 1 to %d", bounds.MaxTopicPartitions)
	case t.NumPartitions < 1 || int(t.NumPartitions) > bounds.MaxTopicPartitions:
		return kerr.InvalidPartitions.Code, fmt.Sprintf("%d partitions: give 1 to %d", t.NumPartitions, bounds.MaxTopicPartitions)
	}
	switch {
	case t.ReplicationFactor == -1:
		return kerr.InvalidReplicationFactor.Code, fmt.Sprintf("PyStream has no default replication factor: give one, 1 to %d (the brokers)", brokers)
	case t.ReplicationFactor < 1 || int(t.ReplicationFactor) > brokers:
		return kerr.InvalidReplicationFactor.Code, fmt.Sprintf("replication factor %d with %d broker(s): give 1 to %d", t.ReplicationFactor, brokers, brokers)
	}
	return 0, ""
}

// checkTopicFree is validate_only's check that name is free: no topic of
// that name, nor one differing only in letter case (PyStream keeps each
// topic in a directory of its name, and file systems may fold case).
func (s *Server) checkTopicFree(name string) (int16, string) {
	for _, t := range s.c.Topics() {
		switch {
		case t.Name == name:
			return kerr.TopicAlreadyExists.Code, fmt.Sprintf("topic %q exists", name)
		case strings.EqualFold(t.Name, name):
			return kerr.InvalidTopicException.Code, fmt.Sprintf("topic %q differs only in letter case from the existing topic %q", name, t.Name)
		}
	}
	return 0, ""
}

// createTopicCode maps an error of CreateTopicWithConfig (or of its
// configuration check) to CreateTopics' error code and message.
func createTopicCode(err error) (int16, string) {
	code := kerr.UnknownServerError.Code
	switch {
	case errors.Is(err, cluster.ErrTopicExists):
		code = kerr.TopicAlreadyExists.Code
	case errors.Is(err, cluster.ErrDeleteUnfinished):
		// Kafka's answer for a name whose topic is marked for deletion.
		code = kerr.TopicAlreadyExists.Code
	case errors.Is(err, cluster.ErrTopicNameConflict), errors.Is(err, topic.ErrInvalidName):
		code = kerr.InvalidTopicException.Code
	case errors.Is(err, cluster.ErrInvalidPartitionCount), errors.Is(err, topic.ErrInvalidPartitionCount):
		code = kerr.InvalidPartitions.Code
	case errors.Is(err, cluster.ErrInvalidReplicationFactor), errors.Is(err, cluster.ErrBrokerUnavailable):
		// Kafka's answer when fewer brokers are up than the factor asks.
		code = kerr.InvalidReplicationFactor.Code
	case errors.Is(err, topic.ErrInvalidConfig):
		code = kerr.InvalidConfig.Code
	case errors.Is(err, cluster.ErrOpenLogsLimit):
		code = kerr.PolicyViolation.Code
	case errors.Is(err, cluster.ErrClosed):
		code = kerr.NotController.Code
	}
	return code, err.Error()
}

func failCreateTopics(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.CreateTopicsRequest)
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic, rt.ErrorCode = t.Topic, code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// turns are a topic request's topics taken one at a time (CreateTopics,
// CreatePartitions): a topic is done only while its client is there and
// before the request's timeout_ms has passed (0 or less: no deadline).
type turns struct {
	x         *exchange
	deadline  time.Time
	timeoutMs int32
}

func newTurns(x *exchange, timeoutMs int32) turns {
	t := turns{x: x, timeoutMs: timeoutMs}
	if timeoutMs > 0 {
		t.deadline = time.Now().Add(time.Duration(timeoutMs) * time.Millisecond)
	}
	return t
}

// missed reports whether the next topic's turn came too late.
func (t turns) missed() bool {
	return t.x.ctx.Err() != nil || !t.deadline.IsZero() && !time.Now().Before(t.deadline)
}

// why says why a turn was missed, for the topic's error message.
func (t turns) why() string {
	if t.x.ctx.Err() != nil {
		return "the connection closed before the topic's turn"
	}
	return fmt.Sprintf("the request's timeout (%d ms) passed before the topic's turn", t.timeoutMs)
}
