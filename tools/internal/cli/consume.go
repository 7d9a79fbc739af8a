package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
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
	partition int
	offset    string // -o, "" when not given
	limit     int    // -n, 0 = no limit
	exitAtEnd bool   // -e
	format    []formatPart
	commitAs  string
}

func (a *app) consumeCommand() *cobra.Command {
	var o consumeOptions
	var format string
	cmd := &cobra.Command{
		Use:   "consume TOPIC -p PARTITION",
		Short: "Print the records of a partition, following it for new ones",
		Long: `Reads one partition from an offset and prints each record: by default one JSON
object per line ({"topic","partition","offset","timestamp" (ns),"value"}, with
"value_b64" instead of "value" for bytes that are not UTF-8), or with -f FORMAT:
  %t topic  %p partition  %o offset  %T timestamp (ms)  %k key (always empty:
  PyStream stores no keys)  %v value  %S value size  %% percent;  \n \t \r \\

-o chooses where to start:
  start (or beginning)  offset 0
  end                   the high watermark: only records produced from now on
  N                     offset N
  -N                    N records before the high watermark
  committed (or stored) the committed offset of --commit-as (0 if none)
  +N                    N records after the committed offset of --commit-as
Without -o it starts at the committed offset of --commit-as, or at 0.

Without -e it follows the partition, polling every 100 ms to 1 s while idle,
until -n records are printed or Ctrl-C, which finishes the current line and
exits 0. --commit-as ID commits the position after each printed batch and
before exiting (commits only move forward: while replaying below the committed
offset, nothing is committed; 'offsets reset' moves an offset back).`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.topic = args[0]
			if !cmd.Flags().Changed("partition") {
				return usageErrorf("consume reads one partition: give it with -p PARTITION")
			}
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
			return a.consume(ctx, stop, c, o)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.partition, "partition", "p", 0, "partition to read (required)")
	f.StringVarP(&o.offset, "offset", "o", "", "where to start: start, end, committed, N, -N or +N")
	f.IntVarP(&o.limit, "count", "n", 0, "exit after N records (0: no limit)")
	f.BoolVarP(&o.exitAtEnd, "exit", "e", false, "exit at the end of the partition (the high watermark)")
	f.StringVarP(&format, "format", "f", "", `output format, e.g. '%o\t%v\n' (default: JSON lines)`)
	f.StringVar(&o.commitAs, "commit-as", "", "consumer id whose committed offset to start from and advance")
	return cmd
}

// consumer is the state of one consume run.
type consumer struct {
	a   *app
	c   *apiclient.Client
	o   consumeOptions
	out *bufio.Writer
	buf []byte
	// pos is the next offset to fetch (one past the last printed record).
	pos uint64
	// committed is the consumer's committed offset as last known, nil when
	// never committed or no --commit-as.
	committed *uint64
	// consumed is set once a record was printed: only a position reached
	// by reading is ever committed.
	consumed bool
	// warned is set once the replay-below-committed note was printed.
	warned bool
}

func (a *app) consume(ctx context.Context, stopSignals func(), c *apiclient.Client, o consumeOptions) error {
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
	// Interrupted or done: commit the position with a context of its own,
	// since ctx may be the cancelled one.
	cctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	return cs.commit(cctx)
}

