package cli

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// TestCLIProduceDuplicateSequenceIsWritten: a request the partition
// refuses as duplicate_sequence was written before (longer ago than it
// keeps the offsets): produce counts its lines written, says nothing is
// wrong, and prints no offset for them — told "not acknowledged", a user
// would send them again and store them twice.
func TestCLIProduceDuplicateSequenceIsWritten(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/producers" {
			_, _ = w.Write([]byte(`{"producer_id":7,"epoch":0}`))
			return
		}
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"error":{"code":"duplicate_sequence","message":"orders/0: written before"}}`))
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c := apiclient.New(srv.URL)
	s, err := newIdempotentSender(ctx, c, "orders", 0)
	require.NoError(t, err)
	var out strings.Builder
	w := bufio.NewWriter(&out)
	a := &app{}
	require.NoError(t, a.produceIdempotent(ctx, w, s, "orders", 0, []apiclient.ProduceRecord{{Value: []byte("a")}}))
	require.NoError(t, w.Flush())
	require.Empty(t, out.String(), "no offset to print")
}
