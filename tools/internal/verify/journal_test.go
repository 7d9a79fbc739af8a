package verify_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/log/durable"
	"github.com/pystream/pystream/log/logtest"
	"github.com/pystream/pystream/log/segment"
	"github.com/pystream/pystream/log/wal"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/stretchr/testify/require"
)

// journalWrites writes each chunk, one after the other from byte pos, to
// the file at path through the commit journal of the broker whose
// directory is brokerDir, opened over fsys as the broker opens it, and
// syncs each: the journal holds them durably. The journal is left open,
// as a crash leaves it, until the test ends.
func journalWrites(t *testing.T, fsys durable.FS, brokerDir, path string, pos int64, chunks ...[]byte) {
	t.Helper()
	j, err := wal.Open(fsys, brokerDir, wal.Options{Journaled: func(p string) bool { return cluster.JournaledFile(brokerDir, p) }})
	require.NoError(t, err)
	f, err := j.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	for _, c := range chunks {
		_, err := f.WriteAt(c, pos)
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		pos += int64(len(c))
	}
	t.Cleanup(func() {
		_ = f.Close() // best effort: the test is over and its directory goes
		_ = j.Close()
	})
}

// items verifies root and returns its items by key.
func items(t *testing.T, root string) map[string]verify.Item {
	t.Helper()
	report, err := verify.Verify(root)
	require.NoError(t, err)
	got := map[string]verify.Item{}
	for _, it := range report.Items {
		got[key(t, root, it)] = it
	}
	return got
}

// genKey is how a test names the item of generation file name of the
// journal of broker id.
func genKey(id int, name string) string {
	return fmt.Sprintf("%s %s/%s/%s", verify.KindCommitJournal, filepath.Base(cluster.BrokerDir("", id)), wal.DirName, name)
}

// TestVerifyCommitJournalPending: a crash leaves a follower's segment
// file short of its tail, torn in the middle of a frame, and the broker's
// commit journal holding the tail. The broker replays the journal before
// it reads the file, so verify judges the replica as the replay leaves
// it: whole and equal to its leader, with a note, and the generation file
// OK. Without the journal the same segment file is a torn tail.
func TestVerifyCommitJournalPending(t *testing.T) {
	root := t.TempDir()
	c, err := cluster.Open(root)
	require.NoError(t, err)
	for id := 1; id <= 2; id++ {
		_, err := c.StartBroker(id)
		require.NoError(t, err)
	}
	require.NoError(t, c.CreateTopic("orders", 1, 2))
	prod := cluster.NewProducer(c, "orders")
	for _, p := range []string{"a", "b", "c", "d", "e"} {
		_, err := prod.Send(nil, []byte(p))
		require.NoError(t, err)
	}
	st, err := c.Status("orders", 0)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	require.Len(t, st.Followers, 1)
	follower := st.Followers[0]

	// The follower's segment keeps 3 whole records and 10 bytes of the
	// fourth; the journal holds the tail from the fourth record on.
	seg := filepath.Join(cluster.ReplicaDir(root, follower, "orders", 0), segment.SegmentFileName(0))
	data, err := os.ReadFile(seg)
	require.NoError(t, err)
	var cut int64
	require.NoError(t, log.ScanFileFrom(seg, 0, log.Options{}, func(pos int64, rec log.Record) error {
		if rec.Offset == 3 {
			cut = pos
		}
		return nil
	}))
	require.Positive(t, cut)
	require.NoError(t, os.Truncate(seg, cut+10))
	crash, err := logtest.NewCrashFS(root)
	require.NoError(t, err)
	brokerDir := cluster.BrokerDir(root, follower)
	journalWrites(t, crash, brokerDir, seg, cut, data[cut:])
	img := t.TempDir()
	require.NoError(t, crash.Crash(img))
	imgSeg := filepath.Join(cluster.ReplicaDir(img, follower, "orders", 0), segment.SegmentFileName(0))
	before, err := os.ReadFile(imgSeg)
	require.NoError(t, err)
	require.Len(t, before, int(cut+10), "the crash image lacks the tail")
	gens, err := os.ReadDir(filepath.Join(cluster.BrokerDir(img, follower), wal.DirName))
	require.NoError(t, err)
	require.Len(t, gens, 1)

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where verify replays the journal into copies
	got := items(t, img)
	replicaRel := fmt.Sprintf("%s/topics/orders/partition-000000/", filepath.Base(brokerDir))
	note := "the broker's commit journal holds 1 writes to it not yet replayed"
	jit := got[genKey(follower, gens[0].Name())]
	require.Equal(t, verify.StatusOK, jit.Status, "%+v", got)
	require.Contains(t, jit.Detail, "1 writes to 1 files not yet replayed: the broker replays them when it opens, before it reads those files")
	require.Contains(t, jit.Detail, "replay removes it")
	lit := got["log "+replicaRel]
	require.Equal(t, verify.StatusOK, lit.Status, lit.Detail)
	require.Equal(t, uint64(5), *lit.Records)
	require.Contains(t, lit.Detail, note)
	rit := got["replica "+replicaRel]
	require.Equal(t, verify.StatusOK, rit.Status, rit.Detail)
	require.Contains(t, rit.Detail, note)
	for k, it := range got {
		require.False(t, it.Status.Problem(), "%s: %s %s", k, it.Status, it.Detail)
	}
	after, err := os.ReadFile(imgSeg)
	require.NoError(t, err)
	require.Equal(t, before, after, "verify changes nothing")
	leftovers, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, leftovers, "the replayed copies are removed")

	// The same image without its journal: a torn tail, and no note.
	require.NoError(t, os.RemoveAll(filepath.Join(cluster.BrokerDir(img, follower), wal.DirName)))
	got = items(t, img)
	lit = got["log "+replicaRel]
	require.Equal(t, verify.StatusDamaged, lit.Status, lit.Detail)
	require.True(t, lit.TornTail)
	require.NotContains(t, lit.Detail, "commit journal")
}

