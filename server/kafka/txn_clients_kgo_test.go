package kafka_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log/logtest"
)

// The transaction tests drive Kafka's transactions (KIP-98) through real
// clients: kgo here, sarama and confluent-kafka beside. They read what a
// client reads: a read_committed consumer sees the committed records and
// none of an aborted or open transaction, and stops at the last stable
// offset; a read_uncommitted one sees every data record and never a
// commit or abort marker.

// sentinel is the plain (non-transactional) record a test writes after
// everything else into each partition it reads: a reader that has seen it
// has read everything before it, so "nothing more" needs no wait.
const sentinel = "end"

// seeds is every broker's listening address.
func (f *fixture) seeds() []string {
	var seeds []string
	for _, b := range f.c.Brokers() {
		if a := f.srv.Addr(b.ID); a != "" {
			seeds = append(seeds, a)
		}
	}
	return seeds
}

// tickTransactions runs the coordinator's timeouts every 100 ms until the
// test ends, as the server's wiring runs them every second on the
// coordinating node; the listener alone does not.
func tickTransactions(t testing.TB, c *cluster.Cluster) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				_ = c.TickTransactions(ctx, now) // a tick that fails is tried again at the next
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// writeSentinels writes the sentinel into each of topic's partitions with
// a plain producer.
func (f *fixture) writeSentinels(t testing.TB, topicName string, partitions int) {
	t.Helper()
	cl := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range partitions {
		recs = append(recs, &kgo.Record{Topic: topicName, Partition: int32(p), Value: []byte(sentinel)})
	}
	require.NoError(t, cl.ProduceSync(ctx(t), recs...).FirstErr())
}

// readToSentinels reads topic's partitions from the start at the given
// isolation level until each has given its sentinel, and returns every
// other record read. It fails the test on a control record (kgo drops
// those it recognises, so one that arrives is a marker served as data)
// and after 20 s.
func (f *fixture) readToSentinels(t testing.TB, topicName string, partitions int, level kgo.IsolationLevel) []*kgo.Record {
	t.Helper()
	cl := f.client(t, kgo.ConsumeTopics(topicName), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(level), kgo.FetchMaxWait(100*time.Millisecond))
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got []*kgo.Record
	ended := map[int32]bool{}
	for len(ended) < partitions {
		fs := cl.PollFetches(c)
		require.NoError(t, c.Err(), "%s: sentinels seen in %d of %d partitions, %d records read", topicName, len(ended), partitions, len(got))
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			require.False(t, r.Attrs.IsControl(), "a control record at %s/%d offset %d", r.Topic, r.Partition, r.Offset)
			if string(r.Value) == sentinel {
				ended[r.Partition] = true
				return
			}
			require.False(t, ended[r.Partition], "%s/%d: a record after the sentinel, offset %d", r.Topic, r.Partition, r.Offset)
			got = append(got, r)
		})
	}
	return got
}

// values are the records' values.
func values(recs []*kgo.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = string(r.Value)
	}
	return out
}

// isFenced reports whether err is how a client learns a newer epoch of
// its transactional id exists: PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH
// from a broker that answers an older protocol version with it.
func isFenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch)
}

// etlMember is one member of the consume-transform-produce group: what it
// needs to run in this process or in a child process (passed as JSON in
// etlMemberEnv).
type etlMember struct {
	Name  string
	Seeds []string
	// Session is the member's group session timeout, Txn its
	// transaction timeout.
	Session, Txn time.Duration
	// HangIn, above zero, is the transaction (counted from 1) the member
	// stops in once its records are produced: it prints etlMidTxn and
	// waits to be killed, or with Resume for a line on its standard
	// input, then commits that transaction (EndTransaction, past the
	// session), prints etlEnded with the outcome and stops.
	HangIn int
	Resume bool
}

