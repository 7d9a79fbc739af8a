package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// docs/phase-6-network-api.md § Add partitions: PATCH /api/topics/{topic}
// grows a topic; the new partitions have leaders and take records, the
// same count again is 200 unchanged, fewer is 400 and an unknown topic
// 404, a body without partitions 400; a refusal grows nothing.
func TestE2EAddPartitions(t *testing.T) {
	ctx := t.Context()
	r := startServer(t, t.TempDir(), 3, manual)
	c := r.client
	_, _, err := c.CreateTopic(ctx, "orders", 1, 2)
	require.NoError(t, err)

	detail, err := c.AddPartitions(ctx, "orders", 3)
	require.NoError(t, err)
	require.Equal(t, 3, detail.PartitionCount)
	require.Len(t, detail.Partitions, 3)
	for _, p := range detail.Partitions {
		require.NotZero(t, p.Leader, "partition %d has a leader", p.Partition)
		require.Len(t, p.Assigned, 2)
	}
	var recs []apiclient.ProduceRecord
	for range 12 {
		recs = append(recs, apiclient.ProduceRecord{Value: []byte("v")})
	}
	res, err := c.Produce(ctx, "orders", recs)
	require.NoError(t, err)
	on := map[int]bool{}
	for _, rec := range res.Records {
		on[rec.Partition] = true
	}
	require.True(t, on[2], "round robin reaches the new partition: %v", on)
	got, err := c.Fetch(ctx, "orders", 2, 0, 100)
	require.NoError(t, err)
	require.NotEmpty(t, got.Records)

	again, err := c.AddPartitions(ctx, "orders", 3)
	require.NoError(t, err, "the same count again: unchanged")
	require.Equal(t, 3, again.PartitionCount)

	_, err = c.AddPartitions(ctx, "orders", 2)
	e := apitest.APIErr(t, err, http.StatusBadRequest, apiclient.CodeInvalidArgument)
	require.Contains(t, e.Message, "has 3 partition(s)")
	_, err = c.AddPartitions(ctx, "nope", 2)
	apitest.APIErr(t, err, http.StatusNotFound, apiclient.CodeNotFound)
	for _, body := range []string{`{}`, `{"partitions":0}`, `{"partitions":5000}`, `{"partitons":4}`} {
		resp := patchJSON(t, r, "/api/topics/orders", body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	}
	info, err := c.Topic(ctx, "orders")
	require.NoError(t, err)
	require.Equal(t, 3, info.PartitionCount, "refusals grow nothing")
}
