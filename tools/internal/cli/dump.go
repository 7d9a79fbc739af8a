package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/spf13/cobra"
)

func (a *app) logDumpCommand() *cobra.Command {
	var (
		printData bool
		from      uint64
	)
	cmd := &cobra.Command{
		Use:   "dump PATH",
		Short: "Print every record of a log directory or log file, one per line",
		Long: "Print every record of a log: offset, byte position, timestamp (as\n" +
			"nanoseconds and as a date), payload size and a preview of the payload; a\n" +
			"payload that holds a key, headers or a create time (a record produced with\n" +
			"them over HTTP or Kafka) is shown decoded: key, headers, create_time, value.\n" +
			"Stops at the first damaged frame, reporting its position and reason on\n" +
			"stderr, and exits 1. Reads the files only.\n\n" +
			"PATH is a partition's log directory (its segment files are read in order,\n" +
			"each line naming the segment its byte position is in), a single segment\n" +
			"file (00000000000000000100.log: offsets from the 100 in its name), a\n" +
			"phase-1 log.bin, or a quarantine file (quarantine-FROM-TO-TIME.bin, the\n" +
			"records a replica's recovery cut: offsets from FROM). --from skips the\n" +
			"records below an offset.",
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.dump(args[0], from, printData)
		},
	}
	cmd.Flags().BoolVar(&printData, "print-data", false, "print whole payloads instead of a preview")
	cmd.Flags().Uint64Var(&from, "from", 0, "print only the records from this offset on")
	return cmd
}

func (a *app) dump(path string, from uint64, printData bool) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("log dump: %w", err)
	}
	out := bufio.NewWriter(a.env.Stdout)
	enc := json.NewEncoder(out)
	emit := func(seg string, pos int64, r log.Record) error {
		if r.Offset < from {
			return nil
		}
		if a.g.json {
			return enc.Encode(newDumpRecord(seg, pos, r, printData))
		}
		_, err := fmt.Fprintln(out, dumpLine(seg, pos, r, printData))
		return err
	}
	if info.IsDir() {
		err = dumpDir(path, emit)
	} else {
		// A segment's or quarantine file's frames start at the offset
		// its name gives; any other log's at 0.
		err = log.ScanFileFrom(path, verify.FileBase(path), log.Options{}, func(pos int64, r log.Record) error {
			return emit("", pos, r)
		})
	}
	// Records before the damage are printed before the error is.
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		// A *log.CorruptionError names the file, byte position, offset
		// and reason.
		return fmt.Errorf("log dump: %w", err)
	}
	return nil
}

// dumpDir reads the log directory dir, every segment in order (a legacy
// log.bin alone as one segment), and passes each record to emit with the
// name of the file its position is in.
func dumpDir(dir string, emit func(seg string, pos int64, r log.Record) error) error {
	d, err := verify.ListLogDir(dir)
	if err != nil {
		return err
	}
	if !d.IsLog() {
		return fmt.Errorf("%s holds no segment file (%s, ...) and no %s", dir, segment.SegmentFileName(0), segment.LegacyFileName)
	}
	return segment.ScanDir(dir, log.Options{}, func(seg segment.SegmentInfo, pos int64, r log.Record) error {
		return emit(filepath.Base(seg.Path), pos, r)
	})
}
