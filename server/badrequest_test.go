package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/apitest"
)

// treeHash fingerprints a directory tree: every entry's relative path and
// type, and every regular file's content.
func treeHash(t *testing.T, root string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		io.WriteString(h, rel+"\x00"+d.Type().String()+"\x00")
		if d.Type().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			h.Write(sum[:])
		}
		return nil
	})
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// chunked hides a body's length, so the client sends it chunked.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

type badCase struct {
	name    string
	method  string
	path    string
	ctype   string
	body    string
	chunked bool
	status  int
	code    string
}

// docs/phase-6-network-api.md § Requests and errors: at least 100 bad
// requests, each answered with the right 4xx and the contract's error code,
// and the data directory byte for byte unchanged afterwards. Bad input never
// yields 5xx and never changes data. Every answer carries its request id,
// no path and no library prefix; what the common mistakes are told is
// pinned word for word.
func TestBadRequestsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := Defaults()
	cfg.DataDir = dir
	cfg.MaxRequestBytes = 4096
	cfg.LogLevel = LogLevel(LevelError)
	cfg.KafkaPort = 0 // no fixed ports in tests
	srv, err := New(cfg, NewLogger(io.Discard, cfg))
	require.NoError(t, err)
	r := serveExisting(t, srv)
	ctx := t.Context()
	_, _, err = r.client.CreateTopic(ctx, "orders", 2, 2)
	require.NoError(t, err)
	_, err = r.client.Produce(ctx, "orders", []apiclient.ProduceRecord{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}})
	require.NoError(t, err)
	_, err = r.client.CommitOffset(ctx, "c1", "orders", 0, 1)
	require.NoError(t, err)

	big := strings.Repeat("x", 8192)
	bigJSON := `{"records":[{"value":"` + strings.Repeat("QUJD", 2048) + `"}]}`
	const J, O = "application/json", "application/octet-stream"
	const (
		s400, s404, s405, s409, s413, s415 = http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed,
			http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType
		bad, nf, mna, conf, big413, umt = apiclient.CodeInvalidArgument, apiclient.CodeNotFound, apiclient.CodeMethodNotAllowed, apiclient.CodeConflict, apiclient.CodePayloadTooLarge, apiclient.CodeUnsupportedMediaType
	)
	topicJSON := func(body string) badCase {
		return badCase{method: "POST", path: "/api/topics", ctype: J, body: body, status: s400, code: bad}
	}
	tests := []badCase{
		// Creating topics: malformed, trailing, unknown, wrong types, ranges, names.
		with(topicJSON(`{"name":"a","partitions":1,"replication_factor":1`), "truncated JSON"),
		with(topicJSON(`{"name":"a","partitions":1,"replication_factor":1}{}`), "trailing object"),
		with(topicJSON(`{"name":"a","partitions":1,"replication_factor":1} x`), "trailing garbage"),
		with(topicJSON(`{"name":"a","partitons":1,"replication_factor":1}`), "unknown field"),
		with(topicJSON(`{"name":"a","partitions":"1","replication_factor":1}`), "string for a number"),
		with(topicJSON(`{"name":"a","partitions":1.5,"replication_factor":1}`), "fraction"),
		with(topicJSON(`{"name":"a","partitions":-1,"replication_factor":1}`), "negative partitions"),
		with(topicJSON(`{"name":"a","partitions":0,"replication_factor":1}`), "zero partitions"),
		with(topicJSON(`{"name":"a","partitions":99999999999999999999,"replication_factor":1}`), "overflowing partitions"),
		with(topicJSON(`{"name":"a","partitions":1025,"replication_factor":1}`), "too many partitions"),
		with(topicJSON(`{"name":"a","partitions":1,"replication_factor":0}`), "zero replication factor"),
		with(topicJSON(`{"name":"a","partitions":1,"replication_factor":4}`), "replication factor above brokers"),
		with(topicJSON(`{"name":"..","partitions":1,"replication_factor":1}`), "name .."),
		with(topicJSON(`{"name":"../escape","partitions":1,"replication_factor":1}`), "name with ../"),
		with(topicJSON(`{"name":"a/b","partitions":1,"replication_factor":1}`), "name with slash"),
		with(topicJSON(`{"name":"","partitions":1,"replication_factor":1}`), "empty name"),
		with(topicJSON(`{"name":"`+strings.Repeat("n", 250)+`","partitions":1,"replication_factor":1}`), "name too long"),
		with(topicJSON(`[]`), "array body"),
		with(topicJSON(``), "empty body"),
		with(topicJSON(`null`), "null body"),
		// Go's decoder keeps the last of two equal keys and matches keys
		// regardless of case: both would let a body mean something other
		// than what it says (the first "name" created nothing).
		with(topicJSON(`{"name":"dup1","partitions":1,"replication_factor":1,"name":"dup2"}`), "duplicate name key"),
		with(topicJSON(`{"Name":"dup3","partitions":1,"replication_factor":1}`), "key in the wrong case"),
		// Missing fields are named as missing, not as a zero out of range.
		with(topicJSON(`{"name":"nopart"}`), "partitions missing"),
		with(topicJSON(`{"name":"nopart","partitions":null,"replication_factor":1}`), "partitions null"),
		with(topicJSON(`{"name":"norf","partitions":1}`), "replication factor missing"),
		with(topicJSON(`{"partitions":1,"replication_factor":1}`), "name missing"),
		// A topic's configuration: Kafka's keys, string values, each
		// checked by the topic layer's rule; nothing is created.
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"compression.type":"zstd"}}`), "unknown config key"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"cleanup.policy":"compact"}}`), "config cleanup.policy compact"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"retention.ms":3600000}}`), "config value a number"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"retention.ms":null}}`), "config value null"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"segment.bytes":"12"}}`), "config value out of range"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"segment.ms":"+5"}}`), "config value with a plus"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":{"segment.ms":"5","segment.ms":"6"}}`), "config key twice"),
		with(topicJSON(`{"name":"c","partitions":1,"replication_factor":1,"config":["retention.ms"]}`), "config an array"),
		{name: "alter config unknown key", method: "PATCH", path: "/api/topics/orders/config", ctype: J, body: `{"retention.ms":"1","nope":"2"}`, status: s400, code: bad},
		{name: "alter config bad value", method: "PATCH", path: "/api/topics/orders/config", ctype: J, body: `{"retention.ms":"-7"}`, status: s400, code: bad},
		{name: "alter config number", method: "PATCH", path: "/api/topics/orders/config", ctype: J, body: `{"retention.ms":5}`, status: s400, code: bad},
		{name: "alter config array body", method: "PATCH", path: "/api/topics/orders/config", ctype: J, body: `[]`, status: s400, code: bad},
		{name: "alter config null body", method: "PATCH", path: "/api/topics/orders/config", ctype: J, body: `null`, status: s400, code: bad},
		{name: "alter config unknown topic", method: "PATCH", path: "/api/topics/nope/config", ctype: J, body: `{"retention.ms":"1"}`, status: s404, code: nf},
		{name: "text/plain", method: "POST", path: "/api/topics", ctype: "text/plain", body: `{}`, status: s415, code: umt},
		{name: "no content type", method: "POST", path: "/api/topics", body: `{}`, status: s415, code: umt},
		{name: "latin1 charset", method: "POST", path: "/api/topics", ctype: "application/json; charset=latin1", body: `{}`, status: s415, code: umt},
		{name: "oversized body", method: "POST", path: "/api/topics", ctype: J, body: `{"name":"` + big + `"}`, status: s413, code: big413},
		{name: "oversized chunked body", method: "POST", path: "/api/topics", ctype: J, body: `{"name":"` + big + `"}`, chunked: true, status: s413, code: big413},
		{name: "topic exists with other settings", method: "POST", path: "/api/topics", ctype: J, body: `{"name":"orders","partitions":3,"replication_factor":2}`, status: s409, code: conf},

		// Producing.
		{name: "invalid base64 value", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"!!"}]}`, status: s400, code: bad},
		{name: "unpadded base64 value", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ"}]}`, status: s400, code: bad},
		{name: "invalid base64 key", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"key":"%%","value":"YQ=="}]}`, status: s400, code: bad},
		{name: "invalid base64 in the third value", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ=="},{"value":"Yg=="},{"value":"!!"}]}`, status: s400, code: bad},
		{name: "invalid base64 in the second key", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ=="},{"key":"YQ","value":"YQ=="}]}`, status: s400, code: bad},
		{name: "second value a number", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ=="},{"value":7}]}`, status: s400, code: bad},
		{name: "records null", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":null}`, status: s400, code: bad},
		{name: "no records", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[]}`, status: s400, code: bad},
		{name: "records missing", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{}`, status: s400, code: bad},
		{name: "value missing", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ=="},{"key":"YQ=="}]}`, status: s400, code: bad},
		{name: "value null", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":null}]}`, status: s400, code: bad},
		{name: "unknown record field", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ==","partition":1}]}`, status: s400, code: bad},
		{name: "value of wrong type", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":5}]}`, status: s400, code: bad},
		{name: "duplicate records key", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ=="}],"records":[{"value":"Yg=="}]}`, status: s400, code: bad},
		{name: "duplicate value key", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"value":"YQ==","value":"Yg=="}]}`, status: s400, code: bad},
		{name: "value key in upper case", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"records":[{"VALUE":"YQ=="}]}`, status: s400, code: bad},
		{name: "records key in title case", method: "POST", path: "/api/topics/orders/records", ctype: J, body: `{"Records":[{"value":"YQ=="}]}`, status: s400, code: bad},
		{name: "unknown topic", method: "POST", path: "/api/topics/nope/records", ctype: J, body: `{"records":[{"value":"YQ=="}]}`, status: s404, code: nf},
		{name: "topic %2e%2e", method: "POST", path: "/api/topics/%2e%2e/records", ctype: O, body: "v", status: s404, code: nf},
		{name: "topic ..%2f..%2fetc", method: "POST", path: "/api/topics/..%2f..%2fetc/records", ctype: O, body: "v", status: s404, code: nf},
		{name: "topic a%2fb", method: "POST", path: "/api/topics/a%2fb/records", ctype: O, body: "v", status: s400, code: bad},
		{name: "topic with %00", method: "POST", path: "/api/topics/a%00b/records", ctype: O, body: "v", status: s400, code: bad},
		{name: "topic literal ..", method: "POST", path: "/api/topics/../records", ctype: O, body: "v", status: s404, code: nf},
		{name: "produce text/plain", method: "POST", path: "/api/topics/orders/records", ctype: "text/plain", body: "v", status: s415, code: umt},
		{name: "raw with key and key_b64", method: "POST", path: "/api/topics/orders/records?key=a&key_b64=YQ==", ctype: O, body: "v", status: s400, code: bad},
		{name: "raw with bad key_b64", method: "POST", path: "/api/topics/orders/records?key_b64=*", ctype: O, body: "v", status: s400, code: bad},
		{name: "raw with unknown parameter", method: "POST", path: "/api/topics/orders/records?partitions=1", ctype: O, body: "v", status: s400, code: bad},
		{name: "raw partition negative", method: "POST", path: "/api/topics/orders/records?partition=-1", ctype: O, body: "v", status: s400, code: bad},
		{name: "raw partition twice", method: "POST", path: "/api/topics/orders/records?partition=0&partition=1", ctype: O, body: "v", status: s400, code: bad},
		{name: "json partition not a number", method: "POST", path: "/api/topics/orders/records?partition=x", ctype: J, body: `{"records":[{"value":"dg=="}]}`, status: s400, code: bad},
		{name: "raw with repeated key", method: "POST", path: "/api/topics/orders/records?key=a&key=b", ctype: O, body: "v", status: s400, code: bad},
		{name: "raw oversized", method: "POST", path: "/api/topics/orders/records", ctype: O, body: big, status: s413, code: big413},
		{name: "raw oversized chunked", method: "POST", path: "/api/topics/orders/records", ctype: O, body: big, chunked: true, status: s413, code: big413},
		{name: "JSON oversized chunked", method: "POST", path: "/api/topics/orders/records", ctype: J, body: bigJSON, chunked: true, status: s413, code: big413},
		{name: "JSON with query", method: "POST", path: "/api/topics/orders/records?key=a", ctype: J, body: `{"records":[{"value":"YQ=="}]}`, status: s400, code: bad},

		// Fetching.
		{name: "negative offset", method: "GET", path: "/api/topics/orders/partitions/0/records?offset=-1", status: s400, code: bad},
		{name: "overflowing offset", method: "GET", path: "/api/topics/orders/partitions/0/records?offset=18446744073709551616", status: s400, code: bad},
		{name: "max 0", method: "GET", path: "/api/topics/orders/partitions/0/records?max=0", status: s400, code: bad},
		{name: "max not a number", method: "GET", path: "/api/topics/orders/partitions/0/records?max=ten", status: s400, code: bad},
		{name: "unknown fetch parameter", method: "GET", path: "/api/topics/orders/partitions/0/records?ofset=1", status: s400, code: bad},
		{name: "repeated offset", method: "GET", path: "/api/topics/orders/partitions/0/records?offset=1&offset=2", status: s400, code: bad},
		{name: "malformed query", method: "GET", path: "/api/topics/orders/partitions/0/records?offset=%zz", status: s400, code: bad},
		{name: "negative partition", method: "GET", path: "/api/topics/orders/partitions/-1/records", status: s400, code: bad},
		{name: "signed partition", method: "GET", path: "/api/topics/orders/partitions/+1/records", status: s400, code: bad},
		{name: "overflowing partition", method: "GET", path: "/api/topics/orders/partitions/99999999999999999999/records", status: s400, code: bad},
		{name: "partition out of range", method: "GET", path: "/api/topics/orders/partitions/2/records", status: s404, code: nf},
		{name: "fetch topic %2e%2e", method: "GET", path: "/api/topics/%2e%2e/partitions/0/records", status: s404, code: nf},
		{name: "fetch unknown topic", method: "GET", path: "/api/topics/nope/partitions/0/records", status: s404, code: nf},
		{name: "topic detail %2e", method: "GET", path: "/api/topics/%2e", status: s404, code: nf},
		{name: "topic detail bad name", method: "GET", path: "/api/topics/a%20b", status: s400, code: bad},

		// Consumer offsets.
		{name: "negative offset commit", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":-1}`, status: s400, code: bad},
		{name: "string offset commit", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":"5"}`, status: s400, code: bad},
		{name: "fractional offset commit", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":1.5}`, status: s400, code: bad},
		{name: "overflowing offset commit", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":18446744073709551616}`, status: s400, code: bad},
		{name: "duplicate offset key", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":1,"offset":2}`, status: s400, code: bad},
		{name: "offset key in upper case", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"OFFSET":2}`, status: s400, code: bad},
		{name: "missing offset", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{}`, status: s400, code: bad},
		{name: "offset regression", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":0}`, status: s409, code: conf},
		{name: "consumer %2e%2e", method: "PUT", path: "/api/consumers/%2e%2e/offsets/orders/0", ctype: J, body: `{"offset":1}`, status: s404, code: nf},
		{name: "consumer a%2fb", method: "PUT", path: "/api/consumers/a%2fb/offsets/orders/0", ctype: J, body: `{"offset":1}`, status: s400, code: bad},
		{name: "consumer ..%2f..%2fx", method: "PUT", path: "/api/consumers/..%2f..%2fx/offsets/orders/0", ctype: J, body: `{"offset":1}`, status: s404, code: nf},
		{name: "consumer .", method: "PUT", path: "/api/consumers/%2e/offsets/orders/0", ctype: J, body: `{"offset":1}`, status: s404, code: nf},
		{name: "offset topic %2e%2e", method: "PUT", path: "/api/consumers/c1/offsets/%2e%2e/0", ctype: J, body: `{"offset":1}`, status: s404, code: nf},
		{name: "offset topic a%2fb", method: "PUT", path: "/api/consumers/c1/offsets/a%2fb/0", ctype: J, body: `{"offset":1}`, status: s400, code: bad},
		{name: "offset unknown topic", method: "PUT", path: "/api/consumers/c1/offsets/nope/0", ctype: J, body: `{"offset":1}`, status: s404, code: nf},
		{name: "offset partition out of range", method: "PUT", path: "/api/consumers/c1/offsets/orders/7", ctype: J, body: `{"offset":1}`, status: s404, code: nf},
		{name: "offset partition negative", method: "GET", path: "/api/consumers/c1/offsets/orders/-1", status: s400, code: bad},
		{name: "offset commit text/plain", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: "text/plain", body: `{"offset":1}`, status: s415, code: umt},
		{name: "commit past high watermark", method: "PUT", path: "/api/consumers/c1/offsets/orders/0", ctype: J, body: `{"offset":1000}`, status: s409, code: conf},
		{name: "first commit past high watermark", method: "PUT", path: "/api/consumers/c2/offsets/orders/0", ctype: J, body: `{"offset":1000}`, status: s409, code: conf},
		{name: "reset past high watermark", method: "POST", path: "/api/consumers/c1/offsets/orders/0/reset", ctype: J, body: `{"offset":99}`, status: s409, code: conf},
		{name: "list offsets consumer %2e%2e", method: "GET", path: "/api/consumers/%2e%2e/offsets", status: s404, code: nf},
		{name: "list offsets consumer a%2fb", method: "GET", path: "/api/consumers/a%2fb/offsets", status: s400, code: bad},

		// Operations.
		{name: "failover with live leader", method: "POST", path: "/api/topics/orders/partitions/0/failover", status: s409, code: conf},
		{name: "failover with a body", method: "POST", path: "/api/topics/orders/partitions/0/failover", ctype: J, body: `{}`, status: s400, code: bad},
		{name: "failover topic %2e%2e", method: "POST", path: "/api/topics/%2e%2e/partitions/0/failover", status: s404, code: nf},
		{name: "catch-up broker 0", method: "POST", path: "/api/topics/orders/partitions/0/replicas/0/catch-up", status: s400, code: bad},
		{name: "catch-up broker not a number", method: "POST", path: "/api/topics/orders/partitions/0/replicas/one/catch-up", status: s400, code: bad},
		{name: "catch-up the leader", method: "POST", path: "/api/topics/orders/partitions/0/replicas/1/catch-up", status: s409, code: conf},
		{name: "recover unknown broker", method: "POST", path: "/api/topics/orders/partitions/0/replicas/99/recover", status: s404, code: nf},
		{name: "recover active replica", method: "POST", path: "/api/topics/orders/partitions/0/replicas/2/recover", status: s409, code: conf},
		{name: "move-leader broker 0", method: "POST", path: "/api/topics/orders/partitions/0/replicas/0/move-leader", status: s400, code: bad},
		{name: "move-leader broker not a number", method: "POST", path: "/api/topics/orders/partitions/0/replicas/two/move-leader", status: s400, code: bad},
		{name: "move-leader signed broker", method: "POST", path: "/api/topics/orders/partitions/0/replicas/+2/move-leader", status: s400, code: bad},
		{name: "move-leader negative partition", method: "POST", path: "/api/topics/orders/partitions/-1/replicas/2/move-leader", status: s400, code: bad},
		{name: "move-leader topic %2e%2e", method: "POST", path: "/api/topics/%2e%2e/partitions/0/replicas/2/move-leader", status: s404, code: nf},
		{name: "move-leader topic a%2fb", method: "POST", path: "/api/topics/a%2fb/partitions/0/replicas/2/move-leader", status: s400, code: bad},
		{name: "move-leader with a body", method: "POST", path: "/api/topics/orders/partitions/0/replicas/2/move-leader", ctype: J, body: `{}`, status: s400, code: bad},
		{name: "move-leader to the leader", method: "POST", path: "/api/topics/orders/partitions/0/replicas/1/move-leader", status: s409, code: conf},
		{name: "move-leader to an unassigned broker", method: "POST", path: "/api/topics/orders/partitions/0/replicas/3/move-leader", status: s404, code: nf},
		{name: "move-leader to an unknown broker", method: "POST", path: "/api/topics/orders/partitions/0/replicas/99/move-leader", status: s404, code: nf},
		{name: "move-leader partition out of range", method: "POST", path: "/api/topics/orders/partitions/2/replicas/2/move-leader", status: s404, code: nf},
		{name: "journal max 0", method: "GET", path: "/api/journal?max=0", status: s400, code: bad},
		{name: "journal max above 1000", method: "GET", path: "/api/journal?max=1001", status: s400, code: bad},
		{name: "journal negative since", method: "GET", path: "/api/journal?since=-1", status: s400, code: bad},
		{name: "journal unknown parameter", method: "GET", path: "/api/journal?offset=1", status: s400, code: bad},
		{name: "journal repeated max", method: "GET", path: "/api/journal?max=1&max=2", status: s400, code: bad},
		{name: "stop broker 0", method: "POST", path: "/api/brokers/0/stop", status: s400, code: bad},
		{name: "stop unknown broker", method: "POST", path: "/api/brokers/99/stop", status: s404, code: nf},
		{name: "start broker -1", method: "POST", path: "/api/brokers/-1/start", status: s400, code: bad},
		{name: "start unknown broker", method: "POST", path: "/api/brokers/4/start", status: s404, code: nf},

		// Methods.
		{name: "DELETE topics", method: "DELETE", path: "/api/topics", status: s405, code: mna},
		{name: "PUT records", method: "PUT", path: "/api/topics/orders/records", status: s405, code: mna},
		{name: "GET broker stop", method: "GET", path: "/api/brokers/1/stop", status: s405, code: mna},
		{name: "PATCH offset", method: "PATCH", path: "/api/consumers/c1/offsets/orders/0", status: s405, code: mna},
		{name: "POST cluster", method: "POST", path: "/api/cluster", status: s405, code: mna},
		{name: "GET move-leader", method: "GET", path: "/api/topics/orders/partitions/0/replicas/2/move-leader", status: s405, code: mna},
		{name: "POST journal", method: "POST", path: "/api/journal", status: s405, code: mna},
		{name: "DELETE metrics", method: "DELETE", path: "/metrics", status: s405, code: mna},
	}
	require.GreaterOrEqual(t, len(tests), 100)
	// What some of them say, exactly: the field at fault by its name and
	// position, in the API's words (no Go types, no package prefixes).
	says := map[string]string{
		"unknown field":                       `invalid JSON body: unknown field "partitons"`,
		"string for a number":                 "invalid JSON body: partitions: expected an integer, got a string",
		"fraction":                            "invalid JSON body: partitions: expected an integer, got 1.5",
		"overflowing partitions":              "invalid JSON body: partitions: 99999999999999999999 is too large",
		"zero partitions":                     "partitions 0: must be from 1 to 1024",
		"too many partitions":                 "partitions 1025: must be from 1 to 1024",
		"replication factor above brokers":    "replication_factor 4: must be from 1 to the number of brokers, 3",
		"array body":                          "invalid JSON body: the body: expected an object, got an array",
		"partitions missing":                  "partitions is required (1 to 1024)",
		"partitions null":                     "partitions is required (1 to 1024)",
		"replication factor missing":          "replication_factor is required (1 to the number of brokers, 3)",
		"name missing":                        "name is required (1 to 249 characters of A-Z a-z 0-9 . _ -, not . or ..)",
		"topic exists with other settings":    `topic "orders" exists with 2 partition(s) and replication factor 2, not the settings requested`,
		"invalid base64 value":                `invalid JSON body: records[0].value: not valid base64 (standard base64 with padding, e.g. "aGVsbG8=")`,
		"unpadded base64 value":               `invalid JSON body: records[0].value: not valid base64 (standard base64 with padding, e.g. "aGVsbG8=")`,
		"invalid base64 key":                  `invalid JSON body: records[0].key: not valid base64 (standard base64 with padding, e.g. "aGVsbG8=")`,
		"invalid base64 in the third value":   `invalid JSON body: records[2].value: not valid base64 (standard base64 with padding, e.g. "aGVsbG8=")`,
		"invalid base64 in the second key":    `invalid JSON body: records[1].key: not valid base64 (standard base64 with padding, e.g. "aGVsbG8=")`,
		"value of wrong type":                 "invalid JSON body: records[0].value: expected a string of standard base64, got a number",
		"second value a number":               "invalid JSON body: records[1].value: expected a string of standard base64, got a number",
		"value missing":                       `records[1].value is required (standard base64 with padding, e.g. "aGVsbG8="); "" is an empty value`,
		"records missing":                     `records is required: an array of at least one record, {"records":[{"value":"aGVsbG8="}]}`,
		"records null":                        `records is required: an array of at least one record, {"records":[{"value":"aGVsbG8="}]}`,
		"no records":                          "records must hold at least one record",
		"raw with bad key_b64":                `key_b64: not valid base64 (standard base64 with padding, e.g. "aGVsbG8=")`,
		"unknown topic":                       `topic "nope": unknown topic`,
		"negative offset commit":              "invalid JSON body: offset: expected an integer from 0, got -1",
		"overflowing offset commit":           "invalid JSON body: offset: 18446744073709551616 is too large",
		"offset regression":                   "consumer c1: offset 0 of orders/0 is below the committed offset 1; a commit never moves backwards (a reset does)",
		"failover with live leader":           "orders/0: leader broker 1 is still available; failover replaces a failed leader (move-leader moves a live one)",
		"catch-up the leader":                 "catch up orders/0 on broker 1: replica is the partition's leader",
		"recover unknown broker":              "recover orders/0 on broker 99: unknown broker",
		"move-leader to an unassigned broker": "move leader of orders/0 to broker 3: broker is not assigned to the partition",
		"partition out of range":              `topic "orders" has 2 partition(s), no partition 2: partition out of range`,
	}
	names := map[string]bool{}
	for _, tt := range tests {
		require.False(t, names[tt.name], "two cases named %q", tt.name)
		names[tt.name] = true
	}
	for name := range says {
		require.True(t, names[name], "no case named %q", name)
	}

	hc := &http.Client{Transport: apiclient.NewTransport()}
	defer hc.CloseIdleConnections()
	before := treeHash(t, dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
				if tt.chunked {
					body = chunked{body}
				}
			}
			req, err := http.NewRequestWithContext(ctx, tt.method, r.base+tt.path, body)
			require.NoError(t, err)
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			if tt.chunked {
				require.Equal(t, int64(0), req.ContentLength, "the client sends this body chunked")
			}
			resp, err := hc.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, tt.status, resp.StatusCode)
			var e apiclient.ErrorResponse
			dec := json.NewDecoder(resp.Body)
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&e))
			require.Equal(t, tt.code, e.Error.Code, e.Error.Message)
			require.NotEmpty(t, e.Error.Message)
			if want, ok := says[tt.name]; ok {
				require.Equal(t, want, e.Error.Message)
			}
			require.NotContains(t, e.Error.Message, dir)
			require.NotRegexp(t, apitest.PackagePrefix, e.Error.Message)
			id := resp.Header.Get(apiclient.RequestIDHeader)
			require.Regexp(t, `^[0-9a-f]{16}$`, id)
			require.Equal(t, id, e.Error.RequestID, "every error body carries its request's id")
			if tt.status == s405 {
				require.NotEmpty(t, resp.Header.Get("Allow"))
			}
		})
	}
	require.Equal(t, before, treeHash(t, dir), "bad requests changed the data directory")
	// The cluster still serves exactly what it held.
	fetched, err := r.client.Fetch(ctx, "orders", 0, 0, 10)
	require.NoError(t, err)
	require.Len(t, fetched.Records, 2)
}

func with(b badCase, name string) badCase {
	b.name = name
	return b
}
