package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
)

// Runs named for the tables: known runs at rising epochs, and the unknown
// run.
var (
	epA = EpochRun{Epoch: 3, ID: 0x9f2c1a0b3d4e5f60, Start: 0}
	epB = EpochRun{Epoch: 7, ID: 0x0123456789abcdef, Start: 1200}
	epC = EpochRun{Epoch: 7, ID: 0xfedcba9876543210, Start: 1500}
)

// at returns r starting at start.
func at(r EpochRun, start uint64) EpochRun {
	r.Start = start
	return r
}

func TestEpochRunsValidateTable(t *testing.T) {
	unknown := func(start uint64) EpochRun { return EpochRun{Start: start} }
	for _, tc := range []struct {
		name string
		runs []EpochRun
		ok   bool
	}{
		{"none", nil, true},
		{"one", []EpochRun{epA}, true},
		{"rising epochs", []EpochRun{epA, epB}, true},
		{"two runs of one epoch", []EpochRun{epA, epB, epC}, true},
		{"unknown first", []EpochRun{unknown(0), at(epA, 10)}, true},
		{"unknown between", []EpochRun{epA, unknown(5), at(epB, 9)}, true},
		{"unknown only", []EpochRun{unknown(4)}, true},
		{"a run again after another", []EpochRun{epA, epB, at(epA, 1300)}, false},
		{"same start", []EpochRun{epA, at(epB, 0)}, false},
		{"starts descending", []EpochRun{at(epA, 10), at(epB, 5)}, false},
		{"same run twice in a row", []EpochRun{epA, at(epA, 5)}, false},
		{"unknown twice in a row", []EpochRun{unknown(0), unknown(5)}, false},
		{"unknown with an epoch", []EpochRun{{Epoch: 2, Start: 0}}, false},
		{"epoch goes down", []EpochRun{at(epB, 0), at(epA, 5)}, false},
		{"epoch goes down past an unknown", []EpochRun{at(epB, 0), unknown(3), at(epA, 5)}, false},
		{"known run twice apart", []EpochRun{epB, unknown(1300), at(epB, 1400)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateEpochRuns(tc.runs)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidArgument)
		})
	}
}

func TestEpochRunsFormatParseRoundTrip(t *testing.T) {
	for _, runs := range [][]EpochRun{
		nil,
		{epA},
		{epA, epB, epC},
		{{Start: 0}, at(epA, 7)},
		{{Epoch: 1<<64 - 1, ID: 1<<64 - 1, Start: 1<<64 - 1}},
	} {
		s := FormatEpochRuns(runs)
		got, err := ParseEpochRuns(s)
		require.NoError(t, err, "%q", s)
		require.Equal(t, runs, got, "%q", s)
	}
	require.Equal(t, "3:9f2c1a0b3d4e5f60:0,7:0123456789abcdef:1200", FormatEpochRuns([]EpochRun{epA, epB}))
	require.Equal(t, "0:0000000000000000:5", EpochRun{Start: 5}.String())
}

func TestEpochRunsParseRefusals(t *testing.T) {
	for _, s := range []string{
		",",
		"3:9f2c1a0b3d4e5f60:0,",
		"3:9f2c1a0b3d4e5f60",
		"3:9f2c1a0b3d4e5f60:0:1",
		"3:9f2c1a0b3d4e5f6:0",   // 15 hex digits
		"3:9f2c1a0b3d4e5f600:0", // 17
		"3:9f2c1a0b3d4e5f6g:0",
		"-3:9f2c1a0b3d4e5f60:0",
		"3:9f2c1a0b3d4e5f60:x",
		"18446744073709551616:9f2c1a0b3d4e5f60:0",
		" 3:9f2c1a0b3d4e5f60:0",
		"3:9f2c1a0b3d4e5f60:5,3:9f2c1a0b3d4e5f60:6", // continues the run before
		"7:0123456789abcdef:0,3:9f2c1a0b3d4e5f60:6", // epoch goes down
	} {
		_, err := ParseEpochRuns(s)
		require.ErrorIs(t, err, ErrInvalidArgument, "%q", s)
	}
}

