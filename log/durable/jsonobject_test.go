package durable_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/log/durable"
)

// TestObjectFields pins the strictness every metadata reader relies on: one
// object, each key once, nothing after it.
func TestObjectFields(t *testing.T) {
	fields, err := durable.ObjectFields([]byte(" {\"version\": 1, \"name\": \"a\"}\n\n"))
	require.NoError(t, err)
	require.Equal(t, map[string]json.RawMessage{"version": json.RawMessage("1"), "name": json.RawMessage(`"a"`)}, fields)

	for _, bad := range []string{
		``, `nul`, `[1]`, `"x"`, `{"a":1`, `{"a":1,"a":2}`, `{"a":1} {}`, `{"a":1} x`, `{1:2}`,
	} {
		_, err := durable.ObjectFields([]byte(bad))
		var oe *durable.ObjectError
		require.True(t, errors.As(err, &oe), "%q must be refused", bad)
		require.NotEmpty(t, oe.Reason)
	}
}

// TestIsInteger: whole JSON numbers only; no fraction, exponent, string or
// null, and a lone minus is not a number.
func TestIsInteger(t *testing.T) {
	for _, s := range []string{"0", "7", "-3", "18446744073709551616"} {
		require.True(t, durable.IsInteger(json.RawMessage(s)), s)
	}
	for _, s := range []string{"", "-", "1.0", "1e3", `"1"`, "null", "--1", "1-", "+1"} {
		require.False(t, durable.IsInteger(json.RawMessage(s)), s)
	}
}

// TestUnknownField: the first unknown field in sorted order, so the reason
// a reader gives is the same on every run.
func TestUnknownField(t *testing.T) {
	fields := map[string]json.RawMessage{"version": nil, "zeta": nil, "alpha": nil}
	name, ok := durable.UnknownField(fields, "version")
	require.True(t, ok)
	require.Equal(t, "alpha", name)
	_, ok = durable.UnknownField(fields, "version", "zeta", "alpha")
	require.False(t, ok)
}
