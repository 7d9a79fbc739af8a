package replication_test

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/replication"
	"github.com/pystream/pystream/topic"
	"github.com/pystream/pystream/topic/envelope"
)

// allSentinels are every sentinel a refusal can match on either side:
// those that travel by name (errors.go, sentinels) and those PyStream's
// typed errors match with their Is or Unwrap methods.
func allSentinels() []error {
	var out []error
	for _, s := range replication.Sentinels() {
		out = append(out, s.Err)
	}
	return append(out,
		cluster.ErrNotLeader, cluster.ErrStaleEpoch, cluster.ErrEpochAhead, cluster.ErrBehind,
		cluster.ErrReplicationFailed, cluster.ErrLeaderUnavailable, cluster.ErrReplicaDivergence,
		cluster.ErrLeaderStillAvailable, cluster.ErrNoEligibleReplica, cluster.ErrTopicNameConflict,
		cluster.ErrOpenLogsLimit, client.ErrOffsetOutOfRange, client.ErrOffsetBeyondEnd, log.ErrClosed)
}

// typedSample is one of PyStream's typed errors as a peer returns it,
// under the name errors.go's wireTypes sends it by.
type typedSample struct {
	label string
	wire  string
	err   error
}

// typedSamples covers every entry of wireTypes at least once.
func typedSamples() []typedSample {
	return []typedSample{
		{"", "not-leader", &cluster.NotLeaderError{Topic: "orders", Partition: 3, Broker: 2, Leader: 5}},
		{"no leader known", "not-leader", &cluster.NotLeaderError{Topic: "orders", Partition: 3, Broker: 2}},
		{"", "stale-epoch", &cluster.StaleEpochError{Topic: "orders", Partition: 1, Epoch: 8, Asked: 3}},
		{"with reason", "stale-epoch", &cluster.StaleEpochError{Topic: "orders", Partition: 1, Epoch: 8, Asked: 8, Reason: "broker 4 does not lead orders/1 at epoch 8"}},
		{"", "epoch-ahead", &cluster.EpochAheadError{Topic: "orders", Partition: 0, Epoch: 5, Asked: 6}},
		{"", "behind", &cluster.BehindError{Topic: "orders", Partition: 2, End: 21, Base: 40}},
		{"", "offset-out-of-range", &client.OffsetOutOfRangeError{Topic: "orders", Partition: 0, Offset: 2, LogStart: 5, HighWatermark: 9}},
		{"", "not-replicated", &cluster.ReplicationError{Topic: "orders", Partition: 2, Offset: 40, Count: 3, BrokerIDs: []int{3, 4},
			Err: errors.Join(errors.New("broker 3: write timed out"), errors.New("broker 4: log: failed by an earlier write error"))}},
		{"", "leader-unavailable", &cluster.LeaderUnavailableError{Topic: "orders", Partition: 1, BrokerID: 2,
			Err: fmt.Errorf("replication: /v1/produce node 127.0.0.1:7002: %w: connection refused", cluster.ErrBrokerUnavailable)}},
		{"", "diverged", &cluster.ReplicaDivergenceError{Topic: "orders", Partition: 0, BrokerID: 3, Offset: 17, Reason: "payloads differ"}},
		{"", "producer", &cluster.ProducerError{Topic: "orders", Partition: 1, Producer: envelope.Producer{ID: 7, Epoch: 1, Sequence: 9}, Expected: 4, Rule: cluster.RuleOutOfOrder}},
		{"", "duplicate-not-committed", &cluster.DuplicateNotCommittedError{Topic: "orders", Partition: 1, Producer: envelope.Producer{ID: 7, Sequence: 2}, HW: 40}},
		{"", "not-enough-replicas", &cluster.NotEnoughReplicasError{Topic: "orders", Partition: 1, Active: 1, MinInsync: 2}},
		{"same settings", "topic-exists", &cluster.TopicExistsError{Topic: "orders", PartitionCount: 3, ReplicationFactor: 2, SameSettings: true}},
		{"other settings", "topic-exists", &cluster.TopicExistsError{Topic: "orders", PartitionCount: 3, ReplicationFactor: 2}},
		{"", "topic-name-conflict", &cluster.TopicNameConflictError{Topic: "Orders", Existing: "orders"}},
		{"", "deletion-pending", &cluster.DeletionPendingError{Topic: "orders", Brokers: []int{2, 3}}},
		{"", "leader-still-available", &cluster.LeaderStillAvailableError{Topic: "orders", Partition: 4, BrokerID: 1}},
		{"", "no-eligible-replica", &cluster.NoEligibleReplicaError{Topic: "orders", Partition: 4, LeaderBrokerID: 1, Reason: "broker 2: behind; broker 3: inactive"}},
		{"", "open-logs-limit", &cluster.OpenLogsLimitError{Topic: "big", Requested: 300, Held: 900, Limit: 1024}},
		{"", "offset-regression", &client.OffsetRegressionError{ConsumerID: "billing", Topic: "orders", Partition: 1, Committed: 50, Requested: 40}},
		{"", "offset-beyond-end", &client.OffsetBeyondEndError{Op: "commit", ConsumerID: "billing", Topic: "orders", Partition: 1, Requested: 90, End: 80}},
		{"", "invalid-config", &topic.ConfigError{Key: "retention.ms", Value: "-5", Reason: "must be positive"}},
		{"key only", "invalid-config", &topic.ConfigError{Key: "retention.nope", Reason: "unknown key"}},
	}
}

