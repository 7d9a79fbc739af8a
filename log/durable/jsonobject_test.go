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
