package explorer

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// testToken is the header the tests' Principal reads the token from.
const testToken = "X-Test-Token"

// openStream opens an events stream of token ("" for none) on base and
// returns the answer; a 200's body stays open, the stream held, until the
// test ends.
func openStream(t *testing.T, base, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/events", nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set(testToken, token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// requireRefused asserts resp is the refusal of a stream for want of a
// slot: 503 unavailable, Retry-After, in the API's error format, the
// message wrapping want's.
func requireRefused(t *testing.T, resp *http.Response, want error) {
	t.Helper()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.Equal(t, "5", resp.Header.Get("Retry-After"))
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var e apiclient.ErrorResponse
	require.NoError(t, json.Unmarshal(body, &e), "%s", body)
	require.Equal(t, apiclient.CodeUnavailable, e.Error.Code)
	require.Contains(t, e.Error.Message, want.Error())
}

// TestEventsPerPrincipalCap: docs/security.md § Bounds — the streams are
// bounded per principal as well as in total: one token opens streams up
// to Config.MaxPerPrincipal, the next is refused with 503 and
// Retry-After, while another token is still served; the total
// (Config.MaxClients) still holds across tokens; a stream that ends gives
// its principal's slot back.
func TestEventsPerPrincipalCap(t *testing.T) {
	src := &fakeSource{}
	src.setBrokers(1)
	e, _, base := serve(t, src, Config{MaxClients: 5, MaxPerPrincipal: 2,
		Principal: func(r *http.Request) string { return r.Header.Get(testToken) }})

	var held []*http.Response
	for range 2 {
		resp := openStream(t, base, "alice")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		held = append(held, resp)
	}
	requireRefused(t, openStream(t, base, "alice"), ErrTooManyForPrincipal)
	require.Equal(t, http.StatusOK, openStream(t, base, "bob").StatusCode, "another token is served")
	require.Equal(t, http.StatusOK, openStream(t, base, "carol").StatusCode)
	require.Equal(t, http.StatusOK, openStream(t, base, "carol").StatusCode)
	require.Equal(t, 5, e.Clients())
	requireRefused(t, openStream(t, base, "dave"), ErrTooManyClients)

	held[0].Body.Close()
	require.Eventually(t, func() bool { return e.Clients() == 4 }, 5*time.Second, time.Millisecond)
	require.Equal(t, http.StatusOK, openStream(t, base, "alice").StatusCode, "the slot came back")
}

// TestEventsPerAddressWithoutToken: a request without a token (no auth
// file) is counted by its client's IP address, whatever its port: the
// loopback client holds Config.MaxPerPrincipal streams, another address
// is still served, and an address never shares a count with a token
// named like it.
func TestEventsPerAddressWithoutToken(t *testing.T) {
	src := &fakeSource{}
	src.setBrokers(1)
	e, _, base := serve(t, src, Config{MaxPerPrincipal: 2,
		Principal: func(r *http.Request) string { return r.Header.Get(testToken) }})
	for range 2 {
		require.Equal(t, http.StatusOK, openStream(t, base, "").StatusCode)
	}
	requireRefused(t, openStream(t, base, ""), ErrTooManyForPrincipal)
	require.Equal(t, http.StatusOK, openStream(t, base, "127.0.0.1").StatusCode, "a token is not an address")

	from := func(addr string) error {
		r := httptest.NewRequest(http.MethodGet, "/api/events", nil)
		r.RemoteAddr = addr
		_, err := e.Open(r)
		return err
	}
	require.NoError(t, from("192.0.2.7:40000"))
	require.NoError(t, from("192.0.2.7:40001"))
	require.True(t, errors.Is(from("192.0.2.7:40002"), ErrTooManyForPrincipal), "the port does not make another client")
	require.NoError(t, from("[2001:db8::1]:40000"))
}

// TestEventsPerPrincipalDefault: without MaxPerPrincipal, a principal may
// hold a quarter of the streams.
func TestEventsPerPrincipalDefault(t *testing.T) {
	e, err := New(Config{Source: &fakeSource{}})
	require.NoError(t, err)
	defer e.Close()
	require.Equal(t, DefaultMaxPerPrincipal, e.cfg.MaxPerPrincipal)
	require.Equal(t, DefaultMaxClients/4, DefaultMaxPerPrincipal)
	e2, err := New(Config{Source: &fakeSource{}, MaxClients: 2})
	require.NoError(t, err)
	defer e2.Close()
	require.Equal(t, 1, e2.cfg.MaxPerPrincipal)
}
