package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/stretchr/testify/require"
)

func u64(v uint64) *uint64 { return &v }

// TestCLIOffsetSpec pins the -o forms of consume (docs/cli.md): start, end,
// N, -N from the high watermark, committed and +N after the committed
// offset, never committed counting as 0.
func TestCLIOffsetSpec(t *testing.T) {
	tests := []struct {
		in        string
		hw        uint64
		committed *uint64
		want      uint64
	}{
		{"start", 10, u64(4), 0},
		{"beginning", 10, nil, 0},
		{"end", 10, u64(4), 10},
		{"7", 10, nil, 7},
		{"25", 10, nil, 25}, // past the end: waits, as a seek past the end does
		{"-3", 10, nil, 7},
		{"-30", 10, nil, 0},
		{"-0", 10, nil, 10},
		{"committed", 10, u64(4), 4},
		{"stored", 10, nil, 0},
		{"+2", 10, u64(4), 6},
		{"+2", 10, nil, 2},
		{"+1", 10, u64(^uint64(0)), ^uint64(0)},
	}
	for _, tt := range tests {
		spec, err := parseOffsetSpec(tt.in)
		require.NoError(t, err, tt.in)
		require.Equal(t, tt.want, spec.resolve(tt.hw, tt.committed), tt.in)
	}
	for _, bad := range []string{"", "x", "-", "+", "--1", "+-1", "++1", "1.5", "-x", "99999999999999999999"} {
		_, err := parseOffsetSpec(bad)
		require.Error(t, err, bad)
	}
	for in, needs := range map[string]bool{"+1": true, "committed": true, "stored": true, "start": false, "-1": false, "3": false, "end": false} {
		spec, err := parseOffsetSpec(in)
		require.NoError(t, err)
		require.Equal(t, needs, spec.needsCommitted(), in)
	}
}

// TestCLIConsumeFormat pins -f: the kcat verbs, %T in milliseconds (the
// producer's when it gave one), %k and %K empty and -1 without a key, %h
// as NAME=VALUE pairs, escapes, no newline added.
func TestCLIConsumeFormat(t *testing.T) {
	rec := consumedRecord{Topic: "orders", Partition: 2, FetchedRecord: apiclient.FetchedRecord{
		Offset: 41, Timestamp: 1733131200123456789, Value: []byte("hello")}}
	ms := int64(1700000000000)
	keyed := consumedRecord{Topic: "orders", FetchedRecord: apiclient.FetchedRecord{
		Timestamp: 1733131200123456789, CreateTimestampMS: &ms, Key: []byte("user-1"), Value: []byte("v"),
		Headers: []apiclient.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "n"}, {Key: "e", Value: []byte{}}}}}
	got := appendFormatted(nil, mustCompile(t, `%k %K %h %v %T`), keyed)
	require.Equal(t, "user-1 6 a=1,n,e= v 1700000000000", string(got))
	tests := []struct{ format, want string }{
		{`%t/%p@%o\n`, "orders/2@41\n"},
		{`%T %k|%K|%h|%v|%S`, "1733131200123 |-1||hello|5"},
		{`100%% \t\\ \x`, "100% \t\\ \\x"},
		{`%v`, "hello"},
		{``, ""},
	}
	for _, tt := range tests {
		parts, err := compileFormat(tt.format)
		require.NoError(t, err, tt.format)
		require.Equal(t, tt.want, string(appendFormatted(nil, parts, rec)), tt.format)
	}
	for _, bad := range []string{"%", "%x", "abc%"} {
		_, err := compileFormat(bad)
		require.Error(t, err, bad)
	}
}

func mustCompile(t *testing.T, format string) []formatPart {
	t.Helper()
	parts, err := compileFormat(format)
	require.NoError(t, err, format)
	return parts
}

