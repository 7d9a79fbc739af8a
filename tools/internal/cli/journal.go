package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/spf13/cobra"
)

const (
	// journalPage is the entries asked for per request (the server's
	// largest max).
	journalPage = 1000
	// journalPoll is how often `cluster journal -f` asks for new entries
	// of a server without the events stream.
	journalPoll = 200 * time.Millisecond
	// journalRetry is the wait before `cluster journal -f` reconnects to
	// a stream that broke (the server restarted).
	journalRetry = time.Second
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

With -f it then follows the server's events stream (GET /api/events): each
new entry is printed as the journal gets it, until Ctrl-C (SIGINT, or
SIGTERM), which exits 0. When the stream breaks (the server restarted) it
reconnects every second and resumes after the last entry printed, so none is
missed and none printed twice. A server without the stream is asked every
200 ms instead.`,
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
	polling := false
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
			if err := a.printJournalEntry(out, enc, e); err != nil {
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
		if !polling {
			err := a.followJournal(ctx, c, out, enc, since)
			var apiErr *apiclient.Error
			if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
				return err
			}
			polling = true // a server from before the events stream
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(journalPoll):
		}
	}
}

// followJournal prints the journal entries of the events stream from
// offset since on, until ctx is done (nil). A stream that breaks is
// opened again after journalRetry, resuming after the last entry
// printed, and so is one the server refuses for now (503: it serves as
// many streams as it may, or is shutting down; said once on stderr); any
// other answer that is not the stream (no such route: 404; no
// permission) is returned.
func (a *app) followJournal(ctx context.Context, c *apiclient.Client, out *bufio.Writer, enc *json.Encoder, since uint64) error {
	opts := apiclient.EventsOptions{Since: &since}
	told := false
	for {
		var printErr error
		last, err := c.Events(ctx, opts, func(u apiclient.Update) error {
			for _, e := range u.Journal {
				if printErr = a.printJournalEntry(out, enc, e); printErr != nil {
					return printErr
				}
			}
			printErr = out.Flush()
			return printErr
		})
		if ctx.Err() != nil {
			return nil
		}
		if printErr != nil {
			return printErr
		}
		var apiErr *apiclient.Error
		if errors.As(err, &apiErr) && apiErr.Status != http.StatusServiceUnavailable {
			return a.apiError("cluster journal -f", err)
		}
		if apiErr != nil && !told && a.env.Stderr != nil {
			fmt.Fprintf(a.env.Stderr, "pystream: cluster journal -f: the server refused the stream for now (%s); trying again every %s\n",
				apiErr.Message, journalRetry)
			told = true
		}
		if last != nil {
			opts = apiclient.EventsOptions{LastEventID: last}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(journalRetry):
		}
	}
}

// printJournalEntry writes one entry: a JSON object with --json, else its
// line.
func (a *app) printJournalEntry(out *bufio.Writer, enc *json.Encoder, e apiclient.JournalEntry) error {
	if a.g.json {
		return enc.Encode(e)
	}
	line, err := journalLine(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, line)
	return err
}

// journalLine is one entry as `cluster journal` prints it: the journal's
// own rendering (cluster.JournalEntry.String) of what the API sent.
func journalLine(e apiclient.JournalEntry) (string, error) {
	at, err := time.Parse(time.RFC3339Nano, e.Time)
	if err != nil {
		return "", fmt.Errorf("journal entry %d: time %q is not RFC 3339: %w", e.Offset, e.Time, err)
	}
	ce := cluster.JournalEntry{Offset: e.Offset, Time: at, Event: cluster.JournalEvent(e.Event), Phase: cluster.JournalPhase(e.Phase),
		By: e.By, Topic: e.Topic, Broker: e.Broker, Summary: e.Summary, Reason: e.Reason, Quarantine: e.Quarantine, Error: e.Error}
	if e.Partition != nil {
		ce.Partition = *e.Partition
	}
	return ce.String(), nil
}
