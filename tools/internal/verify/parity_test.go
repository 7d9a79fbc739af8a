package verify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/pystream/pystream/topic"
	"github.com/stretchr/testify/require"
)

// Each on-disk metadata format has one parser, in the module that owns it,
// and `pystream log verify` judges files with that parser. These tests pin
// the consequence: for every file of a module's fuzz corpus (and its golden
// file), written where it belongs in a scratch data directory, the module's
// own open path and Verify refuse exactly the same files. Neither may
// change the file.

// The corpora live in the modules that own the formats; the workspace and
// every go.mod's replace directives keep them beside this module.
const repoRoot = "../../.."

// TestVerifyParityTopicMeta: topic.OpenExisting refuses a topic.meta with a
// *topic.MetadataError exactly when Verify reports it DAMAGED.
func TestVerifyParityTopicMeta(t *testing.T) {
	files := corpus(t, "topic/testdata/fuzz/FuzzParseMetadata", "topic/testdata/topic.meta.golden")
	parity(t, files, func(t *testing.T, root string, data []byte) (string, bool) {
		// Name the directory as the file names its topic, when that is
		// a valid name, so that a sound file is sound in its place.
		var guess struct{ Name string }
		name := "t"
		if json.Unmarshal(data, &guess) == nil && topic.ValidateName(guess.Name) == nil {
			name = guess.Name
		}
		path := filepath.Join(root, name, topic.MetadataFile)
		write(t, path, data)
		tp, err := topic.OpenExisting(root, name, topic.Options{})
		if err == nil {
			require.NoError(t, tp.Close())
		}
		var me *topic.MetadataError
		return path, errors.As(err, &me)
	}, verify.KindTopicMeta)
}

// TestVerifyParityOffsetFile: the OffsetStore refuses an offset file with a
// *client.OffsetCorruptionError exactly when Verify reports it DAMAGED.
func TestVerifyParityOffsetFile(t *testing.T) {
	files := corpus(t, "client/testdata/fuzz/FuzzParseOffset")
	parity(t, files, func(t *testing.T, root string, data []byte) (string, bool) {
		offsets := filepath.Join(root, "offsets")
		path := filepath.Join(offsets, "worker", "orders", client.OffsetFileName(0))
		write(t, path, data)
		store, err := client.OpenOffsetStore(offsets)
		require.NoError(t, err)
		_, _, err = store.Load("worker", "orders", 0)
		var oce *client.OffsetCorruptionError
		return path, errors.As(err, &oce)
	}, verify.KindOffset)
}

// TestVerifyParityClusterMeta: cluster.Open refuses a cluster.meta with a
// *cluster.MetadataError exactly when Verify reports it DAMAGED. Open
// runs on a copy: it rewrites a sound version-1 file as version 2, and
// Verify must judge the file as it was.
func TestVerifyParityClusterMeta(t *testing.T) {
	files := corpus(t, "cluster/testdata/fuzz/FuzzParseClusterMeta", "cluster/testdata/cluster.meta", "cluster/testdata/cluster-v1.meta")
	parity(t, files, func(t *testing.T, root string, data []byte) (string, bool) {
		path := filepath.Join(root, cluster.MetaFileName)
		write(t, path, data)
		copyRoot := t.TempDir()
		write(t, filepath.Join(copyRoot, cluster.MetaFileName), data)
		c, err := cluster.Open(copyRoot)
		if err == nil {
			require.NoError(t, c.Close())
		}
		var me *cluster.MetadataError
		return path, errors.As(err, &me)
	}, verify.KindClusterMeta)
}

