package cluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// journalOf reads the whole journal of c.
func journalOf(t *testing.T, c *Cluster) []JournalEntry {
	t.Helper()
	entries, err := c.Journal(0, 10_000)
	require.NoError(t, err)
	return entries
}

// events renders entries as "event phase by" lines, to compare sequences.
func events(entries []JournalEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = fmt.Sprintf("%s %s %s", e.Event, e.Phase, e.By)
	}
	return out
}

// docs/design.md § The journal: every operation that changes the cluster
// is journaled — an intent before cluster.meta changes, then its outcome —
// with the numbers it was decided on, and a refusal that changed nothing
// leaves no entry.
func TestJournalRecordsEveryOperation(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	p := NewProducer(c, "orders")
	sendN(t, p, "k", 3)
	start := len(journalOf(t, c))
	require.Equal(t, []string{
		"broker-start intent operator", "broker-start done operator",
		"broker-start intent operator", "broker-start done operator",
		"broker-start intent operator", "broker-start done operator",
	}, events(journalOf(t, c)), "three new brokers join: cluster.meta changes, so an intent first")

	require.NoError(t, c.StopBroker(1))
	require.NoError(t, c.StopBroker(1), "a second stop is no event")
	_, err := c.Failover("orders", 0)
	require.NoError(t, err)
	_, err = c.Failover("orders", 0)
	require.ErrorIs(t, err, ErrLeaderStillAvailable)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	_, err = c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)
	_, err = c.MoveLeader("orders", 0, 1)
	require.NoError(t, err)
	_, err = c.Deactivate("orders", 0, 3)
	require.NoError(t, err)

	entries := journalOf(t, c)[start:]
	require.Equal(t, []string{
		"broker-stop done operator",
		"failover intent operator", "failover done operator",
		"broker-start done operator",
		"recover intent operator", "recover done operator",
		"move-leader intent operator", "move-leader done operator",
		"deactivate intent operator", "deactivate done operator",
	}, events(entries))
	fo := entries[1]
	require.Equal(t, "orders/0: leader 1 -> 2 (epoch 1): candidates 2 (log end 3), 3 (3); leaving the active set: [1]", fo.Summary)
	require.Equal(t, PartitionMetadata{Partition: 0, Leader: 1, Replicas: []int{1, 2, 3}, Active: []int{1, 2, 3}}, *fo.Before)
	require.Equal(t, PartitionMetadata{Partition: 0, Leader: 2, LeaderEpoch: 1, Replicas: []int{1, 2, 3}, Active: []int{2, 3}}, *fo.After)
	require.Equal(t, fo.Offset, *entries[2].Intent, "the outcome names its intent")
	for i := 1; i < len(entries); i++ {
		require.Equal(t, entries[i-1].Offset+1, entries[i].Offset)
		require.False(t, entries[i].Time.Before(entries[i-1].Time))
	}
	end, err := c.JournalEnd()
	require.NoError(t, err)
	require.Equal(t, uint64(start+len(entries)), end)

	// since and max page through it; past the end is empty.
	page, err := c.Journal(end-2, 1)
	require.NoError(t, err)
	require.Len(t, page, 1)
	require.Equal(t, EventDeactivate, page[0].Event)
	past, err := c.Journal(end, 10)
	require.NoError(t, err)
	require.Empty(t, past)
	_, err = c.Journal(0, 0)
	require.ErrorIs(t, err, ErrInvalidArgument)

	// It is a PyStream log of JSON entries, and survives a reopen.
	c = reopen(t, c, root, 3)
	again := journalOf(t, c)
	require.Equal(t, events(entries), events(again[start:start+len(entries)]))
	require.NoError(t, log.ScanFile(JournalPath(root), func(_ int64, r log.Record) error {
		_, err := ParseJournalEntry(r.Payload)
		return err
	}))
}

