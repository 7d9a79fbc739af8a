package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pystream/pystream/log"
	"github.com/pystream/pystream/server/datalock"
	"github.com/pystream/pystream/tools/internal/verify"
	"github.com/pystream/pystream/topic/envelope"
	"github.com/stretchr/testify/require"
)

// TestCLIExitCode pins the exit codes of docs/cli.md: 0 ok, 1 operational error, 2 usage error,
// also when the usage error is wrapped.
func TestCLIExitCode(t *testing.T) {
	usage := usageErrorf("bad flag")
	tests := []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitFailure},
		{ErrProblemsFound, ExitFailure},
		{&datalock.LockedError{Path: ".lock"}, ExitFailure},
		{usage, ExitUsage},
		{fmt.Errorf("context: %w", usage), ExitUsage},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ExitCode(tt.err), "%v", tt.err)
	}
}

// TestCLIDumpLine pins the text form of one record, preview cut at 32 bytes;
// a record of a log directory names its segment file after the position.
func TestCLIDumpLine(t *testing.T) {
	long := make([]byte, 40)
	for i := range long {
		long[i] = 'x'
	}
	tests := []struct {
		name string
		seg  string
		rec  log.Record
		full bool
		want string
	}{
		{"plain", "", log.Record{Offset: 3, Timestamp: 0, Payload: []byte("hi")}, false,
			`offset: 3 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 2 payload: "hi"`},
		{"escaped", "", log.Record{Payload: []byte{0, '\n', 0xff}}, false,
			`offset: 0 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 3 payload: "\x00\n\xff"`},
		{"cut", "", log.Record{Payload: long}, false,
			`offset: 0 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 40 payload: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"...`},
		{"full", "", log.Record{Payload: long}, true,
			`offset: 0 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 40 payload: "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"`},
		{"in a segment", "00000000000000000002.log", log.Record{Offset: 2, Payload: []byte("hi")}, false,
			`offset: 2 position: 7 segment: 00000000000000000002.log timestamp: 0 (1970-01-01T00:00:00Z) size: 2 payload: "hi"`},
		{"envelope", "", log.Record{Offset: 3, Payload: envelope.Encode(envelope.Record{
			Key: []byte("user-1"), Headers: []envelope.Header{{Key: "trace", Value: []byte("abc")}, {Key: "n"}},
			Timestamp: 1700000000000, HasTimestamp: true, Value: []byte("hello"),
		})}, false,
			`offset: 3 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 41 key: "user-1" headers: trace="abc",n create_time: 1700000000000 value: "hello"`},
		{"envelope with a producer", "", log.Record{Offset: 4, Payload: envelope.Encode(envelope.Record{
			Timestamp: 1700000000001, HasTimestamp: true,
			Producer: envelope.Producer{ID: 12, Epoch: 0, Sequence: 7}, HasProducer: true,
			Value: []byte("hi"),
		})}, false,
			`offset: 4 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 33 key: null create_time: 1700000000001 producer_id: 12 producer_epoch: 0 sequence: 7 value: "hi"`},
		{"envelope with a producer only", "", log.Record{Offset: 5, Payload: envelope.Payload(envelope.Record{
			Producer: envelope.Producer{ID: 1 << 40, Epoch: 3, Sequence: 2147483647}, HasProducer: true,
			Value: []byte("v"),
		})}, false,
			`offset: 5 position: 7 timestamp: 0 (1970-01-01T00:00:00Z) size: 24 key: null producer_id: 1099511627776 producer_epoch: 3 sequence: 2147483647 value: "v"`},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, dumpLine(tt.seg, 7, tt.rec, tt.full), tt.name)
	}
}

// TestCLIDumpJSONEnvelope pins the envelope object of `log dump --json`
// (docs/cli.md): key and header values whole, the create time and the
// producer identity only when the record has them.
func TestCLIDumpJSONEnvelope(t *testing.T) {
	tests := []struct {
		name string
		rec  envelope.Record
		want string
	}{
		{"producer", envelope.Record{Key: []byte("k"), Timestamp: 5, HasTimestamp: true,
			Producer: envelope.Producer{ID: 12, Epoch: 1, Sequence: 99}, HasProducer: true, Value: []byte("v")},
			`{"key":"aw==","create_timestamp_ms":5,"producer":{"id":12,"epoch":1,"sequence":99},"value_size":1}`},
		{"no producer", envelope.Record{Key: []byte("k"), Value: []byte("v")},
			`{"key":"aw==","value_size":1}`},
	}
	for _, tt := range tests {
		d := newDumpRecord("", 0, log.Record{Payload: envelope.Encode(tt.rec)}, false)
		got, err := json.Marshal(d.Envelope)
		require.NoError(t, err)
		require.Equal(t, tt.want, string(got), tt.name)
	}
}