func TestEpochsFileRoundTripAndGolden(t *testing.T) {
	golden := "pystream leader epochs 1\n3:9f2c1a0b3d4e5f60:0\n7:0123456789abcdef:1200\n"
	require.Equal(t, golden, string(EncodeEpochsFile([]EpochRun{epA, epB})))
	require.Equal(t, "pystream leader epochs 1\n", string(EncodeEpochsFile(nil)))
	for _, runs := range [][]EpochRun{nil, {epA}, {epA, epB, epC}, {{Start: 0}, at(epA, 1)}} {
		got, err := ParseEpochsFile(EncodeEpochsFile(runs))
		require.NoError(t, err)
		require.Equal(t, runs, got)
	}
}

func TestEpochsFileParseRefusals(t *testing.T) {
	const h = "pystream leader epochs 1\n"
	for name, data := range map[string]string{
		"empty":                 "",
		"header only, no final": "pystream leader epochs 1",
		"no final newline":      h + "3:9f2c1a0b3d4e5f60:0",
		"other version":         "pystream leader epochs 2\n",
		"other header":          "pystream leader epoch 1\n3:9f2c1a0b3d4e5f60:0\n",
		"header with a space":   "pystream leader epochs 1 \n",
		"crlf":                  "pystream leader epochs 1\r\n",
		"blank line":            h + "\n",
		"blank line between":    h + "3:9f2c1a0b3d4e5f60:0\n\n7:0123456789abcdef:1200\n",
		"two final newlines":    h + "3:9f2c1a0b3d4e5f60:0\n\n",
		"15-digit id":           h + "3:9f2c1a0b3d4e5f6:0\n",
		"two fields":            h + "3:9f2c1a0b3d4e5f60\n",
		"four fields":           h + "3:9f2c1a0b3d4e5f60:0:1\n",
		"commas":                h + "3:9f2c1a0b3d4e5f60:0,7:0123456789abcdef:1200\n",
		"not a number":          h + "x:9f2c1a0b3d4e5f60:0\n",
		"starts descend":        h + "7:0123456789abcdef:1200\n3:9f2c1a0b3d4e5f60:0\n",
		"unknown with an epoch": h + "4:0000000000000000:0\n",
		"no header":             "3:9f2c1a0b3d4e5f60:0\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseEpochsFile([]byte(data))
			require.ErrorIs(t, err, ErrInvalidArgument)
		})
	}
}

func TestEpochRunAtCoveringRunSpans(t *testing.T) {
	a, b, c := at(epA, 10), at(epB, 20), at(epC, 30)
	runs := []EpochRun{a, b, c}
	for _, tc := range []struct {
		off  uint64
		want EpochRun
	}{{0, EpochRun{}}, {9, EpochRun{}}, {10, a}, {19, a}, {20, b}, {29, b}, {30, c}, {1 << 40, c}} {
		require.Equal(t, tc.want, runAt(runs, tc.off), "offset %d", tc.off)
	}
	require.Equal(t, EpochRun{}, runAt(nil, 5))

	for _, tc := range []struct {
		name     string
		from, to uint64
		want     []EpochRun
	}{
		{"before every run", 0, 5, []EpochRun{{}}},
		{"unknown then runs", 0, 25, []EpochRun{{}, a, b}},
		{"starts at a run", 10, 25, []EpochRun{a, b}},
		{"inside a run", 12, 15, []EpochRun{a}},
		{"to is exclusive", 12, 20, []EpochRun{a}},
		{"to past every run", 21, 100, []EpochRun{b, c}},
		{"empty range", 30, 30, []EpochRun{c}},
		{"no runs", 0, 10, []EpochRun{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := runs
			if tc.name == "no runs" {
				in = nil
			}
			require.Equal(t, tc.want, covering(in, tc.from, tc.to))
		})
	}
	// An unknown run starting exactly at from is the run holding from.
	u := []EpochRun{{Start: 0}, at(epA, 5)}
	require.Equal(t, []EpochRun{{Start: 0}, at(epA, 5)}, covering(u, 0, 9))
	require.Equal(t, []EpochRun{at(epA, 5)}, covering(u, 5, 9))

	other := []EpochRun{at(epA, 10), at(epC, 25)}
	require.Equal(t, []runSpan{
		{from: 0, to: 10, a: EpochRun{}, b: EpochRun{}},
		{from: 10, to: 20, a: a, b: other[0]},
		{from: 20, to: 25, a: b, b: other[0]},
		{from: 25, to: 30, a: b, b: other[1]},
		{from: 30, to: 40, a: c, b: other[1]},
	}, runSpans(runs, other, 0, 40))
	require.Equal(t, []runSpan{{from: 12, to: 18, a: a, b: other[0]}}, runSpans(runs, other, 12, 18))
	require.Empty(t, runSpans(runs, other, 7, 7))
}

