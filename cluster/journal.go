package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/topic"
)

// JournalEvent names what a journal entry is about.
type JournalEvent string

// The events the journal records: every phase-5 operation, the leader move
// and the shrink of the active set, broker stops and starts, and the
// deletion of a topic.
const (
	EventCatchUp     JournalEvent = "catch-up"
	EventDeactivate  JournalEvent = "deactivate"
	EventFailover    JournalEvent = "failover"
	EventRecover     JournalEvent = "recover"
	EventMoveLeader  JournalEvent = "move-leader"
	EventBrokerStop  JournalEvent = "broker-stop"
	EventBrokerStart JournalEvent = "broker-start"
	// EventDeleteTopic is a topic's deletion (DeleteTopic). Its entries
	// name the topic; their partition means nothing, and its intent has no
	// before and after: the change is the topic leaving cluster.meta.
	EventDeleteTopic JournalEvent = "delete-topic"
	// EventRetention is a retention pass that deleted segments of a
	// partition's replicas (EnforceRetention), or a raise of its log start
	// by hand (AdvanceLogStart, a Kafka DeleteRecords); Removed lists the
	// segments deleted.
	EventRetention JournalEvent = "retention"
	// EventAlterConfig is a change of a topic's configuration overrides
	// (AlterTopicConfig). Its entries name the topic; ConfigBefore and
	// ConfigAfter are the overrides before and after the change (an
	// empty one: none, the server's defaults).
	EventAlterConfig JournalEvent = "alter-config"
	// EventHealing is the operator switching the server's automatic
	// healing (its controller's failover, recovery and active-set
	// changes) off or on at run time (JournalHealing). Its entries name
	// no partition and no broker.
	EventHealing JournalEvent = "healing"
)

// JournalPhase says where in its operation an entry was written.
type JournalPhase string

// An operation that changes cluster.meta writes PhaseIntent before it
// changes anything, then PhaseDone or PhaseFailed. An intent left without
// an outcome by a crash gets one when the cluster is next opened:
// PhaseCompleted when cluster.meta holds the intent's leadership (for a
// deletion: no longer holds the topic), PhaseRolledBack when it does not. Operations that change no metadata
// (catch-up, broker stop and start) write only PhaseDone or PhaseFailed.
const (
	PhaseIntent     JournalPhase = "intent"
	PhaseDone       JournalPhase = "done"
	PhaseFailed     JournalPhase = "failed"
	PhaseCompleted  JournalPhase = "completed"
	PhaseRolledBack JournalPhase = "rolled-back"
	// PhaseRefused is a controller decision its operation refused before
	// changing anything (JournalRefusal): why the cluster stays as it is.
	PhaseRefused JournalPhase = "refused"
)

// Who asked for an operation, as the journal records it.
const (
	// ByOperator is a call through the library, the API or the CLI.
	ByOperator = "operator"
	// ByController is an action of the controller (Apply).
	ByController = "controller"
	// ByStartup is an outcome the cluster wrote for an interrupted
	// operation when it was opened again.
	ByStartup = "startup"
)

