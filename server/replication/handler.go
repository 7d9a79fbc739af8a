package replication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/bounds"
)

// The paths of the internal API.
const (
	PathReplicate  = "/v1/replicate"
	PathRecords    = "/v1/records"
	PathDigests    = "/v1/digests"
	PathCut        = "/v1/cut"
	PathProduce    = "/v1/produce"
	PathOperate    = "/v1/operate"
	PathPropose    = "/v1/propose"
	PathHeartbeat  = "/v1/heartbeat"
	PathMembership = "/v1/membership"
	PathOffsetTime = "/v1/offset-for-time"
)

// bodyRecords is how many records of the largest payload one body of the
// internal API may hold: a batch a leader sends, a produce forwarded.
const bodyRecords = 64

// BodyLimit bounds every body of the internal API between brokers whose
// records carry payloads of at most maxPayload bytes (their
// cluster.BrokerOptions.MaxPayloadSize): room for bodyRecords frames of
// that size. A request over it is refused before it is read, an answer
// over it is an error.
func BodyLimit(maxPayload int) int64 {
	if maxPayload <= 0 {
		maxPayload = log.DefaultMaxPayloadSize
	}
	return bodyRecords * int64(log.FrameSize(maxPayload))
}

// MaxBodyBytes is the BodyLimit of brokers with the default payload limit
// (log.DefaultMaxPayloadSize).
var MaxBodyBytes = BodyLimit(log.DefaultMaxPayloadSize)

// bodiesInFlight is how many bodies of the largest size (BodyLimit) the
// internal port holds at once.
const bodiesInFlight = 4

// InflightLimit bounds the request bodies the internal API of brokers
// whose payloads are at most maxPayload bytes holds at once:
// bodiesInFlight times BodyLimit (256 MiB with the default payload
// limit). Each request reserves its Content-Length (BodyLimit when it
// announces none) before its body is read; one that does not fit is
// refused at once with ErrBusy (CodeUnavailable, 503: the sender retries),
// never read.
func InflightLimit(maxPayload int) int64 { return bodiesInFlight * BodyLimit(maxPayload) }

// Headers of a records answer.
const (
	HeaderLogStart      = "X-Pystream-Log-Start"
	HeaderLogEnd        = "X-Pystream-Log-End"
	HeaderHighWatermark = "X-Pystream-High-Watermark"
	// HeaderLastStable and HeaderAborted answer a stable read
	// (cluster.RecordsRequest.Stable): the last stable offset, and the
	// aborted transactions among the records (FormatAborted).
	HeaderLastStable = "X-Pystream-Last-Stable"
	HeaderAborted    = "X-Pystream-Aborted"
	// HeaderEpochRuns answers a read that asks for the replica's
	// leader-epoch history (cluster.RecordsRequest.Runs), in
	// cluster.FormatEpochRuns' form.
	HeaderEpochRuns = "X-Pystream-Epoch-Runs"
)

// Peer is what a node serves to the others: the replica transport's
// requests (cluster.Transport), answered by the node's cluster.Cluster for
// its own broker, and the metadata group's (proposals, heartbeats,
// membership). A method's error is sent as EncodeError makes it, and the
// caller gets it back as DecodeError rebuilds it.
type Peer interface {
	// MaxPayloadSize is the largest payload the node's broker takes:
	// BodyLimit of it bounds every request body.
	MaxPayloadSize() int
	Replicate(ctx context.Context, req cluster.ReplicateRequest) (cluster.ReplicateResponse, error)
	Records(ctx context.Context, req cluster.RecordsRequest) (cluster.RecordsResponse, error)
	Digests(ctx context.Context, req cluster.DigestsRequest) (cluster.DigestsResponse, error)
	Cut(ctx context.Context, req cluster.CutRequest) (cluster.CutResponse, error)
	Produce(ctx context.Context, req cluster.ProduceRequest) (cluster.ProduceResponse, error)
	OffsetForTime(ctx context.Context, req cluster.OffsetForTimeRequest) (cluster.OffsetForTimeResponse, error)
	Operate(ctx context.Context, req cluster.OperateRequest) (cluster.OperateResponse, error)
	// Propose applies an encoded cluster.MetaCommand through Raft and
	// returns the encoded result.
	Propose(ctx context.Context, cmd []byte) ([]byte, error)
	// Heartbeat takes a broker's report and answers with what the
	// controller knows.
	Heartbeat(ctx context.Context, hb Heartbeat) (Observation, error)
	// Membership adds or removes a voter of the metadata group.
	Membership(ctx context.Context, req MembershipRequest) error
}

