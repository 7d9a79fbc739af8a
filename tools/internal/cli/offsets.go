package cli

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

// This file holds `offsets describe` and `offsets reset`, the counterpart of
// kafka-consumer-groups --describe and --reset-offsets for one consumer id.
// The log end column is the partition's high watermark: what a consumer can
// read, so LAG is what it has left to read.

func (a *app) offsetsCommand() *cobra.Command {
	cmd := groupCommand("offsets", "Show and reset the committed offsets of a consumer")
	cmd.AddCommand(a.offsetsDescribeCommand(), a.offsetsResetCommand())
	return cmd
}

// offsetRow is one line of offsets describe and of a reset plan.
type offsetRow struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// Current is the committed offset, nil when never committed.
	Current *uint64 `json:"current_offset"`
	// LogStart is the partition's first readable offset (describe only):
	// a committed offset below it names records retention deleted.
	LogStart uint64 `json:"log_start_offset"`
	// LogEnd is the partition's high watermark.
	LogEnd uint64 `json:"log_end_offset"`
	// Lag is LogEnd - Current, nil when never committed.
	Lag *uint64 `json:"lag"`
	// New is the offset a reset moves to (reset plans only).
	New *uint64 `json:"new_offset,omitempty"`
}

// offsetsDescribeJSON is what offsets describe --json prints.
type offsetsDescribeJSON struct {
	ConsumerID string      `json:"consumer_id"`
	Offsets    []offsetRow `json:"offsets"`
}

// describeRows builds the rows of offsets describe from the committed
// offsets and the topics' details. With topicFilter set it shows every
// partition of that topic, committed or not; without, every committed
// offset. Rows are ordered by topic and partition.
func describeRows(committed []apiclient.ConsumerOffset, topics map[string]*apiclient.TopicDetail, topicFilter string) []offsetRow {
	type key struct {
		topic string
		p     int
	}
	cur := map[key]uint64{}
	for _, o := range committed {
		cur[key{o.Topic, o.Partition}] = o.Offset
	}
	hw := func(topic string, p int) uint64 {
		if td := topics[topic]; td != nil {
			for _, ps := range td.Partitions {
				if ps.Partition == p {
					return ps.HighWatermark
				}
			}
		}
		return 0
	}
	row := func(topic string, p int) offsetRow {
		r := offsetRow{Topic: topic, Partition: p, LogEnd: hw(topic, p)}
		if off, ok := cur[key{topic, p}]; ok {
			r.Current = &off
			r.Lag = lagOf(r.Current, r.LogEnd)
		}
		return r
	}
	var rows []offsetRow
	if topicFilter != "" {
		if td := topics[topicFilter]; td != nil {
			for _, ps := range td.Partitions {
				rows = append(rows, row(topicFilter, ps.Partition))
			}
		}
	} else {
		for _, o := range committed {
			rows = append(rows, row(o.Topic, o.Partition))
		}
	}
	slices.SortFunc(rows, func(x, y offsetRow) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return x.Partition - y.Partition
	})
	return rows
}

// lagOf is what a consumer at current has left to read below the high
// watermark hw; nil when it never committed.
func lagOf(current *uint64, hw uint64) *uint64 {
	if current == nil {
		return nil
	}
	lag := uint64(0)
	if hw > *current {
		lag = hw - *current
	}
	return &lag
}

// withLogStarts sets each row's LogStart from start (the partition's
// offset at "earliest").
func withLogStarts(rows []offsetRow, start func(topic string, p int) (uint64, error)) error {
	for i := range rows {
		ls, err := start(rows[i].Topic, rows[i].Partition)
		if err != nil {
			return err
		}
		rows[i].LogStart = ls
	}
	return nil
}

// belowStartNotes are the notes on committed offsets below their
// partition's log start: records deleted before the consumer read them.
func belowStartNotes(rows []offsetRow) []string {
	var out []string
	for _, r := range rows {
		if r.Current != nil && *r.Current < r.LogStart {
			out = append(out, fmt.Sprintf("note: %s/%d: committed offset %d is below log start %d: %d record(s) deleted before they were read; "+
				"a consumer resumes per its offset reset policy (consume --offset-reset)", r.Topic, r.Partition, *r.Current, r.LogStart, r.LogStart-*r.Current))
		}
	}
	return out
}