// JournalEntry is one line of the cluster's journal: what happened to
// which partition or broker, who asked, why, and the numbers it was
// decided on.
type JournalEntry struct {
	// Offset is the entry's position in the journal, from 0.
	Offset uint64 `json:"-"`
	// Time is when the entry was written.
	Time time.Time `json:"-"`
	// Event and Phase say what and where in the operation.
	Event JournalEvent `json:"event"`
	Phase JournalPhase `json:"phase"`
	// By is ByOperator, ByController, ByStartup or ByRetention.
	By string `json:"by"`
	// Topic and Partition name the partition, Broker the broker acted on
	// (a follower, the new leader, the failed leader, a stopped broker).
	Topic     string `json:"topic,omitempty"`
	Partition int    `json:"partition"`
	Broker    int    `json:"broker"`
	// Summary is what happened, with its numbers, in one line.
	Summary string `json:"summary"`
	// Reason is why: the controller's reason for its decision; empty for
	// an operator's call.
	Reason string `json:"reason,omitempty"`
	// Intent is the offset of the intent an outcome belongs to.
	Intent *uint64 `json:"intent,omitempty"`
	// Before and After are the partition's leadership before the
	// operation and the one it writes (intents only).
	Before *PartitionMetadata `json:"before,omitempty"`
	After  *PartitionMetadata `json:"after,omitempty"`
	// ConfigBefore and ConfigAfter are a topic's configuration overrides
	// before and after an EventAlterConfig (intent and done entries).
	ConfigBefore map[string]string `json:"config_before,omitempty"`
	ConfigAfter  map[string]string `json:"config_after,omitempty"`
	// Quarantine is the file, relative to the cluster root, that keeps the
	// records a recovery cut from a replica (its intent and its done
	// entry).
	Quarantine string `json:"quarantine,omitempty"`
	// Candidates are the followers a failover compared, the winner first,
	// then the rest by broker id, each with its log end: the numbers of
	// the election rule (a failover's intent; in cluster mode its done
	// entry). The summary says the same in words; entries written before
	// this field existed have it only there.
	Candidates []JournalCandidate `json:"candidates,omitempty"`
	// Cut is the offsets a recovery cut from the replica, never
	// acknowledged (a recover intent and done entry that cut something;
	// in cluster mode the follower's own cut). Entries written before this
	// field existed have the range only in their summary.
	Cut *JournalCut `json:"cut,omitempty"`
	// Automatic is what a healing entry switched automatic healing to
	// (entries written before this field existed say it in their summary
	// only).
	Automatic *bool `json:"automatic,omitempty"`
	// Removed are the segments a retention pass deleted, per broker.
	Removed []RemovedSegment `json:"removed,omitempty"`
	// Error says why an operation failed.
	Error string `json:"error,omitempty"`
}

// JournalCandidate is one follower a failover compared.
type JournalCandidate struct {
	Broker int    `json:"broker"`
	LogEnd uint64 `json:"log_end"`
}