// TestVerifyCommitJournalKept: a generation file replay would keep aside
// (a torn last entry, a write to a file that no longer exists), one whose
// creation was cut short, and one replay set aside are all OK, each said
// in words; a log is verified with the writes replay would make to it,
// and no others.
func TestVerifyCommitJournalKept(t *testing.T) {
	frame := func(off uint64, p string) []byte {
		return log.AppendFrame(nil, log.Record{Offset: off, Timestamp: 1000 + int64(off), Payload: []byte(p)})
	}
	t.Run("torn last entry", func(t *testing.T) {
		root := t.TempDir()
		brokerDir := cluster.BrokerDir(root, 1)
		dir := cluster.ReplicaDir(root, 1, "t", 0)
		seg := writeSegment(t, dir, 0, "a", "b")
		size := int64(2 * log.FrameSize(1))
		journalWrites(t, durable.OS, brokerDir, seg, size, frame(2, "c"), frame(3, "d"))
		require.NoError(t, os.Truncate(seg, size)) // the crash lost both writes
		gen := filepath.Join(brokerDir, wal.DirName, wal.GenerationFileName(1))
		info, err := os.Stat(gen)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(gen, info.Size()-3)) // and cut the last entry short

		got := items(t, root)
		jit := got[genKey(1, wal.GenerationFileName(1))]
		require.Equal(t, verify.StatusOK, jit.Status, "%+v", got)
		require.Contains(t, jit.Detail, "1 writes to 1 files not yet replayed")
		require.Contains(t, jit.Detail, "bytes from byte")
		require.Contains(t, jit.Detail, "are not an entry")
		require.Contains(t, jit.Detail, "replay keeps the file aside")
		lit := got["log broker-000001/topics/t/partition-000000/"]
		require.Equal(t, verify.StatusOK, lit.Status, lit.Detail)
		require.Equal(t, uint64(3), *lit.Records, "the whole entry is replayed, the torn one is not")
		require.Contains(t, lit.Detail, "holds 1 writes to it not yet replayed")
	})
	t.Run("a write to a file that no longer exists", func(t *testing.T) {
		root := t.TempDir()
		brokerDir := cluster.BrokerDir(root, 1)
		seg := writeSegment(t, cluster.ReplicaDir(root, 1, "t", 0), 0)
		journalWrites(t, durable.OS, brokerDir, seg, 0, frame(0, "a"))
		require.NoError(t, os.RemoveAll(filepath.Dir(seg)))
		jit := items(t, root)[genKey(1, wal.GenerationFileName(1))]
		require.Equal(t, verify.StatusOK, jit.Status, jit.Detail)
		require.Contains(t, jit.Detail, "which no longer exists: skipped")
		require.Contains(t, jit.Detail, "replay keeps the file aside")
	})
	t.Run("unfinished and set aside", func(t *testing.T) {
		root := t.TempDir()
		dir := filepath.Join(cluster.BrokerDir(root, 1), wal.DirName)
		write(t, filepath.Join(dir, wal.GenerationFileName(7)), make([]byte, 5))
		aside := wal.GenerationFileName(3) + wal.AsideSuffix + "123"
		write(t, filepath.Join(dir, aside), []byte("PSWJ garbage"))
		got := items(t, root)
		require.Len(t, got, 2, "%+v", got)
		it := got[genKey(1, wal.GenerationFileName(7))]
		require.Equal(t, verify.StatusOK, it.Status, it.Detail)
		require.Contains(t, it.Detail, "a generation whose creation was cut short, holding nothing; replay removes it")
		it = got[genKey(1, aside)]
		require.Equal(t, verify.StatusOK, it.Status, it.Detail)
		require.Contains(t, it.Detail, "set aside by replay; kept, never replayed again (12 bytes)")
	})
}

