package kafka

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
)

// apiRow is docs/kafka.md's row `| key | Name | min–max | notes |` (a
// single version written once).
var apiRow = regexp.MustCompile(`^\| (\d+) \| (\w+) \| (\d+)(?:–(\d+))? \|`)

// TestKafkaDocsAPITable: docs/kafka.md's table of APIs and versions is
// the handler table, both ways — a row for an API not served fails, a
// served API (the SASL ones, served with an auth file, included) without
// its row fails, and each row's name and versions are the table's.
func TestKafkaDocsAPITable(t *testing.T) {
	doc, err := os.ReadFile(filepath.FromSlash("../../docs/kafka.md"))
	require.NoError(t, err)
	type versions struct {
		name     string
		min, max int16
	}
	documented := map[int16]versions{}
	for _, line := range regexp.MustCompile(`\r?\n`).Split(string(doc), -1) {
		m := apiRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, err := strconv.ParseInt(m[1], 10, 16)
		require.NoError(t, err, line)
		lo, err := strconv.ParseInt(m[3], 10, 16)
		require.NoError(t, err, line)
		hi := lo
		if m[4] != "" {
			hi, err = strconv.ParseInt(m[4], 10, 16)
			require.NoError(t, err, line)
		}
		_, dup := documented[int16(key)]
		require.False(t, dup, "key %d has two rows", key)
		documented[int16(key)] = versions{m[2], int16(lo), int16(hi)}
	}
	s := &Server{cfg: Config{Auth: &auth.Set{}}}
	served := map[int16]versions{}
	for _, a := range s.table() {
		served[int16(a.key)] = versions{kmsg.NameForKey(int16(a.key)), a.min, a.max}
	}
	require.NotEmpty(t, documented, "docs/kafka.md has no table of APIs")
	require.Equal(t, served, documented, "docs/kafka.md's table of APIs is the handler table's (handlers.go)")
}