// TestVerifyParityEpochs: cluster.ParseEpochsFile, what the cluster reads
// a replica's leader-epochs with when it opens the replica, refuses a
// history exactly when Verify reports it DAMAGED. The files are inline
// cases and, when it exists, every file of the cluster's fuzz corpus.
func TestVerifyParityEpochs(t *testing.T) {
	const header = "pystream leader epochs 1\n"
	files := map[string][]byte{
		"header only":             []byte(header),
		"two runs":                []byte(header + "3:9f2c1a0b3d4e5f60:0\n7:0123456789abcdef:1200\n"),
		"an unknown run first":    []byte(header + "0:0000000000000000:0\n4:00000000000000aa:10\n"),
		"the same epoch, new run": []byte(header + "4:00000000000000aa:0\n4:00000000000000bb:5\n"),
		"empty":                   {},
		"no final newline":        []byte(header + "3:9f2c1a0b3d4e5f60:0"),
		"another header":          []byte("pystream leader epochs 2\n"),
		"a blank line":            []byte(header + "3:9f2c1a0b3d4e5f60:0\n\n"),
		"CRLF":                    []byte("pystream leader epochs 1\r\n3:9f2c1a0b3d4e5f60:0\r\n"),
		"a short id":              []byte(header + "3:9f2c:0\n"),
		"a negative start":        []byte(header + "3:9f2c1a0b3d4e5f60:-1\n"),
		"starts not ascending":    []byte(header + "3:9f2c1a0b3d4e5f60:5\n7:0123456789abcdef:5\n"),
		"epoch going down":        []byte(header + "7:0123456789abcdef:0\n3:9f2c1a0b3d4e5f60:5\n"),
		"a run twice":             []byte(header + "3:9f2c1a0b3d4e5f60:0\n4:00000000000000aa:5\n3:9f2c1a0b3d4e5f60:9\n"),
		"an unknown run, epoch":   []byte(header + "3:0000000000000000:0\n"),
		"one run continued":       []byte(header + "3:9f2c1a0b3d4e5f60:0\n3:9f2c1a0b3d4e5f60:5\n"),
	}
	dir := filepath.Join(repoRoot, "cluster/testdata/fuzz/FuzzParseEpochsFile")
	entries, err := os.ReadDir(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		require.NoError(t, err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files["corpus "+e.Name()] = corpusBytes(t, e.Name(), raw)
	}
	t.Logf("%d inline cases and %d corpus files from %s", len(files)-len(entries), len(entries), dir)
	parity(t, files, func(t *testing.T, root string, data []byte) (string, bool) {
		path := filepath.Join(cluster.ReplicaDir(root, 1, "orders", 0), cluster.EpochsFileName)
		write(t, path, data)
		_, err := cluster.ParseEpochsFile(data)
		return path, err != nil
	}, verify.KindEpochs)
}

// parity writes every file into a fresh data directory with place, which
// also runs the module's open path and says whether it refused the file,
// then runs Verify and requires the same verdict on the file. Both verdicts
// must occur across the corpus, so the test cannot pass by refusing (or
// accepting) everything.
func parity(t *testing.T, files map[string][]byte, place func(t *testing.T, root string, data []byte) (path string, refused bool), kind verify.Kind) {
	t.Helper()
	var refusedCount, acceptedCount int
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			path, moduleRefused := place(t, root, data)
			report, err := verify.Verify(root)
			require.NoError(t, err)
			var item *verify.Item
			for i, it := range report.Items {
				if it.Path == path && it.Kind == kind {
					item = &report.Items[i]
				}
			}
			require.NotNil(t, item, "verify reports on %s: %+v", path, report.Items)
			verifyRefused := item.Status == verify.StatusDamaged
			require.Equal(t, moduleRefused, verifyRefused, "module refused: %v, verify: %s %s\n%q", moduleRefused, item.Status, item.Detail, data)
			if moduleRefused {
				refusedCount++
			} else {
				acceptedCount++
				require.Equal(t, verify.StatusOK, item.Status, item.Detail)
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, data, after, "the file is left as it was")
		})
	}
	require.Positive(t, refusedCount, "the corpus holds damaged files")
	require.Positive(t, acceptedCount, "the corpus holds sound files")
}

