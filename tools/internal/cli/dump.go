package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/spf13/cobra"
)

func (a *app) logDumpCommand() *cobra.Command {
	var printData bool
	cmd := &cobra.Command{
		Use:   "dump FILE",
		Short: "Print every record of a log file, one per line",
		Long: "Print every record of a log file: offset, byte position, timestamp (as\n" +
			"nanoseconds and as a date), payload size and a preview of the payload.\n" +
			"Stops at the first damaged frame, reporting its position and reason on\n" +
			"stderr, and exits 1. Reads the file only.\n\n" +
			"A quarantine file (quarantine-FROM-TO-TIME.bin, the records a replica's\n" +
			"recovery cut) is read with its records' offsets starting at FROM.",
		Args: exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.dump(args[0], printData)
		},
	}
	cmd.Flags().BoolVar(&printData, "print-data", false, "print whole payloads instead of a preview")
	return cmd
}

func (a *app) dump(path string, printData bool) error {
	out := bufio.NewWriter(a.env.Stdout)
	enc := json.NewEncoder(out)
	// A quarantine file's frames start at the offset its name gives;
	// any other log's at 0.
	var first uint64
	if from, _, _, ok := cluster.ParseQuarantineName(filepath.Base(path)); ok {
		first = from
	}
	err := log.ScanFileFrom(path, first, log.Options{}, func(pos int64, r log.Record) error {
		if a.g.json {
			return enc.Encode(newDumpRecord(pos, r, printData))
		}
		_, err := fmt.Fprintln(out, dumpLine(pos, r, printData))
		return err
	})
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