// TestVerifyParityCommitJournal: for every file of the journal's replay
// fuzz corpus, and generations a real journal wrote, placed as a broker's
// only generation file, wal.Replay with the broker's own rule for which
// files are journaled keeps the file aside exactly when Verify says it
// will.
func TestVerifyParityCommitJournal(t *testing.T) {
	files := corpus(t, "log/wal/testdata/fuzz/FuzzReplay")
	// Generations a broker's journal wrote: whole, torn at its end, and
	// naming a file that was removed since.
	written := func(damage func(seg, gen string)) []byte {
		root := t.TempDir()
		brokerDir := cluster.BrokerDir(root, 1)
		seg := writeSegment(t, cluster.ReplicaDir(root, 1, "t", 0), 0, "a")
		rec := log.AppendFrame(nil, log.Record{Offset: 1, Timestamp: 1, Payload: []byte("b")})
		journalWrites(t, durable.OS, brokerDir, seg, int64(log.FrameSize(1)), rec)
		gen := filepath.Join(brokerDir, wal.DirName, wal.GenerationFileName(1))
		damage(seg, gen)
		data, err := os.ReadFile(gen)
		require.NoError(t, err)
		return data
	}
	files["real whole"] = written(func(string, string) {})
	files["real torn"] = written(func(_, gen string) {
		info, err := os.Stat(gen)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(gen, info.Size()-1))
	})
	var aside, removed int
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			brokerDir := cluster.BrokerDir(root, 1)
			writeSegment(t, cluster.ReplicaDir(root, 1, "t", 0), 0, "a")
			gen := filepath.Join(brokerDir, wal.DirName, wal.GenerationFileName(1))
			write(t, gen, data)

			var item *verify.Item
			report, err := verify.Verify(root)
			require.NoError(t, err)
			for i, it := range report.Items {
				if it.Path == gen && it.Kind == verify.KindCommitJournal {
					item = &report.Items[i]
				}
			}
			require.NotNil(t, item, "%+v", report.Items)
			require.Equal(t, verify.StatusOK, item.Status, item.Detail)
			verifyAside := strings.Contains(item.Detail, "replay keeps the file aside")
			after, err := os.ReadFile(gen)
			require.NoError(t, err)
			require.Equal(t, data, after, "the file is left as it was")

			require.NoError(t, wal.Replay(logtest.NoSyncFS{FS: durable.OS}, brokerDir, wal.Options{Journaled: func(p string) bool { return cluster.JournaledFile(brokerDir, p) }}))
			kept, err := filepath.Glob(gen + wal.AsideSuffix + "*")
			require.NoError(t, err)
			require.Equal(t, len(kept) == 1, verifyAside, "replay kept aside: %v; verify: %s", kept, item.Detail)
			if verifyAside {
				aside++
			} else {
				removed++
			}
		})
	}
	require.Positive(t, aside, "the corpus holds generations replay keeps aside")
	require.Positive(t, removed, "the corpus holds generations replay removes")
}
