package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCLIUsageErrors pins issue 9: usage errors exit 2, with the error on
// stderr and nothing on stdout.
func TestCLIUsageErrors(t *testing.T) {
	tests := [][]string{
		{"bogus"},
		{"log", "bogus"},
		{"bench", "bogus"},
		{"log", "dump"},
		{"log", "dump", "a", "b"},
		{"log", "verify"},
		{"log", "repair"},
		{"--no-such-flag"},
		{"log", "dump", "--no-such-flag", "x"},
		{"bench", "log", "--records", "0"},
		{"bench", "log", "--records", "many"},
		{"bench", "log", "--batch", "0"},
		{"bench", "log", "extra"},
		{"completion"},
		{"completion", "ksh"},
		{"version", "extra"},
	}
	for _, args := range tests {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			r := run(t, "", "", args...)
			require.Equal(t, 2, r.code, r.stderr)
			require.Empty(t, r.stdout)
			require.Contains(t, r.stderr, "pystream: ")
			require.Contains(t, r.stderr, "--help")
		})
	}
}

// TestCLIHelp: asking for help, or naming a command group alone, is not an
// error.
func TestCLIHelp(t *testing.T) {
	for _, args := range [][]string{{}, {"--help"}, {"log"}, {"log", "dump", "-h"}, {"bench"}} {
		r := run(t, "", "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "Usage:")
	}
}

// TestCLIVersion: the version comes from -ldflags, with the Go version.
func TestCLIVersion(t *testing.T) {
	r := run(t, "", "", "version")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "pystream "+testVersion+" ("+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")\n", r.stdout)

	r = run(t, "", "", "version", "--json")
	require.Equal(t, 0, r.code, r.stderr)
	var v map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &v))
	require.Equal(t, testVersion, v["version"])
	require.Equal(t, runtime.Version(), v["go"])
}

// TestCLICompletion: a script for each supported shell.
func TestCLICompletion(t *testing.T) {
	marks := map[string]string{
		"bash": "complete -o default -F __start_pystream pystream",
		"zsh":  "#compdef pystream",
		"fish": "complete -c pystream",
	}
	for shell, mark := range marks {
		r := run(t, "", "", "completion", shell)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, mark, shell)
	}
}
