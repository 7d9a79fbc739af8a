package replication_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"testing"

	"github.com/pystream/pystream/server/replication"
)

// errors.go: every refusal travels as an *Error whose fields a caller acts
// on, and wraps ErrRemote; Temporary (client.go) is true only for the codes
// that ask for a retry (CodeEpochAhead, CodeUnavailable).
func TestReplicationRefusalTravels(t *testing.T) {
	tests := []struct {
		refusal   replication.Error
		temporary bool
	}{
		{replication.Error{Code: replication.CodeStaleEpoch, Message: "epoch 3 < 5", Epoch: 5, End: 9, Leader: 4}, false},
		{replication.Error{Code: replication.CodeEpochAhead, Message: "epoch 6 > 5", Epoch: 5}, true},
		{replication.Error{Code: replication.CodeBehind, Message: "log ends at 7", End: 7}, false},
		{replication.Error{Code: replication.CodeDiverged, Message: "offset 3 differs", End: 3}, false},
		{replication.Error{Code: replication.CodeNotLeader, Message: "node 2 leads", Leader: 2}, false},
		{replication.Error{Code: replication.CodeNotAssigned, Message: "no replica"}, false},
		{replication.Error{Code: replication.CodeRefused, Message: "no such topic", Reason: "unknown-topic"}, false},
		{replication.Error{Code: replication.CodeBadRequest, Message: "bad"}, false},
		{replication.Error{Code: replication.CodeUnavailable, Message: "closing"}, true},
		{replication.Error{Code: replication.CodeNotReplicated, Message: "broker 3: timeout", Offset: 7, Count: 2, Brokers: []int{3}}, false},
		{replication.Error{Code: replication.CodeOffsetOutOfRange, Message: "below the log start", Offset: 2, LogStart: 5, HighWatermark: 9}, false},
	}
	for _, tt := range tests {
		t.Run(tt.refusal.Code, func(t *testing.T) {
			want := tt.refusal
			p := &fakePeer{err: &want}
			n := serve(t, p)
			_, err := newClient(t).Replicate(t.Context(), n.Addr, replication.ReplicateRequest{Topic: "t", Epoch: 3})
			if got := asError(t, err); !reflect.DeepEqual(*got, want) {
				t.Errorf("client got %+v, want %+v", *got, want)
			}
			if !errors.Is(err, replication.ErrRemote) {
				t.Errorf("errors.Is(%v, ErrRemote) = false", err)
			}
			if got := replication.CodeOf(err); got != want.Code {
				t.Errorf("CodeOf = %q, want %q", got, want.Code)
			}
			if got := replication.Temporary(err); got != tt.temporary {
				t.Errorf("Temporary = %v, want %v", got, tt.temporary)
			}
		})
	}
}

// handler.go, Peer: a refusal is an *Error on every request, not just
// replicate; a stale-epoch refusal keeps its Epoch, End and Leader.
func TestReplicationRefusalEveryRequest(t *testing.T) {
	type send func(ctx context.Context, c *replication.Client, addr string) error
	tests := []struct {
		name string
		send send
	}{
		{"replicate", func(ctx context.Context, c *replication.Client, addr string) error {
			_, err := c.Replicate(ctx, addr, replication.ReplicateRequest{Topic: "t"})
			return err
		}},
		{"records", func(ctx context.Context, c *replication.Client, addr string) error {
			_, err := c.Records(ctx, addr, replication.RecordsRequest{Topic: "t"})
			return err
		}},
		{"produce", func(ctx context.Context, c *replication.Client, addr string) error {
			_, err := c.Produce(ctx, addr, replication.ProduceRequest{Topic: "t", Payloads: [][]byte{[]byte("p")}})
			return err
		}},
		{"propose", func(ctx context.Context, c *replication.Client, addr string) error {
			_, err := c.Propose(ctx, addr, []byte(`{}`))
			return err
		}},
		{"heartbeat", func(ctx context.Context, c *replication.Client, addr string) error {
			return c.Heartbeat(ctx, addr, replication.Heartbeat{Node: 1})
		}},
		{"catch-up", func(ctx context.Context, c *replication.Client, addr string) error {
			_, err := c.CatchUp(ctx, addr, "t", 0, 1)
			return err
		}},
		{"offset-for-time", func(ctx context.Context, c *replication.Client, addr string) error {
			_, err := c.OffsetForTime(ctx, addr, replication.OffsetForTimeRequest{Topic: "t"})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refusal := replication.Errorf(replication.CodeStaleEpoch, "epoch %d is older than %d", 3, 8)
			refusal.Epoch, refusal.End, refusal.Leader = 8, 21, 5
			want := *refusal
			p := &fakePeer{err: refusal}
			n := serve(t, p)
			err := tt.send(t.Context(), newClient(t), n.Addr)
			if got := asError(t, err); !reflect.DeepEqual(*got, want) {
				t.Errorf("client got %+v, want %+v", *got, want)
			}
			if !errors.Is(err, replication.ErrRemote) {
				t.Errorf("errors.Is(%v, ErrRemote) = false", err)
			}
			if replication.Temporary(err) {
				t.Errorf("Temporary(stale epoch) = true")
			}
			if calls := p.Calls(); len(calls) != 1 {
				t.Errorf("peer saw %d calls, want 1", len(calls))
			}
		})
	}
}