// JournalCut is a range of offsets a recovery cut: From up to, not
// including, To.
type JournalCut struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// String renders the entry as one line for people — the one rendering,
// which `pystream cluster journal` prints too:
//
//	5 2024-12-02T09:20:00.124Z operator failover done orders/0 broker 1: orders/0: leader 2, epoch 1, ...
//	9 2024-12-02T09:20:03Z controller recover intent orders/0 broker 1: ... (because ...); cut records kept in ...
//
// The partition is named for partition events, the topic alone for a
// topic's deletion, "-" for a broker's stop or start; the broker when
// there is one.
func (e JournalEntry) String() string {
	where := "-"
	switch {
	case e.Event == EventDeleteTopic || e.Event == EventAlterConfig:
		where = e.Topic
	case e.Topic != "":
		where = fmt.Sprintf("%s/%d", e.Topic, e.Partition)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %s %s %s %s", e.Offset, e.Time.UTC().Format(time.RFC3339Nano), e.By, e.Event, e.Phase, where)
	if e.Broker > 0 {
		fmt.Fprintf(&b, " broker %d", e.Broker)
	}
	fmt.Fprintf(&b, ": %s", e.Summary)
	if e.Reason != "" {
		fmt.Fprintf(&b, " (because %s)", e.Reason)
	}
	if e.Quarantine != "" {
		fmt.Fprintf(&b, "; cut records kept in %s", e.Quarantine)
	}
	if e.Error != "" {
		fmt.Fprintf(&b, "; error: %s", e.Error)
	}
	return b.String()
}

// JournalDir is the directory of the cluster journal under root.
func JournalDir(root string) string { return filepath.Join(root, "journal") }

// JournalPath is the journal's log file: <root>/journal/log.bin, a PyStream
// log whose payloads are JSON entries.
func JournalPath(root string) string { return filepath.Join(JournalDir(root), log.FileName) }

// EncodeJournalEntry renders e as a journal payload (JSON, no newline).
func EncodeJournalEntry(e JournalEntry) ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// ParseJournalEntry decodes one journal payload: JSON with the fields of
// JournalEntry, no others, no trailing data, a known event and phase.
// Offset and Time come from the record, not the payload.
func ParseJournalEntry(data []byte) (JournalEntry, error) {
	var e JournalEntry
	if err := strictJSON(data, &e); err != nil {
		return JournalEntry{}, fmt.Errorf("cluster: journal entry: %w: %w", ErrInvalidArgument, err)
	}
	if err := e.validate(); err != nil {
		return JournalEntry{}, err
	}
	return e, nil
}

// validate checks what the JSON shape cannot.
func (e JournalEntry) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cluster: journal entry: "+format+": %w", append(args, ErrInvalidArgument)...)
	}
	switch e.Event {
	case EventCatchUp, EventDeactivate, EventFailover, EventRecover, EventMoveLeader, EventBrokerStop, EventBrokerStart, EventDeleteTopic, EventRetention, EventAlterConfig, EventHealing:
	default:
		return bad("unknown event %q", e.Event)
	}
	switch e.Phase {
	case PhaseIntent, PhaseDone, PhaseFailed, PhaseCompleted, PhaseRolledBack, PhaseRefused:
	default:
		return bad("unknown phase %q", e.Phase)
	}
	switch e.By {
	case ByOperator, ByController, ByStartup, ByRetention:
	default:
		return bad("unknown author %q", e.By)
	}
	if e.Event == EventDeleteTopic {
		if e.Topic == "" {
			return bad("a topic deletion needs its topic")
		}
		if e.Before != nil || e.After != nil {
			return bad("a topic deletion has no before and after")
		}
		return nil
	}
	if (e.ConfigBefore != nil || e.ConfigAfter != nil) && e.Event != EventAlterConfig {
		return bad("only a configuration change has config before and after")
	}
	if e.Event == EventAlterConfig {
		if e.Topic == "" {
			return bad("a configuration change needs its topic")
		}
		if e.Before != nil || e.After != nil {
			return bad("a configuration change has no partition before and after")
		}
		for _, c := range []map[string]string{e.ConfigBefore, e.ConfigAfter} {
			if _, err := topic.ParseConfigOverrides(c); err != nil {
				return fmt.Errorf("cluster: journal entry: %w: %w", ErrInvalidArgument, err)
			}
		}
		return nil
	}
	if len(e.Removed) > 0 && e.Event != EventRetention {
		return bad("only a retention pass removes segments")
	}
	if len(e.Candidates) > 0 && e.Event != EventFailover {
		return bad("only a failover compares candidates")
	}
	if e.Automatic != nil && e.Event != EventHealing {
		return bad("only a healing entry switches automatic healing")
	}
	if e.Cut != nil && (e.Event != EventRecover || e.Cut.From >= e.Cut.To) {
		return bad("only a recovery cuts, a range from one offset up to a higher one")
	}
	if e.Event == EventRetention {
		// A retention pass changes replica logs, not cluster.meta.
		if e.Topic == "" {
			return bad("a retention pass needs its partition")
		}
		if e.Before != nil || e.After != nil {
			return bad("a retention pass has no before and after")
		}
		for _, r := range e.Removed {
			if r.Broker < 1 || r.Next <= r.Base {
				return bad("removed segment %+v is not a broker's offsets [base, next)", r)
			}
		}
		return nil
	}
	if e.Event == EventHealing {
		if e.Topic != "" || e.Before != nil || e.After != nil {
			return bad("a change of automatic healing names no partition")
		}
		return nil
	}
	if e.Event == EventBrokerStart {
		// A broker's first start writes cluster.meta (the broker list):
		// its intent names the broker, no partition.
		if e.Before != nil || e.After != nil {
			return bad("a broker start has no before and after")
		}
		return nil
	}
	if e.Phase == PhaseIntent && (e.Before == nil || e.After == nil) {
		return bad("an intent needs before and after")
	}
	return nil
}

// journal appends entries to the journal log, which it opens on first use
// so that a cluster that never acted has no journal file.
type journal struct {
	root string
	opts log.Options

	// mu guards l.
	mu sync.Mutex
	l  *log.Log
}

// logLocked returns the open journal log, opening or creating it. j.mu
// must be held.
func (j *journal) logLocked(create bool) (*log.Log, error) {
	if j.l != nil {
		return j.l, nil
	}
	path := JournalPath(j.root)
	if !create {
		if _, err := j.opts.FS.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil // no journal yet: nothing to read
		} else if err != nil {
			return nil, fmt.Errorf("cluster: journal: %w", err)
		}
	}
	if _, err := durable.MkdirAll(j.opts.FS, JournalDir(j.root)); err != nil {
		return nil, fmt.Errorf("cluster: journal: %w", err)
	}
	l, err := log.OpenWithOptions(path, j.opts)
	if err != nil {
		return nil, fmt.Errorf("cluster: journal: %w", err)
	}
	j.l = l
	return l, nil
}