// start resolves the first offset from -o, the high watermark and the
// committed offset.
func (cs *consumer) start(ctx context.Context) error {
	if cs.o.commitAs != "" {
		co, err := cs.c.ConsumerOffset(ctx, cs.o.commitAs, cs.o.topic, cs.o.partition)
		if err != nil {
			return cs.a.apiError(fmt.Sprintf("consume %s/%d: read the committed offset of %s", cs.o.topic, cs.o.partition, cs.o.commitAs), err)
		}
		cs.committed = co.Offset
	}
	spec := offsetSpec{kind: offsetStart}
	if cs.o.offset != "" {
		spec, _ = parseOffsetSpec(cs.o.offset) // checked by the command
	} else if cs.o.commitAs != "" {
		spec = offsetSpec{kind: offsetCommitted}
	}
	var hw uint64
	if spec.kind == offsetEnd || spec.kind == offsetFromEnd {
		// A fetch of zero records is not allowed (max >= 1); one record
		// from offset 0 tells the high watermark and checks the partition.
		res, err := cs.c.Fetch(ctx, cs.o.topic, cs.o.partition, 0, 1)
		if err != nil {
			return cs.a.apiError(fmt.Sprintf("consume %s/%d", cs.o.topic, cs.o.partition), err)
		}
		hw = res.HighWatermark
	}
	cs.pos = spec.resolve(hw, cs.committed)
	return nil
}

// loop fetches and prints until -n, -e's end, an error or ctx is done.
func (cs *consumer) loop(ctx context.Context) error {
	printed := 0
	wait := pollMin
	for ctx.Err() == nil {
		max := fetchMax
		if cs.o.limit > 0 {
			max = min(max, cs.o.limit-printed)
		}
		res, err := cs.c.Fetch(ctx, cs.o.topic, cs.o.partition, cs.pos, max)
		if err != nil {
			return cs.a.apiError(fmt.Sprintf("consume %s/%d at offset %d", cs.o.topic, cs.o.partition, cs.pos), err)
		}
		for _, r := range res.Records {
			if err := cs.print(r); err != nil {
				return err
			}
			cs.pos = r.Offset + 1
			cs.consumed = true
			printed++
			if (cs.o.limit > 0 && printed >= cs.o.limit) || ctx.Err() != nil {
				return nil
			}
		}
		if len(res.Records) > 0 {
			cs.pos = max64(cs.pos, res.NextOffset)
		}
		if err := cs.out.Flush(); err != nil {
			return err
		}
		if len(res.Records) > 0 {
			if err := cs.commit(ctx); err != nil {
				return err
			}
			wait = pollMin
		}
		if cs.o.exitAtEnd && cs.pos >= res.HighWatermark {
			return nil
		}
		if len(res.Records) == 0 {
			// Idle (or, below the high watermark, a server with nothing
			// to give yet): wait rather than spin.
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			wait = min(2*wait, pollMax)
		}
	}
	return nil
}

func max64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// print writes one record in the chosen form.
func (cs *consumer) print(r apiclient.FetchedRecord) error {
	rec := consumedRecord{Topic: cs.o.topic, Partition: cs.o.partition, FetchedRecord: r}
	if cs.o.format == nil {
		return jsonLine(cs.out, toConsumeJSON(rec))
	}
	cs.buf = appendFormatted(cs.buf[:0], cs.o.format, rec)
	_, err := cs.out.Write(cs.buf)
	return err
}

// commit stores the position as the committed offset of --commit-as, when
// it moves the offset forward.
func (cs *consumer) commit(ctx context.Context) error {
	if cs.o.commitAs == "" || !cs.consumed {
		return nil
	}
	if cs.committed != nil && cs.pos <= *cs.committed {
		if cs.pos < *cs.committed && !cs.warned {
			cs.warned = true
			fmt.Fprintf(cs.a.env.Stderr, "pystream: note: position %d is below the committed offset %d of %s; committing resumes past it ('offsets reset' moves it back)\n",
				cs.pos, *cs.committed, cs.o.commitAs)
		}
		return nil
	}
	res, err := cs.c.CommitOffset(ctx, cs.o.commitAs, cs.o.topic, cs.o.partition, cs.pos)
	if err != nil {
		if errors.Is(err, apiclient.ErrConflict) {
			return cs.a.apiError(fmt.Sprintf("consume: commit %d as %s (another consumer with this id moved it?)", cs.pos, cs.o.commitAs), err)
		}
		return cs.a.apiError(fmt.Sprintf("consume: commit %d as %s", cs.pos, cs.o.commitAs), err)
	}
	cs.committed = res.Offset
	return nil
}