// fields returns the struct a typed error points to, its cause (a field
// Err) left out: the cause travels as text (errors.go, wireTypes).
func fields(err error) any {
	v := reflect.New(reflect.TypeOf(err).Elem()).Elem()
	v.Set(reflect.ValueOf(err).Elem())
	if f := v.FieldByName("Err"); f.IsValid() {
		f.SetZero()
	}
	return v.Interface()
}

// errors.go, wireTypes: each of PyStream's typed errors a peer returns,
// bare or wrapped with context, reaches the caller as the same type with
// the same fields and the same text, and matches the same sentinels there
// as where it was returned; on the wire it is its code, its name and its
// fields, answered with its code's status (handler.go, fail).
func TestReplicationRefusalTyped(t *testing.T) {
	samples := typedSamples()
	codes := map[string]string{}
	for _, w := range replication.WireTypes() {
		codes[w.Name] = w.Code
		covered := false
		for _, s := range samples {
			covered = covered || s.wire == w.Name
		}
		if !covered {
			t.Errorf("wireTypes entry %q has no sample here", w.Name)
		}
	}
	for _, tt := range samples {
		code, ok := codes[tt.wire]
		if !ok {
			t.Errorf("sample %q: wireTypes has no entry %q", tt.label, tt.wire)
			continue
		}
		for _, wrapped := range []bool{false, true} {
			peerErr := tt.err
			if wrapped {
				peerErr = fmt.Errorf("cluster: serving the request: %w", tt.err)
			}
			t.Run(fmt.Sprintf("%s/%s/wrapped=%v", tt.wire, tt.label, wrapped), func(t *testing.T) {
				p := &fakePeer{err: peerErr}
				n := serve(t, p)

				// On the wire.
				status, e := raw(t, http.MethodGet, "http://"+n.Addr+replication.PathRecords+"?"+recordsQuery, nil)
				if e == nil {
					t.Fatalf("status %d and no *Error", status)
				}
				if status != statusOf[code] || e.Code != code || e.Reason != tt.wire || len(e.Detail) == 0 {
					t.Errorf("status %d, code %q, reason %q, detail %s; want %d, %q, %q and the fields",
						status, e.Code, e.Reason, e.Detail, statusOf[code], code, tt.wire)
				}

				// At the caller.
				_, err := newClient(t).Records(t.Context(), n.Addr, cluster.RecordsRequest{Topic: "orders"})
				target := reflect.New(reflect.TypeOf(tt.err))
				if !errors.As(err, target.Interface()) {
					t.Fatalf("error %v (%T) is not a %T", err, err, tt.err)
				}
				got := target.Elem().Interface().(error)
				if !reflect.DeepEqual(fields(got), fields(tt.err)) {
					t.Errorf("fields %+v, want %+v", fields(got), fields(tt.err))
				}
				if got.Error() != tt.err.Error() {
					t.Errorf("text %q, want %q", got.Error(), tt.err.Error())
				}
				for _, s := range allSentinels() {
					if g, w := errors.Is(err, s), errors.Is(peerErr, s); g != w {
						t.Errorf("errors.Is(err, %q) = %v at the caller, %v at the peer", s, g, w)
					}
				}
				if errors.Is(err, replication.ErrRemote) {
					t.Errorf("errors.Is(%v, ErrRemote): a typed error arrives as itself", err)
				}
			})
		}
	}
}

