package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/pystream/pystream/log"
)

// The records run appended are durable: a second Open of the same file, as
// after a restart, finds both at offsets 0 and 1.
func TestOneLayerRunRecordsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events", "log.bin")
	var out bytes.Buffer
	if err := run(path, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, want := out.String(), "0: user signed up\n1: user logged in\n"; got != want {
		t.Fatalf("run printed %q, want %q", got, want)
	}

	l, err := log.Open(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer l.Close()
	if got := l.NextOffset(); got != 2 {
		t.Fatalf("NextOffset after reopen = %d, want 2", got)
	}
}

func Example() {
	if err := runInTempDir(os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// 0: user signed up
	// 1: user logged in
}
