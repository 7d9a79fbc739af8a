// Command crashchild is the process the log's crash test kills (see
// crash_test.go). It opens a log and appends payloads of 0-64 KiB in a loop
// from one or more goroutines, printing "offset size hash" for each record
// to stdout only after Append has returned it, until it is killed.
//
// It lives in testdata so that the go tool ignores it except when the test
// builds it, without the race detector, to keep each child's start fast.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/pystream/pystream/log"
)

const (
	maxPayload = 64 << 10
	// limit bounds a child that is never killed.
	limit = 100_000
)

func main() {
	path := flag.String("path", "", "log file")
	seed := flag.Uint64("seed", 0, "payload seed")
	writers := flag.Int("writers", 1, "concurrent appenders")
	flag.Parse()
	if err := run(*path, *seed, *writers); err != nil {
		fmt.Fprintln(os.Stderr, "crashchild:", err)
		os.Exit(1)
	}
}

// payload is the deterministic payload for key: its size and content follow
// from seed and key alone.
func payload(seed, key uint64) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[0:], seed)
	binary.LittleEndian.PutUint64(s[8:], key)
	rng := rand.NewChaCha8(s)
	p := make([]byte, rand.New(rng).IntN(maxPayload+1))
	_, _ = rng.Read(p)
	return p
}

func run(path string, seed uint64, writers int) error {
	l, err := log.Open(path)
	if err != nil {
		return err
	}
	if _, err := os.Stdout.WriteString("ready\n"); err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for w := range writers {
		wg.Go(func() {
			for seq := range uint64(limit / writers) {
				key := uint64(w)<<32 | seq
				if writers == 1 {
					// One appender knows its offset in advance, so the
					// content derives from the offset itself.
					key = l.NextOffset()
				}
				p := payload(seed, key)
				rec, err := l.Append(p)
				if err == nil && writers == 1 && rec.Offset != key {
					err = fmt.Errorf("offset %d, want %d", rec.Offset, key)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				sum := sha256.Sum256(p)
				// One write per line, so lines from several writers never mix.
				line := fmt.Sprintf("%d %d %s\n", rec.Offset, len(p), hex.EncodeToString(sum[:16]))
				if _, err := os.Stdout.WriteString(line); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return l.Close()
}
