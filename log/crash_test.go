package log_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log"
)

// The crash test kills a process that is appending and checks what survives.
//
// The child is testdata/crashchild, built once per test run without the race
// detector so that it starts in a few milliseconds. It opens the log and
// appends payloads of 0-64 KiB in a loop, printing "offset size hash" for
// each record only after Append returned. The parent SIGKILLs it at a random
// moment, reopens the log (repairing a torn tail when one is reported) and
// checks that every acknowledged record is there, exactly, with dense
// offsets from 0. The next child continues on the same file.

// crashChildBinary builds the crash child once per test binary run.
var crashChildBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pystream-crashchild-")
	if err != nil {
		return "", err
	}
	crashChildDir = dir
	bin := filepath.Join(dir, "crashchild")
	// go test puts its own toolchain's bin directory first on PATH.
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/crashchild").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build crash child: %w\n%s", err, out)
	}
	return bin, nil
})

// crashChildDir holds the built child; TestMain removes it.
var crashChildDir string

func payloadHash(p []byte) string {
	sum := sha256.Sum256(p)
	return hex.EncodeToString(sum[:16])
}

// ack is what the child printed for one acknowledged record.
type ack struct {
	size int
	hash string
}

func parseAck(t *testing.T, line string) (uint64, ack) {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 3, "ack line %q", line)
	off, err := strconv.ParseUint(f[0], 10, 64)
	require.NoError(t, err)
	size, err := strconv.Atoi(f[1])
	require.NoError(t, err)
	return off, ack{size: size, hash: f[2]}
}

func crashIterations(normal int) int {
	if os.Getenv("PYSTREAM_SOAK") == "1" {
		return 15 * normal
	}
	return normal
}

// TestLogCrashOneAppender pins docs/design.md § Invariants, 1 (an
// acknowledged write is on stable storage) and docs/design.md § Torn tail
// against SIGKILL.
func TestLogCrashOneAppender(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	t.Parallel()
	runCrashLoop(t, 1, crashIterations(200))
}

// TestLogCrashManyAppenders is the crash test with 16 concurrent appenders
// in the child: group commit must be invisible to correctness
// (docs/phase-1-log.md § Group commit).
func TestLogCrashManyAppenders(t *testing.T) {
	if testing.Short() {
		t.Skip("a crash at every step of a long run: it runs in make test's workspace pass, not under -short")
	}
	t.Parallel()
	runCrashLoop(t, 16, crashIterations(200))
}

func runCrashLoop(t *testing.T, writers, iterations int) {
	path := logPath(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(writers)))
	acked := map[uint64]ack{}
	torn := 0
	var tChild, tRepair, tOpen time.Duration
	for i := range iterations {
		t0 := time.Now()
		newAcks, stderr := runCrashChild(t, path, uint64(i), writers, rng)
		tChild += time.Since(t0)
		for off, a := range newAcks {
			acked[off] = a
		}

		t2 := time.Now()
		l, err := log.Open(path)
		tOpen += time.Since(t2)
		var cerr *log.CorruptionError
		if errors.As(err, &cerr) {
			require.True(t, cerr.TornTail, "iteration %d: damage other than a torn tail after SIGKILL: %v\nchild stderr: %s", i, err, stderr)
			torn++
			t1 := time.Now()
			res, rerr := log.Repair(path)
			tRepair += time.Since(t1)
			require.NoError(t, rerr)
			require.True(t, res.Repaired)
			require.Equal(t, cerr.Pos, res.End)
			require.NoError(t, os.Remove(res.Backup))
			l, err = log.Open(path)
		}
		require.NoError(t, err, "iteration %d", i)
		// Every record acknowledged in this iteration is present and exact;
		// older ones are checked once at the end.
		for off, a := range newAcks {
			recs, err := l.Read(off, 1)
			require.NoError(t, err)
			require.Len(t, recs, 1, "iteration %d: acknowledged offset %d missing (next offset %d)", i, off, l.NextOffset())
			require.Equal(t, a, ack{size: len(recs[0].Payload), hash: payloadHash(recs[0].Payload)}, "iteration %d: offset %d", i, off)
		}
		require.NoError(t, l.Close())
	}

	l, err := log.Open(path)
	require.NoError(t, err)
	defer l.Close()
	all := readAll(t, l)
	for i, r := range all {
		require.Equal(t, uint64(i), r.Offset, "offsets dense from 0")
	}
	for off, a := range acked {
		require.Less(t, off, uint64(len(all)), "acknowledged offset %d lost", off)
		require.Equal(t, a, ack{size: len(all[off].Payload), hash: payloadHash(all[off].Payload)}, "offset %d", off)
	}
	t.Logf("%d appenders: %d iterations, %d records (%d acknowledged), %d bytes; torn tails seen and repaired: %d; time in children %v, reopening %v, repairing %v",
		writers, iterations, len(all), len(acked), l.Size(), torn, tChild.Round(time.Millisecond), tOpen.Round(time.Millisecond), tRepair.Round(time.Millisecond))
}

// runCrashChild starts a child on path, lets it acknowledge a random number
// of records, kills it with SIGKILL after a random short delay and returns
// every acknowledgement it printed.
func runCrashChild(t *testing.T, path string, seed uint64, writers int, rng *rand.Rand) (map[uint64]ack, string) {
	t.Helper()
	bin, err := crashChildBinary()
	require.NoError(t, err)
	cmd := exec.Command(bin, "-path", path, "-seed", strconv.FormatUint(seed, 10), "-writers", strconv.Itoa(writers))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan(), "child never got ready: %s", stderr.String())
	require.Equal(t, "ready", lines.Text())
	acks := map[uint64]ack{}
	wait := rng.IntN(4)
	for range wait {
		require.True(t, lines.Scan(), "child stopped early: %s", stderr.String())
		off, a := parseAck(t, lines.Text())
		acks[off] = a
	}
	if d := time.Duration(rng.IntN(1500)) * time.Microsecond; d > 500*time.Microsecond {
		time.Sleep(d - 500*time.Microsecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	killed = true
	for lines.Scan() {
		off, a := parseAck(t, lines.Text())
		acks[off] = a
	}
	require.NoError(t, lines.Err())
	_, _ = io.Copy(io.Discard, out)
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "child exited on its own: %s", stderr.String())
	ws, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child exited on its own (%v): %s", err, stderr.String())
	return acks, stderr.String()
}