// openTestHistory opens dir's history over durable.OS with the log's end at
// end, failing the test on an error.
func openTestHistory(t *testing.T, dir string, end uint64) (*epochHistory, *logLines) {
	t.Helper()
	l := &logLines{}
	h, err := openEpochHistory(durable.OS, dir, 0, end, l.logf)
	require.NoError(t, err)
	return h, l
}

// readEpochsFile parses dir's history file, which must exist.
func readEpochsFile(t *testing.T, dir string) []EpochRun {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, EpochsFileName))
	require.NoError(t, err)
	runs, err := ParseEpochsFile(data)
	require.NoError(t, err)
	return runs
}

// writeEpochsFile puts runs down as dir's history.
func writeEpochsFile(t *testing.T, dir string, runs []EpochRun) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, EpochsFileName), EncodeEpochsFile(runs), 0o644))
}

// fileStamp returns the file's content and its identity, so a test can
// tell that it was not rewritten (WriteFile renames a new file over it).
func fileStamp(t *testing.T, dir string) (string, os.FileInfo) {
	t.Helper()
	path := filepath.Join(dir, EpochsFileName)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	return string(data), info
}

func TestEpochHistoryLeadStartsOneRunPerEpochAndOpening(t *testing.T) {
	dir := t.TempDir()
	h, _ := openTestHistory(t, dir, 0)
	require.Empty(t, h.snapshot())
	_, err := os.Stat(filepath.Join(dir, EpochsFileName))
	require.ErrorIs(t, err, os.ErrNotExist, "opening writes nothing")

	require.NoError(t, h.lead(4, 0))
	first := h.snapshot()
	require.Len(t, first, 1)
	require.Equal(t, uint64(4), first[0].Epoch)
	require.True(t, first[0].Known())
	require.Equal(t, first, readEpochsFile(t, dir), "written before lead returns")

	content, ino := fileStamp(t, dir)
	require.NoError(t, h.lead(4, 5), "the same epoch continues the run")
	require.Equal(t, first, h.snapshot())
	c2, ino2 := fileStamp(t, dir)
	require.Equal(t, content, c2)
	require.True(t, os.SameFile(ino, ino2), "nothing rewritten")

	require.NoError(t, h.lead(6, 9))
	second := h.snapshot()
	require.Len(t, second, 2)
	require.Equal(t, EpochRun{Epoch: 6, ID: second[1].ID, Start: 9}, second[1])
	require.Equal(t, second, readEpochsFile(t, dir))

	// Reopened, the same epoch is another run: a new id, from the end.
	h2, _ := openTestHistory(t, dir, 12)
	require.Equal(t, second, h2.snapshot())
	require.NoError(t, h2.lead(6, 12))
	third := h2.snapshot()
	require.Len(t, third, 3)
	require.Equal(t, uint64(6), third[2].Epoch)
	require.Equal(t, uint64(12), third[2].Start)
	require.NotEqual(t, second[1].ID, third[2].ID)
	require.Equal(t, third, readEpochsFile(t, dir))

	// A new epoch at the same end, before any append, replaces the run.
	require.NoError(t, h2.lead(7, 12))
	fourth := h2.snapshot()
	require.Len(t, fourth, 3)
	require.Equal(t, uint64(7), fourth[2].Epoch)
	require.Equal(t, fourth, readEpochsFile(t, dir))
}