// A cluster that never acted has no journal file; reading it is empty.
func TestJournalAbsentUntilFirstEntry(t *testing.T) {
	root := t.TempDir()
	c, err := Open(root)
	require.NoError(t, err)
	require.Empty(t, journalOf(t, c))
	end, err := c.JournalEnd()
	require.NoError(t, err)
	require.Zero(t, end)
	require.NoError(t, c.Close())
	_, err = os.Stat(JournalDir(root))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// Apply runs a planned action as the controller's, with its reason in the
// journal, and refuses an action planned on an older leader epoch without
// changing anything.
func TestApplyJournalsTheControllersReason(t *testing.T) {
	c, root := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	sendN(t, NewProducer(c, "orders"), "k", 2)
	require.NoError(t, c.StopBroker(1))
	fo := Action{Kind: ActionFailover, Topic: "orders", Partition: 0, Broker: 1, LeaderEpoch: 0, Reason: "orders/0: leader 1 unavailable for 3.0s"}
	res, err := c.Apply(fo)
	require.NoError(t, err)
	require.True(t, res.Changed)
	entries := journalOf(t, c)
	last := entries[len(entries)-1]
	require.Equal(t, ByController, last.By)
	require.Equal(t, fo.Reason, last.Reason)

	before := snapshot(t, root)
	n := len(entries)
	_, err = c.Apply(fo)
	require.ErrorIs(t, err, ErrStaleAction, "the failover was planned on epoch 0; the partition is at 1")
	_, err = c.Apply(Action{Kind: ActionMoveLeader, Topic: "orders", Partition: 0, Broker: 3, LeaderEpoch: 0})
	require.ErrorIs(t, err, ErrStaleAction)
	_, err = c.Apply(Action{Kind: "reboot", Topic: "orders"})
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Equal(t, before, snapshot(t, root))
	require.Len(t, journalOf(t, c), n)

	// A catch-up with nothing to copy changes nothing and says so.
	res, err = c.Apply(Action{Kind: ActionCatchUp, Topic: "orders", Partition: 0, Broker: 3, LeaderEpoch: 1})
	require.NoError(t, err)
	require.False(t, res.Changed)
	require.Len(t, journalOf(t, c), n)
}

// The journal's entries are checked as strictly as every other file.
func TestJournalEntryMalformed(t *testing.T) {
	for _, ok := range []string{
		`{"event":"failover","phase":"refused","by":"controller","topic":"t","partition":0,"broker":1,"summary":"s","reason":"r","error":"e"}`,
		`{"event":"broker-start","phase":"intent","by":"operator","partition":0,"broker":4,"summary":"s"}`,
	} {
		_, err := ParseJournalEntry([]byte(ok))
		require.NoError(t, err, ok)
	}
	good := `{"event":"catch-up","phase":"done","by":"operator","topic":"t","partition":0,"broker":2,"summary":"s"}`
	_, err := ParseJournalEntry([]byte(good))
	require.NoError(t, err)
	for name, data := range map[string]string{
		"empty":         ``,
		"not json":      `x`,
		"unknown field": strings.Replace(good, `"summary"`, `"extra":1,"summary"`, 1),
		"unknown event": strings.Replace(good, "catch-up", "reboot", 1),
		"unknown phase": strings.Replace(good, `"done"`, `"maybe"`, 1),
		"unknown by":    strings.Replace(good, "operator", "someone", 1),
		"trailing":      good + ` {}`,
		"intent bare":   strings.Replace(good, `"done"`, `"intent"`, 1),
		"array":         `[]`,
	} {
		_, err := ParseJournalEntry([]byte(data))
		require.ErrorIs(t, err, ErrInvalidArgument, name)
	}
}

func FuzzParseJournalEntry(f *testing.F) {
	f.Add([]byte(`{"event":"catch-up","phase":"done","by":"operator","topic":"t","partition":0,"broker":2,"summary":"s"}`))
	f.Add([]byte(`{"event":"failover","phase":"intent","by":"controller","topic":"t","partition":0,"broker":1,"summary":"s","reason":"r","before":{"partition":0,"leader":1,"leader_epoch":0,"replicas":[1,2],"active":[1,2]},"after":{"partition":0,"leader":2,"leader_epoch":1,"replicas":[1,2],"active":[2]}}`))
	f.Add([]byte(`{"event":"recover","phase":"rolled-back","by":"startup","partition":0,"broker":1,"summary":"s","intent":4,"quarantine":"q"}`))
	f.Add([]byte(`{"event":"recover","phase":"done","by":"operator","topic":"t","partition":0,"broker":1,"summary":"s","quarantine":"q","cut":{"from":3,"to":4}}`))
	f.Add([]byte(`{"event":"failover","phase":"done","by":"controller","topic":"t","partition":0,"broker":1,"summary":"s","candidates":[{"broker":2,"log_end":3}]}`))
	f.Add([]byte(`{"event":"delete-topic","phase":"intent","by":"operator","topic":"orders","partition":0,"broker":0,"summary":"s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ParseJournalEntry(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("error %v does not wrap ErrInvalidArgument", err)
			}
			return
		}
		enc, err := EncodeJournalEntry(e)
		if err != nil {
			t.Fatalf("parsed entry does not encode: %v", err)
		}
		e2, err := ParseJournalEntry(enc)
		if err != nil {
			t.Fatalf("encoded entry does not parse: %v\n%s", err, enc)
		}
		enc2, err := EncodeJournalEntry(e2)
		if err != nil || string(enc) != string(enc2) {
			t.Fatalf("encoding not stable: %v\n%s\n%s", err, enc, enc2)
		}
	})
}

// oneOutcome requires exactly one outcome of the intent at off in entries,
// and returns it.
func oneOutcome(t *testing.T, entries []JournalEntry, off uint64) JournalEntry {
	t.Helper()
	var outs []JournalEntry
	for _, e := range entries {
		if e.Intent != nil && *e.Intent == off {
			outs = append(outs, e)
		}
	}
	require.Len(t, outs, 1, "exactly one outcome for the intent at %d", off)
	return outs[0]
}

// checkOperation is the promise of docs/design.md § The journal after a
// crash: the operation's intent, if written, has exactly one outcome, and
// the outcome agrees with cluster.meta — done or completed when it holds
// the intent's leadership, failed or rolled back when it holds the one
// before. It returns the outcome's phase ("" when there was no intent) and
// whether the operation took effect.
func checkOperation(t *testing.T, c *Cluster, ev JournalEvent, before PartitionMetadata) (JournalPhase, bool) {
	t.Helper()
	entries := journalOf(t, c)
	cur := c.Metadata().Topics["orders"].Partitions[0]
	var intent *JournalEntry
	for i, e := range entries {
		if e.Event == ev && e.Phase == PhaseIntent {
			require.Nil(t, intent, "one intent")
			intent = &entries[i]
		}
	}
	if intent == nil {
		require.Equal(t, before, cur, "no intent: nothing changed")
		return "", false
	}
	require.Equal(t, before, *intent.Before)
	out := oneOutcome(t, entries, intent.Offset)
	switch out.Phase {
	case PhaseDone, PhaseCompleted:
		require.Equal(t, *intent.After, cur, "%s: the change is in cluster.meta", out.Phase)
		return out.Phase, true
	case PhaseFailed, PhaseRolledBack:
		require.Equal(t, before, cur, "%s: cluster.meta as before", out.Phase)
		return out.Phase, false
	}
	t.Fatalf("outcome phase %q", out.Phase)
	return out.Phase, false
}

// TestCrashSimFailover: a process killed before every file-system step of
// a failover opens again with the failover whole or not at all, and the
// journal says which; the partition then takes writes.
func TestCrashSimFailover(t *testing.T) {
	c, prepared := prepareOrders(t)
	sendN(t, NewProducer(c, "orders"), "k", 3)
	before := c.Metadata().Topics["orders"].Partitions[0]
	require.NoError(t, c.Close())

	life := crashLife(2, func(cl *Cluster) { _, _ = cl.Failover("orders", 0) })
	steps := countSteps(t, prepared, life)
	seen := map[JournalPhase]bool{}
	defer func() { requireEveryOutcome(t, seen) }()
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprintf("dies before step %d of %d", n, steps), func(t *testing.T) {
			root, crash := killDuring(t, prepared, n, life)
			cl := openAfterKill(t, root, crash)
			phase, moved := checkOperation(t, cl, EventFailover, before)
			seen[phase] = true
			if !moved {
				// Broker 1 is still down: the operator (or controller)
				// fails over now, and it works.
				require.NoError(t, cl.StopBroker(1))
				_, err := cl.Failover("orders", 0)
				require.NoError(t, err)
			}
			_, err := NewProducer(cl, "orders").Send(nil, []byte("after"))
			require.NoError(t, err)
		})
	}
}

// TestCrashSimRecovery: a process killed before every step of a recovery
// that cuts a record opens again with the replica either still inactive
// or active and identical to its leader, the journal saying which, and the
// cut record never lost: it is in the replica's log or in the quarantine
// file.
func TestCrashSimRecovery(t *testing.T) {
	c, prepared := prepareOrders(t)
	p := NewProducer(c, "orders")
	sendN(t, p, "k", 2)
	require.NoError(t, c.StopBroker(2))
	require.NoError(t, c.StopBroker(3))
	_, err := p.Send(nil, []byte("unacked"))
	require.ErrorIs(t, err, ErrReplicationFailed)
	require.NoError(t, c.StopBroker(1))
	for _, id := range []int{2, 3} {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	sendN(t, p, "k", 2)
	before := c.Metadata().Topics["orders"].Partitions[0]
	require.Equal(t, []int{2, 3}, before.Active)
	require.NoError(t, c.Close())
	original := readAll(t, replicaPath(prepared, 1, "orders", 0))
	require.Len(t, original, 3)

	life := crashLife(1, func(cl *Cluster) { _, _ = cl.RecoverReplica("orders", 0, 1) })
	steps := countSteps(t, prepared, life)
	seen := map[JournalPhase]bool{}
	defer func() { requireEveryOutcome(t, seen) }()
	for n := 1; n <= steps+1; n++ {
		t.Run(fmt.Sprintf("dies before step %d of %d", n, steps), func(t *testing.T) {
			root, crash := killDuring(t, prepared, n, life)
			cl := openAfterKill(t, root, crash)
			leaderLog := readAll(t, replicaPath(root, 2, "orders", 0))
			replica := readAll(t, replicaPath(root, 1, "orders", 0))
			phase, active := checkOperation(t, cl, EventRecover, before)
			seen[phase] = true
			if active {
				require.Equal(t, leaderLog, replica, "an active replica is identical to its leader")
			}
			// Nothing the replica held is gone: each original record is
			// in its log or in a quarantine file beside it.
			dir := filepath.Dir(replicaPath(root, 1, "orders", 0))
			for _, r := range original {
				inLog := r.Offset < uint64(len(replica)) && replica[r.Offset].Timestamp == r.Timestamp &&
					string(replica[r.Offset].Payload) == string(r.Payload)
				require.True(t, inLog || quarantined(t, dir, r), "offset %d (%q) kept", r.Offset, r.Payload)
			}
			if !active {
				_, err := cl.RecoverReplica("orders", 0, 1)
				require.NoError(t, err, "a rolled-back recovery can run again")
			}
		})
	}
}

// requireEveryOutcome checks that the kills covered every case: before
// the intent, between intent and change (rolled back), after the change
// but before its outcome (completed), and after the outcome (done).
func requireEveryOutcome(t *testing.T, seen map[JournalPhase]bool) {
	t.Helper()
	for _, p := range []JournalPhase{"", PhaseRolledBack, PhaseCompleted, PhaseDone} {
		require.True(t, seen[p], "some kill ends with outcome %q; seen %v", p, seen)
	}
}

// quarantined reports whether r is in one of the quarantine files of dir.
func quarantined(t *testing.T, dir string, r log.Record) bool {
	t.Helper()
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, f := range files {
		from, _, _, ok := ParseQuarantineName(f.Name())
		if !ok {
			continue
		}
		found := false
		require.NoError(t, log.ScanFileFrom(filepath.Join(dir, f.Name()), from, log.Options{}, func(_ int64, q log.Record) error {
			found = found || (q.Offset == r.Offset && string(q.Payload) == string(r.Payload) && q.Timestamp == r.Timestamp)
			return nil
		}))
		if found {
			return true
		}
	}
	return false
}

// prepareOrders opens a cluster in a fresh directory with brokers
// 1..crashBrokers and the topic "orders" (one partition on every broker):
// the state a crash simulation starts from, once the test has added its own
// steps and closed it.
func prepareOrders(t *testing.T) (*Cluster, string) {
	t.Helper()
	prepared := filepath.Join(t.TempDir(), "cluster")
	c, err := Open(prepared)
	require.NoError(t, err)
	for id := 1; id <= crashBrokers; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 1, crashBrokers))
	return c, prepared
}

// crashLife is the first life of a crash simulation: open the cluster at
// root on fsys, start brokers from..crashBrokers, then do. A failure on the
// way ends the life, as it would end a killed process.
func crashLife(from int, do func(cl *Cluster)) func(durable.FS, string) {
	return func(fsys durable.FS, root string) {
		cl, err := OpenWithOptions(root, Options{FS: fsys})
		if err != nil {
			return
		}
		defer cl.Close()
		for id := from; id <= crashBrokers; id++ {
			if _, err := cl.StartBroker(id); err != nil {
				return
			}
		}
		do(cl)
	}
}

// countSteps runs life once on a copy of prepared through a counting
// FaultFS and returns how many file-system steps it took.
func countSteps(t *testing.T, prepared string, life func(durable.FS, string)) int {
	t.Helper()
	root := filepath.Join(t.TempDir(), "cluster")
	require.NoError(t, os.CopyFS(root, os.DirFS(prepared)))
	counter := logtest.NewFaultFS(nil)
	life(counter, root)
	steps := counter.Total()
	require.Greater(t, steps, 5)
	return steps
}

// killDuring copies prepared to a fresh directory and runs life there as a
// process killed before its n-th file-system step.
func killDuring(t *testing.T, prepared string, n int, life func(durable.FS, string)) (string, *logtest.CrashFS) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "cluster")
	require.NoError(t, os.CopyFS(root, os.DirFS(prepared)))
	crash, err := logtest.KillBefore(base, n, func(fsys durable.FS) { life(fsys, root) })
	require.NoError(t, err)
	return root, crash
}

// openAfterKill opens the cluster a killed process left (its page cache
// kept) with every broker started.
func openAfterKill(t *testing.T, root string, crash *logtest.CrashFS) *Cluster {
	t.Helper()
	cl, err := OpenWithOptions(root, Options{FS: crash})
	require.NoError(t, err, "the next start opens what the killed process left")
	t.Cleanup(func() { _ = cl.Close() })
	for id := 1; id <= crashBrokers; id++ {
		_, err := cl.StartBroker(id)
		require.NoError(t, err)
	}
	return cl
}

// TestCrashSimBrokerJoin: a broker's first start lists it in cluster.meta,
// journaled like every change; a process killed before any step of it
// opens again with each join's intent given exactly one outcome, completed
// exactly when cluster.meta lists the broker.
func TestCrashSimBrokerJoin(t *testing.T) {
	prepared := filepath.Join(t.TempDir(), "cluster")
	require.NoError(t, os.MkdirAll(prepared, 0o755))
	life := crashLife(1, func(*Cluster) {})
	steps := countSteps(t, prepared, life)
	seen := map[JournalPhase]bool{}
	for n := 1; n <= steps+1; n++ {
		root, crash := killDuring(t, prepared, n, life)
		cl, err := OpenWithOptions(root, Options{FS: crash})
		require.NoError(t, err, "dies before step %d", n)
		entries := journalOf(t, cl)
		for _, e := range entries {
			if e.Event != EventBrokerStart || e.Phase != PhaseIntent {
				continue
			}
			out := oneOutcome(t, entries, e.Offset)
			listed := slices.Contains(cl.Metadata().Brokers, e.Broker)
			seen[out.Phase] = true
			switch out.Phase {
			case PhaseDone, PhaseCompleted:
				require.True(t, listed, "dies before step %d: broker %d", n, e.Broker)
			default:
				require.False(t, listed, "dies before step %d: broker %d", n, e.Broker)
			}
		}
		require.NoError(t, cl.Close())
	}
	for _, p := range []JournalPhase{PhaseRolledBack, PhaseCompleted, PhaseDone} {
		require.True(t, seen[p], "some kill ends with %q; seen %v", p, seen)
	}
}

// The operator's switch of automatic healing is a journal entry of its
// own, naming no partition, with the reason given, and survives a reopen
// like every other entry.
func TestJournalHealing(t *testing.T) {
	c, root := newCluster(t, 1)
	off, err := c.JournalHealing(false, "the controller changes no metadata", "watching a failover by hand")
	require.NoError(t, err)
	_, err = c.JournalHealing(true, "failover after 3s", "")
	require.NoError(t, err)
	c = reopen(t, c, root, 1)
	entries := journalOf(t, c)
	require.Greater(t, len(entries), int(off)+1)
	e := entries[off]
	require.Equal(t, EventHealing, e.Event)
	require.Equal(t, PhaseDone, e.Phase)
	require.Equal(t, ByOperator, e.By)
	require.Equal(t, "automatic healing off: the controller changes no metadata", e.Summary)
	require.False(t, *e.Automatic)
	require.True(t, *entries[off+1].Automatic)
	require.Equal(t, "watching a failover by hand", e.Reason)
	require.Empty(t, e.Topic)
	require.Equal(t, "automatic healing on: failover after 3s", entries[off+1].Summary)
	require.Contains(t, e.String(), "operator healing done -: automatic healing off")
}

// A failover's intent names the candidates it compared with their log
// ends, the winner first (docs/phase-5-failover.md § Candidate selection and safety checks);
// a recovery that cuts names the range it cut, [3, 4), and the quarantine
// file on its intent and on its done entry, the one written once the cut
// is made (docs/phase-5-failover.md § Worked example). The summaries say
// the same in words, unchanged.
func TestJournalStructuredFacts(t *testing.T) {
	c, _ := newCluster(t, 3)
	require.NoError(t, c.CreateTopic("orders", 1, 3))
	prod := NewProducer(c, "orders")
	sendN(t, prod, "", 3)
	require.NoError(t, c.StopBroker(2))
	require.NoError(t, c.StopBroker(3))
	_, err := prod.Send(nil, []byte("x"))
	require.Error(t, err)
	require.NoError(t, c.StopBroker(1))
	for _, b := range []int{2, 3} {
		_, err = c.StartBroker(b)
		require.NoError(t, err)
	}
	start := len(journalOf(t, c))
	_, err = c.Failover("orders", 0)
	require.NoError(t, err)
	_, err = prod.Send(nil, []byte("r3"))
	require.NoError(t, err)
	_, err = c.StartBroker(1)
	require.NoError(t, err)
	_, err = c.RecoverReplica("orders", 0, 1)
	require.NoError(t, err)

	entries := journalOf(t, c)[start:]
	require.Equal(t, []string{"failover intent operator", "failover done operator", "broker-start done operator",
		"recover intent operator", "recover done operator"}, events(entries))
	fo := entries[0]
	require.Equal(t, []JournalCandidate{{Broker: 2, LogEnd: 3}, {Broker: 3, LogEnd: 3}}, fo.Candidates)
	require.Contains(t, fo.Summary, "candidates 2 (log end 3), 3 (3)")
	require.Nil(t, entries[1].Candidates)
	intent, done := entries[3], entries[4]
	for _, e := range []JournalEntry{intent, done} {
		require.Equal(t, &JournalCut{From: 3, To: 4}, e.Cut, "%s %s", e.Event, e.Phase)
		require.NotEmpty(t, e.Quarantine, "%s %s", e.Event, e.Phase)
	}
	require.Equal(t, intent.Quarantine, done.Quarantine)
	require.Contains(t, intent.Summary, "cuts offsets 3..3 (1 records, never acknowledged)")
}

// Entries written before the structured fields existed still decode, with
// none of them: a journal on disk from an earlier version reads as it did.
// The fields are checked like the rest: candidates on a failover only, a
// cut on a recovery only and never empty.
func TestJournalEntryWithoutStructuredFacts(t *testing.T) {
	for _, old := range []string{
		`{"event":"failover","phase":"intent","by":"controller","topic":"orders","partition":0,"broker":1,` +
			`"summary":"orders/0: leader 1 -\u003e 2 (epoch 1): candidates 2 (log end 3), 3 (3); leaving the active set: [1]","reason":"r",` +
			`"before":{"partition":0,"leader":1,"leader_epoch":0,"replicas":[1,2,3],"active":[1,2,3]},` +
			`"after":{"partition":0,"leader":2,"leader_epoch":1,"replicas":[1,2,3],"active":[2,3]}}`,
		`{"event":"recover","phase":"intent","by":"operator","topic":"orders","partition":0,"broker":1,` +
			`"summary":"orders/0: broker 1 rejoins: common prefix 3 with leader 2 (log end 4); cuts offsets 3..3 (1 records, never acknowledged)",` +
			`"before":{"partition":0,"leader":2,"leader_epoch":1,"replicas":[1,2,3],"active":[2,3]},` +
			`"after":{"partition":0,"leader":2,"leader_epoch":1,"replicas":[1,2,3],"active":[1,2,3]},"quarantine":"q.bin"}`,
		`{"event":"recover","phase":"done","by":"operator","topic":"orders","partition":0,"broker":1,"summary":"s","intent":7}`,
	} {
		e, err := ParseJournalEntry([]byte(old))
		require.NoError(t, err, old)
		require.Nil(t, e.Candidates)
		require.Nil(t, e.Cut)
	}
	good := `{"event":"failover","phase":"done","by":"controller","topic":"t","partition":0,"broker":1,"summary":"s","candidates":[{"broker":2,"log_end":3}]}`
	e, err := ParseJournalEntry([]byte(good))
	require.NoError(t, err)
	require.Equal(t, []JournalCandidate{{Broker: 2, LogEnd: 3}}, e.Candidates)
	for name, data := range map[string]string{
		"candidates on a catch-up": strings.Replace(good, `"failover"`, `"catch-up"`, 1),
		"a cut on a failover":      strings.Replace(good, `"candidates":[{"broker":2,"log_end":3}]`, `"cut":{"from":3,"to":4}`, 1),
		"an empty cut": strings.Replace(strings.Replace(good, `"failover"`, `"recover"`, 1),
			`"candidates":[{"broker":2,"log_end":3}]`, `"cut":{"from":4,"to":4}`, 1),
	} {
		_, err := ParseJournalEntry([]byte(data))
		require.ErrorIs(t, err, ErrInvalidArgument, name)
	}
}
