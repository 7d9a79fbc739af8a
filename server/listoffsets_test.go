package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/apiclient"
)

// produceSpaced writes n records to orders/0, each in its own millisecond,
// and returns their timestamps in milliseconds.
func produceSpaced(t *testing.T, r *running, n int) []int64 {
	t.Helper()
	var out []int64
	for i := range n {
		res, err := r.client.ProduceTo(t.Context(), "orders", 0, []apiclient.ProduceRecord{{Value: []byte{'r', byte('0' + i)}}})
		require.NoError(t, err)
		out = append(out, res.Records[0].TimestampMS)
		time.Sleep(2 * time.Millisecond)
	}
	return out
}

func getOffsets(t *testing.T, r *running, query string) (int, apiclient.PartitionOffsetsResponse, apiclient.ErrorBody) {
	t.Helper()
	resp, err := http.Get(r.base + "/api/topics/orders/partitions/0/offsets" + query)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out apiclient.PartitionOffsetsResponse
	var eb apiclient.ErrorResponse
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	} else {
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&eb))
	}
	return resp.StatusCode, out, eb.Error
}

// docs/phase-6-network-api.md § Offsets by time: earliest is the log
// start, latest (and no timestamp) the high watermark, a time after every
// record the high watermark with found false; a bad timestamp is a 400
// naming the parameter.
func TestHTTPPartitionOffsetsNamed(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	_, _, err := r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	ts := produceSpaced(t, r, 3)

	for _, tc := range []struct {
		query string
		want  apiclient.PartitionOffsetsResponse
	}{
		{"?timestamp=earliest", apiclient.PartitionOffsetsResponse{Topic: "orders", Offset: 0, Found: true, HighWatermark: 3}},
		{"?timestamp=latest", apiclient.PartitionOffsetsResponse{Topic: "orders", Offset: 3, Found: true, HighWatermark: 3}},
		{"", apiclient.PartitionOffsetsResponse{Topic: "orders", Offset: 3, Found: true, HighWatermark: 3}},
		{"?timestamp=" + strconv.FormatInt(ts[2]+1, 10), apiclient.PartitionOffsetsResponse{Topic: "orders",
			Timestamp: ptr(ts[2] + 1), Offset: 3, Found: false, HighWatermark: 3}},
	} {
		status, got, _ := getOffsets(t, r, tc.query)
		require.Equal(t, http.StatusOK, status, tc.query)
		require.Equal(t, tc.want, got, tc.query)
	}
	for _, bad := range []string{"-1", "yesterday", "9223372036855", "1.5", ""} {
		status, _, eb := getOffsets(t, r, "?timestamp="+bad)
		require.Equal(t, http.StatusBadRequest, status, bad)
		require.Equal(t, apiclient.CodeInvalidArgument, eb.Code, bad)
		require.Contains(t, eb.Message, "timestamp", bad)
	}
	status, _, eb := getOffsets(t, r, "?time=latest")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, eb.Message, "time")
	resp, err := http.Get(r.base + "/api/topics/orders/partitions/7/offsets")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// docs/phase-6-network-api.md § Offsets by time: a time is the first
// offset whose record's timestamp is at or after it (Kafka's ListOffsets,
// in milliseconds): before every record, offset 0; at a record's
// millisecond, that record.
func TestHTTPPartitionOffsetsByTime(t *testing.T) {
	r := startServer(t, t.TempDir(), 1)
	_, _, err := r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	ts := produceSpaced(t, r, 3)
	for _, tc := range []struct {
		at   int64
		want uint64
	}{{0, 0}, {ts[0] - 1, 0}, {ts[1], 1}, {ts[2], 2}} {
		status, got, _ := getOffsets(t, r, "?timestamp="+strconv.FormatInt(tc.at, 10))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, apiclient.PartitionOffsetsResponse{Topic: "orders", Timestamp: ptr(tc.at), Offset: tc.want, Found: true, HighWatermark: 3}, got, tc.at)
	}
}

// docs/phase-6-network-api.md § Requests and errors
// A fetch below the leader's log start answers 416 with the range still readable, through the Go client
// as an *apiclient.OffsetOutOfRangeError; at the log start the fetch
// serves, and its answer reports the log start.
func TestHTTPFetchBelowLogStart(t *testing.T) {
	dir := t.TempDir()
	r := startServer(t, dir, 1)
	_, _, err := r.client.CreateTopic(t.Context(), "orders", 1, 1)
	require.NoError(t, err)
	produceSpaced(t, r, 5)
	r.stop()

	l, err := segment.Open(cluster.ReplicaDir(dir, 1, "orders", 0), segment.Options{MustExist: true})
	require.NoError(t, err)
	_, err = l.AdvanceStart(3)
	require.NoError(t, err)
	require.NoError(t, l.Close())

	r = startServer(t, dir, 1)
	_, err = r.client.Fetch(t.Context(), "orders", 0, 1, 10)
	var oor *apiclient.OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, uint64(3), oor.LogStart)
	require.Equal(t, uint64(5), oor.HighWatermark)
	require.Equal(t, http.StatusRequestedRangeNotSatisfiable, oor.Err.Status)

	f, err := r.client.Fetch(t.Context(), "orders", 0, 3, 10)
	require.NoError(t, err)
	require.Equal(t, uint64(3), f.LogStart)
	require.Len(t, f.Records, 2)

	status, got, _ := getOffsets(t, r, "?timestamp=earliest")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, uint64(3), got.Offset)
	require.Equal(t, uint64(3), got.LogStart)
}
