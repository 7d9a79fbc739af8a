package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/topic"
)

func (a *API) topicSummaries() []apiclient.TopicSummary {
	infos := a.data.Topics()
	out := make([]apiclient.TopicSummary, len(infos))
	for i, t := range infos {
		out[i] = topicSummary(t)
	}
	return out
}

func topicSummary(t cluster.TopicInfo) apiclient.TopicSummary {
	return apiclient.TopicSummary{Name: t.Name, PartitionCount: t.PartitionCount, ReplicationFactor: t.ReplicationFactor}
}

// handleTopics answers GET /api/topics.
func (a *API) handleTopics(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, apiclient.TopicsResponse{Topics: a.topicSummaries()})
}

// handleCreateTopic answers POST /api/topics: 201 with the new topic, 200
// when a topic with exactly these settings exists, 409 when one with other
// settings does. Every value is checked before the cluster is asked, so a
// bad request changes nothing on disk.
func (a *API) handleCreateTopic(w http.ResponseWriter, r *http.Request) {
	req, ae := a.readCreateTopic(w, r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	status := http.StatusCreated
	err := a.admin.CreateTopicWithConfig(req.Name, req.Partitions, req.ReplicationFactor, req.Config)
	var exists *cluster.TopicExistsError
	if errors.As(err, &exists) && exists.SameSettings {
		status, err = http.StatusOK, nil
	}
	if err != nil {
		writeAPIError(w, a.withUnavailable(classify(err)))
		return
	}
	if status == http.StatusCreated {
		a.logger.Info("topic created", "topic", req.Name, "partitions", req.Partitions, "replication_factor", req.ReplicationFactor, "config", req.Config)
	}
	detail, ae := a.topicDetail(req.Name)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	writeJSON(w, status, detail)
}

// createTopicBody is the body of POST /api/topics as the server reads it:
// the wire shape of apiclient.CreateTopicRequest, with pointers, so that a
// missing field is told from a zero (Kafka would fill in broker defaults;
// PyStream has none, and says what is missing).
type createTopicBody struct {
	Name              *string `json:"name"`
	Partitions        *int    `json:"partitions"`
	ReplicationFactor *int    `json:"replication_factor"`
	// Config is optional; its values must be JSON strings (configStrings).
	Config map[string]json.RawMessage `json:"config"`
}

// readCreateTopic reads and checks a POST /api/topics body: every field
// present and in range, before the cluster is asked.
func (a *API) readCreateTopic(w http.ResponseWriter, r *http.Request) (apiclient.CreateTopicRequest, *apiError) {
	var body createTopicBody
	if ae := a.readJSON(w, r, &body); ae != nil {
		return apiclient.CreateTopicRequest{}, ae
	}
	nameRule := fmt.Sprintf("1 to %d characters of A-Z a-z 0-9 . _ -, not . or ..", topic.MaxNameLength)
	brokers := len(a.data.Brokers())
	rfRule := fmt.Sprintf("1 to the number of brokers, %d", brokers)
	switch {
	case body.Name == nil:
		return apiclient.CreateTopicRequest{}, badRequest("name is required (%s)", nameRule)
	case topic.ValidateName(*body.Name) != nil:
		return apiclient.CreateTopicRequest{}, badRequest("invalid topic name %s: %s", quoted(*body.Name), nameRule)
	case body.Partitions == nil:
		return apiclient.CreateTopicRequest{}, badRequest("partitions is required (1 to %d)", bounds.MaxTopicPartitions)
	case *body.Partitions < 1 || *body.Partitions > bounds.MaxTopicPartitions:
		return apiclient.CreateTopicRequest{}, badRequest("partitions %d: must be from 1 to %d", *body.Partitions, bounds.MaxTopicPartitions)
	case body.ReplicationFactor == nil:
		return apiclient.CreateTopicRequest{}, badRequest("replication_factor is required (%s)", rfRule)
	case *body.ReplicationFactor < 1 || (*body.ReplicationFactor > brokers && a.brokers.Complete()):
		// When the brokers listed here may trail the cluster's (cluster
		// mode: a broker registered a moment ago), the metadata group's
		// leader checks the upper bound, and its refusal is the same 400.
		return apiclient.CreateTopicRequest{}, badRequest("replication_factor %d: must be from %s", *body.ReplicationFactor, rfRule)
	}
	set, _, ae := configStrings(body.Config, false)
	if ae != nil {
		return apiclient.CreateTopicRequest{}, ae
	}
	config, err := topic.ParseConfigOverrides(set)
	if err != nil {
		return apiclient.CreateTopicRequest{}, configBadRequest(err)
	}
	return apiclient.CreateTopicRequest{Name: *body.Name, Partitions: *body.Partitions, ReplicationFactor: *body.ReplicationFactor, Config: config}, nil
}

// handleTopic answers GET /api/topics/{topic}.
func (a *API) handleTopic(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	detail, ae := a.topicDetail(name)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, detail)
}

