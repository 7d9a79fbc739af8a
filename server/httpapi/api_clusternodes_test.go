package httpapi

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pystream/pystream/server/backend"
)

// The refusals of a membership change are decided from the nodes alone.
func TestClusterNodesRefusals(t *testing.T) {
	three := []backend.NodeView{
		{ID: 1, Addr: "10.0.0.1:7001", Voter: true, Leader: true},
		{ID: 2, Addr: "10.0.0.2:7001", Voter: true},
		{ID: 3, Addr: "10.0.0.3:7001", HTTPAddr: "10.0.0.3:8000"}, // removed, still registered
	}
	one := three[:1]
	tests := []struct {
		name   string
		views  []backend.NodeView
		add    bool
		id     int
		addr   string
		status int // 0: allowed
	}{
		{"add a new node", three, true, 4, "10.0.0.4:7001", 0},
		{"add again at the same address", three, true, 2, "10.0.0.2:7001", 0},
		{"move a voter to a new address", three, true, 2, "10.0.0.9:7001", 0},
		{"add a removed node back", three, true, 3, "10.0.0.3:7001", 0},
		{"add at another voter's address", three, true, 4, "10.0.0.1:7001", http.StatusConflict},
		{"add at a removed node's address", three, true, 4, "10.0.0.3:7001", 0},
		{"remove a voter", three, false, 2, "", 0},
		{"remove the leader", three, false, 1, "", 0},
		{"remove a removed node", three, false, 3, "", http.StatusNotFound},
		{"remove an unknown node", three, false, 9, "", http.StatusNotFound},
		{"remove the last voter", one, false, 1, "", http.StatusConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ae *apiError
			if tt.add {
				ae = addRefusal(tt.views, tt.id, tt.addr)
			} else {
				ae = removeRefusal(tt.views, tt.id)
			}
			if tt.status == 0 {
				require.Nil(t, ae)
				return
			}
			require.NotNil(t, ae)
			require.Equal(t, tt.status, ae.status, ae.body.Message)
		})
	}
}