const (
	// etlMemberEnv carries a child process's etlMember.
	etlMemberEnv = "PYSTREAM_TEST_TXN_MEMBER"
	// etlMidTxn is the line a child prints once it is in the middle of a
	// transaction, etlEnded the start of the one it prints once it ended
	// it (with Resume).
	etlMidTxn, etlEnded = "mid-transaction", "ended"
	// etlGroup, etlIn and etlOut are the group, its input topic and the
	// output topic.
	etlGroup, etlIn, etlOut = "etl", "events", "out"
	// etlBatch is the most records one transaction carries.
	etlBatch = 10
)

// session opens the member's kgo.GroupTransactSession: a group consumer
// of etlIn in etlGroup that reads committed records only, and a
// transactional producer with its own transactional id.
func (m etlMember) session() (*kgo.GroupTransactSession, error) {
	return kgo.NewGroupTransactSession(kgo.SeedBrokers(m.Seeds...), kgo.ClientID(m.Name),
		kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }), kgo.MetadataMinAge(20*time.Millisecond),
		kgo.TransactionalID("etl-"+m.Name), kgo.TransactionTimeout(m.Txn),
		kgo.ConsumerGroup(etlGroup), kgo.ConsumeTopics(etlIn), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond),
		kgo.SessionTimeout(m.Session), kgo.HeartbeatInterval(100*time.Millisecond), kgo.RebalanceTimeout(5*time.Second))
}

// run is the member's loop: each poll of up to etlBatch records is one
// transaction that writes each record's value to etlOut and commits the
// consumed offsets with it (the session aborts instead when the group
// rebalanced meanwhile, and the records are read again). A member with
// HangIn calls hang in that transaction, after its records are produced.
// run returns when ctx ends, or with the error that ends the session,
// or that failed etlBatch produces in a row.
func (m etlMember) run(ctx context.Context, sess *kgo.GroupTransactSession, hang func()) error {
	failed := 0
	for n := 1; ; {
		fs := sess.PollRecords(ctx, etlBatch)
		if ctx.Err() != nil {
			return nil
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		if err := sess.Begin(); err != nil {
			return fmt.Errorf("%s: begin: %w", m.Name, err)
		}
		out := make([]*kgo.Record, len(recs))
		for i, r := range recs {
			out[i] = &kgo.Record{Topic: etlOut, Key: r.Key, Value: r.Value}
		}
		end := kgo.TryCommit
		if err := sess.ProduceSync(ctx, out...).FirstErr(); err != nil {
			if failed++; failed == etlBatch {
				return fmt.Errorf("%s: produce in transaction %d: %w", m.Name, n, err)
			}
			end = kgo.TryAbort
		} else {
			failed = 0
		}
		if n == m.HangIn && end == kgo.TryCommit {
			hang()
		}
		if n == m.HangIn && m.Resume {
			// Past the session's own guard (it aborts once it has seen
			// the group move on): the commit goes to the coordinator.
			err := sess.Client().EndTransaction(ctx, kgo.TryCommit)
			fmt.Printf("%s committed=%v fenced=%v err=%v\n", etlEnded, err == nil, isFenced(err), err)
			return nil
		}
		if _, err := sess.End(ctx, end); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%s: end transaction %d: %w", m.Name, n, err)
		}
		n++
	}
}

// TestKafkaTxnKgoMemberProcess is the child process of
// TestKafkaTxnKgoConsumeTransformProduce: it runs one member, given in
// etlMemberEnv, until it is killed in the middle of a transaction (or a
// minute passes). Without the variable it is skipped.
func TestKafkaTxnKgoMemberProcess(t *testing.T) {
	spec := os.Getenv(etlMemberEnv)
	if spec == "" {
		t.Skip("the child process of TestKafkaTxnKgoConsumeTransformProduce")
	}
	var m etlMember
	require.NoError(t, json.Unmarshal([]byte(spec), &m))
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, err := m.session()
	require.NoError(t, err)
	defer sess.Close()
	err = m.run(c, sess, func() {
		fmt.Println(etlMidTxn)
		if m.Resume {
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // frozen and thawed meanwhile
			return
		}
		<-c.Done() // killed here, its transaction open
	})
	require.NoError(t, err)
}

