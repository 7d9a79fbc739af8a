package cli

import (
	"bufio"
	"bytes"
	"io"
	"testing"

	"github.com/pystream/pystream/server/apiclient"

	"github.com/stretchr/testify/require"
)

// TestCLIProduceOutcome pins the words of a failed produce (docs/cli.md,
// produce): which lines of stdin were acknowledged, as line numbers and
// ranges, every line of the refused batch named as acknowledged or not.
func TestCLIProduceOutcome(t *testing.T) {
	y, n := true, false
	tests := []struct {
		sent  int
		acked []bool
		want  string
	}{
		{0, []bool{n}, "line 1 was not acknowledged"},
		{0, []bool{n, n, n}, "lines 1-3 were not acknowledged"},
		{0, []bool{n, n}, "lines 1-2 were not acknowledged"},
		{2, []bool{n}, "lines 1-2 were acknowledged, line 3 was not"},
		{1, []bool{n}, "line 1 was acknowledged, line 2 was not"},
		{0, []bool{y, n, y}, "lines 1 and 3 were acknowledged, line 2 was not"},
		{0, []bool{y, n}, "line 1 was acknowledged, line 2 was not"},
		{40, []bool{n, y, n, n, y, n},
			"lines 1-40, 42 and 45 were acknowledged, lines 41, 43-44 and 46 were not"},
		{0, []bool{n, y, y, n, y, y, n}, "lines 2-3 and 5-6 were acknowledged, lines 1, 4 and 7 were not"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, refusedBatchOutcome(tt.sent, tt.acked), "%d %v", tt.sent, tt.acked)
	}

	require.Equal(t, "whether line 1 was written is unknown", unknownBatchOutcome(0, 1))
	require.Equal(t, "lines 1-40 were acknowledged; whether lines 41-50 were written is unknown", unknownBatchOutcome(40, 10))
	require.Equal(t, "line 1 was acknowledged; whether line 2 was written is unknown", unknownBatchOutcome(1, 1))

	// An idempotent batch: acknowledged, refused (nothing written), or
	// given up on (unknown).
	for _, tt := range []struct {
		sent           int
		acked, unknown []bool
		want           string
	}{
		{2, []bool{y, n}, []bool{n, n}, "lines 1-3 were acknowledged, line 4 was not"},
		{0, []bool{n}, []bool{y}, "whether line 1 was written is unknown"},
		{40, []bool{n, n}, []bool{y, y}, "lines 1-40 were acknowledged; whether lines 41-42 were written is unknown"},
		{41, []bool{n, y, n}, []bool{y, n, n}, "lines 1-41 and 43 were acknowledged, line 44 was not; whether line 42 was written is unknown"},
		{0, []bool{n, n}, []bool{n, y}, "line 1 was not acknowledged; whether line 2 was written is unknown"},
	} {
		require.Equal(t, tt.want, idempotentBatchOutcome(tt.sent, tt.acked, tt.unknown), "%d %v %v", tt.sent, tt.acked, tt.unknown)
	}

	require.Equal(t, "nothing was sent", stoppedOutcome(0))
	require.Equal(t, "line 1 was acknowledged, nothing after it was sent", stoppedOutcome(1))
	require.Equal(t, "lines 1-7 were acknowledged, nothing after them was sent", stoppedOutcome(7))
}

// TestCLIProduceFailedAnswer: what produce prints and says for each kind of
// failed answer to a batch of lines 3-4: per-record results (the
// acknowledged line printed, the other named), a 4xx refusal without
// records (nothing written), and answers that cannot tell (a 5xx without
// records, no answer at all).
func TestCLIProduceFailedAnswer(t *testing.T) {
	placed := apiclient.ProduceResult{Partition: 1, Offset: 7, Timestamp: 1, Leader: 1, Brokers: []int{1}}
	refused := apiclient.ProduceResult{Error: &apiclient.RecordError{Code: "unavailable", Message: "leader down"}}
	tests := []struct {
		name       string
		err        error
		wantStdout string
		wantErr    string
	}{
		{"per record", &apiclient.Error{Status: 503, Code: "unavailable", Message: "orders/0: leader down",
			Records: []apiclient.ProduceResult{refused, placed}},
			"partition 1 offset 7\n", "produce orders: orders/0: leader down [unavailable]; lines 1-2 and 4 were acknowledged, line 3 was not"},
		{"refused whole", &apiclient.Error{Status: 404, Code: "not_found", Message: "no such topic"},
			"", "produce orders: no such topic [not_found]; lines 1-2 were acknowledged, lines 3-4 were not"},
		{"5xx without records", &apiclient.Error{Status: 500, Code: "internal", Message: "boom"},
			"", "produce orders: boom [internal]; lines 1-2 were acknowledged; whether lines 3-4 were written is unknown"},
		{"no answer", io.ErrUnexpectedEOF,
			"", "produce orders: unexpected EOF; lines 1-2 were acknowledged; whether lines 3-4 were written is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout bytes.Buffer
			a := &app{env: Env{Stdout: &stdout}}
			out := bufio.NewWriter(&stdout)
			batch := []apiclient.ProduceRecord{{Value: []byte("c")}, {Value: []byte("d")}}
			err := a.produceFailed(out, "orders", 2, batch, tt.err)
			require.EqualError(t, err, tt.wantErr)
			require.ErrorIs(t, err, tt.err)
			require.Equal(t, tt.wantStdout, stdout.String())
		})
	}
}
