package replication

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/pystream/pystream/log"
)

// The paths of the internal API.
const (
	PathReplicate  = "/v1/replicate"
	PathRecords    = "/v1/records"
	PathProduce    = "/v1/produce"
	PathPropose    = "/v1/propose"
	PathHeartbeat  = "/v1/heartbeat"
	PathCatchUp    = "/v1/catch-up"
	PathMembership = "/v1/membership"
	PathOffsetTime = "/v1/offset-for-time"
)

// MaxBodyBytes bounds every request body: a batch of records (each at most
// log.DefaultMaxPayloadSize by default) or a control message.
const MaxBodyBytes = 64 << 20

// Headers of a records answer.
const (
	HeaderLogStart      = "X-Pystream-Log-Start"
	HeaderLogEnd        = "X-Pystream-Log-End"
	HeaderHighWatermark = "X-Pystream-High-Watermark"
)

// Peer is what a node serves to the others. Its methods return an *Error
// for a refusal the caller acts on; any other error is sent as
// CodeUnavailable with its text.
type Peer interface {
	Replicate(ctx context.Context, req ReplicateRequest) (ReplicateResponse, error)
	Records(ctx context.Context, req RecordsRequest) (RecordsResponse, error)
	Produce(ctx context.Context, req ProduceRequest) (ProduceResponse, error)
	// Propose applies an encoded cluster.MetaCommand through Raft and
	// returns the encoded cluster.MetaResult.
	Propose(ctx context.Context, cmd []byte) ([]byte, error)
	Heartbeat(ctx context.Context, hb Heartbeat) error
	CatchUp(ctx context.Context, topicName string, partition, follower int) (CatchUpResponse, error)
	// Membership adds or removes a voter of the metadata group.
	Membership(ctx context.Context, req MembershipRequest) error
	// OffsetForTime searches a partition this node leads by time.
	OffsetForTime(ctx context.Context, req OffsetForTimeRequest) (OffsetForTimeResponse, error)
}

// NewHandler serves p's internal API. Malformed requests are refused with
// CodeBadRequest and reach p never.
func NewHandler(p Peer, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{p: p, log: logger}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathReplicate, h.replicate)
	mux.HandleFunc("GET "+PathRecords, h.records)
	mux.HandleFunc("POST "+PathProduce, h.produce)
	mux.HandleFunc("POST "+PathPropose, h.propose)
	mux.HandleFunc("POST "+PathHeartbeat, h.heartbeat)
	mux.HandleFunc("POST "+PathCatchUp, h.catchUp)
	mux.HandleFunc("POST "+PathMembership, h.membership)
	mux.HandleFunc("GET "+PathOffsetTime, h.offsetForTime)
	return mux
}

type handler struct {
	p   Peer
	log *slog.Logger
}

// query reads the named parameters of r: strings as they are, numbers
// parsed; the first bad one is a CodeBadRequest.
type query struct {
	r   *http.Request
	err error
}

func (q *query) str(name string) string {
	v := q.r.URL.Query().Get(name)
	if v == "" && q.err == nil {
		q.err = Errorf(CodeBadRequest, "%s is missing", name)
	}
	return v
}

func (q *query) uint(name string) uint64 {
	v := q.str(name)
	if q.err != nil {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		q.err = Errorf(CodeBadRequest, "%s %q is not a whole number", name, v)
	}
	return n
}

func (q *query) int(name string) int {
	n := q.uint(name)
	if n > math.MaxInt32 && q.err == nil {
		q.err = Errorf(CodeBadRequest, "%s %d is too large", name, n)
	}
	return int(n)
}

func (q *query) flag(name string) bool { return q.r.URL.Query().Get(name) == "1" }

func body(r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, Errorf(CodeBadRequest, "body of %d bytes: at most %d", r.ContentLength, MaxBodyBytes)
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, MaxBodyBytes))
	if err != nil {
		return nil, Errorf(CodeBadRequest, "body: %v", err)
	}
	return b, nil
}

