package httpapi

import (
	"net/http"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/group"
)

// handleConsumerOffsets answers GET /api/consumers/{id}/offsets: every
// offset the consumer committed, by topic and partition.
func (a *API) handleConsumerOffsets(w http.ResponseWriter, r *http.Request) {
	id, ae := nameParam(r, "id", "consumer id")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	list, err := a.data.ListOffsets(id)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	out := apiclient.ConsumerOffsetsResponse{ConsumerID: id, Offsets: make([]apiclient.ConsumerOffset, len(list))}
	for i, o := range list {
		out.Offsets[i] = apiclient.ConsumerOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset}
	}
	writeJSON(w, http.StatusOK, out)
}

// offsetTarget is the consumer, topic and partition of an offset route,
// validated: names checked, topic and partition existing.
type offsetTarget struct {
	consumer, topic string
	partition       int
}

func (a *API) offsetTarget(r *http.Request) (offsetTarget, *apiError) {
	id, ae := nameParam(r, "id", "consumer id")
	if ae != nil {
		return offsetTarget{}, ae
	}
	return a.partitionTarget(r, id)
}

// answer loads the target's committed offset and writes it.
func (a *API) answerOffset(w http.ResponseWriter, t offsetTarget) {
	off, ok, err := a.data.LoadOffset(t.consumer, t.topic, t.partition)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	out := apiclient.ConsumerOffsetResponse{ConsumerID: t.consumer, Topic: t.topic, Partition: t.partition}
	if ok {
		out.Offset = &off
	}
	writeJSON(w, http.StatusOK, out)
}

// handleConsumerOffset answers GET /api/consumers/{id}/offsets/{topic}/{p}:
// the committed offset, null when the consumer never committed there.
func (a *API) handleConsumerOffset(w http.ResponseWriter, r *http.Request) {
	t, ae := a.offsetTarget(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	a.answerOffset(w, t)
}

// handleCommitOffset answers PUT /api/consumers/{id}/offsets/{topic}/{p}
// with {"offset": N}: the phase-3 commit, durable and never backwards (a
// lower offset is a 409 carrying the committed and requested offsets), and
// never past the partition's high watermark (a 409 carrying the high
// watermark and the requested offset). A consumer id that is a group with
// members is a 409: its members commit (storeOffset).
func (a *API) handleCommitOffset(w http.ResponseWriter, r *http.Request) {
	if t, _, ok := a.storeOffset(w, r, a.data.CommitOffset); ok {
		a.answerOffset(w, t)
	}
}

// handleResetOffset answers POST
// /api/consumers/{id}/offsets/{topic}/{p}/reset with {"offset": N}: the
// operator's explicit reset, the one way to move a committed offset
// backwards. N may not be past the partition's high watermark: that is a
// 409 carrying the high watermark and the requested offset, as for a
// commit; so is a consumer id that is a group with members.
func (a *API) handleResetOffset(w http.ResponseWriter, r *http.Request) {
	t, offset, ok := a.storeOffset(w, r, a.data.ResetOffset)
	if ok {
		a.logger.Info("consumer offset reset", "consumer", t.consumer, "topic", t.topic, "partition", t.partition, "offset", offset)
		a.answerOffset(w, t)
	}
}

// storeOffset is a plain commit or reset (store): at the group
// coordinator, which alone knows whether the consumer id is a group with
// members (in cluster mode another node answers 421 not_coordinator,
// which apiclient follows), of a consumer id without members
// (unmanaged). ok is false when it wrote the error answer.
func (a *API) storeOffset(w http.ResponseWriter, r *http.Request, store func(consumer, topic string, partition int, offset uint64) error) (offsetTarget, uint64, bool) {
	if ae := a.notCoordinator(); ae != nil {
		writeAPIError(w, ae)
		return offsetTarget{}, 0, false
	}
	t, req, ae := a.offsetRequest(w, r)
	if ae == nil {
		ae = a.unmanaged(t.consumer)
	}
	if ae != nil {
		writeAPIError(w, ae)
		return t, 0, false
	}
	if err := store(t.consumer, t.topic, t.partition, req.Offset); err != nil {
		writeAPIError(w, classify(err))
		return t, 0, false
	}
	return t, req.Offset, true
}

// offsetRequest validates the target (names, topic, partition) before the
// body is read, then the body.
func (a *API) offsetRequest(w http.ResponseWriter, r *http.Request) (offsetTarget, apiclient.OffsetRequest, *apiError) {
	var req offsetBody
	t, ae := a.offsetTarget(r)
	if ae != nil {
		return t, apiclient.OffsetRequest{}, ae
	}
	if ae := a.readJSON(w, r, &req); ae != nil {
		return t, apiclient.OffsetRequest{}, ae
	}
	if req.Offset == nil {
		return t, apiclient.OffsetRequest{}, badRequest(`"offset" is required: a JSON integer from 0`)
	}
	return t, apiclient.OffsetRequest{Offset: *req.Offset}, nil
}

// offsetBody is apiclient.OffsetRequest as the server reads it: a missing
// or null offset is refused rather than read as 0.
type offsetBody struct {
	Offset *uint64 `json:"offset"`
}

// unmanaged refuses a commit or reset made without membership for a
// consumer id that is a group with members, of either protocol
// (group.Registry.Unmanaged): its members own its progress while they
// are there.
func (a *API) unmanaged(consumer string) *apiError {
	err := a.groups.Registry.Unmanaged(consumer)
	if err == nil {
		return nil
	}
	how := "PUT /api/groups/" + consumer + "/offsets/{topic}/{p} with its member id and epoch"
	if p, _ := a.groups.Registry.Protocol(consumer); p == group.Classic {
		how = "Kafka's OffsetCommit with its generation"
	}
	e := newAPIError(http.StatusConflict, CodeConflict,
		"consumer %q is a consumer group with members: only they commit its offsets (%s), until they have left", consumer, how)
	e.cause = err
	return e
}