func TestEpochHistoryFollowCopiesLeaderRuns(t *testing.T) {
	dir := t.TempDir()
	writeEpochsFile(t, dir, []EpochRun{epA})
	h, _ := openTestHistory(t, dir, 1300)

	// The leader's runs from before end are clipped to end: epB holds 1300
	// on the leader, not on the follower, so it starts there; epC follows.
	leader := []EpochRun{epA, at(epB, 1200), at(epC, 1500)}
	require.NoError(t, h.follow(1300, leader))
	want := []EpochRun{epA, at(epB, 1300), at(epC, 1500)}
	require.Equal(t, want, h.snapshot())
	require.Equal(t, want, readEpochsFile(t, dir))

	// The run already holding end adds nothing and writes nothing.
	content, ino := fileStamp(t, dir)
	require.NoError(t, h.follow(1600, []EpochRun{at(epC, 1500)}))
	// Nor does a retry's list, covering records sent again from before
	// end: only the run holding end counts.
	require.NoError(t, h.follow(1700, []EpochRun{epA, at(epB, 1200), at(epC, 1500)}))
	require.NoError(t, h.follow(1700, []EpochRun{at(epB, 1250), at(epC, 1500)}))
	require.Equal(t, want, h.snapshot())
	c2, ino2 := fileStamp(t, dir)
	require.Equal(t, content, c2)
	require.True(t, os.SameFile(ino, ino2), "nothing rewritten")

	// No runs: what follows is an unknown run.
	require.NoError(t, h.follow(1800, nil))
	want = append(want, EpochRun{Start: 1800})
	require.Equal(t, want, h.snapshot())
	require.Equal(t, want, readEpochsFile(t, dir))

	// Refusals leave memory and file alone.
	content, ino = fileStamp(t, dir)
	d := EpochRun{Epoch: 9, ID: 0x42, Start: 1900}
	for name, runs := range map[string][]EpochRun{
		"starts after end": {d},
		"invalid":          {at(d, 1850), at(d, 1860)},
		"epoch goes down":  {at(d, 1850), at(epA, 1860)},
	} {
		err := h.follow(1851, runs)
		require.ErrorIs(t, err, ErrInvalidArgument, name)
		require.Equal(t, want, h.snapshot(), name)
		c2, ino2 := fileStamp(t, dir)
		require.Equal(t, content, c2, name)
		require.True(t, os.SameFile(ino, ino2), name)
	}
}

func TestEpochHistoryFollowEndsALeaderRun(t *testing.T) {
	dir := t.TempDir()
	h, _ := openTestHistory(t, dir, 0)
	require.NoError(t, h.lead(3, 0))
	led := h.snapshot()[0]
	// Following the run it led adds nothing; leading again afterwards,
	// even at the same epoch, starts another run.
	require.NoError(t, h.follow(5, []EpochRun{led}))
	require.Equal(t, []EpochRun{led}, h.snapshot())
	require.NoError(t, h.lead(3, 8))
	runs := h.snapshot()
	require.Len(t, runs, 2)
	require.Equal(t, uint64(8), runs[1].Start)
	require.NotEqual(t, led.ID, runs[1].ID)
}

func TestEpochHistoryTruncateDropsRunsAtAndPastEnd(t *testing.T) {
	dir := t.TempDir()
	writeEpochsFile(t, dir, []EpochRun{epA, epB, epC})
	h, _ := openTestHistory(t, dir, 2000)
	content, ino := fileStamp(t, dir)
	require.NoError(t, h.truncate(1600), "no run starts at or past the end")
	c2, ino2 := fileStamp(t, dir)
	require.Equal(t, content, c2)
	require.True(t, os.SameFile(ino, ino2))

	require.NoError(t, h.truncate(1500))
	require.Equal(t, []EpochRun{epA, epB}, h.snapshot())
	require.Equal(t, []EpochRun{epA, epB}, readEpochsFile(t, dir))
	require.NoError(t, h.truncate(1201))
	require.Equal(t, []EpochRun{epA, epB}, readEpochsFile(t, dir))
	require.NoError(t, h.truncate(0))
	require.Empty(t, h.snapshot())
	require.Empty(t, readEpochsFile(t, dir))
}

