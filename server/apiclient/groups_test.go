package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A group request that reaches a node which does not coordinate groups
// (421 not_coordinator) is sent again, once, to the coordinator it names;
// the body and the token go with it.
func TestClientGroupFollowsCoordinator(t *testing.T) {
	var got GroupHeartbeatRequest
	var auth string
	coordinator := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/api/groups/billing/heartbeat", r.URL.Path)
		auth = r.Header.Get("Authorization")
		require.NoError(t, json.NewDecoder(r.Body).Decode(&got))
		_ = json.NewEncoder(w).Encode(GroupHeartbeatResponse{MemberID: "m1", MemberEpoch: 1, HeartbeatIntervalMS: 5000})
	}))
	defer coordinator.Close()
	follower := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusMisdirectedRequest)
		_ = json.NewEncoder(w).Encode(ErrorResponse{Error: ErrorBody{Code: CodeNotCoordinator, Message: "node 2 coordinates groups",
			Coordinator: strings.TrimPrefix(coordinator.URL, "http://")}})
	}))
	defer follower.Close()

	c := New(follower.URL, WithToken("secret"))
	res, err := c.GroupHeartbeat(context.Background(), "billing", GroupHeartbeatRequest{MemberEpoch: 0, Topics: []string{"orders"}})
	require.NoError(t, err)
	require.Equal(t, "m1", res.MemberID)
	require.Equal(t, []string{"orders"}, got.Topics)
	require.Equal(t, "Bearer secret", auth)
}

// A not_coordinator answer that names no usable address is returned as
// it is; so is a second one (no redirect loops).
func TestClientGroupNotCoordinatorNotFollowedTwice(t *testing.T) {
	var calls int
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusMisdirectedRequest)
		_ = json.NewEncoder(w).Encode(ErrorResponse{Error: ErrorBody{Code: CodeNotCoordinator, Message: "elsewhere",
			Coordinator: strings.TrimPrefix(srv.URL, "http://")}})
	}))
	defer srv.Close()
	_, err := New(srv.URL).Groups(context.Background())
	require.ErrorIs(t, err, ErrNotCoordinator)
	require.Equal(t, 2, calls)
	var e *Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, http.StatusMisdirectedRequest, e.Status)

	for _, bad := range []string{"", "host", "evil.example/path:80", "user@host:80"} {
		c := New(srv.URL)
		_, ok := c.coordinatorBase(bad)
		require.False(t, ok, bad)
	}
}

// The member codes are conflicts too: a caller that only knows ErrConflict
// still branches right.
func TestClientGroupMemberCodesAreConflicts(t *testing.T) {
	for code, want := range map[string]error{CodeFencedMemberEpoch: ErrFencedMemberEpoch, CodeUnknownMemberID: ErrUnknownMemberID} {
		e := &Error{Status: http.StatusConflict, Code: code}
		require.ErrorIs(t, e, want)
		require.ErrorIs(t, e, ErrConflict)
		require.NotErrorIs(t, e, ErrNotFound)
	}
}
