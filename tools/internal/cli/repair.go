package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/datalock"
	"github.com/spf13/cobra"
)

func (a *app) logRepairCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "repair FILE",
		Short: "Cut a torn tail off a log file (asks first)",
		Long: "Cut the torn tail of a log file: the unfinished frame of an append that never\n" +
			"returned, for example after a crash. A copy of the whole file is kept beside\n" +
			"it (log.bin.broken-<unix-ns>) before the file is cut back to the end of its\n" +
			"last whole record. Any other damage is refused and the file left untouched.\n\n" +
			"Asks for confirmation on stdin unless --yes. Refuses while a server holds the\n" +
			"data directory (a flocked .lock file in FILE's directory or above).",
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.repair(args[0], yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "repair without asking")
	return cmd
}

// repairReport is what `log repair --json` prints.
type repairReport struct {
	Path     string `json:"path"`
	Repaired bool   `json:"repaired"`
	Backup   string `json:"backup,omitempty"`
	End      int64  `json:"end"`
	Removed  int64  `json:"removed"`
}

func (a *app) repair(path string, yes bool) error {
	release, err := lockDataDirs(path)
	if errors.Is(err, datalock.ErrLocked) {
		return fmt.Errorf("log repair: %w; stop the server first", err)
	}
	if err != nil {
		return fmt.Errorf("log repair: %w", err)
	}
	defer release()

	// Look first, read-only, to tell the user what repair would do.
	var (
		end     int64
		records uint64
	)
	err = log.ScanFile(path, func(pos int64, r log.Record) error {
		records++
		end = pos + int64(log.FrameSize(len(r.Payload)))
		return nil
	})
	var cerr *log.CorruptionError
	switch {
	case err == nil:
		if a.g.json {
			return json.NewEncoder(a.env.Stdout).Encode(repairReport{Path: path, End: end})
		}
		_, err := fmt.Fprintf(a.env.Stdout, "%s is whole (%d records, %d bytes); nothing to repair\n", path, records, end)
		return err
	case !errors.As(err, &cerr):
		return fmt.Errorf("log repair: %w", err)
	case !cerr.TornTail:
		return fmt.Errorf("log repair: %w: %w", log.ErrNotTornTail, err)
	}
	fmt.Fprintf(a.env.Stderr, "%s: torn tail at byte %d (offset %d): %s\n", path, cerr.Pos, cerr.Offset, cerr.Reason)
	fmt.Fprintf(a.env.Stderr, "repair keeps a copy of the file beside it and cuts it back to byte %d, keeping %d whole records\n", cerr.Pos, records)
	if !yes && !a.confirm("repair "+path+"? [y/N] ") {
		return fmt.Errorf("log repair: %s left unchanged: %w", path, ErrAborted)
	}
	res, err := log.Repair(path)
	if err != nil {
		return fmt.Errorf("log repair: %w", err)
	}
	if a.g.json {
		return json.NewEncoder(a.env.Stdout).Encode(repairReport{Path: path, Repaired: res.Repaired, Backup: res.Backup, End: res.End, Removed: res.Removed})
	}
	if !res.Repaired {
		_, err = fmt.Fprintf(a.env.Stdout, "%s is whole; nothing to repair\n", path)
		return err
	}
	_, err = fmt.Fprintf(a.env.Stdout, "repaired %s: removed %d bytes after byte %d; the damaged original is kept at %s\n", path, res.Removed, res.End, res.Backup)
	return err
}

// confirm asks question on stderr and reads one answer line from stdin. Only
// "y" or "yes" (any case) confirms; no answer does not.
func (a *app) confirm(question string) bool {
	fmt.Fprint(a.env.Stderr, question)
	line, err := bufio.NewReader(a.env.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(a.env.Stderr)
		return false
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
