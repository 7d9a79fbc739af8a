package server

import (
	"net/http"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/apiclient"
)

// handleFetch answers GET /api/topics/{topic}/partitions/{p}/records
// ?offset=N&max=M: up to M records (default DefaultFetchMax, capped at
// MaxFetchRecords) from offset N (default 0), read from the partition's
// leader and never past the high watermark reported in the same answer,
// and about MaxFetchBytes of values at most. An offset at or past the high
// watermark returns no records.
func (s *Server) handleFetch(w http.ResponseWriter, r *http.Request) {
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
	offset, max, ae := fetchQuery(r)
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	// The status first: its high watermark bounds the read, so the answer
	// never holds a record at or past the high watermark it reports, even
	// when writes move it on in between.
	st, err := s.cluster.Status(name, p)
	if err != nil {
		writeAPIError(w, classify(err))
		return
	}
	out := apiclient.FetchResponse{Records: []apiclient.FetchedRecord{}, NextOffset: offset, HighWatermark: st.HighWatermark}
	for _, rep := range st.Replicas {
		if rep.BrokerID == st.Leader && rep.LogEnd != nil {
			out.LogEnd = *rep.LogEnd
		}
	}
	if offset < st.HighWatermark {
		n := int(min(uint64(max), st.HighWatermark-offset))
		recs, err := s.readBounded(name, p, offset, n)
		if err != nil {
			writeAPIError(w, s.withUnavailable(classify(err)))
			return
		}
		out.Records = make([]apiclient.FetchedRecord, len(recs))
		for i, rec := range recs {
			out.Records[i] = apiclient.FetchedRecord{Offset: rec.Offset, Timestamp: rec.Timestamp, TimestampMS: unixMillis(rec.Timestamp), Value: nonNilBytes(rec.Payload)}
		}
		out.NextOffset = offset + uint64(len(recs))
	} else if st.Replicas != nil && !leaderAvailable(st.Leader, st.Replicas) {
		// Nothing to read, but the answer would claim a log end it does
		// not know: say the leader is down, as a read would.
		_, err := s.cluster.ReadCommitted(name, p, offset, 1)
		if err != nil {
			writeAPIError(w, s.withUnavailable(classify(err)))
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// fetchFirstChunk is how many records a fetch reads before it knows how
// large the partition's records are.
const fetchFirstChunk = 8

// readBounded reads up to n committed records from offset, and stops once
// their values reach s.fetchBytes (the record that reaches it included).
// It reads in chunks sized from the records seen so far, so that the
// memory one fetch holds stays near the budget even when every record is
// as large as the log allows.
func (s *Server) readBounded(name string, p int, offset uint64, n int) ([]log.Record, error) {
	var out []log.Record
	size, chunk := 0, min(n, fetchFirstChunk)
	for len(out) < n && size < s.fetchBytes {
		recs, err := s.cluster.ReadCommitted(name, p, offset+uint64(len(out)), chunk)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			if size >= s.fetchBytes {
				break
			}
			out = append(out, rec)
			size += len(rec.Payload)
		}
		if len(recs) < chunk {
			break // the high watermark
		}
		avg := max(1, size/len(out))
		chunk = max(1, min((s.fetchBytes-size)/avg+1, n-len(out)))
	}
	return out, nil
}

// fetchQuery reads offset and max.
func fetchQuery(r *http.Request) (offset uint64, max int, ae *apiError) {
	q, ae := queryParams(r, "offset", "max")
	if ae != nil {
		return 0, 0, ae
	}
	max = DefaultFetchMax
	if v, ok := q["offset"]; ok {
		n, ok := parseUint(v, ^uint64(0))
		if !ok {
			return 0, 0, badRequest("offset %s: a decimal integer from 0", quoted(v))
		}
		offset = n
	}
	if v, ok := q["max"]; ok {
		// Any size is a valid wish; the cap decides what is served.
		n, ok := parseUint(v, ^uint64(0))
		if !ok || n < 1 {
			return 0, 0, badRequest("max %s: a decimal integer from 1 (values above %d are served as %d)", quoted(v), MaxFetchRecords, MaxFetchRecords)
		}
		max = int(min(n, MaxFetchRecords))
	}
	return offset, max, nil
}

func leaderAvailable(leader int, reps []cluster.ReplicaStatus) bool {
	for _, r := range reps {
		if r.BrokerID == leader {
			return r.Available
		}
	}
	return false
}

// nonNilBytes makes an empty value encode as "" rather than null.
func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