func TestEpochHistoryOpenDropsRunsPastTheEnd(t *testing.T) {
	for _, next := range []string{"follow adding nothing", "lead", "follow adding a run"} {
		t.Run(next, func(t *testing.T) {
			dir := t.TempDir()
			writeEpochsFile(t, dir, []EpochRun{epA, epB, epC})
			h, _ := openTestHistory(t, dir, 1500)
			require.Equal(t, []EpochRun{epA, epB}, h.snapshot())
			require.Equal(t, []EpochRun{epA, epB, epC}, readEpochsFile(t, dir), "opening writes nothing")
			switch next {
			case "follow adding nothing":
				require.NoError(t, h.follow(1500, []EpochRun{at(epB, 1200)}))
				require.Equal(t, []EpochRun{epA, epB}, readEpochsFile(t, dir), "the trimmed history is written before the append")
				// Written once: the next follow writes nothing.
				content, ino := fileStamp(t, dir)
				require.NoError(t, h.follow(1600, []EpochRun{at(epB, 1200)}))
				c2, ino2 := fileStamp(t, dir)
				require.Equal(t, content, c2)
				require.True(t, os.SameFile(ino, ino2))
			case "lead":
				require.NoError(t, h.lead(8, 1500))
				got := readEpochsFile(t, dir)
				require.Len(t, got, 3)
				require.Equal(t, []EpochRun{epA, epB}, got[:2])
				require.Equal(t, uint64(8), got[2].Epoch)
				require.Equal(t, uint64(1500), got[2].Start)
				require.NotEqual(t, epC.ID, got[2].ID)
			case "follow adding a run":
				d := EpochRun{Epoch: 8, ID: 0x77, Start: 1500}
				require.NoError(t, h.follow(1500, []EpochRun{d}))
				require.Equal(t, []EpochRun{epA, epB, d}, readEpochsFile(t, dir))
			}
		})
	}
	t.Run("truncate at the end", func(t *testing.T) {
		dir := t.TempDir()
		writeEpochsFile(t, dir, []EpochRun{epA, epB, epC})
		h, _ := openTestHistory(t, dir, 1500)
		require.NoError(t, h.truncate(1500))
		require.Equal(t, []EpochRun{epA, epB}, readEpochsFile(t, dir))
	})
}

func TestEpochHistoryDamagedFileIsSetAside(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"garbage": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("not a history\n"), 0o644))
		},
		"no final newline": func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte(strings.TrimSuffix(string(EncodeEpochsFile([]EpochRun{epA})), "\n")), 0o644))
		},
		"a directory": func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(path, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), []byte("kept"), 0o644))
		},
		"over 1 MiB": func(t *testing.T, path string) {
			data := EncodeEpochsFile([]EpochRun{epA})
			data = append(data, strings.Repeat("x", MaxEpochsFileSize)...)
			require.NoError(t, os.WriteFile(path, data, 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, EpochsFileName)
			damage(t, path)
			before, err := os.Stat(path)
			require.NoError(t, err)

			h, l := openTestHistory(t, dir, 10)
			require.Empty(t, h.snapshot(), "the history starts empty")
			_, err = os.Stat(path)
			require.ErrorIs(t, err, os.ErrNotExist, "set aside")
			aside, err := filepath.Glob(path + ".damaged-*")
			require.NoError(t, err)
			require.Len(t, aside, 1, "kept, never deleted")
			after, err := os.Stat(aside[0])
			require.NoError(t, err)
			require.True(t, os.SameFile(before, after), "the damaged file itself is kept")
			require.Len(t, l.lines, 1)
			require.Contains(t, l.lines[0], aside[0])

			// The next run starts a new history.
			require.NoError(t, h.lead(2, 10))
			runs := readEpochsFile(t, dir)
			require.Len(t, runs, 1)
			require.Equal(t, uint64(10), runs[0].Start)
		})
	}
}

