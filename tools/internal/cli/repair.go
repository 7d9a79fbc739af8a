package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/server/datalock"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/spf13/cobra"
)

func (a *app) logRepairCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "repair PATH",
		Short: "Cut a torn tail off a log (asks first)",
		Long: "Cut the torn tail of a log: the unfinished frame of an append that never\n" +
			"returned, for example after a crash. PATH is a partition's log directory or\n" +
			"a single log file. In a directory only the last segment, the one appends go\n" +
			"to, can have a torn tail; damage in any other segment is refused, since\n" +
			"PyStream never cuts records from the middle of a log. A copy of the whole\n" +
			"file is kept beside it (<file>.broken-<unix-ns>, e.g.\n" +
			"00000000000000000100.log.broken-...) before the file is cut back to the end\n" +
			"of its last whole record. Any other damage is refused and the files left\n" +
			"untouched.\n\n" +
			"Asks for confirmation on stdin unless --yes. Refuses while a server holds the\n" +
			"data directory (a flocked .lock file in PATH's directory or above).",
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.repair(args[0], yes)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "repair without asking")
	return cmd
}

// repairReport is what `log repair --json` prints. Path is the file that
// was (or would have been) cut: for a log directory, its last segment.
type repairReport struct {
	Path     string `json:"path"`
	Repaired bool   `json:"repaired"`
	Backup   string `json:"backup,omitempty"`
	End      int64  `json:"end"`
	Removed  int64  `json:"removed"`
}

// repairScan is what the read-only look before a repair found.
type repairScan struct {
	// records and end count the whole records and, for a single file, the
	// end of the last; segments counts a directory's segment files.
	records  uint64
	end      int64
	segments int
	dir      bool
	// err is the damage found, if any.
	err error
}

// scanForRepair reads the log at path, a directory or a single file,
// without changing it.
func scanForRepair(path string) (repairScan, error) {
	info, err := os.Stat(path)
	if err != nil {
		return repairScan{}, err
	}
	var s repairScan
	if !info.IsDir() {
		s.err = log.ScanFileFrom(path, verify.FileBase(path), log.Options{}, func(pos int64, r log.Record) error {
			s.records++
			s.end = pos + int64(log.FrameSize(len(r.Payload)))
			return nil
		})
		return s, nil
	}
	d, err := verify.ListLogDir(path)
	if err != nil {
		return repairScan{}, err
	}
	if !d.IsLog() {
		return repairScan{}, fmt.Errorf("%s holds no segment file (%s, ...) and no %s", path, segment.SegmentFileName(0), segment.LegacyFileName)
	}
	s.dir, s.segments = true, max(len(d.Bases), 1)
	s.err = segment.ScanDir(path, log.Options{}, func(_ segment.SegmentInfo, _ int64, _ log.Record) error {
		s.records++
		return nil
	})
	return s, nil
}

// laterSegment refuses a segment file named on its own that a later
// segment follows: it is sealed, and cutting it would cut the middle of
// its log.
func laterSegment(path string) error {
	base, ok := segment.ParseSegmentFileName(filepath.Base(path))
	if !ok {
		return nil
	}
	d, err := verify.ListLogDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	if n := len(d.Bases); n > 0 && d.Bases[n-1] > base {
		return fmt.Errorf("%w: %s is a sealed segment (%s follows it); PyStream never cuts records from the middle of a log", log.ErrNotTornTail, path, segment.SegmentFileName(d.Bases[n-1]))
	}
	return nil
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
	s, err := scanForRepair(path)
	if err != nil {
		return fmt.Errorf("log repair: %w", err)
	}
	var cerr *log.CorruptionError
	switch {
	case s.err == nil && s.dir:
		if a.g.json {
			return json.NewEncoder(a.env.Stdout).Encode(repairReport{Path: path})
		}
		_, err := fmt.Fprintf(a.env.Stdout, "%s is whole (%d records in %d segments); nothing to repair\n", path, s.records, s.segments)
		return err
	case s.err == nil:
		if a.g.json {
			return json.NewEncoder(a.env.Stdout).Encode(repairReport{Path: path, End: s.end})
		}
		_, err := fmt.Fprintf(a.env.Stdout, "%s is whole (%d records, %d bytes); nothing to repair\n", path, s.records, s.end)
		return err
	case !errors.As(s.err, &cerr):
		return fmt.Errorf("log repair: %w", s.err)
	case !cerr.TornTail && s.dir:
		return fmt.Errorf("log repair: %w: %s: segment %s is damaged; PyStream never cuts records from the middle of a log: %w", log.ErrNotTornTail, path, filepath.Base(cerr.Path), cerr)
	case !cerr.TornTail:
		return fmt.Errorf("log repair: %w: %w", log.ErrNotTornTail, s.err)
	}
	// A torn tail: in a directory it can only be the last segment's
	// (segment.ScanDir), and that file is the one to cut.
	file := cerr.Path
	if !s.dir {
		if err := laterSegment(file); err != nil {
			return fmt.Errorf("log repair: %w", err)
		}
	}
	base := verify.FileBase(file)
	fmt.Fprintf(a.env.Stderr, "%s: torn tail at byte %d (offset %d): %s\n", file, cerr.Pos, cerr.Offset, cerr.Reason)
	fmt.Fprintf(a.env.Stderr, "repair keeps a copy of the file beside it and cuts it back to byte %d, keeping its %d whole records\n", cerr.Pos, cerr.Offset-base)
	if !yes && !a.confirm("repair "+file+"? [y/N] ") {
		return fmt.Errorf("log repair: %s left unchanged: %w", file, ErrAborted)
	}
	res, err := log.RepairWithOptions(file, log.Options{BaseOffset: base})
	if err != nil {
		return fmt.Errorf("log repair: %w", err)
	}
	if a.g.json {
		return json.NewEncoder(a.env.Stdout).Encode(repairReport{Path: file, Repaired: res.Repaired, Backup: res.Backup, End: res.End, Removed: res.Removed})
	}
	if !res.Repaired {
		_, err = fmt.Fprintf(a.env.Stdout, "%s is whole; nothing to repair\n", file)
		return err
	}
	_, err = fmt.Fprintf(a.env.Stdout, "repaired %s: removed %d bytes after byte %d; the damaged original is kept at %s\n", file, res.Removed, res.End, res.Backup)
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