// append writes e durably and returns its offset.
func (j *journal) append(e JournalEntry) (uint64, error) {
	payload, err := EncodeJournalEntry(e)
	if err != nil {
		return 0, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	l, err := j.logLocked(true)
	if err != nil {
		return 0, err
	}
	if durable.NoSpace(l.Failed()) {
		// An earlier entry failed on a full disk. This one may find space
		// again: the log is opened anew from disk first, as ReopenBroker
		// does (the failed entry is not retried). Without it, nothing the
		// controller does could be journaled until an operator reopened
		// a broker, including what it does to heal after the disk.
		_ = l.Close() // the scan below is what counts
		j.l = nil
		if l, err = j.logLocked(true); err != nil {
			return 0, err
		}
	}
	rec, err := l.Append(payload)
	if err != nil {
		return 0, fmt.Errorf("cluster: journal: %w", err)
	}
	return rec.Offset, nil
}

// read returns up to max entries from offset since on.
func (j *journal) read(since uint64, max int) ([]JournalEntry, error) {
	j.mu.Lock()
	l, err := j.logLocked(false)
	j.mu.Unlock()
	if err != nil || l == nil {
		return nil, err
	}
	recs, err := l.Read(since, max)
	if err != nil {
		return nil, fmt.Errorf("cluster: journal: %w", err)
	}
	out := make([]JournalEntry, 0, len(recs))
	for _, r := range recs {
		e, err := ParseJournalEntry(r.Payload)
		if err != nil {
			return nil, fmt.Errorf("cluster: journal entry %d: %w", r.Offset, err)
		}
		e.Offset, e.Time = r.Offset, time.Unix(0, r.Timestamp)
		out = append(out, e)
	}
	return out, nil
}

// end is the offset the next entry will get.
func (j *journal) end() (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	l, err := j.logLocked(false)
	if err != nil || l == nil {
		return 0, err
	}
	return l.NextOffset(), nil
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.l == nil {
		return nil
	}
	err := j.l.Close()
	j.l = nil
	return err
}

// Journal returns up to max journal entries from offset since on, oldest
// first; none past the end. max below 1 is ErrInvalidArgument. A damaged
// journal is reported, never skipped.
func (c *Cluster) Journal(since uint64, max int) ([]JournalEntry, error) {
	if max < 1 {
		return nil, fmt.Errorf("cluster: journal: max %d: %w", max, ErrInvalidArgument)
	}
	return c.store.JournalEntries(since, max)
}

// JournalEnd is the offset the next journal entry will get: the number of
// entries so far.
func (c *Cluster) JournalEnd() (uint64, error) { return c.store.JournalEnd() }

// JournalRefusal records that the operation of a planned action refused
// it without changing anything, with the action's reason and the refusal:
// so that the journal says why, for example, a partition whose leader is
// gone still has none. The controller calls it once per distinct refusal.
func (c *Cluster) JournalRefusal(a Action, refusal error) error {
	e := JournalEntry{Event: JournalEvent(a.Kind), Phase: PhaseRefused, By: ByController, Topic: a.Topic, Partition: a.Partition,
		Broker: a.Broker, Summary: fmt.Sprintf("%s/%d: %s not carried out", a.Topic, a.Partition, a.Kind), Reason: a.Reason,
		Error: c.relative(refusal.Error())}
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	if _, err := c.store.Journal(ctx, e); err != nil {
		return fmt.Errorf("cluster: journal the refusal of %s: %w", a, err)
	}
	return nil
}

// JournalHealing switches automatic healing on or off in the metadata
// store and records it in the journal, with summary saying what that
// means and the operator's reason. It returns the entry's offset.
func (c *Cluster) JournalHealing(on bool, summary, reason string) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.requestTimeout)
	defer cancel()
	if _, err := c.store.SetHealing(ctx, on, summary, reason); err != nil {
		return 0, err
	}
	end, err := c.store.JournalEnd()
	if err != nil || end == 0 {
		return 0, err
	}
	return end - 1, nil
}

// Healing is automatic healing as last switched through the metadata
// store, and whether it ever was.
func (c *Cluster) Healing() (on, switched bool) {
	c.store.Read(func(s *MetaState) {
		if s.Healing != nil {
			on, switched = *s.Healing, true
		}
	})
	return on, switched
}

