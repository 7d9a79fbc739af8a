package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/topic"
)

// losingProxy forwards every request to the server at upstream; the
// first time it sees a produce request's body, it drops the connection
// after the server answered, instead of relaying the answer: the records
// were written, the client never learns where. The same body again is
// answered.
func losingProxy(t *testing.T, upstream string) (url string, produces, lost *atomic.Int32) {
	t.Helper()
	produces, lost = new(atomic.Int32), new(atomic.Int32)
	var mu sync.Mutex
	seen := map[string]bool{}
	firstTime := func(body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		k := string(body)
		if seen[k] {
			return false
		}
		seen[k] = true
		return true
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/records") && produces.Add(1) > 0 && firstTime(body) {
			lost.Add(1)
			conn, _, err := http.NewResponseController(w).Hijack()
			require.NoError(t, err)
			_ = conn.Close()
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, produces, lost
}

// docs/cli.md, produce: produce is idempotent by default. Every produce
// request's first answer is lost after the server wrote it; produce
// sends it again with the same sequence numbers, and each line is stored
// exactly once, routed by its key as the server routes (topic.Router),
// its placement printed once. With --idempotent=false the first lost
// answer stops produce with the batch's fate unknown.
func TestCLIProduceIdempotentStoresEachLineOnce(t *testing.T) {
	url := startServer(t, 2)
	ok(t, url, "", "topic", "create", "orders", "-p", "3", "-r", "2")
	proxy, produces, lost := losingProxy(t, url)

	var in strings.Builder
	var want []string
	for i := range 40 {
		line := fmt.Sprintf("user-%d:event-%d", i%7, i)
		if i%5 == 0 {
			line = fmt.Sprintf("keyless-%d", i) // no delimiter: no key, round robin
		}
		in.WriteString(line + "\n")
		want = append(want, line)
	}
	r := ok(t, proxy, in.String(), "produce", "orders", "-K", ":")
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), len(want), "one placement per line")
	require.Positive(t, lost.Load(), "answers were lost")
	require.Equal(t, 2*lost.Load(), produces.Load(), "each request's answer lost once, and the request sent again")

	// Every line once, keyed lines on their key's partition.
	c := ok(t, url, "", "consume", "orders", "-e", "-f", "%p|%k|%v\n")
	var got []string
	for _, row := range strings.Split(strings.TrimSpace(c.stdout), "\n") {
		parts := strings.SplitN(row, "|", 3)
		require.Len(t, parts, 3, row)
		line := parts[2]
		if parts[1] != "" {
			line = parts[1] + ":" + parts[2]
			require.Equal(t, fmt.Sprint(topic.PartitionForKey([]byte(parts[1]), 3)), parts[0], "key %s", parts[1])
		}
		got = append(got, line)
	}
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got, "each line stored exactly once")

	// Plain requests are not retried: a lost answer stops produce.
	produces.Store(0)
	r = pys(t, proxy, "plain\n", "produce", "orders", "--idempotent=false")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "whether line 1 was written is unknown")
}
