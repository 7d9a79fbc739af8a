package apiclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// docs/phase-6-network-api.md § Requests and errors
// A fetch below the log start is a 416 whose body carries the readable
// range: it decodes to an *OffsetOutOfRangeError with the fetch's
// position, which still unwraps to the answer's *Error.
func TestAPIClientOffsetOutOfRange(t *testing.T) {
	c, _ := fakeServer(t, 416, `{"error":{"code":"offset_out_of_range","message":"orders/0: offset 2 is below the log start 5",
		"request_id":"r1","log_start":5,"high_watermark":9}}`)
	_, err := c.Fetch(context.Background(), "orders", 0, 2, 10)
	var oor *apiclient.OffsetOutOfRangeError
	require.ErrorAs(t, err, &oor)
	require.Equal(t, uint64(5), oor.LogStart)
	require.Equal(t, uint64(9), oor.HighWatermark)
	require.Equal(t, "orders", oor.Topic)
	require.Equal(t, uint64(2), oor.Offset)
	require.ErrorIs(t, err, apiclient.ErrOffsetOutOfRange)
	var ae *apiclient.Error
	require.True(t, errors.As(err, &ae))
	require.Equal(t, 416, ae.Status)
	require.Equal(t, "r1", ae.RequestID)
	require.Equal(t, u64(5), ae.LogStart)
}

// Offsets by time: the request names the time as the server reads it,
// and the answer decodes.
func TestAPIClientPartitionOffsets(t *testing.T) {
	ctx := context.Background()
	c, got := fakeServer(t, 200, `{"topic":"orders","partition":1,"timestamp":1733131200123,"offset":4,"found":true,"log_start":2,"high_watermark":9}`)
	res, err := c.PartitionOffsetsForTime(ctx, "orders", 1, time.UnixMilli(1733131200123))
	require.NoError(t, err)
	require.Equal(t, "/api/topics/orders/partitions/1/offsets", got.Path)
	require.Equal(t, "timestamp=1733131200123", got.RawQuery)
	want := apiclient.PartitionOffsetsResponse{Topic: "orders", Partition: 1, Timestamp: ptr(int64(1733131200123)), Offset: 4, Found: true, LogStart: 2, HighWatermark: 9}
	require.Equal(t, want, *res)

	c, got = fakeServer(t, 200, `{"topic":"orders","partition":0,"offset":2,"found":true,"log_start":2,"high_watermark":9}`)
	res, err = c.PartitionOffsets(ctx, "orders", 0, apiclient.OffsetsEarliest)
	require.NoError(t, err)
	require.Equal(t, "timestamp=earliest", got.RawQuery)
	require.Nil(t, res.Timestamp)
	require.Equal(t, uint64(2), res.Offset)
}

func ptr[T any](v T) *T { return &v }