// ErrJournalFailed is wrapped when an operation took effect but its
// outcome could not be added to the journal; the next Open adds it.
var ErrJournalFailed = errors.New("cluster: the operation took effect, but its journal entry could not be written")

// cause is who asked for an operation and why, for the journal.
type cause struct {
	by     string
	reason string
	// journaled, when set, is made true once the operation has written a
	// journal entry (Apply reports it, so a refusal is journaled once).
	journaled *bool
	// forwarded is set for an operation another process sent here
	// (Operate): it is not sent on.
	forwarded bool
	// ctx, when set, ends the operation early: the request that sent it
	// here ended, or a broker it waits on stopped reporting.
	ctx context.Context
}

// context is the context an operation runs in.
func (cs cause) context() context.Context {
	if cs.ctx != nil {
		return cs.ctx
	}
	return context.Background()
}

var byOperator = cause{by: ByOperator}

// op is one journaled operation on a partition (or, for a deletion, on a
// whole topic), from intent to outcome.
type op struct {
	c      *Cluster
	cause  cause
	event  JournalEvent
	p      *partition
	broker int
	intent *uint64
	// topic names the topic of an operation on no one partition (p nil).
	topic string
}

func (c *Cluster) newOp(cs cause, ev JournalEvent, p *partition, broker int) *op {
	return &op{c: c, cause: cs, event: ev, p: p, broker: broker}
}

func (o *op) entry(phase JournalPhase, summary string) JournalEntry {
	e := JournalEntry{Event: o.event, Phase: phase, By: o.cause.by, Broker: o.broker, Summary: o.c.relative(summary),
		Reason: o.cause.reason, Intent: o.intent}
	if o.p != nil {
		e.Topic, e.Partition = o.p.topic, o.p.index
	} else if o.topic != "" {
		e.Topic = o.topic
	}
	return e
}

// append writes e to the journal as one of o's entries.
func (o *op) append(ctx context.Context, e JournalEntry) (uint64, error) {
	off, err := o.c.store.Journal(ctx, e)
	if err == nil {
		o.journaled()
	}
	return off, err
}

func (o *op) journaled() {
	if o.cause.journaled != nil {
		*o.cause.journaled = true
	}
}

// intend journals the intent of a change of the partition's leadership or
// active set (MetaStore.Intend). Nothing may change before it returns
// without error.
func (o *op) intend(ctx context.Context, cmd MetaCommand, words ChangeWords) error {
	off, err := o.c.store.Intend(ctx, cmd, words)
	if err != nil {
		return err
	}
	o.journaled()
	o.intent = &off
	return nil
}

// change commits the change intend journaled (MetaStore.Change).
func (o *op) change(ctx context.Context, cmd MetaCommand, words ChangeWords) (PartitionMetadata, error) {
	cmd.Summary, cmd.Intent = words.Outcome, o.intent
	if words.Cut != nil {
		cmd.Cut, cmd.Quarantine = words.Cut, words.Quarantine
	}
	return o.c.store.Change(ctx, cmd, *o.intent, words)
}

// done records success. The operation has taken effect whatever happens
// here: a failure is reported wrapping ErrJournalFailed.
func (o *op) done(summary string) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.c.requestTimeout)
	defer cancel()
	if _, err := o.append(ctx, o.entry(PhaseDone, summary)); err != nil {
		return fmt.Errorf("%w: %w", ErrJournalFailed, err)
	}
	return nil
}

// fail records that the operation failed with err and returns err, joined
// with any failure to record it.
func (o *op) fail(err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.c.requestTimeout)
	defer cancel()
	e := o.entry(PhaseFailed, "failed")
	e.Error = o.c.relative(err.Error())
	if _, jerr := o.append(ctx, e); jerr != nil {
		return errors.Join(err, fmt.Errorf("%w: %w", ErrJournalFailed, jerr))
	}
	return err
}

// relative turns the cluster's absolute paths in s into paths relative
// to its root, so that the journal names files the way an operator sees
// them in the data directory.
func (c *Cluster) relative(s string) string {
	return strings.ReplaceAll(s, c.root+string(filepath.Separator), "")
}