// TestCLIConsumeJSON: the default output carries the key, each header
// value and the value as text, or as exact base64 bytes when not UTF-8;
// no key and a null value (a tombstone) are left out.
func TestCLIConsumeJSON(t *testing.T) {
	var b strings.Builder
	require.NoError(t, jsonLine(&b, toConsumeJSON(consumedRecord{Topic: "t", Partition: 1,
		FetchedRecord: apiclient.FetchedRecord{Offset: 2, Timestamp: 3, Value: []byte("hé")}})))
	require.NoError(t, jsonLine(&b, toConsumeJSON(consumedRecord{Topic: "t",
		FetchedRecord: apiclient.FetchedRecord{Value: []byte{0xff, 0}}})))
	require.NoError(t, jsonLine(&b, toConsumeJSON(consumedRecord{Topic: "t", FetchedRecord: apiclient.FetchedRecord{Value: []byte{}}})))
	ms := int64(1700000000000)
	require.NoError(t, jsonLine(&b, toConsumeJSON(consumedRecord{Topic: "t", FetchedRecord: apiclient.FetchedRecord{
		Key: []byte("k"), CreateTimestampMS: &ms, Value: []byte("v"),
		Headers: []apiclient.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte{0xff}}, {Key: "n"}}}})))
	require.NoError(t, jsonLine(&b, toConsumeJSON(consumedRecord{Topic: "t", FetchedRecord: apiclient.FetchedRecord{Key: []byte{0xff}}})))
	require.Equal(t, `{"topic":"t","partition":1,"offset":2,"timestamp":3,"value":"hé"}
{"topic":"t","partition":0,"offset":0,"timestamp":0,"value_b64":"/wA="}
{"topic":"t","partition":0,"offset":0,"timestamp":0,"value":""}
{"topic":"t","partition":0,"offset":0,"timestamp":0,"create_timestamp_ms":1700000000000,"key":"k","headers":[{"key":"a","value":"1"},{"key":"b","value_b64":"/w=="},{"key":"n"}],"value":"v"}
{"topic":"t","partition":0,"offset":0,"timestamp":0,"key_b64":"/w=="}
`, b.String())
}

// TestCLIProduceLine pins -k and -K: a fixed key, a split at the first
// delimiter, no key for a line without it (as kcat), and an empty key being
// a real key.
func TestCLIProduceLine(t *testing.T) {
	tests := []struct {
		name       string
		m          keyMode
		line       string
		key, value []byte
	}{
		{"no key", keyMode{}, "a:b", nil, []byte("a:b")},
		{"fixed", keyMode{fixed: []byte("k"), hasFixed: true}, "a:b", []byte("k"), []byte("a:b")},
		{"fixed empty", keyMode{fixed: []byte{}, hasFixed: true}, "v", []byte{}, []byte("v")},
		{"split", keyMode{delim: []byte(":")}, "user-1:a:b", []byte("user-1"), []byte("a:b")},
		{"split empty key", keyMode{delim: []byte(":")}, ":v", []byte{}, []byte("v")},
		{"split no delim", keyMode{delim: []byte(":")}, "plain", nil, []byte("plain")},
		{"split multibyte", keyMode{delim: []byte("::")}, "k::v", []byte("k"), []byte("v")},
		{"empty line", keyMode{}, "", nil, []byte{}},
	}
	for _, tt := range tests {
		r := tt.m.parseLine([]byte(tt.line))
		require.Equal(t, tt.key, r.Key, tt.name)
		require.Equal(t, tt.key == nil, r.Key == nil, tt.name+": nil vs empty key")
		require.Equal(t, tt.value, r.Value, tt.name)
	}
	require.Equal(t, "\t", unescape(`\t`))
	require.Equal(t, `a\qb`, unescape(`a\qb`))
}

// TestCLIProduceBatches: lines are read without their line ending, a batch
// holds what is waiting up to the record limit, and the end of input is
// reported after the last batch.
func TestCLIProduceBatches(t *testing.T) {
	var in strings.Builder
	in.WriteString("first\r\n\n")
	for range produceBatchRecords + 10 {
		in.WriteString("x\n")
	}
	in.WriteString("last") // no final newline
	queue := make(chan lineOrErr, 2*produceBatchRecords)
	readLines(strings.NewReader(in.String()), queue, make(chan struct{}))

	bt := &batcher{in: queue}
	b, err := bt.next()
	require.NoError(t, err)
	require.Len(t, b, produceBatchRecords)
	require.Equal(t, []byte("first"), b[0].Value)
	require.Equal(t, []byte{}, b[1].Value, "an empty line is an empty record")

	b, err = bt.next()
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, b, 13)
	require.Equal(t, []byte("last"), b[12].Value)

	_, err = bt.next()
	require.ErrorIs(t, err, io.EOF)
}