// TestCLIVerifyLine pins the report line: status (LAG with its count), kind,
// path, and for damage the byte position and offset, after the segment file
// they lie in when the log is a directory.
func TestCLIVerifyLine(t *testing.T) {
	pos, off := int64(96), uint64(3)
	tests := []struct {
		it   verify.Item
		want string
	}{
		{verify.Item{Status: verify.StatusOK, Kind: verify.KindLog, Path: "a/partition-000000/", Detail: "3 records in 1 segments, log start 0"},
			"OK\tlog\ta/partition-000000/\t3 records in 1 segments, log start 0"},
		{verify.Item{Status: verify.StatusDamaged, Kind: verify.KindLog, Path: "a/00000000000000000000.log", Pos: &pos, Offset: &off, Detail: "bad"},
			"DAMAGED\tlog\ta/00000000000000000000.log\tat byte 96, offset 3: bad"},
		{verify.Item{Status: verify.StatusDamaged, Kind: verify.KindLog, Path: "a/partition-000000/", Segment: "a/partition-000000/00000000000000000002.log", Pos: &pos, Offset: &off, Detail: "bad"},
			"DAMAGED\tlog\ta/partition-000000/\tin 00000000000000000002.log at byte 96, offset 3: bad"},
		{verify.Item{Status: verify.StatusLag, Kind: verify.KindReplica, Path: "b", Lag: 2, Detail: "behind"},
			"LAG 2\treplica\tb\tbehind"},
		{verify.Item{Status: verify.StatusDiverged, Kind: verify.KindReplica, Path: "b", Offset: &off, Detail: "payload differs"},
			"DIVERGED\treplica\tb\toffset 3: payload differs"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, verifyLine(tt.it))
	}
}

// TestCLIBenchLogConfig: out-of-range flag values are usage errors.
func TestCLIBenchLogConfig(t *testing.T) {
	ok := benchLogConfig{Records: 1, RecordSize: 0, Concurrency: 1, Batch: 1}
	require.NoError(t, ok.check())
	for _, bad := range []benchLogConfig{
		{Records: 0, Concurrency: 1, Batch: 1},
		{Records: 1, RecordSize: -1, Concurrency: 1, Batch: 1},
		{Records: 1, RecordSize: log.DefaultMaxPayloadSize + 1, Concurrency: 1, Batch: 1},
		{Records: 1, Concurrency: 0, Batch: 1},
		{Records: 1, Concurrency: 1, Batch: 0},
	} {
		require.Equal(t, ExitUsage, ExitCode(bad.check()), "%+v", bad)
	}
}

// TestCLIBenchClaim: concurrent workers are handed every record exactly
// once, in batches of at most the batch size.
func TestCLIBenchClaim(t *testing.T) {
	c := &claim{total: 1000}
	var (
		mu    sync.Mutex
		total int
		wg    sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for n := c.take(7); n > 0; n = c.take(7) {
				require.LessOrEqual(t, n, 7)
				mu.Lock()
				total += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, 1000, total)
	require.Equal(t, 0, c.take(7))
}

// TestCLIVersionFlagLiteral: --version prints the -ldflags version as it
// is, even one that looks like template syntax (the version template holds
// it as a quoted constant), and exactly as `version` does.
func TestCLIVersionFlagLiteral(t *testing.T) {
	for _, v := range []string{"v1.2.3", `{{.Name}} "q" \n %s`} {
		var text, js, cmdText bytes.Buffer
		require.Equal(t, ExitOK, Run([]string{"--version"}, Env{Stdout: &text, Version: v, Getenv: noEnv}))
		require.Equal(t, ExitOK, Run([]string{"version"}, Env{Stdout: &cmdText, Version: v, Getenv: noEnv}))
		require.Equal(t, cmdText.String(), text.String())
		require.True(t, strings.HasPrefix(text.String(), "pystream "+v+" ("), text.String())

		require.Equal(t, ExitOK, Run([]string{"--version", "--json"}, Env{Stdout: &js, Version: v, Getenv: noEnv}))
		var got map[string]string
		require.NoError(t, json.Unmarshal(js.Bytes(), &got))
		require.Equal(t, v, got["version"])
	}
}

func noEnv(string) string { return "" }