// errors.go, sentinels: a refusal that wraps one of the sentinels reaches
// the caller as an error that matches the same sentinel, and no other,
// with the refusing node's text, the sentinel's code, and ErrRemote; on
// the wire it is its code and its name, without fields.
func TestReplicationRefusalSentinel(t *testing.T) {
	// The sentinels a Peer's refusal may carry; each travels by name.
	travel := []error{
		cluster.ErrUnknownTopic, cluster.ErrTopicExists, cluster.ErrInvalidPartitionCount, cluster.ErrInvalidReplicationFactor,
		cluster.ErrStaleAction, cluster.ErrStaleTransaction, cluster.ErrNotAssigned, cluster.ErrReplicaIsLeader, cluster.ErrReplicaActive,
		cluster.ErrReplicaInactive, cluster.ErrInvalidBrokerID, cluster.ErrAddrTaken, cluster.ErrUnknownBroker, cluster.ErrHealingOff,
		cluster.ErrDeleteUnfinished, cluster.ErrBrokerIsProcess, cluster.ErrReplicaMissing, cluster.ErrInvalidArgument,
		cluster.ErrJournalFailed, topic.ErrPartitionOutOfRange, topic.ErrInvalidName, topic.ErrInvalidConfig,
		log.ErrPayloadTooLarge, cluster.ErrNoController, cluster.ErrNotReady, cluster.ErrBrokerUnavailable, cluster.ErrClosed,
	}
	names := map[error]string{}
	for _, s := range replication.Sentinels() {
		names[s.Err] = s.Name
	}
	for _, err := range travel {
		if names[err] == "" {
			t.Errorf("%q travels by no name (errors.go, sentinels)", err)
		}
	}
	for _, s := range replication.Sentinels() {
		for _, wrapped := range []bool{false, true} {
			peerErr := s.Err
			if wrapped {
				peerErr = fmt.Errorf("cluster: create topic %q: %w", "orders", s.Err)
			}
			t.Run(fmt.Sprintf("%s/wrapped=%v", s.Name, wrapped), func(t *testing.T) {
				p := &fakePeer{err: peerErr}
				n := serve(t, p)

				status, e := raw(t, http.MethodGet, "http://"+n.Addr+replication.PathRecords+"?"+recordsQuery, nil)
				want := replication.Error{Code: s.Code, Message: peerErr.Error(), Reason: s.Name}
				if e == nil || !reflect.DeepEqual(*e, want) || status != statusOf[s.Code] {
					t.Errorf("status %d, refusal %+v; want %d, %+v", status, e, statusOf[s.Code], want)
				}

				_, err := newClient(t).Records(t.Context(), n.Addr, cluster.RecordsRequest{Topic: "orders"})
				if !errors.Is(err, s.Err) {
					t.Fatalf("errors.Is(%v, %v) = false", err, s.Err)
				}
				if err.Error() != peerErr.Error() {
					t.Errorf("text %q, want the peer's %q", err.Error(), peerErr.Error())
				}
				if !errors.Is(err, replication.ErrRemote) {
					t.Errorf("errors.Is(%v, ErrRemote) = false", err)
				}
				if got := replication.CodeOf(err); got != s.Code {
					t.Errorf("CodeOf = %q, want %q", got, s.Code)
				}
				for _, other := range allSentinels() {
					if g, w := errors.Is(err, other), errors.Is(peerErr, other); g != w {
						t.Errorf("errors.Is(err, %q) = %v at the caller, %v at the peer", other, g, w)
					}
				}
			})
		}
	}
}

// errors.go, wireTypes "not-replicated": a *cluster.ReplicationError
// travels as its fields, with its followers' errors as its message, and
// comes back with them as its cause's text: the caller learns which
// records the leader holds unacknowledged and why.
func TestReplicationRefusalNotReplicated(t *testing.T) {
	followers := errors.Join(errors.New("broker 3: write timed out"), errors.New("broker 5: cluster: orders/2 ends at 30, before 40"))
	re := &cluster.ReplicationError{Topic: "orders", Partition: 2, Offset: 40, Count: 1, BrokerIDs: []int{3, 5}, Err: followers}
	p := &fakePeer{err: fmt.Errorf("produce: %w", re)}
	n := serve(t, p)

	_, e := raw(t, http.MethodGet, "http://"+n.Addr+replication.PathRecords+"?"+recordsQuery, nil)
	if e == nil || e.Code != replication.CodeNotReplicated || e.Message != followers.Error() {
		t.Errorf("refusal %+v; want code %q, message %q", e, replication.CodeNotReplicated, followers.Error())
	}

	_, err := newClient(t).Records(t.Context(), n.Addr, cluster.RecordsRequest{Topic: "orders"})
	var got *cluster.ReplicationError
	if !errors.As(err, &got) {
		t.Fatalf("error %v (%T) is not a *cluster.ReplicationError", err, err)
	}
	if got.Topic != re.Topic || got.Partition != re.Partition || got.Offset != re.Offset || got.Count != re.Count || !reflect.DeepEqual(got.BrokerIDs, re.BrokerIDs) {
		t.Errorf("fields %+v, want %+v", *got, *re)
	}
	if got.Err == nil || got.Err.Error() != followers.Error() {
		t.Errorf("cause %v, want the followers' errors %q", got.Err, followers.Error())
	}
	if got.Error() != re.Error() || !errors.Is(err, cluster.ErrReplicationFailed) {
		t.Errorf("text %q (replication failed: %v), want %q", got.Error(), errors.Is(err, cluster.ErrReplicationFailed), re.Error())
	}
}