// NewHandler serves p's internal API. Malformed requests are refused with
// CodeBadRequest and reach p never.
func NewHandler(p Peer, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{p: p, log: logger, maxBody: BodyLimit(p.MaxPayloadSize()),
		inflight: bounds.NewInflight(InflightLimit(p.MaxPayloadSize()))}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathReplicate, h.replicate)
	mux.HandleFunc("GET "+PathRecords, h.records)
	mux.HandleFunc("GET "+PathDigests, h.digests)
	mux.HandleFunc("POST "+PathCut, func(w http.ResponseWriter, r *http.Request) {
		jsonCall(h, w, r, "cut", func(ctx context.Context, req cluster.CutRequest) (cluster.CutResponse, error) {
			if err := ActsFor(ctx, req.Leader, "cut a replica as its leader"); err != nil {
				return cluster.CutResponse{}, err
			}
			return h.p.Cut(ctx, req)
		})
	})
	mux.HandleFunc("POST "+PathProduce, h.produce)
	mux.HandleFunc("POST "+PathOperate, func(w http.ResponseWriter, r *http.Request) { jsonCall(h, w, r, "operate", h.p.Operate) })
	mux.HandleFunc("POST "+PathPropose, h.propose)
	mux.HandleFunc("POST "+PathHeartbeat, func(w http.ResponseWriter, r *http.Request) {
		jsonCall(h, w, r, "heartbeat", func(ctx context.Context, hb Heartbeat) (Observation, error) {
			if err := ActsFor(ctx, hb.Node, "heartbeat"); err != nil {
				return Observation{}, err
			}
			return h.p.Heartbeat(ctx, hb)
		})
	})
	mux.HandleFunc("POST "+PathMembership, func(w http.ResponseWriter, r *http.Request) {
		jsonCall(h, w, r, "membership", func(ctx context.Context, req MembershipRequest) (struct{}, error) {
			return struct{}{}, h.p.Membership(ctx, req)
		})
	})
	mux.HandleFunc("GET "+PathOffsetTime, h.offsetForTime)
	return h.authenticate(h.admit(mux))
}

// authenticate refuses, before anything is read, a request without an
// authenticated peer on a port that requires one (Authenticated).
func (h *handler) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, err := Authenticated(r.Context()); err != nil {
			h.fail(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type handler struct {
	p        Peer
	log      *slog.Logger
	maxBody  int64
	inflight *bounds.Inflight
}

// admit reserves a request's body (its Content-Length, or the body limit
// when it announces none) from the in-flight budget for as long as it is
// handled, and refuses it with ErrBusy, unread, when the reservation does
// not fit. A body announced over the limit reserves nothing: body refuses
// it unread.
func (h *handler) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cost := r.ContentLength
		switch {
		case r.Body == nil || r.Body == http.NoBody || cost == 0 || cost > h.maxBody:
			next.ServeHTTP(w, r)
			return
		case cost < 0:
			cost = h.maxBody
		}
		if !h.inflight.Acquire(cost) {
			h.fail(w, fmt.Errorf("%w (%d bytes, budget %d)", ErrBusy, h.inflight.Reserved(), h.inflight.Limit()))
			return
		}
		defer h.inflight.Release(cost)
		next.ServeHTTP(w, r)
	})
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

// optInt is int for a parameter that may be absent (0 then).
func (q *query) optInt(name string) int {
	if q.r.URL.Query().Get(name) == "" {
		return 0
	}
	return q.int(name)
}

func (q *query) flag(name string) bool { return q.r.URL.Query().Get(name) == "1" }

// runs reads an optional list of leader-epoch runs
// (cluster.FormatEpochRuns' form).
func (q *query) runs(name string) []cluster.EpochRun {
	runs, err := cluster.ParseEpochRuns(q.r.URL.Query().Get(name))
	if err != nil && q.err == nil {
		q.err = Errorf(CodeBadRequest, "%s: %v", name, err)
	}
	return runs
}

func (h *handler) body(r *http.Request) ([]byte, error) {
	if r.ContentLength > h.maxBody {
		return nil, Errorf(CodeBadRequest, "body of %d bytes: at most %d", r.ContentLength, h.maxBody)
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, h.maxBody))
	if err != nil {
		return nil, Errorf(CodeBadRequest, "body: %v", err)
	}
	return b, nil
}

