package kafka

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pystream/pystream/server/auth"
)

// apiRow is docs/kafka.md's row `| key | Name | min–max | notes |` (a
// single version written once).
var apiRow = regexp.MustCompile(`^\| (\d+) \| (\w+) \| (\d+)(?:–(\d+))? \|`)

// updateAPITable regenerates docs/kafka.md's table of APIs from the
// handler table: go test ./server/kafka -run TestKafkaDocsAPITable
// -update-api-table.
var updateAPITable = flag.Bool("update-api-table", false, "rewrite docs/kafka.md's table of APIs from the handler table (handlers.go)")

// apiVersions is an API's name and the versions served.
type apiVersions struct {
	name     string
	min, max int16
}

// servedAPIs is the handler table's APIs, the SASL ones (served with an
// auth file) included.
func servedAPIs() map[int16]apiVersions {
	s := &Server{cfg: Config{Auth: &auth.Set{}}}
	served := map[int16]apiVersions{}
	for _, a := range s.table() {
		served[int16(a.key)] = apiVersions{kmsg.NameForKey(int16(a.key)), a.min, a.max}
	}
	return served
}

// cells are a row's first three cells, as the table writes them.
func (v apiVersions) cells(key int16) string {
	vs := strconv.Itoa(int(v.min))
	if v.max != v.min {
		vs += "–" + strconv.Itoa(int(v.max))
	}
	return fmt.Sprintf("| %d | %s | %s |", key, v.name, vs)
}

// generateAPITable rewrites doc's table of APIs from served: each row's
// key, name and versions are the handler table's, the notes kept; a row
// for an API not served is dropped, and a served API without a row gets
// one at the table's end, its notes left for a person to write.
func generateAPITable(doc string, served map[int16]apiVersions) string {
	lines := strings.Split(doc, "\n")
	var out []string
	seen := map[int16]bool{}
	last := -1
	for _, line := range lines {
		m := apiRow.FindStringSubmatch(line)
		if m == nil {
			out = append(out, line)
			continue
		}
		key, _ := strconv.ParseInt(m[1], 10, 16)
		v, ok := served[int16(key)]
		if !ok {
			continue
		}
		seen[int16(key)] = true
		out = append(out, v.cells(int16(key))+line[len(m[0]):])
		last = len(out) - 1
	}
	if last < 0 {
		return doc
	}
	var missing []int16
	for k := range served {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	var added []string
	for _, k := range missing {
		added = append(added, served[k].cells(k)+" (to be described) |")
	}
	out = slices.Insert(out, last+1, added...)
	return strings.Join(out, "\n")
}

// TestKafkaDocsAPITable: docs/kafka.md's table of APIs and versions is
// the handler table, both ways — a row for an API not served fails, a
// served API (the SASL ones, served with an auth file, included) without
// its row fails, and each row's name and versions are the table's. With
// -update-api-table it first regenerates the table (generateAPITable).
func TestKafkaDocsAPITable(t *testing.T) {
	path := filepath.FromSlash("../../docs/kafka.md")
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	if *updateAPITable {
		doc = []byte(generateAPITable(string(doc), servedAPIs()))
		require.NoError(t, os.WriteFile(path, doc, 0o644))
	}
	type versions = apiVersions
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
	served := servedAPIs()
	require.NotEmpty(t, documented, "docs/kafka.md has no table of APIs")
	require.Equal(t, served, documented, "docs/kafka.md's table of APIs is the handler table's (handlers.go)")
}

// TestKafkaGenerateAPITable: the generator rewrites a row's cells from
// the handler table and keeps its notes, drops a row for an API not
// served and adds a row for a served API that has none; generating the
// real document again changes nothing.
func TestKafkaGenerateAPITable(t *testing.T) {
	served := map[int16]apiVersions{0: {"Produce", 3, 9}, 18: {"ApiVersions", 0, 3}, 65: {"DescribeTransactions", 0, 0}}
	doc := "intro\n| key | API | versions | notes |\n|---|---|---|---|\n| 0 | Produce | 3–8 | records |\n| 7 | Gone | 0–1 | old |\n| 18 | ApiVersions | 0–3 | versions |\n\nafter"
	got := generateAPITable(doc, served)
	require.Equal(t, "intro\n| key | API | versions | notes |\n|---|---|---|---|\n| 0 | Produce | 3–9 | records |\n| 18 | ApiVersions | 0–3 | versions |\n| 65 | DescribeTransactions | 0 | (to be described) |\n\nafter", got)

	real, err := os.ReadFile(filepath.FromSlash("../../docs/kafka.md"))
	require.NoError(t, err)
	require.Equal(t, string(real), generateAPITable(string(real), servedAPIs()), "docs/kafka.md is the generated table")
}