// child is a member run in a child process: its standard input, its
// output, a channel closed when it printed etlMidTxn, one that receives
// its etlEnded line, and one closed when its output ended (it exited).
type child struct {
	cmd   *exec.Cmd
	stdin io.Writer
	mid   chan struct{}
	ended chan string
	gone  chan struct{}
	// mu guards out.
	mu  sync.Mutex
	out strings.Builder
}

// startChild runs member m in a child process, this test binary again.
func startChild(t *testing.T, m etlMember) *child {
	t.Helper()
	spec, err := json.Marshal(m)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKafkaTxnKgoMemberProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), etlMemberEnv+"="+string(spec))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	ch := &child{cmd: cmd, stdin: stdin, mid: make(chan struct{}), ended: make(chan string, 1), gone: make(chan struct{})}
	require.NoError(t, cmd.Start())
	go func() {
		defer close(ch.gone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ch.mu.Lock()
			ch.out.WriteString(sc.Text() + "\n")
			ch.mu.Unlock()
			switch line := sc.Text(); {
			case line == etlMidTxn:
				close(ch.mid)
			case strings.HasPrefix(line, etlEnded+" "):
				ch.ended <- line
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL) // by its pid: this test's own child
		<-ch.gone
		_ = cmd.Wait()
	})
	return ch
}

// output is what the child printed so far.
func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// etlLoop is a running consume-transform-produce group: the victim in a
// child process, the survivors a and b in this one.
type etlLoop struct {
	f      *fixture
	victim *child
	// errs receives a survivor's fatal error.
	errs chan error
}

// The loop's size: input partitions (and output ones), records each.
const etlPartitions, etlPer = 3, 100

// startETL starts a group over a fixture of three brokers: the victim
// first, alone, so that it takes every partition; once it is in its
// second transaction (HangIn 2) the survivors join, and startETL returns
// when the group counts all three.
func startETL(t *testing.T, victim etlMember) *etlLoop {
	t.Helper()
	f := startGroups(t, 3, etlPartitions, 3)
	require.NoError(t, f.c.CreateTopic(etlOut, etlPartitions, 3))
	f.srv.Reconcile()
	f.produceEach(t, etlPartitions, etlPer) // values p<partition>-<i>
	tickTransactions(t, f.c)

	victim.Name, victim.Seeds, victim.Session, victim.Txn, victim.HangIn = "child", f.seeds(), time.Second, 3*time.Second, 2
	l := &etlLoop{f: f, victim: startChild(t, victim), errs: make(chan error, 2)}
	select {
	case <-l.victim.mid:
	case <-l.victim.gone:
		t.Fatalf("the child exited before its second transaction; its output:\n%s", l.victim.output())
	case <-time.After(20 * time.Second):
		t.Fatalf("the child is not mid-transaction after 20 s; its output:\n%s", l.victim.output())
	}
	for _, name := range []string{"a", "b"} {
		m := etlMember{Name: name, Seeds: f.seeds(), Session: 3 * time.Second, Txn: 10 * time.Second}
		sess, err := m.session()
		require.NoError(t, err)
		c, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := m.run(c, sess, nil); err != nil {
				l.errs <- err
			}
		}()
		t.Cleanup(func() { cancel(); <-done; sess.Close() })
	}
	logtest.WaitFor(t, 15*time.Second, "three members in the group", func() (bool, string) {
		d, ok := f.groups.Describe(etlGroup)
		return ok && len(d.Members) == 3, fmt.Sprintf("%d members", len(d.Members))
	})
	return l
}

