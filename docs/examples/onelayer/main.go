// Command onelayer is a program outside PyStream that depends on one layer of
// it, the durable log (github.com/pystream/pystream/log), and nothing else.
// It opens a log in a temporary directory, appends two records and reads
// them back. docs/using-one-layer.md walks through it.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pystream/pystream/log"
)

func main() {
	if err := runInTempDir(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "onelayer:", err)
		os.Exit(1)
	}
}

// runInTempDir runs the example in a fresh temporary directory and removes it
// afterwards.
func runInTempDir(w io.Writer) error {
	dir, err := os.MkdirTemp("", "onelayer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	return run(filepath.Join(dir, "events", "log.bin"), w)
}

// run appends two records to the log at path, reads every record back and
// prints one line per record to w.
func run(path string, w io.Writer) error {
	l, err := log.Open(path) // creates the file and its directory
	if err != nil {
		return err
	}
	defer l.Close()

	for _, p := range []string{"user signed up", "user logged in"} {
		// Append returns once the record is on stable storage.
		if _, err := l.Append([]byte(p)); err != nil {
			return err
		}
	}
	recs, err := l.Read(0, 100)
	if err != nil {
		return err
	}
	for _, r := range recs {
		fmt.Fprintf(w, "%d: %s\n", r.Offset, r.Payload)
	}
	return l.Close()
}