// handler.go, Peer: any error that is not an *Error is sent as
// CodeUnavailable; an *Error wrapped with context is still found and sent
// as itself.
func TestReplicationRefusalPlainError(t *testing.T) {
	errDisk := errors.New("disk on fire")
	tests := []struct {
		name     string
		peerErr  error
		wantCode string
	}{
		{"plain", errDisk, replication.CodeUnavailable},
		{"wrapped plain", fmt.Errorf("append: %w", errDisk), replication.CodeUnavailable},
		{"wrapped refusal", fmt.Errorf("append: %w", replication.Errorf(replication.CodeBehind, "ends at 4")), replication.CodeBehind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{err: tt.peerErr}
			n := serve(t, p)
			err := newClient(t).Heartbeat(t.Context(), n.Addr, replication.Heartbeat{Node: 1})
			if got := asError(t, err); got.Code != tt.wantCode {
				t.Errorf("code = %q, want %q", got.Code, tt.wantCode)
			}
			if !errors.Is(err, replication.ErrRemote) {
				t.Errorf("errors.Is(%v, ErrRemote) = false", err)
			}
			if got, want := replication.Temporary(err), tt.wantCode == replication.CodeUnavailable; got != want {
				t.Errorf("Temporary = %v, want %v", got, want)
			}
		})
	}
}

// client.go, Temporary: worth a retry when the peer could not be reached or
// asked for one; never for no error.
func TestReplicationTemporary(t *testing.T) {
	// A port that was just closed refuses the dial.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	dialErr := newClient(t).Heartbeat(t.Context(), closed, replication.Heartbeat{Node: 1})
	if dialErr == nil {
		t.Fatal("heartbeat to a closed port succeeded")
	}
	var opErr *net.OpError
	if !errors.As(dialErr, &opErr) {
		t.Fatalf("dial error %v is not a *net.OpError", dialErr)
	}
	if errors.Is(dialErr, replication.ErrRemote) {
		t.Errorf("an unreachable peer refused nothing, yet errors.Is(%v, ErrRemote)", dialErr)
	}

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"dial", dialErr, true},
		{"stale-epoch", replication.Errorf(replication.CodeStaleEpoch, "x"), false},
		{"epoch-ahead", replication.Errorf(replication.CodeEpochAhead, "x"), true},
		{"behind", replication.Errorf(replication.CodeBehind, "x"), false},
		{"diverged", replication.Errorf(replication.CodeDiverged, "x"), false},
		{"not-leader", replication.Errorf(replication.CodeNotLeader, "x"), false},
		{"not-assigned", replication.Errorf(replication.CodeNotAssigned, "x"), false},
		{"refused", replication.Errorf(replication.CodeRefused, "x"), false},
		{"bad-request", replication.Errorf(replication.CodeBadRequest, "x"), false},
		{"unavailable", replication.Errorf(replication.CodeUnavailable, "x"), true},
		{"wrapped unavailable", fmt.Errorf("ctx: %w", replication.Errorf(replication.CodeUnavailable, "x")), true},
		{"wrapped not-leader", fmt.Errorf("ctx: %w", replication.Errorf(replication.CodeNotLeader, "x")), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replication.Temporary(tt.err); got != tt.want {
				t.Errorf("Temporary(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
