package topic

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/phase-2-topics.md § Reopening: every damaged or disagreeing topic.meta
// is a *MetadataError; the file keeps its bytes, no partition is created, and
// nothing is repaired. The topic directory holds only topic.meta, which also
// proves metadata is validated before any partition is touched.
func TestMetadataErrorsTable(t *testing.T) {
	cases := []struct {
		name string
		data string
	}{
		{"empty file", ""},
		{"bad JSON", `{"version": 1, "name": "t", "partition_count": 2`},
		{"not an object", `[1, "t", 2]`},
		{"a string", `"t"`},
		{"null", `null`},
		{"missing version", `{"name": "t", "partition_count": 2}`},
		{"missing name", `{"version": 1, "partition_count": 2}`},
		{"missing partition_count", `{"version": 1, "name": "t"}`},
		{"version as string", `{"version": "1", "name": "t", "partition_count": 2}`},
		{"version as float", `{"version": 1.0, "name": "t", "partition_count": 2}`},
		{"version null", `{"version": null, "name": "t", "partition_count": 2}`},
		{"unknown version", `{"version": 2, "name": "t", "partition_count": 2}`},
		{"version zero", `{"version": 0, "name": "t", "partition_count": 2}`},
		{"name as number", `{"version": 1, "name": 7, "partition_count": 2}`},
		{"name null", `{"version": 1, "name": null, "partition_count": 2}`},
		{"unsafe name", `{"version": 1, "name": "../t", "partition_count": 2}`},
		{"empty name", `{"version": 1, "name": "", "partition_count": 2}`},
		{"different name", `{"version": 1, "name": "u", "partition_count": 2}`},
		{"count as string", `{"version": 1, "name": "t", "partition_count": "2"}`},
		{"count as float", `{"version": 1, "name": "t", "partition_count": 2.5}`},
		{"count above maximum", `{"version": 1, "name": "t", "partition_count": 1000001}`},
		{"count exponent", `{"version": 1, "name": "t", "partition_count": 2e0}`},
		{"count zero", `{"version": 1, "name": "t", "partition_count": 0}`},
		{"count negative", `{"version": 1, "name": "t", "partition_count": -2}`},
		{"count huge", `{"version": 1, "name": "t", "partition_count": 99999999999999999999}`},
		{"count differs", `{"version": 1, "name": "t", "partition_count": 3}`},
		{"unknown field", `{"version": 1, "name": "t", "partition_count": 2, "retention": 7}`},
		{"duplicate field", `{"version": 1, "name": "t", "name": "t", "partition_count": 2}`},
		{"trailing data", `{"version": 1, "name": "t", "partition_count": 2} {}`},
		{"trailing garbage", `{"version": 1, "name": "t", "partition_count": 2}x`},
		{"oversized", `{"version": 1, "name": "t", "partition_count": 2}` + strings.Repeat(" ", maxMetadataSize)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "t")
			require.NoError(t, os.Mkdir(dir, 0o755))
			path := filepath.Join(dir, MetadataFile)
			require.NoError(t, os.WriteFile(path, []byte(c.data), 0o644))
			require.NoError(t, os.WriteFile(path+".tmp", []byte("leftover"), 0o644))

			_, err := Open(root, "t", 2)
			var me *MetadataError
			require.ErrorAs(t, err, &me)
			require.Equal(t, path, me.Path)
			require.NotEmpty(t, me.Reason)

			if c.name != "count differs" { // OpenExisting takes the stored count
				_, err = OpenExisting(root, "t", Options{})
				require.ErrorAs(t, err, &me)
			}

			require.Equal(t, c.data, string(readFile(t, path)), "topic.meta unchanged")
			require.Equal(t, []string{"t/", "t/topic.meta", "t/topic.meta.tmp"}, tree(t, root), "nothing created or removed")
		})
	}
}

// ParseMetadata alone refuses every damaged document of the table above
// (all but the two that disagree only with what Open was asked for) with a
// *MetadataError that names no file.
func TestMetadataParseRefuses(t *testing.T) {
	for _, data := range []string{
		"", `null`, `{"version": 1, "name": "t"}`, `{"version": 1.0, "name": "t", "partition_count": 2}`,
		`{"version": 1, "name": "t", "partition_count": 100000000}`,
		`{"version": 1, "name": "t", "partition_count": 2, "retention": 7}`,
		`{"version": 1, "name": "t", "name": "t", "partition_count": 2}`,
		`{"version": 1, "name": "t", "partition_count": 2}x`,
	} {
		_, err := ParseMetadata([]byte(data))
		var me *MetadataError
		require.ErrorAs(t, err, &me, data)
		require.Empty(t, me.Path)
		require.NotEmpty(t, me.Reason)
	}
}

// A topic.meta that is a directory is a metadata error too.
func TestMetadataNotARegularFile(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "t", MetadataFile), 0o755))
	_, err := Open(root, "t", 1)
	var me *MetadataError
	require.ErrorAs(t, err, &me)
}

// The parser accepts what the encoder writes, with any white space.
func TestMetadataRoundTrip(t *testing.T) {
	for _, m := range []Metadata{{1, "a", 1}, {1, "events", 3}, {1, strings.Repeat("z", 249), MaxPartitionCount}} {
		got, err := ParseMetadata(encodeMetadata(m))
		require.NoError(t, err)
		require.Equal(t, m, got)
	}
	got, err := ParseMetadata([]byte("\n {\"partition_count\":2,\n\"name\" : \"x\", \"version\":1 }\n\n"))
	require.NoError(t, err)
	require.Equal(t, Metadata{1, "x", 2}, got)
}
