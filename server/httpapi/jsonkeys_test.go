package httpapi

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/apiclient"
)

// docs/phase-6-network-api.md § Requests and errors: JSON is decoded
// strictly. encoding/json keeps the last of two equal keys and matches keys
// in any case; checkJSONKeys refuses both, so a body means exactly what it
// says.
func TestJSONKeysStrict(t *testing.T) {
	produce := reflect.TypeOf(&produceBody{})
	topicReq := reflect.TypeOf(&apiclient.CreateTopicRequest{})
	for _, tt := range []struct {
		name string
		typ  reflect.Type
		body string
		ok   bool
	}{
		{"produce exact keys", produce, `{"records":[{"key":null,"value":"YQ=="},{"value":""}]}`, true},
		{"same key in sibling objects", produce, `{"records":[{"value":"YQ=="},{"value":"Yg=="}]}`, true},
		{"topic exact keys", topicReq, `{"name":"a","partitions":1,"replication_factor":1}`, true},
		{"offset", reflect.TypeOf(&offsetBody{}), ` {"offset": 5} `, true},
		{"duplicate top-level key", produce, `{"records":[],"records":[]}`, false},
		{"duplicate nested key", produce, `{"records":[{"value":"YQ=="},{"value":"YQ==","value":"Yg=="}]}`, false},
		{"duplicate key after case folding", produce, `{"records":[{"value":"YQ==","Value":"Yg=="}]}`, false},
		{"key in upper case", topicReq, `{"NAME":"a","partitions":1,"replication_factor":1}`, false},
		{"Go field name instead of JSON name", topicReq, `{"name":"a","partitions":1,"ReplicationFactor":1}`, false},
		{"duplicate key inside an unknown part", nil, `{"a":{"b":1,"b":2}}`, false},
		{"unknown part without duplicates", nil, `{"a":{"b":1,"c":[{"b":1},{"b":2}]}}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkJSONKeys([]byte(tt.body), tt.typ)
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}
