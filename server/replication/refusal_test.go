package replication_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/replication"
)

// statusOf is the HTTP status of each code (handler.go, fail): the
// status says what kind of refusal it is to anything that reads only
// statuses (a proxy, a log line); the body says which.
var statusOf = map[string]int{
	replication.CodeStaleEpoch:        http.StatusConflict,
	replication.CodeEpochAhead:        http.StatusServiceUnavailable,
	replication.CodeBehind:            http.StatusConflict,
	replication.CodeDiverged:          http.StatusConflict,
	replication.CodeNotLeader:         http.StatusMisdirectedRequest,
	replication.CodeRefused:           http.StatusConflict,
	replication.CodeNotReplicated:     http.StatusConflict,
	replication.CodeLeaderUnavailable: http.StatusServiceUnavailable,
	replication.CodeBadRequest:        http.StatusBadRequest,
	replication.CodeUnavailable:       http.StatusServiceUnavailable,
	replication.CodeOffsetOutOfRange:  http.StatusRequestedRangeNotSatisfiable,
}

// sender sends one request of the internal API with a Client.
type sender struct {
	name string
	send func(ctx context.Context, c *replication.Client, addr string) error
}

// senders are every request of the internal API.
var senders = []sender{
	{"replicate", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Replicate(ctx, addr, cluster.ReplicateRequest{Topic: "t"})
		return err
	}},
	{"records", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Records(ctx, addr, cluster.RecordsRequest{Topic: "t"})
		return err
	}},
	{"digests", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Digests(ctx, addr, cluster.DigestsRequest{Topic: "t", To: 4, Chunk: 2})
		return err
	}},
	{"cut", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Cut(ctx, addr, cluster.CutRequest{Topic: "t", To: 3})
		return err
	}},
	{"produce", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Produce(ctx, addr, cluster.ProduceRequest{Topic: "t", Payloads: [][]byte{[]byte("p")}})
		return err
	}},
	{"offset-for-time", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.OffsetForTime(ctx, addr, cluster.OffsetForTimeRequest{Topic: "t"})
		return err
	}},
	{"operate", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Operate(ctx, addr, cluster.OperateRequest{Op: cluster.OperateStatus, Topic: "t"})
		return err
	}},
	{"propose", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Propose(ctx, addr, []byte(`{}`))
		return err
	}},
	{"heartbeat", func(ctx context.Context, c *replication.Client, addr string) error {
		_, err := c.Heartbeat(ctx, addr, replication.Heartbeat{Node: 1})
		return err
	}},
	{"membership", func(ctx context.Context, c *replication.Client, addr string) error {
		return c.Membership(ctx, addr, replication.MembershipRequest{Op: replication.MembershipRemove, ID: 2})
	}},
}

// errors.go: an *Error a Peer returns travels as it is, whatever its
// code, and wraps ErrRemote on the caller's side; one whose Reason
// PyStream does not know stays as it is too (DecodeError).
func TestReplicationRefusalTravels(t *testing.T) {
	var tests []replication.Error
	for code := range statusOf {
		tests = append(tests, replication.Error{Code: code, Message: "refused as " + code})
	}
	tests = append(tests,
		replication.Error{Code: replication.CodeRefused, Message: "a newer broker's refusal", Reason: "martian", Detail: []byte(`{"Crater":7}`)},
		replication.Error{Code: "a-newer-code", Message: "from a newer broker"})
	for _, want := range tests {
		t.Run(want.Code+"/"+want.Reason, func(t *testing.T) {
			p := &fakePeer{err: &want}
			n := serve(t, p)
			_, err := newClient(t).Replicate(t.Context(), n.Addr, cluster.ReplicateRequest{Topic: "t", Epoch: 3})
			if got := asError(t, err); !reflect.DeepEqual(*got, want) {
				t.Errorf("client got %+v, want %+v", *got, want)
			}
			if !errors.Is(err, replication.ErrRemote) {
				t.Errorf("errors.Is(%v, ErrRemote) = false", err)
			}
			if got := replication.CodeOf(err); got != want.Code {
				t.Errorf("CodeOf = %q, want %q", got, want.Code)
			}
		})
	}
}

// handler.go, Peer: every request's refusal comes back as the error the
// peer returned, not just replicate's.
func TestReplicationRefusalEveryRequest(t *testing.T) {
	for _, s := range senders {
		t.Run(s.name, func(t *testing.T) {
			refusal := &cluster.StaleEpochError{Topic: "t", Partition: 2, Epoch: 8, Asked: 3}
			want := *refusal
			p := &fakePeer{err: refusal}
			n := serve(t, p)
			err := s.send(t.Context(), newClient(t), n.Addr)
			var got *cluster.StaleEpochError
			if !errors.As(err, &got) {
				t.Fatalf("error %v (%T) is not a *cluster.StaleEpochError", err, err)
			}
			if *got != want {
				t.Errorf("client got %+v, want %+v", *got, want)
			}
			if !errors.Is(err, cluster.ErrStaleEpoch) {
				t.Errorf("errors.Is(%v, cluster.ErrStaleEpoch) = false", err)
			}
			if calls := p.Calls(); len(calls) != 1 {
				t.Errorf("peer saw %d calls, want 1", len(calls))
			}
		})
	}
}