// awaitDone waits until the group has committed every input offset and
// no transaction holds an output partition's last stable offset.
func (l *etlLoop) awaitDone(t *testing.T) {
	t.Helper()
	adm := kadm.NewClient(l.f.client(t))
	logtest.WaitFor(t, 25*time.Second, "the survivors commit every input offset and no transaction is open", func() (bool, string) {
		select {
		case err := <-l.errs:
			t.Fatalf("a survivor failed: %v", err)
		default:
		}
		committed, err := adm.FetchOffsets(ctx(t), etlGroup)
		if err != nil {
			return false, "fetch offsets: " + err.Error()
		}
		for p := range int32(etlPartitions) {
			if o, _ := committed.Lookup(etlIn, p); o.At != etlPer {
				return false, fmt.Sprintf("%s/%d committed up to %d of %d", etlIn, p, o.At, etlPer)
			}
		}
		stable, err := adm.ListCommittedOffsets(ctx(t), etlOut)
		if err != nil {
			return false, "last stable offsets: " + err.Error()
		}
		ends, err := adm.ListEndOffsets(ctx(t), etlOut)
		if err != nil {
			return false, "end offsets: " + err.Error()
		}
		for p := range int32(etlPartitions) {
			s, _ := stable.Lookup(etlOut, p)
			e, _ := ends.Lookup(etlOut, p)
			if s.Err != nil || e.Err != nil || s.Offset != e.Offset {
				return false, fmt.Sprintf("%s/%d: last stable offset %d (%v), end %d (%v)", etlOut, p, s.Offset, s.Err, e.Offset, e.Err)
			}
		}
		return true, ""
	})
}

// assertExactlyOnce writes the sentinels and reads the output both ways:
// read_committed holds every input record exactly once, each written in
// a transaction; read_uncommitted holds input records only (no control
// record), the victim's aborted ones too. The victim's transaction ended
// aborted.
func (l *etlLoop) assertExactlyOnce(t *testing.T) {
	t.Helper()
	l.f.writeSentinels(t, etlOut, etlPartitions)
	want := map[string]bool{}
	for p := range etlPartitions {
		for i := range etlPer {
			want[fmt.Sprintf("p%d-%d", p, i)] = true
		}
	}
	committed := l.f.readToSentinels(t, etlOut, etlPartitions, kgo.ReadCommitted())
	seen := map[string]int{}
	for _, r := range committed {
		seen[string(r.Value)]++
		require.True(t, want[string(r.Value)], "%q is no input record", r.Value)
		require.True(t, r.Attrs.IsTransactional(), "%q was written in a transaction", r.Value)
	}
	for v := range want {
		require.Equal(t, 1, seen[v], "input record %s in the committed output exactly once", v)
	}

	all := l.f.readToSentinels(t, etlOut, etlPartitions, kgo.ReadUncommitted())
	for _, r := range all {
		require.True(t, want[string(r.Value)], "read_uncommitted: %q is no input record", r.Value)
	}
	require.Greater(t, len(all), len(committed), "read_uncommitted sees the victim's records, acknowledged before it stopped")
	t.Logf("read_committed %d records, read_uncommitted %d (aborted ones too)", len(committed), len(all))

	awaitTxnState(t, l.f.c, "etl-child", cluster.TxnCompleteAbort)
}

// awaitTxnState waits until the coordinator holds transactional id's
// transaction in state, with an epoch above 0 when it is an abort (the
// timeout's, or a fence's, bumps it); its markers may be readable a
// moment before the state is saved complete.
func awaitTxnState(t *testing.T, c *cluster.Cluster, id string, state cluster.TxnState) {
	t.Helper()
	logtest.WaitFor(t, 10*time.Second, fmt.Sprintf("transaction %s %s", id, state), func() (bool, string) {
		txns, err := c.Transactions()
		if err != nil {
			return false, err.Error()
		}
		for _, tx := range txns {
			if tx.ID == id {
				return tx.State == state && (state != cluster.TxnCompleteAbort || tx.Epoch > 0), fmt.Sprintf("%s at epoch %d", tx.State, tx.Epoch)
			}
		}
		return false, id + " unknown"
	})
}

