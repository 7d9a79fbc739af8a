package chaos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunEmbedded runs the suite for real, briefly, against the embedded
// server, when PYSTREAM_CHAOS is set; make chaos and .ci/run run the
// cluster (docs/chaos.md), so make test does not.
func TestRunEmbedded(t *testing.T) {
	if os.Getenv("PYSTREAM_CHAOS") == "" {
		t.Skip("a real run of the chaos suite: set PYSTREAM_CHAOS=1 (make chaos runs it)")
	}
	bin := t.TempDir()
	for _, b := range []struct{ out, pkg string }{
		{"pystream-server", "github.com/pystream/pystream/server/cmd/pystream-server"},
		{"pystream", "github.com/pystream/pystream/tools/cmd/pystream"},
	} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, b.out), b.pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Mode: ModeEmbedded, Seed: 1, Duration: 15 * time.Second, FailoverAfter: time.Second,
		Out: t.TempDir(), Server: filepath.Join(bin, "pystream-server"), CLI: filepath.Join(bin, "pystream"), Log: t.Output()})
	require.NoError(t, err)
	require.NotZero(t, res.Report.Acked)
	require.NotEmpty(t, res.History.Faults)
}