// errors.go, EncodeError: an error PyStream does not know travels as
// CodeUnavailable with its text, and is no sentinel on the caller's side
// (the peer was reached: it is not cluster.ErrBrokerUnavailable); an
// *Error wrapped with context is still found and sent as itself.
func TestReplicationRefusalPlainError(t *testing.T) {
	errDisk := errors.New("disk on fire")
	tests := []struct {
		name    string
		peerErr error
		want    replication.Error
	}{
		{"plain", errDisk, replication.Error{Code: replication.CodeUnavailable, Message: "disk on fire"}},
		{"wrapped plain", fmt.Errorf("append: %w", errDisk), replication.Error{Code: replication.CodeUnavailable, Message: "append: disk on fire"}},
		{"wrapped refusal", fmt.Errorf("append: %w", replication.Errorf(replication.CodeBehind, "ends at 4")),
			replication.Error{Code: replication.CodeBehind, Message: "ends at 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{err: tt.peerErr}
			n := serve(t, p)
			_, err := newClient(t).Heartbeat(t.Context(), n.Addr, replication.Heartbeat{Node: 1})
			if got := asError(t, err); !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("client got %+v, want %+v", *got, tt.want)
			}
			if !errors.Is(err, replication.ErrRemote) {
				t.Errorf("errors.Is(%v, ErrRemote) = false", err)
			}
			for _, s := range allSentinels() {
				if errors.Is(err, s) {
					t.Errorf("errors.Is(%v, %v) = true", err, s)
				}
			}
		})
	}
}

// handler.go, fail: each code is answered with its HTTP status (statusOf),
// and a code PyStream does not know with 409 Conflict.
func TestReplicationRefusalStatus(t *testing.T) {
	want := map[string]int{"a-newer-code": http.StatusConflict}
	for code, status := range statusOf {
		want[code] = status
	}
	for code, status := range want {
		t.Run(code, func(t *testing.T) {
			p := &fakePeer{err: replication.Errorf(code, "refused")}
			n := serve(t, p)
			got, e := raw(t, http.MethodGet, "http://"+n.Addr+replication.PathRecords+"?"+recordsQuery, nil)
			if got != status {
				t.Errorf("status = %d, want %d", got, status)
			}
			if e == nil || e.Code != code {
				t.Errorf("refusal = %+v, want code %q", e, code)
			}
		})
	}
}

// client.go, do: a peer that cannot be reached is an error wrapping
// cluster.ErrBrokerUnavailable, on every request, and no refusal: the
// peer said nothing (ErrRemote).
func TestReplicationRefusalUnreachable(t *testing.T) {
	// A port that was just closed refuses the dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	for _, s := range senders {
		t.Run(s.name, func(t *testing.T) {
			err := s.send(t.Context(), c, closed)
			if !errors.Is(err, cluster.ErrBrokerUnavailable) {
				t.Fatalf("errors.Is(%v, cluster.ErrBrokerUnavailable) = false", err)
			}
			var opErr *net.OpError
			if !errors.As(err, &opErr) {
				t.Errorf("dial error %v does not carry its *net.OpError", err)
			}
			if errors.Is(err, replication.ErrRemote) {
				t.Errorf("an unreachable peer refused nothing, yet errors.Is(%v, ErrRemote)", err)
			}
		})
	}
}

// client.go, do: an answer that is neither a success nor an *Error (a
// proxy's page, a cut body) is an error wrapping ErrRemote, and no
// PyStream error.
func TestReplicationRefusalNotAnError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"bad gateway", http.StatusBadGateway, "<html>bad gateway</html>"},
		{"empty", http.StatusInternalServerError, ""},
		{"json without code", http.StatusConflict, `{"message":"no code"}`},
		{"cut", http.StatusConflict, `{"code":"behind","mess`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			_, err := newClient(t).Replicate(t.Context(), n.Addr, cluster.ReplicateRequest{Topic: "t"})
			if !errors.Is(err, replication.ErrRemote) {
				t.Fatalf("errors.Is(%v, ErrRemote) = false", err)
			}
			if code := replication.CodeOf(err); code != "" {
				t.Errorf("CodeOf = %q, want none", code)
			}
			for _, s := range allSentinels() {
				if errors.Is(err, s) {
					t.Errorf("errors.Is(%v, %v) = true", err, s)
				}
			}
		})
	}
}
