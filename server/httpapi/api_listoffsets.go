package httpapi

import (
	"math"
	"net/http"

	"github.com/pystream/pystream/server/apiclient"
)

// maxOffsetsTimestamp is the largest time in milliseconds that
// ?timestamp= accepts: the last one whose nanoseconds fit an int64.
const maxOffsetsTimestamp = math.MaxInt64 / 1_000_000

// handlePartitionOffsets answers GET
// /api/topics/{topic}/partitions/{p}/offsets?timestamp=T, Kafka's
// ListOffsets. T is earliest (the log start), latest (the high watermark)
// or a time in milliseconds since the epoch, as Kafka's ListOffsets takes
// it (latest when T is absent, as kafka-get-offsets does): the first offset whose record's timestamp is at or after T, found on
// the leader (cluster.Cluster.OffsetForTime); when no record below the high
// watermark is that late, the high watermark with "found": false. The
// answer carries the partition's log start and high watermark too.
func (a *API) handlePartitionOffsets(w http.ResponseWriter, r *http.Request) {
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
	q, ae := queryParams(r, "timestamp")
	if ae != nil {
		writeAPIError(w, ae)
		return
	}
	at, ok := q["timestamp"]
	if !ok {
		at = apiclient.OffsetsLatest // kafka-get-offsets' default
	}
	var ms int64
	if at != apiclient.OffsetsEarliest && at != apiclient.OffsetsLatest {
		n, ok := parseUint(at, maxOffsetsTimestamp)
		if !ok {
			writeAPIError(w, badRequest("timestamp %s: earliest, latest or milliseconds since the epoch, a decimal integer from 0 to %d", quoted(at), uint64(maxOffsetsTimestamp)))
			return
		}
		ms = int64(n)
	}
	// The search first, then the bounds: the high watermark only grows,
	// so an offset found lies below the one reported; retention may have
	// raised the log start past it meanwhile, and the answer is kept
	// within the range it reports.
	var off uint64
	found := true
	if at != apiclient.OffsetsEarliest && at != apiclient.OffsetsLatest {
		var err error
		if off, found, err = a.data.OffsetForTime(name, p, ms*1_000_000); err != nil {
			writeAPIError(w, a.withUnavailable(classify(err)))
			return
		}
	}
	logStart, hw, err := a.data.Bounds(name, p)
	if err != nil {
		writeAPIError(w, a.withUnavailable(classify(err)))
		return
	}
	out := apiclient.PartitionOffsetsResponse{Topic: name, Partition: p, Found: found, LogStart: logStart, HighWatermark: hw}
	switch {
	case at == apiclient.OffsetsEarliest:
		out.Offset = logStart
	case at == apiclient.OffsetsLatest:
		out.Offset = hw
	case !found:
		out.Timestamp, out.Offset = &ms, hw
	default:
		out.Timestamp, out.Offset = &ms, min(max(off, logStart), hw)
	}
	writeJSON(w, http.StatusOK, out)
}