func (h *handler) fail(w http.ResponseWriter, err error) {
	var e *Error
	if !errors.As(err, &e) {
		h.log.Warn("internal request failed", "err", err)
		e = Errorf(CodeUnavailable, "%v", err)
	}
	status := http.StatusConflict
	switch e.Code {
	case CodeBadRequest:
		status = http.StatusBadRequest
	case CodeUnavailable, CodeEpochAhead:
		status = http.StatusServiceUnavailable
	case CodeNotLeader:
		status = http.StatusMisdirectedRequest
	case CodeOffsetOutOfRange:
		status = http.StatusRequestedRangeNotSatisfiable
	}
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the peer sees a cut answer as an error
}

func (h *handler) replicate(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := ReplicateRequest{Topic: q.str("topic"), Partition: q.int("partition"), Epoch: q.uint("epoch"),
		Leader: q.int("leader"), HighWatermark: q.uint("hw"), LogStart: q.uint("log_start")}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	b, err := body(r)
	if err == nil {
		req.Records, err = decodeFrames(b)
	}
	if err == nil && !Consecutive(req.Records) {
		err = Errorf(CodeBadRequest, "records are not consecutive")
	}
	if err != nil {
		h.fail(w, badRequest(err))
		return
	}
	res, err := h.p.Replicate(r.Context(), req)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func badRequest(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return Errorf(CodeBadRequest, "%v", err)
}

func (h *handler) records(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := RecordsRequest{Topic: q.str("topic"), Partition: q.int("partition"), From: q.uint("from"),
		MaxBytes: q.int("max_bytes"), Committed: q.flag("committed")}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	res, err := h.p.Records(r.Context(), req)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(HeaderLogStart, strconv.FormatUint(res.LogStart, 10))
	w.Header().Set(HeaderLogEnd, strconv.FormatUint(res.LogEnd, 10))
	w.Header().Set(HeaderHighWatermark, strconv.FormatUint(res.HighWatermark, 10))
	_, _ = w.Write(encodeFrames(res.Records)) // a cut body fails the reader's decode
}

func (h *handler) produce(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := ProduceRequest{Topic: q.str("topic"), Partition: q.int("partition")}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	b, err := body(r)
	var recs []log.Record
	if err == nil {
		recs, err = decodeFrames(b)
	}
	if err != nil {
		h.fail(w, badRequest(err))
		return
	}
	for _, rec := range recs {
		req.Payloads = append(req.Payloads, rec.Payload)
	}
	res, err := h.p.Produce(r.Context(), req)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) propose(w http.ResponseWriter, r *http.Request) {
	b, err := body(r)
	if err != nil {
		h.fail(w, err)
		return
	}
	res, err := h.p.Propose(r.Context(), b)
	if err != nil {
		h.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(res)
}

func (h *handler) heartbeat(w http.ResponseWriter, r *http.Request) {
	jsonCall(h, w, r, "heartbeat", h.p.Heartbeat)
}

// jsonCall decodes a JSON body into a T, hands it to call and answers {}
// or the refusal.
func jsonCall[T any](h *handler, w http.ResponseWriter, r *http.Request, what string, call func(context.Context, T) error) {
	b, err := body(r)
	var in T
	if err == nil {
		if jerr := json.Unmarshal(b, &in); jerr != nil {
			err = Errorf(CodeBadRequest, "%s: %v", what, jerr)
		}
	}
	if err == nil {
		err = call(r.Context(), in)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

func (h *handler) catchUp(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	name, p, f := q.str("topic"), q.int("partition"), q.int("follower")
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	res, err := h.p.CatchUp(r.Context(), name, p, f)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (h *handler) membership(w http.ResponseWriter, r *http.Request) {
	jsonCall(h, w, r, "membership", h.p.Membership)
}

func (h *handler) offsetForTime(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := OffsetForTimeRequest{Topic: q.str("topic"), Partition: q.int("partition")}
	ts := q.uint("ts")
	if ts > math.MaxInt64 && q.err == nil {
		q.err = Errorf(CodeBadRequest, "ts %d is too large", ts)
	}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	req.Timestamp = int64(ts)
	res, err := h.p.OffsetForTime(r.Context(), req)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