// topicDetail is a topic with the replication status of every partition.
func (a *API) topicDetail(name string) (apiclient.TopicDetail, *apiError) {
	info, err := a.data.Topic(name)
	if err != nil {
		return apiclient.TopicDetail{}, classify(err)
	}
	config, keys, ae := a.topicConfigView(name)
	if ae != nil {
		return apiclient.TopicDetail{}, ae
	}
	d := apiclient.TopicDetail{Name: info.Name, PartitionCount: info.PartitionCount, ReplicationFactor: info.ReplicationFactor,
		Config: config, ConfigOverrides: keys, Partitions: make([]apiclient.PartitionStatus, 0, info.PartitionCount)}
	for p := range info.PartitionCount {
		st, err := a.data.Status(name, p)
		if err != nil {
			return apiclient.TopicDetail{}, classify(err)
		}
		d.Partitions = append(d.Partitions, partitionStatus(st))
	}
	return d, nil
}

// partitionStatus converts the library's status to the wire shape.
func partitionStatus(st cluster.PartitionStatus) apiclient.PartitionStatus {
	ps := apiclient.PartitionStatus{
		Partition: st.Partition, Leader: st.Leader, LeaderEpoch: st.LeaderEpoch,
		Preferred: st.Preferred, Placement: nonNil(st.Placement),
		Assigned: nonNil(st.Assigned), Followers: nonNil(st.Followers), Active: nonNil(st.Active),
		HighWatermark: st.HighWatermark,
		Replicas:      make([]apiclient.ReplicaStatus, 0, len(st.Replicas)),
	}
	for _, r := range st.Replicas {
		if r.BrokerID == st.Leader {
			ps.LogEnd = r.LogEnd
		}
		rs := apiclient.ReplicaStatus{
			BrokerID: r.BrokerID, Role: r.Role, Active: r.Active, Available: r.Available, LogEnd: r.LogEnd, Lag: r.Lag,
		}
		if !r.ReportedAt.IsZero() {
			at := r.ReportedAt.UTC()
			rs.ReportedAt = &at
		}
		ps.Replicas = append(ps.Replicas, rs)
	}
	return ps
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// withUnavailable adds the ids of the stopped brokers to a 503 that does
// not name any, so that every 503 says which brokers to bring back.
func (a *API) withUnavailable(e *apiError) *apiError {
	if e.status != http.StatusServiceUnavailable || len(e.body.BrokerIDs) > 0 {
		return e
	}
	ids := []int{}
	for _, b := range a.data.Brokers() {
		if !b.Available {
			ids = append(ids, b.ID)
		}
	}
	e.body.BrokerIDs = ids
	return e
}

// updateTopicBody is the body of PATCH /api/topics/{topic} as the server
// reads it: partitions a pointer, so that a missing field is told from 0.
type updateTopicBody struct {
	Partitions *int `json:"partitions"`
}

// handleUpdateTopic answers PATCH /api/topics/{topic}: the topic grows to
// "partitions" partitions (cluster.Cluster.AddPartitions) and is answered
// 200 with its detail. Its current count again is 200 unchanged, so that
// a request sent again after a lost answer succeeds; fewer is 400, an
// unknown topic 404, a placed broker down 503.
func (a *API) handleUpdateTopic(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	var body updateTopicBody
	if ae := a.readJSON(w, r, &body); ae != nil {
		writeAPIError(w, ae)
		return
	}
	switch {
	case body.Partitions == nil:
		writeAPIError(w, badRequest("partitions is required: the topic's new partition count, more than it has (at most %d)", bounds.MaxTopicPartitions))
		return
	case *body.Partitions < 1 || *body.Partitions > bounds.MaxTopicPartitions:
		writeAPIError(w, badRequest("partitions %d: must be from 1 to %d", *body.Partitions, bounds.MaxTopicPartitions))
		return
	}
	n := *body.Partitions
	err := a.admin.AddPartitions(name, n)
	if errors.Is(err, cluster.ErrInvalidPartitionCount) {
		if info, ierr := a.data.Topic(name); ierr == nil && info.PartitionCount == n {
			err = nil // grown to n already: the same request again
		}
	} else if err == nil {
		a.logger.Info("topic partitions added", "topic", name, "partitions", n)
	}
	if err != nil {
		writeAPIError(w, a.withUnavailable(classify(err)))
		return
	}
	detail, ae := a.topicDetail(name)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	writeJSON(w, http.StatusOK, detail)
}