// TestCLIProduceBatchBytes: a batch stops at the byte bound, so a request
// stays under the server's body limit.
func TestCLIProduceBatchBytes(t *testing.T) {
	big := strings.Repeat("v", 100<<10)
	queue := make(chan lineOrErr, 10)
	for range 10 {
		queue <- lineOrErr{line: []byte(big)}
	}
	b, err := (&batcher{in: queue}).next()
	require.NoError(t, err)
	require.Less(t, len(b), 10)
	require.LessOrEqual(t, len(b)*encodedSize(b[0]), produceBatchBytes)
}

// TestCLIProduceBatchHoldsBack: a record that would push a batch past the
// byte budget opens the next batch instead, so only a record alone can
// exceed the budget; an error after a held record comes after it.
func TestCLIProduceBatchHoldsBack(t *testing.T) {
	boom := errors.New("boom")
	queue := make(chan lineOrErr, 10)
	queue <- lineOrErr{line: []byte(strings.Repeat("a", 300<<10))}
	queue <- lineOrErr{line: []byte(strings.Repeat("b", 700<<10))}
	queue <- lineOrErr{err: boom}
	close(queue)
	bt := &batcher{in: queue}
	b, err := bt.next()
	require.NoError(t, err)
	require.Len(t, b, 1)
	require.Equal(t, byte('a'), b[0].Value[0])
	b, err = bt.next()
	require.Len(t, b, 1)
	require.Equal(t, byte('b'), b[0].Value[0])
	if err == nil { // the batch was full; the error follows on its own
		b, err = bt.next()
		require.Empty(t, b)
	}
	require.ErrorIs(t, err, boom)
	b, err = bt.next()
	require.ErrorIs(t, err, boom, "the error sticks")
	require.Empty(t, b)
}

// TestCLIProduceLineLimit: a line of up to the largest record is read
// whole (a CRLF ending is not counted); a longer one is refused with a
// *LineTooLongError naming it, after the lines before it.
func TestCLIProduceLineLimit(t *testing.T) {
	atLimit := strings.Repeat("x", produceMaxLine)
	queue := make(chan lineOrErr, 10)
	readLines(strings.NewReader("a\n"+atLimit+"\r\n"+atLimit+"y\nnever\n"), queue, make(chan struct{}))
	require.Equal(t, "a", string((<-queue).line))
	require.Equal(t, atLimit, string((<-queue).line))
	it := <-queue
	var lerr *LineTooLongError
	require.ErrorAs(t, it.err, &lerr)
	require.Equal(t, 3, lerr.Line)
	require.Equal(t, ExitFailure, ExitCode(it.err))
	_, open := <-queue
	require.False(t, open)
}

