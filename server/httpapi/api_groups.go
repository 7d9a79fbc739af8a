package httpapi

import (
	"net"
	"net/http"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/server/syntax"
	"github.com/pystream/pystream/topic"
)

// The HTTP consumer groups' heartbeat and commit (docs/groups.md): the
// coordinator is package server/group's ConsumerCoordinator; these
// handlers read the request, check it is at the coordinator, and map its
// answers and errors (classify) to the API's.

// heartbeatBody is apiclient.GroupHeartbeatRequest as the server reads
// it: a missing member_epoch is refused rather than read as 0 (a join).
type heartbeatBody struct {
	MemberID    string                           `json:"member_id"`
	MemberEpoch *int32                           `json:"member_epoch"`
	Topics      []string                         `json:"topics"`
	Owned       []apiclient.GroupTopicPartitions `json:"owned"`
	MaxWaitMS   uint32                           `json:"max_wait_ms"`
	ClientID    string                           `json:"client_id"`
}

// handleGroupHeartbeat answers POST /api/groups/{group}/heartbeat: a
// member joins (member_epoch 0), leaves (-1) or heartbeats, and learns
// what it may hold now. With max_wait_ms the answer may wait, up to the
// heartbeat interval (and heartbeatWait's bound), for the member's
// assignment to change.
func (a *API) handleGroupHeartbeat(w http.ResponseWriter, r *http.Request) {
	g, ae := a.groupParam(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	var body heartbeatBody
	if ae := a.readJSON(w, r, &body); ae != nil {
		writeAPIError(w, ae)
		return
	}
	if body.MemberEpoch == nil {
		writeAPIError(w, badRequest(`"member_epoch" is required: 0 to join, -1 to leave, else the epoch of the last answer`))
		return
	}
	for i, tp := range body.Owned {
		if tp.Partitions == nil {
			writeAPIError(w, badRequest(`"owned[%d].partitions" is required: the partitions of %s the member holds`, i, quoted(tp.Topic)))
			return
		}
	}
	if len(body.ClientID) > group.MaxClientID || !syntax.Printable(body.ClientID) {
		writeAPIError(w, badRequest(`"client_id" must be printable text of at most %d bytes`, group.MaxClientID))
		return
	}
	hb := group.Heartbeat{MemberID: body.MemberID, MemberEpoch: *body.MemberEpoch, Topics: body.Topics,
		Owned: fromWire(body.Owned), ClientID: body.ClientID, MaxWait: a.heartbeatWait(w, time.Duration(body.MaxWaitMS)*time.Millisecond)}
	if hb.ClientID == "" {
		hb.ClientID = r.UserAgent() // the coordinator clips it (group.ClipClientID)
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		hb.ClientHost = host
	}
	asg, err := a.groups.Consumer.Heartbeat(r.Context(), g, hb)
	if r.Context().Err() != nil {
		return // the member went away: nobody reads an answer
	}
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	writeJSON(w, http.StatusOK, apiclient.GroupHeartbeatResponse{MemberID: asg.MemberID, MemberEpoch: asg.MemberEpoch,
		HeartbeatIntervalMS: asg.HeartbeatInterval.Milliseconds(), SessionTimeoutMS: asg.SessionTimeout.Milliseconds(), Assignment: toWire(asg.Partitions)})
}

// heartbeatWait is how long a heartbeat that asked to wait up to asked
// may be held: never past two thirds of the server's write timeout,
// counted from when the request came in (requestStart), whatever
// PYSTREAM_GROUP_HEARTBEAT_INTERVAL says, so that the answer is written
// well before the server would cut the connection.
func (a *API) heartbeatWait(w http.ResponseWriter, asked time.Duration) time.Duration {
	return max(0, min(asked, time.Until(requestStart(w).Add(a.writeTimeout*2/3))))
}

// groupCommitBody is apiclient.GroupCommitRequest as the server reads
// it: every field required.
type groupCommitBody struct {
	MemberID    *string `json:"member_id"`
	MemberEpoch *int32  `json:"member_epoch"`
	Offset      *uint64 `json:"offset"`
}

// handleGroupCommit answers PUT /api/groups/{group}/offsets/{topic}/{p}
// with {"member_id", "member_epoch", "offset"}: a member commits the
// group's offset of a partition it holds, at its current epoch; then the
// commit is the phase-3 one of consumer id {group} (durable, never
// backwards, never past the high watermark). The check and the commit
// are one step for the group: a change that would fence the member (a
// new epoch, the partition released, the member removed) waits until the
// offset is stored.
func (a *API) handleGroupCommit(w http.ResponseWriter, r *http.Request) {
	g, ae := a.groupParam(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	t, ae := a.partitionTarget(r, g)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	var body groupCommitBody
	if ae := a.readJSON(w, r, &body); ae != nil {
		writeAPIError(w, ae)
		return
	}
	switch {
	case body.MemberID == nil:
		ae = badRequest(`"member_id" is required: the id the group's heartbeat answered`)
	case topic.ValidateName(*body.MemberID) != nil:
		ae = badRequest(`"member_id" %s is no member id a heartbeat answers`, quoted(*body.MemberID))
	case body.MemberEpoch == nil:
		ae = badRequest(`"member_epoch" is required: the epoch of the member's last heartbeat answer`)
	case body.Offset == nil:
		ae = badRequest(`"offset" is required: a JSON integer from 0`)
	}
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	if p, ok := a.groups.Registry.Protocol(g); ok && p != group.Consumer {
		writeAPIError(w, classify(&group.ProtocolMismatchError{Group: g, Has: p, Want: group.Consumer}))
		return
	}
	done, err := a.groups.Consumer.CheckCommit(g, *body.MemberID, *body.MemberEpoch, t.topic, int32(t.partition))
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	err = a.data.CommitOffset(g, t.topic, t.partition, *body.Offset)
	done()
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	a.answerOffset(w, t)
}

// groupParam is the {group} of a group route, at the coordinator: the id
// checked as a consumer id, then this server checked to coordinate groups
// (notCoordinator).
func (a *API) groupParam(r *http.Request) (string, *apiError) {
	g, ae := nameParam(r, "group", "group id")
	if ae != nil {
		return "", ae
	}
	return g, a.notCoordinator()
}

// partitionTarget is an offset target of consumer id: the {topic} and
// {p} of the path, checked to exist.
func (a *API) partitionTarget(r *http.Request, consumer string) (offsetTarget, *apiError) {
	t := offsetTarget{consumer: consumer}
	var ae *apiError
	if t.topic, ae = nameParam(r, "topic", "topic"); ae != nil {
		return t, ae
	}
	if t.partition, ae = partitionParam(r); ae != nil {
		return t, ae
	}
	info, err := a.data.Topic(t.topic)
	if err != nil {
		return t, classify(err)
	}
	if t.partition >= info.PartitionCount {
		return t, notFound("topic %q has %d partition(s), no partition %d", t.topic, info.PartitionCount, t.partition)
	}
	return t, nil
}

// fromWire and toWire convert partition lists between the API and the
// coordinator.
func fromWire(in []apiclient.GroupTopicPartitions) []group.TopicPartitions {
	out := make([]group.TopicPartitions, len(in))
	for i, tp := range in {
		out[i] = group.TopicPartitions{Topic: tp.Topic, Partitions: tp.Partitions}
	}
	return out
}

// toWire is never nil, so that an empty list encodes as [].
func toWire(in []group.TopicPartitions) []apiclient.GroupTopicPartitions {
	out := make([]apiclient.GroupTopicPartitions, len(in))
	for i, tp := range in {
		out[i] = apiclient.GroupTopicPartitions{Topic: tp.Topic, Partitions: tp.Partitions}
	}
	return out
}