// TestKafkaTxnKgoConsumeTransformProduce: the exactly-once loop (KIP-98,
// KIP-447). Three members of one group (kgo.GroupTransactSession) read a
// topic of three partitions and write each record to an output topic in
// transactions that commit the consumed offsets with the records
// (TxnOffsetCommit). One member is a child process, SIGKILLed after it
// produced into a transaction and before it ended it: the coordinator
// aborts that transaction at its timeout, the group gives its partitions
// to the survivors, which read on from its last committed offsets. In
// the end a read_committed reader finds every input record in the output
// exactly once; a read_uncommitted one finds more (the aborted
// transactions' records, the killed member's among them) but never a
// control record.
func TestKafkaTxnKgoConsumeTransformProduce(t *testing.T) {
	l := startETL(t, etlMember{})
	require.NoError(t, l.victim.cmd.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	t.Logf("child SIGKILLed in its second transaction")
	l.awaitDone(t)
	t.Logf("done %v after the kill", time.Since(killed).Round(time.Millisecond))
	l.assertExactlyOnce(t)
}

// TestKafkaTxnKgoZombieMember: the same loop, but the member in the
// middle of a transaction is frozen (SIGSTOP), not killed: its session
// expires, the survivors take its partitions and finish, and the
// coordinator aborts its transaction at its timeout, bumping its epoch.
// Thawed (SIGCONT), the zombie goes on to commit that transaction
// (EndTxn, past GroupTransactSession's own guard): the coordinator
// refuses it as fenced, and nothing it wrote is committed: the output
// still holds every input record exactly once.
func TestKafkaTxnKgoZombieMember(t *testing.T) {
	l := startETL(t, etlMember{Resume: true})
	require.NoError(t, l.victim.cmd.Process.Signal(syscall.SIGSTOP))
	t.Logf("child SIGSTOPped in its second transaction")
	l.awaitDone(t)
	awaitTxnState(t, l.f.c, "etl-child", cluster.TxnCompleteAbort) // at its timeout, its epoch bumped
	require.NoError(t, l.victim.cmd.Process.Signal(syscall.SIGCONT))
	_, err := io.WriteString(l.victim.stdin, "resume\n")
	require.NoError(t, err)
	select {
	case line := <-l.victim.ended:
		require.Contains(t, line, "committed=false", "the zombie's commit fails")
		require.Contains(t, line, "fenced=true", "as fenced")
		t.Logf("zombie: %s", line)
	case <-time.After(15 * time.Second):
		t.Fatalf("the zombie did not end its transaction after 15 s; its output:\n%s", l.victim.output())
	}
	l.assertExactlyOnce(t)
}

// TestKafkaTxnKgoTimeoutAndFencing: a transaction whose producer went
// away (closed without ending it) is aborted by the coordinator at its
// timeout: a read_committed reader never sees its records, and is held
// at its first offset (the last stable offset, which ListOffsets at
// read_committed names as the end) only until then — a plain record
// written after it becomes readable. A second producer with the
// same transactional id fences the first: the first's next produce and
// its commit fail, and its open transaction is aborted.
func TestKafkaTxnKgoTimeoutAndFencing(t *testing.T) {
	const timeout = 2 * time.Second
	f := start(t, 3, 2, 3)
	tickTransactions(t, f.c)
	plain := f.client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	transactional := func(id string) *kgo.Client {
		return f.client(t, kgo.TransactionalID(id), kgo.TransactionTimeout(timeout), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	rec := func(p int32, v string) *kgo.Record {
		return &kgo.Record{Topic: "events", Partition: p, Value: []byte(v)}
	}

	// The abandoned transaction, on partition 0.
	started := time.Now() // before the coordinator's clock for it starts
	gone := transactional("gone")
	require.NoError(t, gone.BeginTransaction())
	require.NoError(t, gone.ProduceSync(ctx(t), rec(0, "gone-1"), rec(0, "gone-2")).FirstErr())
	begun := time.Now()
	gone.Close() // no EndTransaction: to the coordinator, a producer that went away
	require.NoError(t, plain.ProduceSync(ctx(t), rec(0, "after-gone")).FirstErr())
	// ListOffsets at read_committed names the last stable offset as the
	// end (kadm's ListCommittedOffsets), at read_uncommitted the high
	// watermark; the open transaction holds the first at its first record.
	adm := kadm.NewClient(f.client(t))
	stable, err := adm.ListCommittedOffsets(ctx(t), "events")
	require.NoError(t, err)
	ends, err := adm.ListEndOffsets(ctx(t), "events")
	require.NoError(t, err)
	lso, _ := stable.Lookup("events", 0)
	hw, _ := ends.Lookup("events", 0)
	require.EqualValues(t, 3, hw.Offset, "gone-1, gone-2, after-gone")
	require.Less(t, time.Since(started), timeout, "still open: the last stable offset is asked in time")
	require.EqualValues(t, 0, lso.Offset, "ListOffsets read_committed: the open transaction's first offset")

	reader := f.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	c, cancel := context.WithTimeout(context.Background(), timeout+8*time.Second)
	defer cancel()
	var read []string
	for len(read) == 0 {
		fs := reader.PollFetches(c)
		require.NoError(t, c.Err(), "read_committed is held past the abandoned transaction's timeout")
		read = append(read, values(fs.Records())...)
	}
	require.Equal(t, []string{"after-gone"}, read, "the abandoned records are never read committed")
	require.GreaterOrEqual(t, time.Since(started), timeout, "read_committed stops at the open transaction's first offset until it is aborted")
	held := time.Since(begun)
	t.Logf("read_committed held %v by a transaction of timeout %v", held.Round(time.Millisecond), timeout)
	require.Less(t, held, timeout+5*time.Second, "the last stable offset moves on after the timeout")
	uncommitted := f.readUncommittedUntil(t, 0, "after-gone")
	require.Equal(t, []string{"gone-1", "gone-2"}, uncommitted, "read_uncommitted sees the aborted records: they were written")

	// Fencing, on partition 1.
	first := transactional("twin")
	require.NoError(t, first.BeginTransaction())
	require.NoError(t, first.ProduceSync(ctx(t), rec(1, "first-1")).FirstErr())
	second := transactional("twin")
	require.NoError(t, second.BeginTransaction())
	require.NoError(t, second.ProduceSync(ctx(t), rec(1, "second-1")).FirstErr(), "the second producer initializes, fencing the first")
	err = first.ProduceSync(ctx(t), rec(0, "first-2")).FirstErr()
	require.Error(t, err, "the fenced producer's next produce fails")
	require.True(t, isFenced(err), "fenced: %v", err)
	err = first.EndTransaction(ctx(t), kgo.TryCommit)
	require.Error(t, err, "the fenced producer cannot commit")
	require.NoError(t, second.EndTransaction(ctx(t), kgo.TryCommit))
	f.writeSentinels(t, "events", 2)
	var got []string
	for _, r := range f.readToSentinels(t, "events", 2, kgo.ReadCommitted()) {
		if r.Partition == 1 {
			got = append(got, string(r.Value))
		}
	}
	require.Equal(t, []string{"second-1"}, got, "the fenced producer's records are aborted, the second's committed")
}

// readUncommittedUntil reads events/p read_uncommitted from the start up
// to the record whose value is stop, and returns the values before it.
func (f *fixture) readUncommittedUntil(t testing.TB, p int32, stop string) []string {
	t.Helper()
	cl := f.client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {p: kgo.NewOffset().AtStart()}}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.FetchMaxWait(100*time.Millisecond))
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for {
		fs := cl.PollFetches(c)
		require.NoError(t, c.Err(), "read_uncommitted: %q not read; read %v", stop, got)
		for _, v := range values(fs.Records()) {
			if v == stop {
				return got
			}
			got = append(got, v)
		}
	}
}
