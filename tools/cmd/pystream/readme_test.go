package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmeStep is one command of the README's tours: the shell text a reader
// types, and what the README says it prints (a pattern for the curl tour,
// the exact text for the CLI tour; empty when the README says nothing).
type readmeStep struct {
	command string
	want    string
}

// readmeSection returns the README's text from the line starting with from
// up to the line starting with to.
func readmeSection(t *testing.T, readme, from, to string) string {
	t.Helper()
	start := strings.Index(readme, "\n"+from)
	require.GreaterOrEqual(t, start, 0, "README has no %q", from)
	end := strings.Index(readme[start+1:], "\n"+to)
	require.GreaterOrEqual(t, end, 0, "README has no %q after %q", to, from)
	return readme[start+1 : start+1+end]
}

var numberedStep = regexp.MustCompile(`^(\d+)\. `)

// curlTour splits the curl tour into its numbered steps, each the commands
// of its ```sh blocks: continuation lines joined, and a "# ..." line after
// a command taken as what that command prints ("..." standing for anything).
func curlTour(t *testing.T, section string) map[int][]readmeStep {
	t.Helper()
	steps := map[int][]readmeStep{}
	step, inBlock := 0, false
	var pending string
	for _, line := range strings.Split(section, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inBlock && numberedStep.MatchString(line):
			n, err := strconv.Atoi(numberedStep.FindStringSubmatch(line)[1])
			require.NoError(t, err)
			step = n
		case trimmed == "```sh":
			inBlock = true
		case trimmed == "```":
			inBlock = false
		case inBlock && strings.HasPrefix(trimmed, "# "):
			cmds := steps[step]
			require.NotEmpty(t, cmds, "an output line before any command in step %d", step)
			cmds[len(cmds)-1].want = strings.TrimPrefix(trimmed, "# ")
		case inBlock && trimmed != "":
			pending += trimmed
			if strings.HasSuffix(pending, "\\") {
				pending = strings.TrimSuffix(pending, "\\")
				continue
			}
			steps[step] = append(steps[step], readmeStep{command: pending})
			pending = ""
		}
	}
	require.Len(t, steps, 7, "the curl tour has seven steps")
	return steps
}

// cliTour reads the CLI tour's transcript: each "$ " line a command, the
// lines up to the next one its exact output.
func cliTour(t *testing.T, section string) []readmeStep {
	t.Helper()
	block := section[strings.Index(section, "```\n$ ")+4:]
	block = block[:strings.Index(block, "```")]
	var steps []readmeStep
	for _, line := range strings.Split(strings.TrimSuffix(block, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, readmeStep{command: cmd})
			continue
		}
		require.NotEmpty(t, steps, "output before the first command")
		steps[len(steps)-1].want += line + "\n"
	}
	return steps
}

// outputPattern turns a README output line into a regular expression:
// literal, except that "..." stands for anything.
func outputPattern(want string) *regexp.Regexp {
	parts := strings.Split(want, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, ".*"))
}

// TestREADMETopToBottom follows README.md as a reader does, top to bottom,
// in one data directory: the curl tour against the server in manual mode
// (steps 1-6), then restarted with the defaults (step 7), then the CLI
// tour on a manual-mode server again, every command typed as the README
// shows it — through bash, with the real curl and the real pystream — and
// every output the README shows compared. Where the README says how to
// start the server, the test starts it that way; those sentences are
// checked to be there.
func TestREADMETopToBottom(t *testing.T) {
	if testing.Short() {
		t.Skip("the README tours take several seconds (step 7 waits for a failover)")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the README tours need %s: apt-get install %s", tool, tool)
		}
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(raw)
	tour := readmeSection(t, readme, "## Five-minute tour", "The same tour with the `pystream`")
	cli := readmeSection(t, readme, "The same tour with the `pystream`", "## Phases")
	const manual = "PYSTREAM_FAILOVER_AFTER=0 make run"
	require.Contains(t, tour, "`"+manual+"`", "the curl tour starts in manual mode")
	require.Contains(t, tour, "start it with plain\n   `make run`", "step 7 restarts with the defaults")
	require.Contains(t, cli, "`"+manual+"`", "the CLI tour runs in manual mode")

	dir := t.TempDir()
	port := freePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	env := append(os.Environ(), "PATH="+filepath.Dir(pystreamBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PYSTREAM_SERVER=http://"+addr)
	run := func(command string) string {
		t.Helper()
		command = strings.ReplaceAll(command, "localhost:8000", addr)
		cmd := exec.Command("bash", "-c", command)
		cmd.Env, cmd.Dir = env, dir
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errorsAs(err, &exit) {
			t.Fatalf("%s: %v", command, err)
		}
		return string(out)
	}

	steps := curlTour(t, tour)
	_, stop := startServerAt(t, dir, port, 3, "PYSTREAM_FAILOVER_AFTER=0")
	for n := 1; n <= 7; n++ {
		if n == 7 {
			stop()
			_, stop = startServerAt(t, dir, port, 3)
		}
		for _, s := range steps[n] {
			out := run(s.command)
			if s.want != "" {
				require.Regexp(t, outputPattern(s.want), out, "step %d: %s", n, s.command)
			}
		}
	}
	stop()

	_, stop = startServerAt(t, dir, port, 3, "PYSTREAM_FAILOVER_AFTER=0")
	defer stop()
	start := time.Now()
	var transcript strings.Builder
	for _, s := range cliTour(t, cli) {
		out := run(s.command)
		transcript.WriteString("$ " + s.command + "\n" + out)
		if !*update {
			require.Equal(t, s.want, out, "$ %s", s.command)
		}
	}
	t.Logf("the CLI tour took %v", time.Since(start))
	if *update {
		// -update writes what the tour printed back into the README.
		block := cli[strings.Index(cli, "```\n$ ")+4:]
		block = block[:strings.Index(block, "```")]
		readme = strings.Replace(readme, block, transcript.String(), 1)
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "..", "README.md"), []byte(readme), 0o644))
	}
}

// errorsAs is errors.As, kept apart so the test reads as the README does.
func errorsAs(err error, target any) bool { return errors.As(err, target) }
