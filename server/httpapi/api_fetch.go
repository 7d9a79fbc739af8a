package httpapi

import (
	"net/http"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
)

// handleFetch answers GET /api/topics/{topic}/partitions/{p}/records
// ?offset=N&max=M&max_bytes=B: up to M records (default DefaultFetchMax,
// capped at MaxFetchRecords) from offset N (default 0), read from the
// partition's leader and never past the high watermark reported in the
// same answer, and stopping once their values reach B bytes (default
// DefaultFetchMaxBytes, capped at PYSTREAM_FETCH_MAX_BYTES; the record
// that reaches it is included, so an answer holds at least one). An offset
// at or past the high watermark returns no records; one below the log
// start (records deleted by retention) is 416 offset_out_of_range, whose
// body carries log_start and high_watermark.
//
// The answer is written as it is read (streamFetch): a client that does
// not read it holds one chunk of records and a small buffer on the
// server, not the whole answer.
func (a *API) handleFetch(w http.ResponseWriter, r *http.Request) {
	name, ae := nameParam(r, "topic", "topic")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	p, ae := partitionParam(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	q, ae := a.fetchQuery(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	// The status first: its high watermark bounds the read, so the answer
	// never holds a record at or past the high watermark it reports, even
	// when writes move it on in between.
	st, err := a.data.Status(name, p)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	tail := fetchTail{hwm: st.HighWatermark}
	if ls, _, err := a.data.Bounds(name, p); err == nil {
		tail.logStart = min(ls, st.HighWatermark)
	} // else the read below reports the leader's failure, or the answer is empty
	for _, rep := range st.Replicas {
		if rep.BrokerID == st.Leader && rep.LogEnd != nil {
			tail.logEnd = *rep.LogEnd
		}
	}
	rd := &fetchReader{a: a, name: name, p: p, next: q.offset, budget: q.maxBytes}
	var first []log.Record
	if q.offset < st.HighWatermark {
		rd.left = int(min(uint64(q.max), st.HighWatermark-q.offset))
		// The first chunk before the status line, so that a failed read
		// is an error answer.
		if first, err = rd.chunk(); err != nil {
			writeAPIError(w, a.withUnavailable(classify(err)))
			return
		}
	} else if st.Replicas != nil && !leaderAvailable(st.Leader, st.Replicas) {
		// Nothing to read, but the answer would claim a log end it does
		// not know: say the leader is down, as a read would.
		_, err := a.data.ReadCommitted(name, p, q.offset, 1)
		if err != nil {
			writeAPIError(w, a.withUnavailable(classify(err)))
			return
		}
	}
	a.streamFetch(w, rd, first, tail)
}

// fetchTail is what a fetch answer says after its records.
type fetchTail struct {
	logStart, hwm, logEnd uint64
}

// streamFetch writes the answer, 200, whose records are first and then
// the chunks rd reads, through a buffer of fetchWriteBuffer bytes, encoded
// as json.Marshal encodes apiclient.FetchResponse. A read that fails after
// the status line ends the records early (logged): the answer is then
// shorter but whole and valid, and next_offset says where to go on; the
// next fetch reports the error.
func (a *API) streamFetch(w http.ResponseWriter, rd *fetchReader, first []log.Record, tail fetchTail) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(http.StatusOK)
	enc := newFetchEncoder(w)
	enc.begin()
	next := rd.next - uint64(len(first))
	recs := first
	for len(recs) > 0 && enc.err == nil {
		for _, rec := range recs {
			enc.record(rec)
		}
		next += uint64(len(recs))
		var err error
		if recs, err = rd.chunk(); err != nil {
			a.logger.Warn("fetch answer cut short by a failed read", "topic", rd.name, "partition", rd.p,
				"offset", next, "err", err, "request_id", w.Header().Get(RequestIDHeader))
			break
		}
	}
	enc.end(next, tail)
}

// fetchChunkBytes is about the value bytes one read of a fetch holds:
// with a client that does not read, the memory its answer pins.
const fetchChunkBytes = 256 << 10

// fetchReader reads a fetch's records in chunks of about fetchChunkBytes,
// sized from the records seen so far (the first chunk is one record, so a
// partition of records as large as the log allows never has many read at
// once), until left records are read or their values reach budget (the
// record that reaches it included).
type fetchReader struct {
	a      *API
	name   string
	p      int
	next   uint64 // offset of the next record to read
	left   int    // records still to read
	budget int    // value bytes still to read
	seen   int    // records read
	size   int    // value bytes read
}

// chunk reads the next chunk; none when the answer is complete.
func (f *fetchReader) chunk() ([]log.Record, error) {
	if f.left <= 0 || f.budget <= 0 {
		return nil, nil
	}
	n := 1
	if f.seen > 0 {
		avg := max(1, f.size/f.seen)
		n = max(1, min(fetchChunkBytes, f.budget)/avg)
	}
	n = min(n, f.left)
	recs, err := f.a.data.ReadCommitted(f.name, f.p, f.next, n)
	if err != nil {
		return nil, err
	}
	for i, rec := range recs {
		if f.budget <= 0 {
			recs = recs[:i]
			break
		}
		f.budget -= len(rec.Payload)
		f.size += len(rec.Payload)
	}
	f.seen += len(recs)
	f.next += uint64(len(recs))
	f.left -= len(recs)
	if len(recs) < n {
		f.left = 0 // the high watermark
	}
	return recs, nil
}

// fetchParams is a fetch's query.
type fetchParams struct {
	offset   uint64
	max      int
	maxBytes int
}

// fetchQuery reads offset, max and max_bytes.
func (a *API) fetchQuery(r *http.Request) (fetchParams, *apiError) {
	out := fetchParams{max: DefaultFetchMax, maxBytes: min(DefaultFetchMaxBytes, a.fetchBytes)}
	q, ae := queryParams(r, "offset", "max", "max_bytes")
	if ae != nil {
		return out, ae
	}
	if v, ok := q["offset"]; ok {
		n, ok := parseUint(v, ^uint64(0))
		if !ok {
			return out, badRequest("offset %s: a decimal integer from 0", quoted(v))
		}
		out.offset = n
	}
	if v, ok := q["max"]; ok {
		// Any size is a valid wish; the cap decides what is served.
		n, ok := parseUint(v, ^uint64(0))
		if !ok || n < 1 {
			return out, badRequest("max %s: a decimal integer from 1 (values above %d are served as %d)", quoted(v), MaxFetchRecords, MaxFetchRecords)
		}
		out.max = int(min(n, MaxFetchRecords))
	}
	if v, ok := q["max_bytes"]; ok {
		// Like max: any size from 1 is valid, the server's cap decides.
		n, ok := parseUint(v, ^uint64(0))
		if !ok || n < 1 {
			return out, badRequest("max_bytes %s: a decimal integer from 1 (values above %d, PYSTREAM_FETCH_MAX_BYTES, are served as %d)", quoted(v), a.fetchBytes, a.fetchBytes)
		}
		out.maxBytes = int(min(n, uint64(a.fetchBytes)))
	}
	return out, nil
}

func leaderAvailable(leader int, reps []cluster.ReplicaStatus) bool {
	for _, r := range reps {
		if r.BrokerID == leader {
			return r.Available
		}
	}
	return false
}
