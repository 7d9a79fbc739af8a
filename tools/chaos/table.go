package chaos

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Row is one line of the table: the faults of one kind and what happened
// while they were in force (from injection until the cluster was whole
// again).
type Row struct {
	Kind       string
	Faults     int
	Acked      int
	Unknown    int
	Violations int
	// Failovers are the failover times of the faults that moved
	// something; P50 and Max summarize them.
	Failovers []time.Duration
	Unhealed  int
}

// P50 is the median failover time, zero without one.
func (r Row) P50() time.Duration { return percentile(r.Failovers, 50) }

// Max is the longest failover time, zero without one.
func (r Row) Max() time.Duration { return percentile(r.Failovers, 100) }

// percentile is the p-th percentile of ds, nearest rank.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s) + 99) / 100
	return s[max(0, min(len(s), i)-1)]
}

// Table summarizes a checked history per fault kind, in the order of
// kinds, then a row for the whole run ("all").
func Table(h *History, r *Report, kinds []string) []Row {
	rows := map[string]*Row{}
	for _, k := range kinds {
		rows[k] = &Row{Kind: k}
	}
	all := &Row{Kind: "all"}
	type window struct {
		kind     string
		from, to time.Time
	}
	var windows []window
	for _, f := range h.Faults {
		row, ok := rows[f.Kind]
		if !ok {
			row = &Row{Kind: f.Kind}
			rows[f.Kind] = row
			kinds = append(kinds, f.Kind)
		}
		row.Faults++
		all.Faults++
		if f.Failover > 0 {
			row.Failovers = append(row.Failovers, f.Failover)
			all.Failovers = append(all.Failovers, f.Failover)
		}
		if f.Unhealed != "" {
			row.Unhealed++
			all.Unhealed++
		}
		to := f.Healthy
		if to.IsZero() {
			to = f.Healed
		}
		windows = append(windows, window{f.Kind, f.Injected, to})
	}
	in := func(t time.Time) *Row {
		for _, w := range windows {
			if !t.Before(w.from) && !t.After(w.to) {
				return rows[w.kind]
			}
		}
		return nil
	}
	for _, w := range h.Writes {
		row := in(w.Start)
		switch w.Outcome {
		case Acked:
			all.Acked++
			if row != nil {
				row.Acked++
			}
		case Unknown:
			all.Unknown++
			if row != nil {
				row.Unknown++
			}
		}
	}
	for _, v := range r.Violations {
		all.Violations++
		if row := in(v.At); row != nil && !v.At.IsZero() {
			row.Violations++
		}
	}
	out := make([]Row, 0, len(kinds)+1)
	for _, k := range kinds {
		out = append(out, *rows[k])
	}
	return append(out, *all)
}

// PrintTable writes rows as an aligned table.
func PrintTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fault\tcount\tacknowledged\tunknown\tviolations\tunhealed\tfailover p50\tfailover max\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.Kind, r.Faults, r.Acked, r.Unknown, r.Violations, r.Unhealed, ms(r.P50()), ms(r.Max()))
	}
	return tw.Flush()
}

// ms renders a failover time, "-" for none.
func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}