// reconcileJournal gives every intent left without an outcome (the process
// died during the operation) its outcome: completed when cluster.meta holds
// the intent's leadership, rolled back otherwise. cluster.meta is written
// atomically and last, so an operation is always one or the other. A topic
// deletion is reconciled by reconcileDeletion, which also finishes removing
// the files of a deletion that was committed.
func (c *Cluster) reconcileJournal() error {
	open := map[uint64]JournalEntry{}
	var order []uint64
	for since := uint64(0); ; {
		batch, err := c.files.journal.read(since, 256)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		for _, e := range batch {
			switch {
			case e.Phase == PhaseIntent:
				open[e.Offset] = e
				order = append(order, e.Offset)
			case e.Intent != nil:
				delete(open, *e.Intent)
			}
		}
		since = batch[len(batch)-1].Offset + 1
	}
	for _, off := range order {
		e, ok := open[off]
		if !ok {
			continue
		}
		if e.Event == EventDeleteTopic {
			if err := c.reconcileDeletion(off, e); err != nil {
				return err
			}
			continue
		}
		if e.Event == EventAlterConfig {
			if err := c.reconcileAlterConfig(off, e); err != nil {
				return err
			}
			continue
		}
		if e.Event == EventRetention {
			// Each segment's deletion is crash-safe on its own; what the
			// pass (or a raise of the log start, AdvanceLogStart) had not
			// deleted yet, the next pass deletes.
			summary := "the process stopped during the retention pass"
			if e.By != ByRetention {
				summary = "the process stopped while the log start was being raised"
			}
			out := JournalEntry{Event: e.Event, By: ByStartup, Topic: e.Topic, Partition: e.Partition, Broker: e.Broker, Intent: &off,
				Phase: PhaseFailed, Summary: summary,
				Error: "interrupted; the next retention pass deletes what it had not deleted yet"}
			if _, err := c.files.journal.append(out); err != nil {
				return err
			}
			continue
		}
		if e.Event == EventBrokerStart {
			out := JournalEntry{Event: e.Event, By: ByStartup, Broker: e.Broker, Intent: &off,
				Phase: PhaseRolledBack, Summary: fmt.Sprintf("the process stopped before cluster.meta listed broker %d", e.Broker)}
			if c.knownBroker(e.Broker) {
				out.Phase, out.Summary = PhaseCompleted, fmt.Sprintf("the process stopped after cluster.meta listed broker %d", e.Broker)
			}
			if _, err := c.files.journal.append(out); err != nil {
				return err
			}
			continue
		}
		out := JournalEntry{Event: e.Event, By: ByStartup, Topic: e.Topic, Partition: e.Partition, Broker: e.Broker,
			Intent: &off, Quarantine: e.Quarantine}
		cur, found := c.partitionMetadata(e.Topic, e.Partition)
		if found && equalLeadership(cur, *e.After) {
			out.Phase, out.Summary = PhaseCompleted, "the process stopped after the change was written: "+describeLeadership(cur)
		} else {
			out.Phase, out.Summary = PhaseRolledBack, "the process stopped before the change was written: "+describeLeadership(cur)
			if e.Event == EventRecover && e.Quarantine != "" {
				// Recovery may already have cut and refilled the
				// replica: it stays inactive until recovered again, and
				// what it cut is in the quarantine file.
				out.Summary += fmt.Sprintf("; broker %d's replica stays inactive until it is recovered again", e.Broker)
			}
		}
		if _, err := c.files.journal.append(out); err != nil {
			return err
		}
	}
	return nil
}

// partitionMetadata returns a partition's entry of the persisted metadata.
func (c *Cluster) partitionMetadata(topicName string, partition int) (PartitionMetadata, bool) {
	c.files.metaMu.Lock()
	defer c.files.metaMu.Unlock()
	t, ok := c.files.meta.Topics[topicName]
	if !ok || partition < 0 || partition >= len(t.Partitions) {
		return PartitionMetadata{}, false
	}
	return t.Partitions[partition].clone(), true
}

func equalLeadership(a, b PartitionMetadata) bool {
	return a.Partition == b.Partition && a.Leader == b.Leader && a.LeaderEpoch == b.LeaderEpoch &&
		slices.Equal(a.Replicas, b.Replicas) && slices.Equal(a.Active, b.Active)
}

// describeLeadership is a partition's leadership in one phrase.
func describeLeadership(pm PartitionMetadata) string {
	return fmt.Sprintf("leader %d, epoch %d, active %v", pm.Leader, pm.LeaderEpoch, pm.Active)
}