func TestEpochHistoryOpenReportsUnreadableFiles(t *testing.T) {
	dir := t.TempDir()
	fsys := logtest.NewFaultFS(nil)
	writeEpochsFile(t, dir, []EpochRun{epA})
	fsys.SetFault(logtest.FailNth(logtest.OpOpen, 1))
	_, err := openEpochHistory(fsys, dir, 0, 5, t.Logf)
	require.ErrorIs(t, err, logtest.ErrInjected, "a read that fails is an error, not damage")
	require.Equal(t, []EpochRun{epA}, readEpochsFile(t, dir), "and nothing was set aside")
}

// A write of the history that fails leaves the file in doubt: after a
// rename whose directory sync failed, the file may already hold the runs
// the write was to record. The next append writes the history again, even
// when it adds nothing, so that the file never names a run that did not
// write the records that follow.
func TestEpochHistoryFailedWriteIsWrittenAgain(t *testing.T) {
	dir := t.TempDir()
	writeEpochsFile(t, dir, []EpochRun{epA})
	fsys := logtest.NewFaultFS(nil)
	h, err := openEpochHistory(fsys, dir, 0, 10, t.Logf)
	require.NoError(t, err)

	// The leader's new run is renamed into place, but the directory sync
	// fails: lead reports the failure and nothing is appended.
	fsys.SetFault(logtest.FailNth(logtest.OpSyncDir, 1))
	require.ErrorIs(t, h.lead(5, 10), logtest.ErrInjected)
	fsys.SetFault(nil)
	require.Len(t, readEpochsFile(t, dir), 2, "the new run reached the file")

	// The replica follows epA's leader from 10: the records it appends
	// belong to epA, and the file must say so before they are appended.
	require.NoError(t, h.follow(10, []EpochRun{epA}))
	require.Equal(t, []EpochRun{epA}, readEpochsFile(t, dir))

	// The same for a follow whose write fails, then one that adds nothing.
	d := EpochRun{Epoch: 6, ID: 0x66, Start: 10}
	fsys.SetFault(logtest.FailNth(logtest.OpSyncDir, 1))
	require.ErrorIs(t, h.follow(10, []EpochRun{d}), logtest.ErrInjected)
	fsys.SetFault(nil)
	require.NoError(t, h.follow(10, []EpochRun{epA}))
	require.Equal(t, []EpochRun{epA}, readEpochsFile(t, dir))
}

// A set-aside history's name is one EpochsAsideName gives, and nothing
// else is taken for one.
func TestEpochsAsideName(t *testing.T) {
	name := EpochsAsideName(time.Unix(5, 7))
	require.Equal(t, "leader-epochs.damaged-5000000007", name)
	require.True(t, IsEpochsAsideName(name))
	for _, bad := range []string{EpochsFileName, "leader-epochs.damaged-", "leader-epochs.damaged-12a", "leader-epochs.damaged--1",
		"leader-epochs.damaged-99999999999999999999", "x" + name} {
		require.False(t, IsEpochsAsideName(bad), bad)
	}
}

// Runs that hold nothing at or past the log start are dropped at open and
// written out with the next append; the run holding the log start stays.
func TestEpochHistoryOpenPrunesRunsBelowTheLogStart(t *testing.T) {
	for _, tc := range []struct {
		start uint64
		want  []EpochRun
	}{
		{start: 0, want: []EpochRun{epA, epB, epC}},
		{start: epB.Start - 1, want: []EpochRun{epA, epB, epC}},
		{start: epB.Start, want: []EpochRun{epB, epC}},
		{start: epC.Start + 1, want: []EpochRun{epC}},
	} {
		t.Run(fmt.Sprint(tc.start), func(t *testing.T) {
			dir := t.TempDir()
			writeEpochsFile(t, dir, []EpochRun{epA, epB, epC})
			h, err := openEpochHistory(durable.OS, dir, tc.start, epC.Start+100, t.Logf)
			require.NoError(t, err)
			require.Equal(t, tc.want, h.snapshot())
			require.Equal(t, []EpochRun{epA, epB, epC}, readEpochsFile(t, dir), "opening writes nothing")
			require.NoError(t, h.follow(epC.Start+100, []EpochRun{epC}))
			require.Equal(t, tc.want, readEpochsFile(t, dir), "the pruned history is written before the append")
		})
	}
}
