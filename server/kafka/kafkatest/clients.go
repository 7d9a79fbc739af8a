package kafkatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// python is a Python interpreter that imports module; the test is
// skipped, naming pkg to install, when there is none.
func python(t *testing.T, module, what, pkg string) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import "+module).Run() == nil {
			return path
		}
	}
	t.Skipf("python3 with %s is not installed: skipping (install it: apt-get install %s)", what, pkg)
	return ""
}

// KafkaPython is a Python interpreter that imports kafka (kafka-python);
// the test is skipped when there is none.
func KafkaPython(t *testing.T) string {
	t.Helper()
	return python(t, "kafka.admin", "kafka-python", "python3-kafka")
}

// ConfluentPython is a Python interpreter that imports confluent_kafka;
// the test is skipped when there is none.
func ConfluentPython(t *testing.T) string {
	t.Helper()
	return python(t, "confluent_kafka", "confluent_kafka", "python3-confluent-kafka")
}

// Kcat runs kcat against the listener at bootstrap with stdin and args
// and returns its standard output; the test is skipped when kcat is not
// installed, and fails when kcat does.
func Kcat(t *testing.T, bootstrap, stdin string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed: skipping the kcat tests (install kcat: apt-get install kcat)")
	}
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(c, path, append([]string{"-b", bootstrap}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "kcat %v: %s", args, stderr.String())
	return stdout.String()
}

// Row is one call's outcome as a matrix program prints it: what it read
// back (OK), the exception it raised, or Absent when the client's version
// has no such call.
type Row struct {
	OK     json.RawMessage `json:"ok"`
	Error  string          `json:"error"`
	Absent bool            `json:"absent"`
}

// Decode decodes what the call read back into v; the call must have been
// made and have raised nothing.
func (r Row) Decode(t *testing.T, v any) {
	t.Helper()
	require.False(t, r.Absent, "the call is absent from this client version")
	require.Empty(t, r.Error)
	require.NotNil(t, r.OK, "the call was not made")
	require.NoError(t, json.Unmarshal(r.OK, v), "%s", r.OK)
}

// RunProgram runs a matrix program with py against the listener at
// bootstrap, telling it (argv "1" or "0") whether to call
// create_partitions and how long a change may take to reach every broker
// (settle, 0 for at once), and returns its rows by call and the client's
// version.
func RunProgram(t *testing.T, py, program, bootstrap string, grow bool, settle time.Duration) (map[string]Row, string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := "0"
	if grow {
		g = "1"
	}
	cmd := exec.CommandContext(c, py, "-c", program, bootstrap, g, strconv.FormatFloat(settle.Seconds(), 'f', -1, 64))
	out, err := cmd.Output()
	var stderr []byte
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "%s%s", out, stderr)
	raw := map[string]json.RawMessage{}
	require.NoError(t, json.Unmarshal(out, &raw), "%s", out)
	var version string
	require.NoError(t, json.Unmarshal(raw["_version"], &version))
	delete(raw, "_version")
	rows := map[string]Row{}
	for k, v := range raw {
		var r Row
		require.NoError(t, json.Unmarshal(v, &r), "%s", v)
		rows[k] = r
	}
	return rows, version
}
