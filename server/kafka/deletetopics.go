package kafka

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/topic"
)

// deleteTopics answers DeleteTopics (key 20) v0-v6 on any broker: each
// topic, named (v0-v6) or by the id Metadata gives it (v6), is deleted
// with its records and every consumer's committed offsets on it
// (Cluster.DeleteTopic), in either mode. An unknown name is
// UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID.
func (s *Server) deleteTopics(x *exchange, r kmsg.Request) kmsg.Response {
	req := r.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	type target struct {
		name *string
		id   [16]byte
	}
	var targets []target
	if req.Version >= 6 {
		for _, t := range req.Topics {
			targets = append(targets, target{t.Topic, t.TopicID})
		}
	} else {
		for _, name := range req.TopicNames {
			targets = append(targets, target{name: kmsg.StringPtr(name)})
		}
	}
	for _, t := range targets {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.name, t.id
		var code int16
		var msg string
		if t.name == nil {
			rt.Topic = s.topicByID(t.id)
		}
		if rt.Topic == nil {
			code, msg = kerr.UnknownTopicID.Code, fmt.Sprintf("no topic has id %x", t.id)
		} else {
			code, msg = s.deleteTopic(x, *rt.Topic, req.Version)
			if code == 0 && req.Version >= 6 {
				rt.TopicID = topicID(*rt.Topic)
			}
		}
		rt.ErrorCode = x.code(code)
		if code != 0 {
			rt.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// deleteTopic deletes one topic and returns its error code and message.
func (s *Server) deleteTopic(x *exchange, name string, version int16) (int16, string) {
	_, err := s.c.DeleteTopic(name)
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, cluster.ErrUnknownTopic), errors.Is(err, topic.ErrInvalidName):
		return kerr.UnknownTopicOrPartition.Code, fmt.Sprintf("no topic %q", name)
	case errors.Is(err, cluster.ErrDeleteUnfinished), errors.Is(err, cluster.ErrJournalFailed):
		// The topic is gone (its deletion committed); what failed is
		// cleanup or bookkeeping, which the server's log reports.
		s.cfg.Logger.Warn("kafka delete topic: deleted, with an error after the commit point", "topic", name, "err", err)
		return 0, ""
	case errors.Is(err, cluster.ErrClosed):
		return kerr.NotController.Code, "the cluster is closing"
	}
	x.fault("topic", name, "err", err)
	return kerr.UnknownServerError.Code, "the topic could not be deleted; the server's log says why"
}

// topicByID is the name of the topic whose Metadata id is id, nil when
// none has it.
func (s *Server) topicByID(id [16]byte) *string {
	for _, t := range s.c.Topics() {
		if topicID(t.Name) == id {
			return kmsg.StringPtr(t.Name)
		}
	}
	return nil
}

func failDeleteTopics(r kmsg.Request, code int16) kmsg.Response {
	req := r.(*kmsg.DeleteTopicsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	for _, name := range req.TopicNames {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.ErrorCode = kmsg.StringPtr(name), code
		resp.Topics = append(resp.Topics, rt)
	}
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID, rt.ErrorCode = t.Topic, t.TopicID, code
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