// TestCLIProduceReadError: a read error ends the input after the lines
// before it.
func TestCLIProduceReadError(t *testing.T) {
	boom := errors.New("boom")
	queue := make(chan lineOrErr, 10)
	readLines(io.MultiReader(strings.NewReader("a\nb"), errReader{boom}), queue, make(chan struct{}))
	b, err := (&batcher{in: queue}).next()
	require.ErrorIs(t, err, boom)
	require.Len(t, b, 2)
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestCLIPartitionRow pins topic describe's row: leader, leader epoch,
// preferred replica, replicas with unavailable ones marked, active set,
// leader log end, follower lags ("?" unknown), high watermark.
func TestCLIPartitionRow(t *testing.T) {
	p := apiclient.PartitionStatus{Partition: 1, Leader: 2, LeaderEpoch: 4, Preferred: 3, Placement: []int{3, 1, 2},
		Assigned: []int{2, 3, 1}, Active: []int{2, 1},
		HighWatermark: 5, LogEnd: u64(6), Replicas: []apiclient.ReplicaStatus{
			{BrokerID: 2, Role: apiclient.RoleLeader, Active: true, Available: true, LogEnd: u64(6), Lag: u64(0)},
			{BrokerID: 3, Role: apiclient.RoleFollower, Available: false},
			{BrokerID: 1, Role: apiclient.RoleFollower, Active: true, Available: true, LogEnd: u64(5), Lag: u64(1)},
		}}
	require.Equal(t, []string{"1", "2", "4", "3", "2,3(down),1", "2,1", "6", "3:?,1:1", "5"}, partitionRow(p))
	require.Equal(t, []string{"0", "1", "0", "-", "1", "-", "-", "-", "0"},
		partitionRow(apiclient.PartitionStatus{Leader: 1, Assigned: []int{1}}))
}

// TestCLIJournalLine pins the text form of a journal entry: offset, time,
// author, event, phase, topic/partition ("-" for a broker event), broker,
// summary, then reason, quarantine and error when set.
func TestCLIJournalLine(t *testing.T) {
	zero, six := 0, uint64(6)
	tests := []struct {
		e    apiclient.JournalEntry
		want string
	}{
		{apiclient.JournalEntry{Offset: 0, Time: "2024-12-02T09:20:00.5Z", Event: "broker-stop", Phase: "done", By: "operator", Broker: 1,
			Summary: "broker 1 stopped"},
			"0 2024-12-02T09:20:00.5Z operator broker-stop done - broker 1: broker 1 stopped"},
		{apiclient.JournalEntry{Offset: 7, Time: "2024-12-02T09:20:01Z", Event: "recover", Phase: "intent", By: "controller", Topic: "orders",
			Partition: &zero, Broker: 1, Summary: "orders/0: broker 1 rejoins", Reason: "broker 1 is back", Quarantine: "b/q.bin"},
			"7 2024-12-02T09:20:01Z controller recover intent orders/0 broker 1: orders/0: broker 1 rejoins (because broker 1 is back); cut records kept in b/q.bin"},
		{apiclient.JournalEntry{Offset: 8, Time: "2024-12-02T09:20:02Z", Event: "recover", Phase: "failed", By: "controller", Topic: "orders",
			Partition: &zero, Broker: 1, Summary: "failed", Intent: &six, Error: "disk full"},
			"8 2024-12-02T09:20:02Z controller recover failed orders/0 broker 1: failed; error: disk full"},
	}
	for _, tt := range tests {
		got, err := journalLine(tt.e)
		require.NoError(t, err)
		require.Equal(t, tt.want, got)
	}
	_, err := journalLine(apiclient.JournalEntry{Time: "yesterday", Event: "broker-stop", Phase: "done", By: "operator"})
	require.Error(t, err, "a time the API never sends is reported, not guessed")
}

// TestCLIOffsetsDescribeRows: without a topic, every committed offset;
// with one, every partition of it, uncommitted ones without lag; the log
// end is the high watermark.
func TestCLIOffsetsDescribeRows(t *testing.T) {
	committed := []apiclient.ConsumerOffset{{Topic: "b", Partition: 0, Offset: 1}, {Topic: "a", Partition: 1, Offset: 3}}
	topics := map[string]*apiclient.TopicDetail{
		"a": {Name: "a", Partitions: []apiclient.PartitionStatus{{Partition: 0, HighWatermark: 2}, {Partition: 1, HighWatermark: 7}}},
		"b": {Name: "b", Partitions: []apiclient.PartitionStatus{{Partition: 0, HighWatermark: 1}}},
	}
	require.Equal(t, []offsetRow{
		{Topic: "a", Partition: 1, Current: u64(3), LogEnd: 7, Lag: u64(4)},
		{Topic: "b", Partition: 0, Current: u64(1), LogEnd: 1, Lag: u64(0)},
	}, describeRows(committed, topics, ""))
	require.Equal(t, []offsetRow{
		{Topic: "a", Partition: 0, LogEnd: 2},
		{Topic: "a", Partition: 1, Current: u64(3), LogEnd: 7, Lag: u64(4)},
	}, describeRows(committed, topics, "a"))
	require.Empty(t, describeRows(nil, topics, ""))
}

// TestCLIOffsetsDescribeBelowLogStart: a committed offset below its
// partition's log start is marked with the records deleted unread.
func TestCLIOffsetsDescribeBelowLogStart(t *testing.T) {
	rows := []offsetRow{
		{Topic: "a", Partition: 0, Current: u64(2), LogEnd: 9, Lag: u64(7)},
		{Topic: "a", Partition: 1, Current: u64(6), LogEnd: 9, Lag: u64(3)},
		{Topic: "a", Partition: 2, LogEnd: 9},
	}
	require.NoError(t, withLogStarts(rows, func(_ string, p int) (uint64, error) { return 5, nil }))
	for _, r := range rows {
		require.Equal(t, uint64(5), r.LogStart)
	}
	require.Equal(t, []string{"note: a/0: committed offset 2 is below log start 5: 3 record(s) deleted before they were read; " +
		"a consumer resumes per its offset reset policy (consume --offset-reset)"}, belowStartNotes(rows))
}

// TestCLIOffsetsResetTarget: earliest is 0, latest the high watermark, an
// explicit offset must not pass it.
func TestCLIOffsetsResetTarget(t *testing.T) {
	n, err := resetTarget{earliest: true}.newOffset("t", 0, 9)
	require.NoError(t, err)
	require.Equal(t, uint64(0), n)
	n, err = resetTarget{latest: true}.newOffset("t", 0, 9)
	require.NoError(t, err)
	require.Equal(t, uint64(9), n)
	n, err = resetTarget{offset: u64(9)}.newOffset("t", 0, 9)
	require.NoError(t, err)
	require.Equal(t, uint64(9), n)
	_, err = resetTarget{offset: u64(10)}.newOffset("t", 0, 9)
	require.Error(t, err)
}

// TestCLITopicPartitionArg: TOPIC means every partition, TOPIC:P one; a
// bad partition is a usage error.
func TestCLITopicPartitionArg(t *testing.T) {
	topic, p, all, err := parseTopicPartition("orders:2")
	require.NoError(t, err)
	require.Equal(t, "orders", topic)
	require.Equal(t, 2, p)
	require.False(t, all)
	topic, _, all, err = parseTopicPartition("orders")
	require.NoError(t, err)
	require.Equal(t, "orders", topic)
	require.True(t, all)
	for _, bad := range []string{"", "orders:", "orders:x", "orders:-1", ":1"} {
		_, _, _, err := parseTopicPartition(bad)
		require.Equal(t, ExitUsage, ExitCode(err), bad)
	}
}

// TestCLIServerErrors: an error answer prints the server's message and
// code and still matches the apiclient sentinel; nothing listening gives
// the "is the server running" hint; both exit 1.
func TestCLIServerErrors(t *testing.T) {
	a := &app{serverURL: "http://127.0.0.1:1"}
	err := a.apiError("topic describe x", &apiclient.Error{Status: 404, Code: "not_found", Message: "no topic x"})
	require.Equal(t, "topic describe x: no topic x [not_found]", err.Error())
	require.ErrorIs(t, err, apiclient.ErrNotFound)
	require.Equal(t, ExitFailure, ExitCode(err))
	require.NoError(t, a.apiError("x", nil))
}

// TestCLIBenchServerConfig: out-of-range bench produce|consume flags are
// usage errors.
func TestCLIBenchServerConfig(t *testing.T) {
	ok := benchServerConfig{Records: 1, Concurrency: 1, Batch: 1, Partitions: 1, RF: 1}
	require.NoError(t, ok.check())
	for _, mut := range []func(*benchServerConfig){
		func(c *benchServerConfig) { c.Records = 0 },
		func(c *benchServerConfig) { c.RecordSize = -1 },
		func(c *benchServerConfig) { c.Concurrency = 0 },
		func(c *benchServerConfig) { c.Batch = 0 },
		func(c *benchServerConfig) { c.Partitions = 0 },
		func(c *benchServerConfig) { c.RF = 0 },
	} {
		bad := ok
		mut(&bad)
		require.Equal(t, ExitUsage, ExitCode(bad.check()), "%+v", bad)
	}
}

// TestCLIServerURL pins --server: a bare host or host:port means http://
// (docs/cli.md), http and https URLs are kept, anything else is a usage
// error.
func TestCLIServerURL(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8000":           "http://127.0.0.1:8000",
		"localhost:8000":           "http://localhost:8000",
		"pystream.example":         "http://pystream.example",
		"[::1]:8000":               "http://[::1]:8000",
		"http://127.0.0.1:8000":    "http://127.0.0.1:8000",
		"https://pystream.example": "https://pystream.example",
	} {
		got, err := serverURL(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "ftp://host", "http://", "://x", "http://[::1"} {
		_, err := serverURL(bad)
		require.Equal(t, ExitUsage, ExitCode(err), bad)
	}
}