// topicDetails fetches the detail of every named topic once.
func (a *app) topicDetails(ctx context.Context, c *apiclient.Client, names []string) (map[string]*apiclient.TopicDetail, error) {
	out := map[string]*apiclient.TopicDetail{}
	for _, n := range names {
		if _, ok := out[n]; ok {
			continue
		}
		td, err := c.Topic(ctx, n)
		if err != nil {
			return nil, a.apiError("describe topic "+n, err)
		}
		out[n] = td
	}
	return out, nil
}

func (a *app) offsetsDescribeCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "describe CONSUMER-ID [TOPIC]",
		Short: "Show committed offsets, the log start and end (high watermark) and the lag",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErrorf("%s takes 1 or 2 arguments, got %d (usage: %s)", cmd.CommandPath(), len(args), cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			id, topicFilter := args[0], ""
			if len(args) == 2 {
				topicFilter = args[1]
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			res, err := c.ConsumerOffsets(ctx, id)
			if err != nil {
				return a.apiError("offsets describe "+id, err)
			}
			var names []string
			if topicFilter != "" {
				names = []string{topicFilter}
			} else {
				for _, o := range res.Offsets {
					names = append(names, o.Topic)
				}
			}
			topics, err := a.topicDetails(ctx, c, names)
			if err != nil {
				return err
			}
			rows := describeRows(res.Offsets, topics, topicFilter)
			err = withLogStarts(rows, func(topic string, p int) (uint64, error) {
				po, err := c.PartitionOffsets(ctx, topic, p, apiclient.OffsetsEarliest)
				if err != nil {
					return 0, a.apiError(fmt.Sprintf("offsets describe: log start of %s/%d", topic, p), err)
				}
				return po.Offset, nil
			})
			if err != nil {
				return err
			}
			if a.g.json {
				if rows == nil {
					rows = []offsetRow{}
				}
				return a.printJSON(offsetsDescribeJSON{ConsumerID: id, Offsets: rows})
			}
			if len(rows) == 0 {
				_, err := fmt.Fprintf(a.env.Stdout, "consumer %s has no committed offsets\n", id)
				return err
			}
			table := make([][]string, len(rows))
			for i, r := range rows {
				table[i] = []string{r.Topic, strconv.Itoa(r.Partition), optUint(r.Current), strconv.FormatUint(r.LogStart, 10),
					strconv.FormatUint(r.LogEnd, 10), optUint(r.Lag)}
			}
			if err := writeTable(a.env.Stdout, []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-START-OFFSET", "LOG-END-OFFSET", "LAG"}, table); err != nil {
				return err
			}
			for _, n := range belowStartNotes(rows) {
				if _, err := fmt.Fprintln(a.env.Stdout, n); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// resetTarget is where offsets reset moves an offset.
type resetTarget struct {
	earliest, latest bool
	offset           *uint64
}

// newOffset returns the offset a reset moves to on a partition whose high
// watermark is hw. An explicit offset past hw is refused, as the server
// would refuse it.
func (t resetTarget) newOffset(topic string, p int, hw uint64) (uint64, error) {
	switch {
	case t.earliest:
		return 0, nil
	case t.latest:
		return hw, nil
	case *t.offset > hw:
		return 0, fmt.Errorf("offsets reset: --to-offset %d is past the high watermark %d of %s/%d", *t.offset, hw, topic, p)
	}
	return *t.offset, nil
}

// parseTopicPartition parses TOPIC or TOPIC:P (the partition after the last
// colon). ok is false for a malformed partition.
func parseTopicPartition(s string) (topic string, p int, all bool, err error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		if s == "" {
			return "", 0, false, usageErrorf("empty topic")
		}
		return s, 0, true, nil
	}
	topic = s[:i]
	n, perr := strconv.Atoi(s[i+1:])
	if perr != nil || n < 0 || topic == "" {
		return "", 0, false, usageErrorf("%q: want TOPIC or TOPIC:PARTITION", s)
	}
	return topic, n, false, nil
}

// offsetsResetJSON is what offsets reset --json prints.
type offsetsResetJSON struct {
	ConsumerID string      `json:"consumer_id"`
	Executed   bool        `json:"executed"`
	Plan       []offsetRow `json:"plan"`
}

func (a *app) offsetsResetCommand() *cobra.Command {
	var earliest, latest, execute bool
	var to uint64
	cmd := &cobra.Command{
		Use:   "reset CONSUMER-ID TOPIC[:PARTITION] (--to-earliest | --to-latest | --to-offset N) [--execute]",
		Short: "Plan, and with --execute apply, a move of committed offsets (backwards allowed)",
		Long: "Prints the plan (current and new offset per partition) and changes nothing\n" +
			"unless --execute is given, like kafka-consumer-groups --reset-offsets. Without\n" +
			":PARTITION every partition of the topic is reset. --to-latest is the high\n" +
			"watermark; --to-offset must not be past it.",
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var t resetTarget
			n := 0
			if earliest {
				t.earliest = true
				n++
			}
			if latest {
				t.latest = true
				n++
			}
			if cmd.Flags().Changed("to-offset") {
				t.offset = &to
				n++
			}
			if n != 1 {
				return usageErrorf("give exactly one of --to-earliest, --to-latest and --to-offset N")
			}
			topic, p, all, err := parseTopicPartition(args[1])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			return a.offsetsReset(cmd.Context(), c, args[0], topic, p, all, t, execute)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&earliest, "to-earliest", false, "reset to offset 0")
	f.BoolVar(&latest, "to-latest", false, "reset to the high watermark")
	f.Uint64Var(&to, "to-offset", 0, "reset to offset N")
	f.BoolVar(&execute, "execute", false, "apply the plan (without it nothing changes)")
	return cmd
}

func (a *app) offsetsReset(ctx context.Context, c *apiclient.Client, id, topic string, p int, all bool, t resetTarget, execute bool) error {
	td, err := c.Topic(ctx, topic)
	if err != nil {
		return a.apiError("offsets reset: topic "+topic, err)
	}
	var parts []apiclient.PartitionStatus
	for _, ps := range td.Partitions {
		if all || ps.Partition == p {
			parts = append(parts, ps)
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("offsets reset: topic %s has no partition %d (it has %d)", topic, p, td.PartitionCount)
	}
	plan := make([]offsetRow, 0, len(parts))
	for _, ps := range parts {
		co, err := c.ConsumerOffset(ctx, id, topic, ps.Partition)
		if err != nil {
			return a.apiError(fmt.Sprintf("offsets reset: read %s/%d of %s", topic, ps.Partition, id), err)
		}
		nw, err := t.newOffset(topic, ps.Partition, ps.HighWatermark)
		if err != nil {
			return err
		}
		plan = append(plan, offsetRow{Topic: topic, Partition: ps.Partition, Current: co.Offset,
			LogEnd: ps.HighWatermark, Lag: lagOf(co.Offset, ps.HighWatermark), New: &nw})
	}
	if execute {
		for _, r := range plan {
			if _, err := c.ResetOffset(ctx, id, r.Topic, r.Partition, *r.New); err != nil {
				return a.apiError(fmt.Sprintf("offsets reset %s %s:%d", id, r.Topic, r.Partition), err)
			}
		}
	}
	if a.g.json {
		return a.printJSON(offsetsResetJSON{ConsumerID: id, Executed: execute, Plan: plan})
	}
	rows := make([][]string, len(plan))
	for i, r := range plan {
		rows[i] = []string{r.Topic, strconv.Itoa(r.Partition), optUint(r.Current), optUint(r.New)}
	}
	if err := writeTable(a.env.Stdout, []string{"TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"}, rows); err != nil {
		return err
	}
	if execute {
		_, err = fmt.Fprintf(a.env.Stdout, "reset %d offset(s) of %s\n", len(plan), id)
		return err
	}
	_, err = fmt.Fprintln(a.env.Stderr, "dry run: nothing changed; add --execute to apply this plan")
	return err
}
