package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

// Polling of a followed partition: after an empty fetch, consume waits
// pollMin, doubling up to pollMax while the partition stays idle, and goes
// back to pollMin as soon as records arrive.
const (
	pollMin = 100 * time.Millisecond
	pollMax = time.Second
	// fetchMax is the records asked for per fetch (the server's cap).
	fetchMax = 1000
	// commitTimeout bounds the final commit after Ctrl-C.
	commitTimeout = 5 * time.Second
)

// consumeOptions are the flags of consume.
type consumeOptions struct {
	topic     string
	partition int    // -p
	all       bool   // no -p: every partition of the topic
	offset    string // -o, "" when not given
	limit     int    // -n, 0 = no limit
	exitAtEnd bool   // -e
	format    []formatPart
	commitAs  string
	// reset is --offset-reset: earliest (the default), latest or none.
	reset string
	// group is -G: consume as a member of this HTTP consumer group, the
	// partitions of topics the server assigns (consume_group.go).
	group  string
	topics []string
}

func (a *app) consumeCommand() *cobra.Command {
	var o consumeOptions
	var format string
	cmd := &cobra.Command{
		Use:   "consume TOPIC [-p PARTITION] | consume -G GROUP TOPIC...",
		Short: "Print the records of a topic (or one partition), following it for new ones",
		Long: `Reads every partition of TOPIC, or with -p only that one, from an offset and
prints each record: by default one JSON object per line ({"topic","partition",
"offset","timestamp" (ns, as the API),"key","headers","value"}, with "key_b64"
or "value_b64" for bytes that are not UTF-8; no "key" when the record has none),
or with -f FORMAT, kcat's verbs:
  %t topic  %p partition  %o offset  %k key  %K key size (-1: no key)
  %h headers as NAME=VALUE,NAME=VALUE (NAME alone: a null value)  %v value
  %S value size  %T timestamp (ms, as kcat: the producer's when it gave one,
  else when the partition stored the record)  %% percent;  \n \t \r \\
No newline is added: end FORMAT with \n for one record per line.

Without -p the partitions are read in turn, one fetch (up to 1000 records) each,
as kcat does; records keep their order within a partition only.

-o chooses where to start, in every partition read:
  start (or beginning)  offset 0
  end                   the high watermark: only records produced from now on
  N                     offset N
  -N                    N records before the high watermark
  committed (or stored) the committed offset of --commit-as (0 if none)
  +N                    N records after the committed offset of --commit-as
Without -o it starts at the committed offset of --commit-as, or at 0.

Without -e it follows the partitions, polling every 100 ms to 1 s while idle,
until -n records are printed in all or Ctrl-C, which finishes the current line
and exits 0; -e exits once every partition read is at its high watermark.
--commit-as ID commits each partition's position after each printed batch of it
and before exiting (commits only move forward: while replaying below the
committed offset, nothing is committed; 'offsets reset' moves an offset back).

--offset-reset decides what happens when a fetch asks for an offset below the
log start (retention deleted those records; Kafka's auto.offset.reset):
  earliest  go on from the log start (default: consume starts at the oldest
            record too, as kafka-console-consumer --from-beginning)
  latest    go on from the high watermark: only records produced from now on
  none      stop: exit 1 naming the log start and the high watermark
Every reset is reported on stderr with the records it skipped.

-G GROUP joins the HTTP consumer group GROUP (kcat's -G; docs/groups.md) and
reads the partitions of TOPIC... the server assigns this member, each from the
group's committed offset (the log start when none), committing as it goes. It
heartbeats at the server's interval, long-polling so that a rebalance is
learnt at once; a partition taken away is committed, then released. Ctrl-C
(or SIGTERM) commits, leaves the group and exits 0. With -e it exits once every
partition it holds is at its high watermark; it waits for a first partition up
to a session timeout and a quarter plus a heartbeat interval, then exits 1
saying none was assigned. -G excludes -p, -o and
--commit-as: the group id is the consumer id.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("group") {
				if len(args) == 0 {
					return usageErrorf("%s -G takes one TOPIC or more (usage: %s)", cmd.CommandPath(), cmd.UseLine())
				}
				return nil
			}
			return exactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.topic = args[0]
			o.all = !cmd.Flags().Changed("partition")
			if o.partition < 0 {
				return usageErrorf("-p %d: must not be negative", o.partition)
			}
			if o.limit < 0 {
				return usageErrorf("-n %d: must not be negative", o.limit)
			}
			if cmd.Flags().Changed("format") {
				if a.g.json {
					return usageErrorf("-f and --json exclude each other (JSON is the default)")
				}
				parts, err := compileFormat(format)
				if err != nil {
					return &UsageError{Err: err}
				}
				o.format = parts
			}
			switch o.reset {
			case "earliest", "latest", "none":
			default:
				return usageErrorf("--offset-reset %q: earliest, latest or none", o.reset)
			}
			if cmd.Flags().Changed("group") {
				for _, f := range []string{"partition", "offset", "commit-as"} {
					if cmd.Flags().Changed(f) {
						return usageErrorf("-G and --%s exclude each other: the group's members share its partitions, from its committed offsets", f)
					}
				}
				o.topics = args
			}
			if o.offset != "" {
				spec, err := parseOffsetSpec(o.offset)
				if err != nil {
					return &UsageError{Err: err}
				}
				if spec.needsCommitted() && o.commitAs == "" {
					return usageErrorf("-o %s is relative to a committed offset: give --commit-as ID", o.offset)
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if o.group != "" {
				return a.consumeGroup(ctx, stop, c, o)
			}
			return a.consume(ctx, stop, c, o)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.partition, "partition", "p", 0, "partition to read (default: every partition)")
	f.StringVarP(&o.offset, "offset", "o", "", "where to start: start, end, committed, N, -N or +N")
	f.IntVarP(&o.limit, "count", "n", 0, "exit after N records in all (0: no limit)")
	f.BoolVarP(&o.exitAtEnd, "exit", "e", false, "exit at the end of every partition read (its high watermark)")
	f.StringVarP(&format, "format", "f", "", `output format, e.g. '%p %o\t%v\n' (default: JSON lines)`)
	f.StringVar(&o.commitAs, "commit-as", "", "consumer id whose committed offsets to start from and advance")
	f.StringVar(&o.reset, "offset-reset", "earliest", "below the log start (records deleted): earliest, latest or none")
	f.StringVarP(&o.group, "group", "G", "", "join this HTTP consumer group and read the partitions it assigns (TOPIC... may be several)")
	return cmd
}

// consumeAPI is what consume asks of the server. *apiclient.Client is
// one; the tests use an in-memory topic.
type consumeAPI interface {
	Topic(ctx context.Context, name string) (*apiclient.TopicDetail, error)
	Fetch(ctx context.Context, topic string, partition int, offset uint64, max int) (*apiclient.FetchResponse, error)
	ConsumerOffset(ctx context.Context, id, topic string, partition int) (*apiclient.ConsumerOffsetResponse, error)
	CommitOffset(ctx context.Context, id, topic string, partition int, offset uint64) (*apiclient.ConsumerOffsetResponse, error)
}

var _ consumeAPI = (*apiclient.Client)(nil)

// cursor is where consume is in one partition.
type cursor struct {
	topic     string
	partition int
	// pos is the next offset to fetch (one past the last printed record).
	pos uint64
	// hw is the partition's high watermark as last seen; hwKnown says
	// whether it was seen yet.
	hw      uint64
	hwKnown bool
	// committed is the consumer's committed offset as last known, nil when
	// never committed or no --commit-as.
	committed *uint64
	// consumed is set once a record was printed: only a position reached
	// by reading is ever committed.
	consumed bool
	// warned is set once the replay-below-committed note was printed.
	warned bool
}

// atEnd reports whether the cursor has read up to the high watermark it
// last saw (what -e waits for).
func (cur *cursor) atEnd() bool { return cur.hwKnown && cur.pos >= cur.hw }

// consumer is the state of one consume run. It is used by one goroutine.
type consumer struct {
	a   *app
	c   consumeAPI
	o   consumeOptions
	out *bufio.Writer
	buf []byte
	// cursors are the partitions read, by ascending partition, visited in
	// turn.
	cursors []*cursor
	// printed counts the records printed, over every partition (-n).
	printed int
	// commitGroup commits a cursor as a member of the group of -G
	// (consume_group.go); nil without -G.
	commitGroup func(ctx context.Context, cur *cursor) error
}

func (a *app) consume(ctx context.Context, stopSignals func(), c consumeAPI, o consumeOptions) error {
	cs := &consumer{a: a, c: c, o: o, out: bufio.NewWriterSize(a.env.Stdout, 64<<10)}
	defer cs.out.Flush()
	if err := cs.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // interrupted before anything was read
		}
		return err
	}
	err := cs.loop(ctx)
	interrupted := ctx.Err() != nil
	stopSignals() // a second Ctrl-C now kills at once (and cancels ctx)
	if err != nil && !interrupted {
		return err
	}
	if ferr := cs.out.Flush(); ferr != nil {
		return ferr
	}
	// Interrupted or done: commit every position with a context of its
	// own, since ctx may be the cancelled one.
	cctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	var errs []error
	for _, cur := range cs.cursors {
		errs = append(errs, cs.commit(cctx, cur))
	}
	return errors.Join(errs...)
}

// where names a partition in messages.
func (cs *consumer) where(cur *cursor) string {
	return fmt.Sprintf("%s/%d", cur.topic, cur.partition)
}

// start lists the partitions to read and resolves each one's first offset
// from -o, its high watermark and its committed offset.
func (cs *consumer) start(ctx context.Context) error {
	if cs.o.all {
		td, err := cs.c.Topic(ctx, cs.o.topic)
		if err != nil {
			return cs.a.apiError("consume "+cs.o.topic, err)
		}
		for _, p := range td.Partitions {
			cs.cursors = append(cs.cursors, &cursor{topic: cs.o.topic, partition: p.Partition, hw: p.HighWatermark, hwKnown: true})
		}
		slices.SortFunc(cs.cursors, func(x, y *cursor) int { return x.partition - y.partition })
	} else {
		cs.cursors = []*cursor{{topic: cs.o.topic, partition: cs.o.partition}}
	}
	spec := offsetSpec{kind: offsetStart}
	if cs.o.offset != "" {
		spec, _ = parseOffsetSpec(cs.o.offset) // checked by the command
	} else if cs.o.commitAs != "" {
		spec = offsetSpec{kind: offsetCommitted}
	}
	for _, cur := range cs.cursors {
		if cs.o.commitAs != "" {
			co, err := cs.c.ConsumerOffset(ctx, cs.o.commitAs, cur.topic, cur.partition)
			if err != nil {
				return cs.a.apiError(fmt.Sprintf("consume %s: read the committed offset of %s", cs.where(cur), cs.o.commitAs), err)
			}
			cur.committed = co.Offset
		}
		if (spec.kind == offsetEnd || spec.kind == offsetFromEnd) && !cur.hwKnown {
			// A fetch of zero records is not allowed (max >= 1); one
			// record from offset 0 tells the high watermark and checks
			// the partition.
			res, err := cs.c.Fetch(ctx, cur.topic, cur.partition, 0, 1)
			if err != nil {
				return cs.a.apiError("consume "+cs.where(cur), err)
			}
			cur.hw, cur.hwKnown = res.HighWatermark, true
		}
		cur.pos = spec.resolve(cur.hw, cur.committed)
		// -e ends a partition at the high watermark its fetches report;
		// the topic's listing is only a start value.
		cur.hwKnown = false
	}
	return nil
}

// loop visits the partitions in turn, one fetch each, until -n, -e's end
// of every partition, an error or ctx is done. It waits only after a round
// in which no partition had records.
func (cs *consumer) loop(ctx context.Context) error {
	wait := pollMin
	for ctx.Err() == nil {
		got := false
		for _, cur := range cs.cursors {
			if cs.o.exitAtEnd && cur.atEnd() {
				continue
			}
			n, done, err := cs.fetch(ctx, cur)
			if err != nil || done {
				return err
			}
			got = got || n > 0
		}
		if cs.o.exitAtEnd && cs.allAtEnd() {
			return nil
		}
		if got {
			wait = pollMin
			continue
		}
		// Idle (or, below the high watermark, a server with nothing to
		// give yet): wait rather than spin.
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, pollMax)
	}
	return nil
}

// allAtEnd reports whether every cursor is at its high watermark.
func (cs *consumer) allAtEnd() bool {
	for _, cur := range cs.cursors {
		if !cur.atEnd() {
			return false
		}
	}
	return true
}

// fetch fetches once from cur's partition, prints what came and commits
// it. done is set when -n is reached or ctx is done mid-batch; the final
// commit is then consume's.
func (cs *consumer) fetch(ctx context.Context, cur *cursor) (n int, done bool, err error) {
	max := fetchMax
	if cs.o.limit > 0 {
		max = min(max, cs.o.limit-cs.printed)
	}
	res, err := cs.c.Fetch(ctx, cur.topic, cur.partition, cur.pos, max)
	for resets := 0; err != nil; resets++ {
		var oor *apiclient.OffsetOutOfRangeError
		if !errors.As(err, &oor) || resets == maxResets {
			return 0, false, cs.a.apiError(fmt.Sprintf("consume %s at offset %d", cs.where(cur), cur.pos), err)
		}
		if err := cs.reset(cur, oor); err != nil {
			return 0, false, err
		}
		res, err = cs.c.Fetch(ctx, cur.topic, cur.partition, cur.pos, max)
	}
	cur.hw, cur.hwKnown = res.HighWatermark, true
	for _, r := range res.Records {
		if r.Marker != "" {
			// A transaction's marker: the log's, not the application's
			// (docs/exactly-once.md); Kafka's consumers skip them too.
			cur.pos, cur.consumed = r.Offset+1, true
			n++ // progress: the next round need not wait
			continue
		}
		if err := cs.print(cur, r); err != nil {
			return n, false, err
		}
		cur.pos = r.Offset + 1
		cur.consumed = true
		cs.printed++
		n++
		if (cs.o.limit > 0 && cs.printed >= cs.o.limit) || ctx.Err() != nil {
			return n, true, nil
		}
	}
	if len(res.Records) == 0 {
		return 0, false, nil
	}
	cur.pos = max64(cur.pos, res.NextOffset)
	if err := cs.out.Flush(); err != nil {
		return n, false, err
	}
	return n, false, cs.commit(ctx, cur)
}

// maxResets bounds the resets of one fetch: retention may raise the log
// start again between a reset and the fetch after it.
const maxResets = 3

// OffsetOutOfRangeError is consume's --offset-reset none meeting a
// position below the log start. It exits with ExitFailure.
type OffsetOutOfRangeError struct {
	Where                   string
	Offset                  uint64
	LogStart, HighWatermark uint64
	Err                     error
}

func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("consume %s: offset %d is below the log start %d (high watermark %d): retention deleted %d record(s) before it; "+
		"rerun with --offset-reset earliest or latest, or -o start", e.Where, e.Offset, e.LogStart, e.HighWatermark, e.LogStart-e.Offset)
}

// Unwrap returns the server's answer.
func (e *OffsetOutOfRangeError) Unwrap() error { return e.Err }

// reset applies --offset-reset to a fetch of cur below the log start and
// reports it on stderr.
func (cs *consumer) reset(cur *cursor, oor *apiclient.OffsetOutOfRangeError) error {
	to := oor.LogStart
	switch cs.o.reset {
	case "none":
		return &OffsetOutOfRangeError{Where: cs.where(cur), Offset: cur.pos, LogStart: oor.LogStart, HighWatermark: oor.HighWatermark, Err: oor}
	case "latest":
		to = max64(oor.HighWatermark, oor.LogStart)
	}
	deleted := uint64(0)
	if oor.LogStart > cur.pos {
		deleted = oor.LogStart - cur.pos
	}
	fmt.Fprintf(cs.a.env.Stderr, "pystream: note: %s: offset %d is below the log start %d (%d record(s) deleted by retention); resuming at %d (--offset-reset %s)\n",
		cs.where(cur), cur.pos, oor.LogStart, deleted, to, cs.resetPolicy())
	cur.pos = to
	return nil
}

// resetPolicy is --offset-reset, its default when unset (tests).
func (cs *consumer) resetPolicy() string {
	if cs.o.reset == "" {
		return "earliest"
	}
	return cs.o.reset
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// print writes one record of cur's partition in the chosen form.
func (cs *consumer) print(cur *cursor, r apiclient.FetchedRecord) error {
	rec := consumedRecord{Topic: cur.topic, Partition: cur.partition, FetchedRecord: r}
	if cs.o.format == nil {
		return jsonLine(cs.out, toConsumeJSON(rec))
	}
	cs.buf = appendFormatted(cs.buf[:0], cs.o.format, rec)
	_, err := cs.out.Write(cs.buf)
	return err
}

// commit stores cur's position as the committed offset of --commit-as for
// its partition, when it moves the offset forward; with -G, as a member of
// the group (commitGroup).
func (cs *consumer) commit(ctx context.Context, cur *cursor) error {
	if cs.commitGroup != nil {
		return cs.commitGroup(ctx, cur)
	}
	if cs.o.commitAs == "" || !cur.consumed {
		return nil
	}
	if cur.committed != nil && cur.pos <= *cur.committed {
		if cur.pos < *cur.committed && !cur.warned {
			cur.warned = true
			fmt.Fprintf(cs.a.env.Stderr, "pystream: note: %s: position %d is below the committed offset %d of %s; committing resumes past it ('offsets reset' moves it back)\n",
				cs.where(cur), cur.pos, *cur.committed, cs.o.commitAs)
		}
		return nil
	}
	res, err := cs.c.CommitOffset(ctx, cs.o.commitAs, cur.topic, cur.partition, cur.pos)
	if err != nil {
		if errors.Is(err, apiclient.ErrConflict) {
			return cs.a.apiError(fmt.Sprintf("consume: commit %s at %d as %s (another consumer with this id moved it?)", cs.where(cur), cur.pos, cs.o.commitAs), err)
		}
		return cs.a.apiError(fmt.Sprintf("consume: commit %s at %d as %s", cs.where(cur), cur.pos, cs.o.commitAs), err)
	}
	cur.committed = res.Offset
	return nil
}
