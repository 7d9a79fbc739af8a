package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

const (
	// journalPage is the entries asked for per request (the server's
	// largest max).
	journalPage = 1000
	// journalPoll is how often `cluster journal -f` asks for new entries.
	journalPoll = 200 * time.Millisecond
)

func (a *app) clusterJournalCommand() *cobra.Command {
	var (
		since  uint64
		follow bool
	)
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Print the cluster journal: every failover, recovery, catch-up, leader move, broker stop and start",
		Long: `Prints the cluster journal from --since on, one entry per line: offset, time
(UTC), who asked (operator, controller, startup), event, phase (intent, done,
failed, completed, rolled-back), topic/partition ("-" for a broker event), the
broker, and the summary, then the controller's reason, the quarantine file of
records a recovery cut (relative to the data directory) and the error, when
there are any. --json prints the API's entry objects, one per line.

With -f it keeps asking for new entries every 200 ms until Ctrl-C (SIGINT, or
SIGTERM), which exits 0.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			return a.journal(ctx, c, since, follow)
		},
	}
	cmd.Flags().Uint64Var(&since, "since", 0, "first journal offset to print")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new entries until interrupted")
	return cmd
}

// journal prints the entries from since on, and with follow keeps polling
// for new ones until ctx is done (which is not an error).
func (a *app) journal(ctx context.Context, c *apiclient.Client, since uint64, follow bool) error {
	out := bufio.NewWriter(a.env.Stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // summaries say "leader 1 -> 2"
	for {
		page, err := c.Journal(ctx, since, journalPage)
		if err != nil {
			if follow && ctx.Err() != nil {
				return nil // interrupted
			}
			return a.apiError(fmt.Sprintf("cluster journal --since %d", since), err)
		}
		for _, e := range page.Entries {
			if a.g.json {
				err = enc.Encode(e)
			} else {
				_, err = fmt.Fprintln(out, journalLine(e))
			}
			if err != nil {
				return err
			}
		}
		// Each page as it comes: a follower sees an entry when it is read.
		if err := out.Flush(); err != nil {
			return err
		}
		since = page.Next
		if len(page.Entries) == journalPage {
			continue // more to read now
		}
		if !follow {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(journalPoll):
		}
	}
}

// journalLine is one entry as `cluster journal` prints it, for example:
//
//	5 2024-12-02T09:20:00.124Z operator failover done orders/0 broker 1: orders/0: leader 2, epoch 1, active [2 3], log end 7
//	9 2024-12-02T09:20:03Z controller recover intent orders/0 broker 1: ... (because ...); cut records kept in broker-000001/...; error: ...
func journalLine(e apiclient.JournalEntry) string {
	var b strings.Builder
	where := "-"
	if e.Topic != "" {
		where = e.Topic
		if e.Partition != nil {
			where = fmt.Sprintf("%s/%d", e.Topic, *e.Partition)
		}
	}
	fmt.Fprintf(&b, "%d %s %s %s %s %s broker %d: %s", e.Offset, e.Time, e.By, e.Event, e.Phase, where, e.Broker, e.Summary)
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