// errors.go, EncodeError: a typed error travels as itself even when its
// cause holds another PyStream error, as a leader's *ReplicationError
// holds its followers' refusals (cluster/leader.go, failReplication) and
// a *LeaderUnavailableError the answer of the broker it could not reach
// (cluster/read.go, leaderAnswer): the caller gets the error the peer
// returned, not one found inside it, so that errors.As and errors.Is
// agree on both sides on what the peer said. A *ReplicationError sent as
// a follower's "behind" or "epoch-ahead" would tell a producer that its
// write was not stored, or to retry it, when the leader holds it.
func TestReplicationRefusalOuterErrorTravels(t *testing.T) {
	remoteClosed := replication.DecodeError(&replication.Error{Code: replication.CodeUnavailable, Message: "log: closed"})
	remoteDown := replication.DecodeError(&replication.Error{Code: replication.CodeUnavailable, Message: "cluster: broker unavailable", Reason: "broker-unavailable"})
	notReplicated := func(cause error) error {
		return &cluster.ReplicationError{Topic: "orders", Partition: 2, Offset: 40, Count: 2, BrokerIDs: []int{3},
			Err: errors.Join(fmt.Errorf("broker 3: %w", cause))}
	}
	tests := []struct {
		name    string
		peerErr error
		// outer is the sentinel the peer's own error matches.
		outer error
	}{
		{"not-replicated over a follower's behind", notReplicated(&cluster.BehindError{Topic: "orders", Partition: 2, End: 30, Base: 40}), cluster.ErrReplicationFailed},
		{"not-replicated over a follower's epoch-ahead", notReplicated(&cluster.EpochAheadError{Topic: "orders", Partition: 2, Epoch: 4, Asked: 5}), cluster.ErrReplicationFailed},
		{"not-replicated over a follower's stale-epoch", notReplicated(&cluster.StaleEpochError{Topic: "orders", Partition: 2, Epoch: 6, Asked: 5}), cluster.ErrReplicationFailed},
		{"not-replicated over a follower's remote refusal", notReplicated(remoteClosed), cluster.ErrReplicationFailed},
		{"leader-unavailable over a remote broker-unavailable",
			&cluster.LeaderUnavailableError{Topic: "orders", Partition: 1, BrokerID: 2, Err: remoteDown}, cluster.ErrLeaderUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakePeer{err: tt.peerErr}
			n := serve(t, p)
			_, err := newClient(t).Records(t.Context(), n.Addr, cluster.RecordsRequest{Topic: "orders"})
			target := reflect.New(reflect.TypeOf(tt.peerErr))
			if !errors.As(err, target.Interface()) {
				t.Fatalf("the peer returned a %T; the caller got %T %q (code %q)", tt.peerErr, err, err, replication.EncodeError(tt.peerErr).Code)
			}
			got := target.Elem().Interface().(error)
			if !reflect.DeepEqual(fields(got), fields(tt.peerErr)) || got.Error() != tt.peerErr.Error() {
				t.Errorf("caller got %+v %q, want %+v %q", fields(got), got, fields(tt.peerErr), tt.peerErr)
			}
			if !errors.Is(err, tt.outer) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.outer)
			}
		})
	}
}

// errors.go, DecodeError: an *Error that names a typed error but whose
// fields do not decode is no typed error with made-up fields: it stays a
// refusal (ErrRemote) with its code and the peer's message.
func TestReplicationRefusalDecodeMalformed(t *testing.T) {
	for _, w := range replication.WireTypes() {
		for _, detail := range []string{`"fields"`, `[1,2]`, `{"Topic":`, `{"Topic":7,"Key":7}`} {
			t.Run(w.Name+"/"+detail, func(t *testing.T) {
				e := &replication.Error{Code: w.Code, Message: "refused", Reason: w.Name, Detail: []byte(detail)}
				err := replication.DecodeError(e)
				if !errors.Is(err, replication.ErrRemote) {
					t.Fatalf("DecodeError = %T %v, want a refusal", err, err)
				}
				if got := replication.CodeOf(err); got != w.Code {
					t.Errorf("CodeOf = %q, want %q", got, w.Code)
				}
			})
		}
	}
}
