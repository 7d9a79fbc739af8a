package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/spf13/cobra"
)

func (a *app) logVerifyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "verify PATH",
		Short: "Check a log, topic, broker or data directory and report damage",
		Long: "Check everything under PATH without changing it: a partition's log\n" +
			"directory, a single log file, a topic directory, a broker directory or a\n" +
			"whole data directory. A log directory is one log: its segment files\n" +
			"(00000000000000000000.log, ...) are scanned in order and must follow on\n" +
			"from each other; damage is reported on the directory, naming the segment\n" +
			"file and the byte position in it. A directory that still holds a phase-1\n" +
			"log.bin is verified as not yet upgraded. Every topic.meta, cluster.meta,\n" +
			"offset file, leader-epochs and quarantine file is checked, and every\n" +
			"follower replica is compared with its partition's leader (as recorded in\n" +
			"cluster.meta) record by record, over the offsets both still hold. A\n" +
			"broker's commit journal (broker-<id>/wal/) is read as the broker replays\n" +
			"it, and the logs it holds writes for are verified as the replay will\n" +
			"leave them.\n\n" +
			"One line per item: OK, LAG n (a follower behind its leader: not damage),\n" +
			"DAMAGED, DIVERGED, MISSING, or INACTIVE (a replica outside the active set\n" +
			"that differs from its leader; recovery reconciles it). Exits 1 if anything\n" +
			"is damaged, diverged or missing.",
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			rep, err := verify.Verify(args[0])
			if err != nil {
				return fmt.Errorf("log verify: %w", err)
			}
			if a.g.json {
				err = writeJSONLines(a.env.Stdout, rep.Items)
			} else {
				err = writeVerifyText(a.env.Stdout, rep)
			}
			if err != nil {
				return err
			}
			if n := rep.Problems(); n > 0 {
				return fmt.Errorf("log verify: %d of %d items: %w", n, len(rep.Items), ErrProblemsFound)
			}
			return nil
		},
	}
}

// verifyLine is the text of one report item: status, kind, path and what was
// found, with the byte position and offset of log damage.
func verifyLine(it verify.Item) string {
	status := string(it.Status)
	if it.Status == verify.StatusLag {
		status = fmt.Sprintf("LAG %d", it.Lag)
	}
	var where []string
	if it.Pos != nil {
		where = append(where, fmt.Sprintf("at byte %d", *it.Pos))
	}
	if it.Offset != nil && it.Status.Problem() {
		where = append(where, fmt.Sprintf("offset %d", *it.Offset))
	}
	at := strings.Join(where, ", ")
	if it.Segment != "" {
		// Damage in a log directory: the byte position is in this file.
		at = strings.TrimSpace("in " + filepath.Base(it.Segment) + " " + at)
	}
	detail := it.Detail
	if at != "" {
		detail = at + ": " + detail
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s", status, it.Kind, it.Path, detail)
}

func writeVerifyText(w io.Writer, rep verify.Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, it := range rep.Items {
		fmt.Fprintln(tw, verifyLine(it))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	counts := rep.Counts()
	parts := []string{}
	for _, s := range []verify.Status{verify.StatusOK, verify.StatusLag, verify.StatusInactive, verify.StatusDamaged, verify.StatusDiverged, verify.StatusMissing} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	summary := "nothing to check"
	if len(parts) > 0 {
		summary = strings.Join(parts, ", ")
	}
	_, err := fmt.Fprintf(w, "checked %d items: %s\n", len(rep.Items), summary)
	return err
}

// writeJSONLines writes one JSON document per line.
func writeJSONLines[T any](w io.Writer, items []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return bw.Flush()
}