// corpus reads the fuzz corpus files in dir (relative to the repository
// root) and any extra plain files, by name.
func corpus(t *testing.T, dir string, extra ...string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(repoRoot, dir))
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(repoRoot, dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = corpusBytes(t, e.Name(), raw)
	}
	for _, p := range extra {
		raw, err := os.ReadFile(filepath.Join(repoRoot, p))
		require.NoError(t, err)
		files[filepath.Base(p)] = raw
	}
	require.NotEmpty(t, files)
	return files
}

// corpusBytes decodes a fuzz corpus file holding one []byte (or string)
// value:
//
//	go test fuzz v1
//	[]byte("...")
func corpusBytes(t *testing.T, name string, raw []byte) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	require.Len(t, lines, 2, "%s: one []byte value", name)
	require.Equal(t, "go test fuzz v1", lines[0], name)
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	if !ok {
		lit, ok = strings.CutPrefix(lines[1], "string(")
	}
	require.True(t, ok, "%s: a []byte or string value", name)
	lit, ok = strings.CutSuffix(lit, ")")
	require.True(t, ok, "%s: a []byte value", name)
	s, err := strconv.Unquote(lit)
	require.NoError(t, err, name)
	return bytes.Clone([]byte(s))
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// TestVerifyParityNotAMetadataFile: where a metadata file belongs, a
// directory (or a file larger than its format allows) is refused by the
// module's open path and reported DAMAGED by Verify alike.
func TestVerifyParityNotAMetadataFile(t *testing.T) {
	mkdir := func(t *testing.T, path string) { require.NoError(t, os.MkdirAll(path, 0o755)) }
	tests := []struct {
		name  string
		kind  verify.Kind
		place func(t *testing.T, root string) (path string, refused bool)
	}{
		{"topic.meta is a directory", verify.KindTopicMeta, func(t *testing.T, root string) (string, bool) {
			path := filepath.Join(root, "t", topic.MetadataFile)
			mkdir(t, path)
			_, err := topic.OpenExisting(root, "t", topic.Options{})
			var me *topic.MetadataError
			return path, errors.As(err, &me)
		}},
		{"topic.meta is huge", verify.KindTopicMeta, func(t *testing.T, root string) (string, bool) {
			path := filepath.Join(root, "t", topic.MetadataFile)
			write(t, path, bytes.Repeat([]byte(" "), 8<<20))
			_, err := topic.OpenExisting(root, "t", topic.Options{})
			var me *topic.MetadataError
			return path, errors.As(err, &me)
		}},
		{"offset file is a directory", verify.KindOffset, func(t *testing.T, root string) (string, bool) {
			offsets := filepath.Join(root, "offsets")
			path := filepath.Join(offsets, "worker", "orders", client.OffsetFileName(0))
			mkdir(t, path)
			store, err := client.OpenOffsetStore(offsets)
			require.NoError(t, err)
			_, _, err = store.Load("worker", "orders", 0)
			var oce *client.OffsetCorruptionError
			return path, errors.As(err, &oce)
		}},
		{"cluster.meta is a directory", verify.KindClusterMeta, func(t *testing.T, root string) (string, bool) {
			path := filepath.Join(root, cluster.MetaFileName)
			mkdir(t, path)
			_, err := cluster.Open(root)
			var me *cluster.MetadataError
			return path, errors.As(err, &me)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			path, moduleRefused := tt.place(t, root)
			require.True(t, moduleRefused, "the module must refuse it")
			report, err := verify.Verify(root)
			require.NoError(t, err)
			var found bool
			for _, it := range report.Items {
				if it.Path == path && it.Kind == tt.kind {
					found = true
					require.Equal(t, verify.StatusDamaged, it.Status, "%s", it.Detail)
				}
			}
			require.True(t, found, "verify reports on %s: %+v", path, report.Items)
		})
	}
}
