package httpapi

import (
	"math"
	"net/http"
	"strconv"

	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/explorer"
)

// explorerRoutes are the explorer's page, its files, the events stream
// and the controller's switch (docs/explorer.md).
func (a *API) explorerRoutes(sc *schemaSet) []route {
	html := map[string]media{"text/html": {Schema: &schema{Type: "string"}}}
	status := apiclient.ControllerStatus{Automatic: true, FailoverAfterMS: 3000, Switchable: true}
	return []route{
		{Method: http.MethodGet, Path: "/explorer", Handler: a.handleExplorer, Role: RoleOpen, Operation: &operation{
			OperationID: "getExplorer", Summary: "The explorer: the cluster drawn live", Tags: []string{"documentation"},
			Description: "A page that draws every broker, every replica's log, the high watermarks and the journal as they change, " +
				"and lets you stop brokers, produce, fail over and recover from the browser. It calls this API like any client " +
				"(a token, when the server has an auth file, is typed into the page). Works offline.",
			Responses: map[string]response{"200": {Description: "An HTML page.", Content: html}},
		}},
		{Method: http.MethodGet, Path: "/explorer/{file}", Handler: a.handleExplorerFile, Role: RoleOpen, Operation: &operation{
			OperationID: "getExplorerFile", Summary: "A file of the explorer page (script, style)", Tags: []string{"documentation"},
			Parameters: []parameter{{Name: "file", In: "path", Required: true, Description: "A file name of the page, such as explorer.js.",
				Schema: &schema{Type: "string"}, Example: "explorer.js"}},
			Responses: errs(map[string]response{"200": {Description: "The file.", Content: map[string]media{"text/javascript": {Schema: &schema{Type: "string"}}}}}, 404),
		}},
		{Method: http.MethodGet, Path: "/api/events", Handler: a.handleEvents, Role: RoleRead, Operation: &operation{
			OperationID: "streamEvents", Summary: "Cluster changes and journal entries as they happen (server-sent events)", Tags: []string{"cluster"},
			Description: "A text/event-stream of \"update\" messages, at most ten a second per client: data is a JSON object with time, " +
				"cluster (the whole state — brokers, every partition's replicas, log start, high watermark, the controller's mode, consumer offsets, consumer groups with members — " +
				"when it changed since the client's last message) and journal (the entries written since). A message with journal entries has " +
				"an id, the offset of its last entry: send it back in the Last-Event-ID header (a decimal offset) to resume after it. since starts the journal at an offset, " +
				"tail with the most recent entries (0 to " + strconv.Itoa(explorer.MaxTail) + "); neither: only new entries. " +
				"A client that does not read for " + explorer.DefaultWriteStall.String() + " is dropped. At most " +
				strconv.Itoa(explorer.DefaultMaxClients) + " streams at once, " + strconv.Itoa(explorer.DefaultMaxPerPrincipal) +
				" per token (without an auth file, per client address); beyond either, 503 with Retry-After. docs/explorer.md has the format.",
			Parameters: []parameter{
				queryUint("since", "First journal offset to send.", 0, math.MaxUint64),
				queryUint("tail", "Send the most recent entries first: 0 to 1000.", 0, explorer.MaxTail),
			},
			Responses: errs(map[string]response{"200": {Description: "The stream, until the client leaves or the server shuts down.",
				Content: map[string]media{"text/event-stream": {Schema: &schema{Type: "string"}}}}}, 400, 503),
		}},
		{Method: http.MethodGet, Path: "/api/controller", Handler: a.handleController, Role: RoleRead, Operation: &operation{
			OperationID: "getController", Summary: "Whether the controller heals the cluster on its own", Tags: []string{"cluster"},
			Description: "In cluster mode every node answers with the switch as its copy of the cluster's metadata has it, and its own failover delay.",
			Responses:   map[string]response{"200": okJSON("automatic, and the failover delay in force.", sc.of(apiclient.ControllerStatus{}), status)},
		}},
		{Method: http.MethodPut, Path: "/api/controller", Handler: a.handleSetController, Role: RoleAdmin, Operation: &operation{
			OperationID: "setController", Summary: "Turn automatic healing off or on", Tags: []string{"operations"},
			Description: "automatic false is PYSTREAM_FAILOVER_AFTER=0's manual mode, at run time: the controller then fails nothing over, " +
				"shrinks no active set, recovers nothing and moves no leader (it still catches followers up). true turns it on again, after " +
				"PYSTREAM_FAILOVER_AFTER (its default when that is 0). Journaled as healing with the reason (at most " +
				strconv.Itoa(MaxReasonBytes) + " bytes); asked for what it is already, it changes and journals nothing. The embedded cluster keeps it " +
				"until the server stops. In cluster mode it is a fact of the cluster's metadata, proposed through Raft: any node takes it " +
				"(one that does not lead the metadata group forwards it to the one that does, as every metadata change) and answers once its own " +
				"copy has applied it; it survives a change of leader and a restart of every node, and whichever node leads follows it, on after " +
				"its own PYSTREAM_FAILOVER_AFTER. 503 while the metadata group has no leader.",
			RequestBody: jsonBody("The mode, and why.", sc.of(apiclient.ControllerRequest{}),
				apiclient.ControllerRequest{Automatic: ptr(false), Reason: "watching a failover by hand"}),
			Responses: errs(map[string]response{"200": okJSON("The mode now.", sc.of(apiclient.ControllerStatus{}),
				apiclient.ControllerStatus{Automatic: false, FailoverAfterMS: 0, Switchable: true})}, 400, 409, 413, 415, 503),
		}},
	}
}