func (h *handler) fail(w http.ResponseWriter, err error) {
	e := EncodeError(err)
	if e.Code == CodeUnavailable && e.Reason == "" {
		h.log.Warn("internal request failed", "err", err)
	}
	status := http.StatusConflict
	switch e.Code {
	case CodeBadRequest:
		status = http.StatusBadRequest
	case CodeUnavailable, CodeEpochAhead, CodeLeaderUnavailable:
		status = http.StatusServiceUnavailable
	case CodeNotLeader:
		status = http.StatusMisdirectedRequest
	case CodeForbidden:
		status = http.StatusForbidden
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
	req := cluster.ReplicateRequest{Topic: q.str("topic"), Partition: q.int("partition"), Epoch: q.uint("epoch"),
		Leader: q.int("leader"), HighWatermark: q.uint("hw"), LogStart: q.uint("log_start"),
		LogStartOnly: q.flag("log_start_only"), Reset: q.flag("reset"), Reopen: q.flag("reopen"), Runs: q.runs("runs")}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	b, err := h.body(r)
	if err == nil {
		req.Records, err = decodeFrames(b)
	}
	if err == nil && !cluster.Consecutive(req.Records) {
		err = Errorf(CodeBadRequest, "records are not consecutive")
	}
	if err != nil {
		h.fail(w, badRequest(err))
		return
	}
	if err := ActsFor(r.Context(), req.Leader, "replicate as the leader"); err != nil {
		h.fail(w, err)
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
	req := cluster.RecordsRequest{Topic: q.str("topic"), Partition: q.int("partition"), From: q.uint("from"),
		MaxBytes: q.int("max_bytes"), MaxRecords: q.optInt("max_records"), Committed: q.flag("committed"), Stable: q.flag("stable"),
		Runs: q.flag("runs")}
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
	if req.Stable {
		w.Header().Set(HeaderLastStable, strconv.FormatUint(res.LastStable, 10))
		w.Header().Set(HeaderAborted, FormatAborted(res.Aborted))
	}
	if req.Runs {
		w.Header().Set(HeaderEpochRuns, cluster.FormatEpochRuns(res.Runs))
	}
	_, _ = w.Write(encodeFrames(res.Records)) // a cut body fails the reader's decode
}

func (h *handler) digests(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := cluster.DigestsRequest{Topic: q.str("topic"), Partition: q.int("partition"), From: q.uint("from"), To: q.uint("to"),
		Chunk: q.int("chunk")}
	if q.err == nil && (req.Chunk < 1 || req.To < req.From || chunks(req.To-req.From, req.Chunk) > maxDigests) {
		q.err = Errorf(CodeBadRequest, "digests of [%d, %d) in chunks of %d: at most %d chunks of at least one record", req.From, req.To, req.Chunk, maxDigests)
	}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	res, err := h.p.Digests(r.Context(), req)
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// maxDigests bounds the chunks of one digests request.
const maxDigests = 4096

// chunks is how many chunks of size records n records make, the last one
// possibly shorter.
func chunks(n uint64, size int) uint64 {
	c := n / uint64(size)
	if n%uint64(size) != 0 {
		c++
	}
	return c
}

func (h *handler) produce(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := cluster.ProduceRequest{Topic: q.str("topic"), Partition: q.int("partition")}
	if q.err != nil {
		h.fail(w, q.err)
		return
	}
	b, err := h.body(r)
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
	b, err := h.body(r)
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

// jsonCall decodes a JSON body into an In, hands it to call and answers
// with the Out or the refusal.
func jsonCall[In, Out any](h *handler, w http.ResponseWriter, r *http.Request, what string, call func(context.Context, In) (Out, error)) {
	b, err := h.body(r)
	var in In
	if err == nil {
		if jerr := json.Unmarshal(b, &in); jerr != nil {
			err = Errorf(CodeBadRequest, "%s: %v", what, jerr)
		}
	}
	var out Out
	if err == nil {
		out, err = call(r.Context(), in)
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) offsetForTime(w http.ResponseWriter, r *http.Request) {
	q := &query{r: r}
	req := cluster.OffsetForTimeRequest{Topic: q.str("topic"), Partition: q.int("partition")}
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
