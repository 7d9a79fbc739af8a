package cluster

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/topic"
)

// The fuzzers hold the two decoders of cluster mode to the franz-go
// invariants every decoder of PyStream is held to: no input panics; a refusal
// is one of the package's errors; what parses re-encodes to a form that
// parses again to the same encoding (Encode(Parse(x)) ==
// Encode(Parse(Encode(Parse(x))))); and the same bytes always decode the
// same. Their seed corpora are in testdata/fuzz/.

// metaFuzzState is a small state with every part filled, for seeds and
// for applying a parsed command to.
func metaFuzzState(tb testing.TB) *MetaState {
	tb.Helper()
	s := &MetaState{}
	for _, c := range []MetaCommand{
		{Op: OpRegisterNode, Time: metaT0, Node: metaNode(1)},
		{Op: OpRegisterNode, Time: metaT0, Node: metaNode(2)},
		{Op: OpRegisterNode, Time: metaT0, Node: metaNode(3)},
		{Op: OpCreateTopic, Time: metaT0, Topic: "orders", Partitions: 2, ReplicationFactor: 3},
		{Op: OpCommitOffset, Time: metaT0, Consumer: "billing", Topic: "orders", Partition: 1, Offset: 42},
		{Op: OpFailover, Time: metaT0, By: ByController, Reason: "leader 1 unavailable", Topic: "orders", Broker: 2},
		{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: ProducerIDBlock},
		{Op: OpSaveTransaction, Time: metaT0, Transaction: txnPtr(txnSample("tx", 1)), Expect: &TxnStamp{}},
		{Op: OpSaveTransaction, Time: metaT0, Transaction: txnPtr(Transaction{ID: "idle", ProducerID: 8, State: TxnCompleteAbort, Timeout: time.Second, Updated: metaT0, Version: 1}), Expect: &TxnStamp{}},
	} {
		if _, err := s.Apply(c); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// refusedAsDocumented reports whether err is what the parsers refuse
// with: ErrInvalidArgument, or the *MetadataError of ParseClusterMeta.
func refusedAsDocumented(err error) bool {
	var me *MetadataError
	return errors.Is(err, ErrInvalidArgument) || errors.As(err, &me)
}

// refusedByApply reports whether err is one of the refusals Apply
// documents.
func refusedByApply(err error) bool {
	var regression *client.OffsetRegressionError
	if errors.As(err, &regression) {
		return true
	}
	for _, target := range []error{ErrInvalidArgument, ErrInvalidBrokerID, topic.ErrInvalidName, ErrInvalidPartitionCount,
		ErrInvalidReplicationFactor, ErrTopicExists, ErrTopicNameConflict, ErrUnknownTopic, topic.ErrPartitionOutOfRange,
		ErrStaleAction, ErrNotAssigned, ErrReplicaIsLeader, ErrReplicaInactive, ErrReplicaActive, ErrProducerIDsExhausted, ErrStaleTransaction} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

func FuzzParseMetaState(f *testing.F) {
	valid, err := EncodeMetaState(metaFuzzState(f))
	if err != nil {
		f.Fatal(err)
	}
	zero, err := EncodeMetaState(&MetaState{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add(zero)
	f.Add(valid)
	f.Add(append(bytes.Clone(valid), "garbage"...))
	f.Add(append(bytes.Clone(valid), '}'))
	f.Add(bytes.Replace(zero, []byte(`"version":1`), []byte(`"version":18446744073709551616`), 1))
	f.Add(bytes.Replace(zero, []byte(`"journal":[]`), []byte(`"journal":[{"offset":18446744073709551615,"time":"9999-12-31T23:59:59.999999999+23:59","entry":{"event":"catch-up","phase":"done","by":"operator","partition":0,"broker":0,"summary":""}}]`), 1))
	f.Add(bytes.Replace(zero, []byte(`"version":1`), []byte(`"version":1,"next_producer_id":-1`), 1))
	f.Add(bytes.Replace(zero, []byte(`"version":1`), []byte(`"version":1,"next_producer_id":9223372036854775807`), 1))
	f.Add(bytes.Replace(zero, []byte(`"version":1`), []byte(`"version":1,"transactions":[{"id":"a","producer_id":1,"epoch":0,"state":"empty","timeout":1000000,"updated":"2024-12-02T09:20:00Z","version":1},{"id":"a","producer_id":1,"epoch":0,"state":"empty","timeout":1000000,"updated":"2024-12-02T09:20:00Z","version":1}]`), 1))
	f.Add(bytes.Replace(zero, []byte(`"version":1`), []byte(`"version":1,"transactions":[{"id":"a","producer_id":1,"epoch":-1,"state":"ongoing","timeout":0,"updated":"2024-12-02T09:20:00Z","version":0}]`), 1))
	f.Add(bytes.Replace(zero, []byte(`"offsets":[]`), []byte(`"offsets":[{"consumer":"a\u0000b","topic":"c","partition":0,"offset":1},{"consumer":"a","topic":"b\u0000c","partition":0,"offset":2}]`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseMetaState(data)
		if err != nil {
			if s != nil {
				t.Fatalf("refusal %v returned a state", err)
			}
			if !refusedAsDocumented(err) {
				t.Fatalf("error %v wraps neither ErrInvalidArgument nor a *MetadataError", err)
			}
			return
		}
		enc, err := EncodeMetaState(s)
		if err != nil {
			t.Fatalf("parsed state does not encode: %v", err)
		}
		s2, err := ParseMetaState(enc)
		if err != nil {
			t.Fatalf("encoded state does not parse: %v\n%s", err, enc)
		}
		enc2, err := EncodeMetaState(s2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not canonical: %v\n%s\n%s", err, enc, enc2)
		}
		again, err := ParseMetaState(data)
		if err != nil {
			t.Fatalf("the same bytes parse once, not twice: %v", err)
		}
		if enc3, err := EncodeMetaState(again); err != nil || !bytes.Equal(enc, enc3) {
			t.Fatalf("the same bytes decode differently: %v\n%s\n%s", err, enc, enc3)
		}

		// A snapshot and its re-encoding go on alike.
		c := MetaCommand{Op: OpRegisterNode, Time: metaT0, Node: metaNode(1)}
		_, err1 := s.Apply(c)
		_, err2 := s2.Apply(c)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("a state and its re-encoding apply differently: %v / %v", err1, err2)
		}
		a, errA := EncodeMetaState(s)
		b, errB := EncodeMetaState(s2)
		if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
			t.Fatalf("a state and its re-encoding diverge: %v / %v\n%s\n%s", errA, errB, a, b)
		}
	})
}

func FuzzParseMetaCommand(f *testing.F) {
	for _, c := range []MetaCommand{
		{Op: OpRegisterNode, Time: metaT0, Node: metaNode(4)},
		{Op: OpFailover, Time: metaT0, By: ByController, Reason: "r", Topic: "orders", Partition: 1, Broker: 2, Leave: []int{3}},
		{Op: OpSetHealing, Time: metaT0, Reason: "maintenance", Automatic: new(bool)},
		{Op: OpAddPartitions, Time: metaT0, Topic: "orders", Partitions: 3},
		{Op: OpAllocateProducerIDs, Time: metaT0, ProducerIDs: ProducerIDBlock},
		{Op: OpSaveTransaction, Time: metaT0, Transaction: txnPtr(txnSample("new", 1)), Expect: &TxnStamp{}},
		{Op: OpSaveTransaction, Time: metaT0, Transaction: txnPtr(txnSample("tx", 2)), Expect: &TxnStamp{Version: 1, ProducerID: 7}},
		{Op: OpSaveTransaction, Time: metaT0, Transaction: txnPtr(txnSample("tx", 1))},
		{Op: OpDeleteTransaction, Time: metaT0, TransactionalID: "tx", Expect: &TxnStamp{Version: 1, ProducerID: 7}},
		{Op: OpDeleteTransaction, Time: metaT0, TransactionalID: "idle", Expect: &TxnStamp{Version: 2, ProducerID: 8}},
		{Op: OpJournal, Time: metaT0, Entry: &JournalEntry{Event: EventRecover, Phase: PhaseIntent, By: ByOperator, Topic: "orders", Summary: "s",
			Before: &PartitionMetadata{Leader: 1, Replicas: []int{1, 2}, Active: []int{1}}, After: &PartitionMetadata{Leader: 1, Replicas: []int{1, 2}, Active: []int{1, 2}}}},
	} {
		enc, err := EncodeMetaCommand(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
		f.Add(append(enc, "garbage"...))
	}
	f.Add([]byte{})
	f.Add([]byte(`{"op":"commit-offset","time":"2024-12-02T09:20:00Z","consumer":"billing","topic":"orders","partition":1,"offset":18446744073709551615}`))
	f.Add([]byte(`{"op":"reset-offset","partition":9223372036854775807,"offset":18446744073709551616}`))
	f.Add([]byte(`{"op":"create-topic","topic":"t","partitions":1}]`))
	f.Add([]byte(`{"op":"allocate-producer-ids","producer_ids":-1}`))
	f.Add([]byte(`{"op":"save-transaction","transaction":{"id":"x","producer_id":0,"epoch":32767,"state":"prepare-abort","timeout":900000000000,"partitions":[{"topic":"orders","partition":1}],"updated":"2024-12-02T09:20:00Z","version":1}}`))
	f.Add([]byte(`{"op":"delete-transaction","transactional_id":"tx","expect":{"version":18446744073709551615,"producer_id":-1}}`))
	f.Add([]byte(`{"op":"allocate-producer-ids","producer_ids":9223372036854775807}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseMetaCommand(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		enc, err := EncodeMetaCommand(c)
		if err != nil {
			t.Fatalf("parsed command does not encode: %v", err)
		}
		c2, err := ParseMetaCommand(enc)
		if err != nil {
			t.Fatalf("encoded command does not parse: %v\n%s", err, enc)
		}
		enc2, err := EncodeMetaCommand(c2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not canonical: %v\n%s\n%s", err, enc, enc2)
		}

		// The command and its wire form do the same to the same state
		// (within a size the fuzzer can afford: a topic of up to
		// MaxPartitionCount partitions is legal, but slow to build).
		if c.Partitions > 64 {
			return
		}
		s1, s2 := metaFuzzState(t), metaFuzzState(t)
		_, err1 := s1.Apply(c)
		_, err2 := s2.Apply(c2)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("a command and its wire form apply differently: %v / %v", err1, err2)
		}
		if err1 != nil && !refusedByApply(err1) {
			t.Fatalf("refusal %v is none of the package's errors", err1)
		}
		a, errA := EncodeMetaState(s1)
		b, errB := EncodeMetaState(s2)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("a command and its wire form leave different states: %v / %v\n%s\n%s", errA, errB, a, b)
		}
	})
}

// txnPtr is a pointer to a copy of t.
func txnPtr(t Transaction) *Transaction { return &t }
