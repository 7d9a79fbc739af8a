package httpapi

import (
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/pystream/pystream/client"
	"github.com/pystream/pystream/cluster"
	"github.com/pystream/pystream/server/apiclient"
	"github.com/pystream/pystream/server/backend"
	"github.com/pystream/pystream/server/bounds"
	"github.com/pystream/pystream/server/group"
	"github.com/pystream/pystream/topic/envelope"
)

// The routes of the phase-6 API and their OpenAPI descriptions. Schemas come
// from the wire types (schemaSet); examples are the values of the tour in
// docs/phase-6-network-api.md.

func u64(v uint64) *uint64 { return &v }

// namePathParam is a path parameter that is a topic name or consumer id.
func namePathParam(name, desc string, example any) parameter {
	return parameter{Name: name, In: "path", Required: true, Description: desc, Schema: nameSchema(""), Example: example}
}

// indexParam is a path parameter that is a decimal number from lo: a
// partition index (0) or a broker id (1).
func indexParam(name, desc string, lo int64) parameter {
	return parameter{Name: name, In: "path", Required: true, Description: desc,
		Schema: &schema{Type: "integer", Format: "int32", Minimum: num(lo), Maximum: num(maxIndex)}, Example: lo}
}

func ptr[T any](v T) *T { return &v }

// queryUint is an optional query parameter that is a decimal integer from
// lo to hi (parseUint reads it).
func queryUint(name, desc string, lo, hi uint64) parameter {
	return parameter{Name: name, In: "query", Description: desc,
		Schema: &schema{Type: "integer", Format: "uint64", Minimum: num(lo), Maximum: num(hi)}}
}

// base64Pattern is standard base64 with padding, as
// base64.StdEncoding.Strict() reads it (which also wants the unused bits
// of the last character zero; a pattern cannot say that).
const base64Pattern = `^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`

var (
	paramTopic     = namePathParam("topic", "Topic name: "+nameRule+".", "orders")
	paramPartition = indexParam("p", "Partition index, a decimal integer from 0.", 0)
	paramConsumer  = namePathParam("id", "Consumer id: same rules as a topic name ("+nameRule+").", "billing")
	paramReplica   = indexParam("broker", "Broker id of the replica, from 1.", 1)
	paramGroup     = namePathParam("group", "Group id: a consumer id, the same rules ("+nameRule+").", "billing")
	// A fetch's bounds (fetchQuery reads them), also a quarantine's.
	paramFetchMax      = queryUint("max", "Most records to return (default 100); any value from 1 is accepted and served as at most 1000.", 1, math.MaxUint64)
	paramFetchMaxBytes = queryUint("max_bytes", "Value bytes at which the answer stops, the record that reaches it included (default 1 MiB); "+
		"any value from 1 is accepted and served as at most PYSTREAM_FETCH_MAX_BYTES.", 1, math.MaxUint64)
)

// okJSON is a 2xx answer with a schema and an example.
func okJSON(desc string, sch *schema, example any) response {
	return response{Description: desc, Content: jsonContent(sch, example)}
}

// errorExamples are the error answers the document shows, by status: each
// one what the server really answers in a situation
// TestHTTPOpenAPIErrorExamplesAreReal stages.
var errorExamples = map[int][2]string{
	400: {CodeInvalidArgument, "invalid JSON body: unknown field \"partitons\""},
	404: {CodeNotFound, "topic \"nope\": unknown topic"},
	409: {CodeConflict, "orders/0: leader broker 1 is still available; failover replaces a failed leader (move-leader moves a live one)"},
	413: {CodePayloadTooLarge, "request body larger than 1048576 bytes (PYSTREAM_MAX_REQUEST_BYTES)"},
	415: {CodeUnsupportedMediaType, "Content-Type text/plain is not accepted here; send application/json"},
	503: {CodeUnavailable, "orders/0: leader broker 1 is unavailable (the broker is stopped)"},
}

// errs documents the error answers an operation can give.
func errs(r map[string]response, codes ...int) map[string]response {
	examples := errorExamples
	words := map[int]string{
		400: "Invalid request: bad JSON, unknown field, wrong type, invalid name or number.",
		404: "Unknown topic, partition, broker or consumer offset target.",
		409: "Conflict with the current state.",
		413: "Body above PYSTREAM_MAX_REQUEST_BYTES, more records than PYSTREAM_MAX_REQUEST_RECORDS, or a record above the maximum record size.",
		415: "Wrong Content-Type, or a Content-Encoding other than identity.",
		503: "A broker needed is unavailable; broker_ids says which.",
	}
	for _, c := range codes {
		ex := examples[c]
		resp := errorResponse(words[c], ex[0], ex[1])
		if c == 503 {
			resp.Content = jsonContent(ref("ErrorResponse"), ErrorResponse{Error: ErrorBody{Code: ex[0], Message: ex[1], BrokerIDs: []int{1}}})
		}
		r[strconv.Itoa(c)] = resp
	}
	return r
}

// outOfRangeResponse is a fetch's 416, its example built by the function
// that builds the real answer.
func outOfRangeResponse() response {
	e := offsetOutOfRange(&client.OffsetOutOfRangeError{Topic: "orders", Partition: 0, Offset: 2, LogStart: 5, HighWatermark: 9})
	return response{Description: "The offset is below the partition's log start (retention deleted the records there): " +
		"code offset_out_of_range, with log_start and high_watermark, as Kafka's OFFSET_OUT_OF_RANGE.",
		Content: jsonContent(ref("ErrorResponse"), ErrorResponse{Error: e.body})}
}

func jsonBody(desc string, sch *schema, example any) *requestBody {
	return &requestBody{Description: desc, Required: true, Content: jsonContent(sch, example)}
}

func (a *API) apiRoutes(sc *schemaSet) []route {
	topicSummary := apiclient.TopicSummary{Name: "orders", PartitionCount: 3, ReplicationFactor: 2}
	partition := apiclient.PartitionStatus{Partition: 0, Leader: 1, LeaderEpoch: 0, Preferred: 1, Placement: []int{1, 2},
		Assigned: []int{1, 2}, Followers: []int{2}, Active: []int{1, 2},
		HighWatermark: 5, LogEnd: u64(5), Replicas: []apiclient.ReplicaStatus{
			{BrokerID: 1, Role: apiclient.RoleLeader, Active: true, Available: true, LogEnd: u64(5), Lag: u64(0)},
			{BrokerID: 2, Role: apiclient.RoleFollower, Active: true, Available: true, LogEnd: u64(5), Lag: u64(0)},
		}}
	detail := apiclient.TopicDetail{Name: "orders", PartitionCount: 1, ReplicationFactor: 2, Partitions: []apiclient.PartitionStatus{partition},
		Config: configExample.Config, ConfigOverrides: configExample.ConfigOverrides}
	produced := apiclient.ProduceResponse{Records: []apiclient.ProduceResult{{Partition: 0, Offset: 5, Timestamp: 1733131200123456789,
		TimestampMS: 1733131200123, Leader: 1, Brokers: []int{1, 2}}}}
	offset := apiclient.ConsumerOffsetResponse{ConsumerID: "billing", Topic: "orders", Partition: 0, Offset: u64(5)}
	offsetPath := "/api/consumers/{id}/offsets/{topic}/{p}"
	nodes := apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 3, Nodes: []apiclient.ClusterNode{
		{ID: 1, Addr: "127.0.0.1:7001", HTTPAddr: "127.0.0.1:8001", Voter: true},
		{ID: 2, Addr: "127.0.0.1:7002", HTTPAddr: "127.0.0.1:8002", Voter: true},
		{ID: 3, Addr: "127.0.0.1:7003", HTTPAddr: "127.0.0.1:8003", Voter: true, Leader: true}}}

	return []route{
		{Method: http.MethodGet, Path: "/api/cluster", Handler: a.handleCluster, Role: RoleRead, Operation: &operation{
			OperationID: "getCluster", Summary: "Brokers and topics", Tags: []string{"cluster"},
			Responses: map[string]response{"200": okJSON("Every broker with its availability, every topic.", sc.of(apiclient.ClusterResponse{}),
				apiclient.ClusterResponse{ConfiguredBrokers: 3, Brokers: []apiclient.BrokerStatus{{ID: 1, Available: true, Configured: true}, {ID: 2, Available: true, Configured: true}, {ID: 3, Available: false, Configured: true}},
					Topics: []apiclient.TopicSummary{topicSummary}})},
		}},
		{Method: http.MethodPost, Path: "/api/brokers/{id}/stop", Handler: a.handleStopBroker, Role: RoleAdmin, Operation: &operation{
			OperationID: "stopBroker", Summary: "Stop a broker (stage a failure)", Tags: []string{"cluster"},
			Description: "Closes the broker's instance, as if its machine had failed. Nothing fails over on its own. Idempotent. No body.",
			Parameters:  []parameter{indexParam("id", "Broker id, from 1.", 1)},
			Responses: errs(map[string]response{"200": okJSON("The broker, now unavailable.", sc.of(apiclient.BrokerStatus{}),
				apiclient.BrokerStatus{ID: 1, Available: false, Configured: true})}, 400, 404),
		}},
		{Method: http.MethodPost, Path: "/api/brokers/{id}/start", Handler: a.handleStartBroker, Role: RoleAdmin, Operation: &operation{
			OperationID: "startBroker", Summary: "Start a stopped broker", Tags: []string{"cluster"},
			Description: "Opens a new instance of the broker. Its replicas are not trusted back on their own: use catch-up or recover. Idempotent. No body.",
			Parameters:  []parameter{indexParam("id", "Broker id, from 1.", 1)},
			Responses: errs(map[string]response{"200": okJSON("The broker, now available.", sc.of(apiclient.BrokerStatus{}),
				apiclient.BrokerStatus{ID: 1, Available: true, Configured: true})}, 400, 404),
		}},
		{Method: http.MethodPost, Path: "/api/brokers/{id}/reopen", Handler: a.handleReopenBroker, Role: RoleAdmin, Operation: &operation{
			OperationID: "reopenBroker", Summary: "Reopen a broker's failed logs (after a full disk)", Tags: []string{"cluster"},
			Description: "Once space has returned, opens again from disk every replica log of the broker that refuses writes since one failed " +
				"(and the journal if it failed), without stopping the broker: nothing fails over. A reopened follower lags until it is caught up. " +
				"Damage found on disk is reported, never repaired. Nothing failed: nothing changes. No body.",
			Parameters: []parameter{indexParam("id", "Broker id, from 1.", 1)},
			Responses: errs(map[string]response{"200": okJSON("The replicas reopened.", sc.of(apiclient.ReopenResponse{}),
				apiclient.ReopenResponse{BrokerID: 2, Reopened: []apiclient.ReplicaRef{{Topic: "orders", Partition: 0}}})}, 400, 404),
		}},
		{Method: http.MethodGet, Path: "/api/cluster/nodes", Handler: a.handleClusterNodes, Role: RoleRead, Operation: &operation{
			OperationID: "listClusterNodes", Summary: "The nodes of a cluster-mode cluster and its controller", Tags: []string{"cluster"},
			Description: "In cluster mode (PYSTREAM_NODE_ID, PYSTREAM_CLUSTER) every server process is one node: a broker and a voter of the metadata group. " +
				"Lists the voters and the registered brokers by id, and the controller (the group's leader), as the node asked knows them; " +
				"controller is 0 during an election. The embedded cluster answers mode embedded and no nodes.",
			Responses: map[string]response{"200": okJSON("The mode, the controller and every node.", sc.of(apiclient.ClusterNodesResponse{}), nodes)},
		}},
		{Method: http.MethodPost, Path: "/api/cluster/nodes", Handler: a.handleAddNode, Role: RoleAdmin, Operation: &operation{
			OperationID: "addClusterNode", Summary: "Add a node to the metadata group", Tags: []string{"cluster"},
			Description: "Cluster mode: node id, started with PYSTREAM_JOIN=on at its internal address addr, becomes a voter; it then receives the metadata and registers as a broker. " +
				"id 1.." + strconv.Itoa(backend.MaxBrokers) + ", addr host:port. The new voter counts in every majority from then on, so start the node first: " +
				"a single node adding one that is not running commits the change alone, then has no majority and no leader until the new node starts. " +
				"A change no majority commits within " + MembershipTimeout.String() + " is 503, its outcome unknown. " +
				"Adding a voter again at another address moves it; an address another voter has is 409. The embedded cluster answers 409.",
			RequestBody: jsonBody("The node's id and internal address.", sc.of(apiclient.AddNodeRequest{}), apiclient.AddNodeRequest{ID: 4, Addr: "127.0.0.1:7004"}),
			Responses: errs(map[string]response{"200": okJSON("The nodes after the change.", sc.of(apiclient.ClusterNodesResponse{}),
				apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 3, Nodes: append(slices.Clone(nodes.Nodes),
					apiclient.ClusterNode{ID: 4, Addr: "127.0.0.1:7004", Voter: true})})}, 400, 409, 413, 415, 503),
		}},
		{Method: http.MethodDelete, Path: "/api/cluster/nodes/{id}", Handler: a.handleRemoveNode, Role: RoleAdmin, Operation: &operation{
			OperationID: "removeClusterNode", Summary: "Remove a node from the metadata group", Tags: []string{"cluster"},
			Description: "Cluster mode: the node stops being a voter (a machine lost for good). Its broker stays registered, listed with voter false: " +
				"its replicas leave the active sets when its heartbeats stop, and a node started again with the same id joins in its place (POST /api/cluster/nodes). " +
				"A node that is not a voter is 404; the last voter is 409. The embedded cluster answers 409. No body.",
			Parameters: []parameter{{Name: "id", In: "path", Required: true, Description: "Node id, from 1 to " + strconv.Itoa(backend.MaxBrokers) + ".",
				Schema: &schema{Type: "integer", Format: "int32", Minimum: num(1), Maximum: num(backend.MaxBrokers)}, Example: 3}},
			Responses: errs(map[string]response{"200": okJSON("The nodes after the change.", sc.of(apiclient.ClusterNodesResponse{}),
				apiclient.ClusterNodesResponse{Mode: apiclient.ModeCluster, Controller: 1, Nodes: []apiclient.ClusterNode{
					{ID: 1, Addr: "127.0.0.1:7001", HTTPAddr: "127.0.0.1:8001", Voter: true, Leader: true},
					{ID: 2, Addr: "127.0.0.1:7002", HTTPAddr: "127.0.0.1:8002", Voter: true},
					{ID: 3, Addr: "127.0.0.1:7003", HTTPAddr: "127.0.0.1:8003", Voter: false}}})}, 400, 404, 409, 503),
		}},
		{Method: http.MethodGet, Path: "/api/topics", Handler: a.handleTopics, Role: RoleRead, Operation: &operation{
			OperationID: "listTopics", Summary: "List topics", Tags: []string{"topics"},
			Responses: map[string]response{"200": okJSON("Every topic, by name.", sc.of(apiclient.TopicsResponse{}),
				apiclient.TopicsResponse{Topics: []apiclient.TopicSummary{topicSummary}})},
		}},
		{Method: http.MethodPost, Path: "/api/topics", Handler: a.handleCreateTopic, Role: RoleAdmin, Operation: &operation{
			OperationID: "createTopic", Summary: "Create a topic", Tags: []string{"topics"},
			Description: "partitions 1.." + strconv.Itoa(bounds.MaxTopicPartitions) + ", replication_factor 1..brokers; config optional (retention.ms, retention.bytes, segment.bytes, segment.ms, " +
				"each a decimal string; an unknown key or a bad value is 400 naming it, and nothing is created). " +
				"The same request again answers 200; other settings (config included) for an existing name 409.",
			RequestBody: jsonBody("The topic's settings.", sc.of(apiclient.CreateTopicRequest{}),
				apiclient.CreateTopicRequest{Name: "orders", Partitions: 1, ReplicationFactor: 2, Config: map[string]string{"retention.ms": "3600000"}}),
			Responses: errs(map[string]response{
				"201": okJSON("Created.", sc.of(apiclient.TopicDetail{}), detail),
				"200": okJSON("Exists with exactly these settings.", sc.of(apiclient.TopicDetail{}), detail),
			}, 400, 409, 413, 415, 503),
		}},
		{Method: http.MethodGet, Path: "/api/topics/{topic}", Handler: a.handleTopic, Role: RoleRead, Operation: &operation{
			OperationID: "getTopic", Summary: "A topic with every partition's replication status", Tags: []string{"topics"},
			Parameters: []parameter{paramTopic},
			Responses: errs(map[string]response{"200": okJSON("Leader, assigned, followers, active replicas, log ends, lag (null when unknown) and high watermark per partition.",
				sc.of(apiclient.TopicDetail{}), detail)}, 400, 404),
		}},
		{Method: http.MethodPatch, Path: "/api/topics/{topic}", Handler: a.handleUpdateTopic, Role: RoleAdmin, Operation: &operation{
			OperationID: "updateTopic", Summary: "Add partitions to a topic", Tags: []string{"topics"},
			Description: "partitions is the topic's new partition count, more than it has and at most " + strconv.Itoa(bounds.MaxTopicPartitions) + " " +
				"(a topic's partitions are only ever added to; fewer is 400). The new partitions are placed over the brokers as a creation places them " +
				"and their replicas created before the count changes; records already written stay where they are, and keyed records sent " +
				"from then on route by the new count, so a key may land on another partition than before. " +
				"The topic's current count again answers 200 unchanged (a request sent again). Every broker a new partition is placed on must be up, else 503.",
			Parameters:  []parameter{paramTopic},
			RequestBody: jsonBody("The new partition count.", sc.of(apiclient.UpdateTopicRequest{}), apiclient.UpdateTopicRequest{Partitions: 2}),
			Responses: errs(map[string]response{"200": okJSON("The topic with its partitions.", sc.of(apiclient.TopicDetail{}), detail)},
				400, 404, 413, 415, 503),
		}},
		{Method: http.MethodPost, Path: "/api/topics/{topic}/records", Handler: a.handleProduce, Role: RoleWrite, Operation: &operation{
			OperationID: "produceRecords", Summary: "Produce records", Tags: []string{"records"},
			Description: "A JSON body carries 1..N records (key null or omitted = round robin; values and keys base64; optional headers). " +
				"The key and headers are stored with the record and come back in fetches, whichever protocol produced it. " +
				"A key routes by SHA-256 here unless partition is given; a Kafka client routes by its own partitioner (murmur2). " +
				"An application/octet-stream body is one record's value, its key in the query (key=text or key_b64=base64). " +
				"Each partition's share is written with one fsync per replica. On failure the error carries records: per input record its placement or its own error. " +
				"partition=N sends every record to partition N whatever its key, as one batch acknowledged together. " +
				"At most PYSTREAM_MAX_REQUEST_RECORDS records (default " + strconv.Itoa(bounds.DefaultMaxRequestRecords) + ") per request, else 413; a Content-Encoding other than identity is 415; " +
				"past PYSTREAM_MAX_INFLIGHT_BYTES of bodies in flight server-wide, 503 with Retry-After before the body is read. " +
				"An idempotent producer (id and epoch from POST /api/producers) adds producer {id, epoch, sequence} to the JSON body " +
				"(producer_id, producer_epoch and sequence in the query of the octet-stream form), and partition=N, required: record i gets sequence " +
				"sequence+i (wrapping past 2147483647), the next request starts past the last. A request sent again is answered with its first offsets and not stored twice " +
				"(503, retriable, while its first write is not yet on every active replica). Refused, nothing written: 409 out_of_order_sequence (a gap), " +
				"invalid_producer_epoch (fenced by a newer epoch), unknown_producer (the partition does not know the producer and sequence is not 0), " +
				"duplicate_sequence (written before, longer ago than the partition keeps offsets: count it written); 400 invalid_producer_batch.",
			Parameters: []parameter{paramTopic,
				{Name: "key", In: "query", Schema: &schema{Type: "string"},
					Description: "application/octet-stream only (with a JSON body it is 400): the key as text, its UTF-8 bytes. Not with key_b64."},
				{Name: "key_b64", In: "query", Schema: &schema{Type: "string", Pattern: base64Pattern},
					Description: "application/octet-stream only (with a JSON body it is 400): the key as standard base64 with padding. Not with key."},
				queryUint("partition", "Either form: the partition every record goes to, whatever its key (Kafka's explicit partition). "+
					"Unset: records are routed by key. A partition the topic does not have is 404. Required with a producer.", 0, maxIndex),
				queryUint(queryProducerID, "application/octet-stream only: an idempotent producer's id (with producer_epoch and sequence).", 0, math.MaxInt64),
				queryUint(queryProducerEpoch, "application/octet-stream only: the producer's epoch.", 0, math.MaxInt16),
				queryUint(querySequence, "application/octet-stream only: the record's sequence number.", 0, math.MaxInt32)},
			RequestBody: &requestBody{Required: true, Content: map[string]media{
				mediaJSON: {Schema: sc.of(apiclient.ProduceRequest{}), Example: apiclient.ProduceRequest{Records: []apiclient.ProduceRecord{
					{Key: []byte("user-123"), Value: []byte("hello"), Headers: []apiclient.RecordHeader{{Key: "trace-id", Value: []byte("abc")}}},
					{Value: []byte("no key")}}}},
				mediaOctetStream: {Schema: &schema{Type: "string", Format: "binary"}},
			}},
			Responses: errs(map[string]response{"200": okJSON("Where each record landed, in request order.", sc.of(apiclient.ProduceResponse{}), produced),
				"409": producerConflictResponse()},
				400, 404, 413, 415, 503),
		}},
		{Method: http.MethodPost, Path: "/api/producers", Handler: a.handleNewProducer, Role: RoleWrite, TopicFree: true, Operation: &operation{
			OperationID: "createProducer", Summary: "A producer id for an idempotent producer", Tags: []string{"records"},
			Description: "A producer id never handed out before in the cluster, at epoch 0 (Kafka's InitProducerId): give it, with a sequence number, " +
				"in produce requests, and a request sent again (its answer was lost) is stored once. No body. A token limited to topic prefixes may call it. " +
				"When the metadata store cannot reserve ids now, 503 with Retry-After: ask again.",
			Responses: errs(map[string]response{"200": okJSON("The producer id and its epoch.", sc.of(apiclient.NewProducerResponse{}),
				apiclient.NewProducerResponse{ProducerID: 1000, Epoch: 0})}, 503),
		}},
		{Method: http.MethodGet, Path: "/api/topics/{topic}/partitions/{p}/records", Handler: a.handleFetch, Role: RoleRead, Operation: &operation{
			OperationID: "fetchRecords", Summary: "Fetch records of a partition", Tags: []string{"records"},
			Description: "Each record comes with its key (null: none) and headers (omitted: none), as produced over HTTP or Kafka; " +
				"a record of an idempotent or transactional producer with producer (id, epoch, sequence) and transactional, " +
				"a transaction marker with marker (commit or abort) and a null key and value. " +
				"Reads from the leader, never past the high watermark. max defaults to 100 and is capped at 1000; an answer also stops once its values reach max_bytes " +
				"(default 1 MiB, capped at PYSTREAM_FETCH_MAX_BYTES, 4 MiB by default; at least one record), like Kafka's fetch.max.bytes. " +
				"The answer is streamed as it is read. Continue from next_offset. Unknown query parameters are refused.",
			Parameters: []parameter{paramTopic, paramPartition,
				queryUint("offset", "First offset to read (default 0).", 0, math.MaxUint64),
				paramFetchMax, paramFetchMaxBytes},
			Responses: errs(map[string]response{"200": okJSON("The records, the next offset to ask for, and the partition's bounds.", sc.of(apiclient.FetchResponse{}),
				apiclient.FetchResponse{Records: []apiclient.FetchedRecord{
					{Offset: 0, Timestamp: 1733131200123456789, TimestampMS: 1733131200123, Key: []byte("user-123"),
						Headers: []apiclient.RecordHeader{{Key: "trace-id", Value: []byte("abc")}}, Value: []byte("hello")},
					{Offset: 1, Timestamp: 1733131200124456789, TimestampMS: 1733131200124, Value: []byte("no key")},
					{Offset: 2, Timestamp: 1733131200125456789, TimestampMS: 1733131200125, Key: []byte("user-123"), Value: []byte("once"),
						Producer: &apiclient.ProducerIdentity{ID: 1000, Epoch: 0, Sequence: 0}},
					{Offset: 3, Timestamp: 1733131200126456789, TimestampMS: 1733131200126, Value: []byte("in a transaction"),
						Producer: &apiclient.ProducerIdentity{ID: 1001, Epoch: 0, Sequence: 0}, Transactional: true},
					{Offset: 4, Timestamp: 1733131200127456789, TimestampMS: 1733131200127,
						Producer: &apiclient.ProducerIdentity{ID: 1001, Epoch: 0, Sequence: 0}, Transactional: true, Marker: apiclient.MarkerCommit}},
					NextOffset: 5, LogStart: 0, HighWatermark: 5, LogEnd: 5}),
				"416": outOfRangeResponse()}, 400, 404, 503),
		}},
		{Method: http.MethodGet, Path: "/api/topics/{topic}/partitions/{p}/offsets", Handler: a.handlePartitionOffsets, Role: RoleRead, Operation: &operation{
			OperationID: "getPartitionOffsets", Summary: "The offset of a partition at a time (earliest, latest or a timestamp)", Tags: []string{"records"},
			Description: "Kafka's ListOffsets. timestamp=earliest is the log start, latest (the default) the high watermark; a time in milliseconds since the epoch " +
				"(Kafka's unit) is the first offset whose record's timestamp is at or after it, searched on the leader. When no record below the high watermark " +
				"is that late, offset is the high watermark and found is false: a reader starting there sees only records written afterwards.",
			Parameters: []parameter{paramTopic, paramPartition,
				{Name: "timestamp", In: "query", Description: "earliest, latest (the default), or milliseconds since the Unix epoch: a decimal integer from 0 to 9223372036854.",
					Schema: &schema{Type: "string", Pattern: `^(earliest|latest|[0-9]+)$`}, Example: "1733131200123"}},
			Responses: errs(map[string]response{"200": okJSON("The offset, whether a record that late was found, and the partition's bounds.",
				sc.of(apiclient.PartitionOffsetsResponse{}), apiclient.PartitionOffsetsResponse{Topic: "orders", Partition: 0,
					Timestamp: ptr(int64(1733131200123)), Offset: 3, Found: true, LogStart: 0, HighWatermark: 5})}, 400, 404, 503),
		}},
		{Method: http.MethodGet, Path: "/api/consumers/{id}/offsets", Handler: a.handleConsumerOffsets, Role: RoleRead, Operation: &operation{
			OperationID: "listConsumerOffsets", Summary: "Every offset a consumer committed", Tags: []string{"consumers"},
			Parameters: []parameter{paramConsumer},
			Responses: errs(map[string]response{"200": okJSON("By topic and partition.", sc.of(apiclient.ConsumerOffsetsResponse{}),
				apiclient.ConsumerOffsetsResponse{ConsumerID: "billing", Offsets: []apiclient.ConsumerOffset{{Topic: "orders", Partition: 0, Offset: 5}}})}, 400),
		}},
		{Method: http.MethodGet, Path: offsetPath, Handler: a.handleConsumerOffset, Role: RoleRead, Operation: &operation{
			OperationID: "getConsumerOffset", Summary: "A committed offset", Tags: []string{"consumers"},
			Parameters: []parameter{paramConsumer, paramTopic, paramPartition},
			Responses:  errs(map[string]response{"200": okJSON("offset is null when the consumer never committed here.", sc.of(apiclient.ConsumerOffsetResponse{}), offset)}, 400, 404),
		}},
		{Method: http.MethodPut, Path: offsetPath, Handler: a.handleCommitOffset, Role: RoleWrite, Operation: &operation{
			OperationID: "commitConsumerOffset", Summary: "Commit an offset (never backwards)", Tags: []string{"consumers"},
			Description: "Durable. An offset below the committed one is refused with 409 carrying committed and requested; one past the partition's high watermark with 409 carrying high_watermark and requested. " +
				"A consumer id that is a consumer group with members is 409: its members commit. In cluster mode only the group coordinator (the controller) takes it: another node answers 421 not_coordinator.",
			Parameters:  []parameter{paramConsumer, paramTopic, paramPartition},
			RequestBody: jsonBody("The next offset the consumer will read after a restart.", sc.of(apiclient.OffsetRequest{}), apiclient.OffsetRequest{Offset: 5}),
			Responses: errs(map[string]response{"200": okJSON("The committed offset.", sc.of(apiclient.ConsumerOffsetResponse{}), offset),
				"421": notCoordinatorResponse()}, 400, 404, 409, 413, 415, 503),
		}},
		{Method: http.MethodPost, Path: offsetPath + "/reset", Handler: a.handleResetOffset, Role: RoleAdmin, Operation: &operation{
			OperationID: "resetConsumerOffset", Summary: "Reset an offset (may move backwards)", Tags: []string{"consumers"},
			Description: "The operator's explicit reset, the one way to move a committed offset backwards. The offset may not be past the partition's high watermark: 409 carrying high_watermark and requested. " +
				"A consumer id that is a consumer group with members is 409. In cluster mode only the group coordinator (the controller) takes it: another node answers 421 not_coordinator.",
			Parameters:  []parameter{paramConsumer, paramTopic, paramPartition},
			RequestBody: jsonBody("The new committed offset.", sc.of(apiclient.OffsetRequest{}), apiclient.OffsetRequest{Offset: 0}),
			Responses: errs(map[string]response{"200": okJSON("The committed offset.", sc.of(apiclient.ConsumerOffsetResponse{}),
				apiclient.ConsumerOffsetResponse{ConsumerID: "billing", Topic: "orders", Partition: 0, Offset: u64(0)}), "421": notCoordinatorResponse()}, 400, 404, 409, 413, 415, 503),
		}},
		{Method: http.MethodPost, Path: "/api/groups/{group}/heartbeat", Handler: a.handleGroupHeartbeat, Role: RoleWrite, Operation: &operation{
			OperationID: "heartbeatGroup", Summary: "Join, heartbeat in or leave a consumer group", Tags: []string{"groups"},
			Description: "Kafka's consumer group protocol (KIP-848) over HTTP: the server assigns the partitions. member_epoch 0 joins with topics (the server picks " +
				"the member id), and may claim with owned what it held before the server forgot it (a restart, a new coordinator); -1 leaves; " +
				"any other value is the epoch of the last answer, with owned: every partition the member holds now (omitted: none). " +
				"The answer is the member's id, epoch, assignment, heartbeat interval and session timeout: a member with no successful heartbeat " +
				"for the session timeout must stop reading. A partition of owned that is not in the assignment must be released: " +
				"commit it, stop reading it, leave it out of the next owned; a partition moves to another member only once released, or once its member's " +
				"session timed out (PYSTREAM_GROUP_SESSION_TIMEOUT). max_wait_ms holds an answer that would change nothing, up to the heartbeat interval, " +
				"until the assignment changes. A stale epoch is 409 fenced_member_epoch, an unknown member 409 unknown_member_id: join again. " +
				"A group of classic (Kafka client) members is 409. In cluster mode only the controller coordinates groups: another node answers 421 not_coordinator.",
			Parameters: []parameter{paramGroup},
			RequestBody: jsonBody("The member's heartbeat.", sc.of(apiclient.GroupHeartbeatRequest{}), apiclient.GroupHeartbeatRequest{
				MemberID: exampleMemberID, MemberEpoch: 3, Owned: []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0, 1}}}, MaxWaitMS: 5000}),
			Responses: errs(map[string]response{"200": okJSON("The member's id, epoch, assignment, heartbeat interval and session timeout.", sc.of(apiclient.GroupHeartbeatResponse{}),
				apiclient.GroupHeartbeatResponse{MemberID: exampleMemberID, MemberEpoch: 4, HeartbeatIntervalMS: 5000, SessionTimeoutMS: 45000,
					Assignment: []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0}}}}),
				"409": memberConflictResponse(), "421": notCoordinatorResponse()}, 400, 413, 415, 503),
		}},
		{Method: http.MethodPut, Path: "/api/groups/{group}/offsets/{topic}/{p}", Handler: a.handleGroupCommit, Role: RoleWrite, Operation: &operation{
			OperationID: "commitGroupOffset", Summary: "Commit a group's offset, as a member that holds the partition", Tags: []string{"groups"},
			Description: "The commit of PUT /api/consumers/{id}/offsets/{topic}/{p} for consumer id {group}, by one of its members: member_id and member_epoch " +
				"must be the member's current ones, and the member must hold the partition (assigned, or not released yet); else 409. " +
				"Durable, never backwards, never past the high watermark.",
			Parameters:  []parameter{paramGroup, paramTopic, paramPartition},
			RequestBody: jsonBody("The member and the next offset the group reads.", sc.of(apiclient.GroupCommitRequest{}), apiclient.GroupCommitRequest{MemberID: exampleMemberID, MemberEpoch: 4, Offset: 5}),
			Responses: errs(map[string]response{"200": okJSON("The committed offset.", sc.of(apiclient.ConsumerOffsetResponse{}), offset),
				"409": memberConflictResponse(), "421": notCoordinatorResponse()}, 400, 404, 413, 415, 503),
		}},
		{Method: http.MethodGet, Path: "/api/groups", Handler: a.handleListGroups, Role: RoleRead, Operation: &operation{
			OperationID: "listGroups", Summary: "Every consumer group", Tags: []string{"groups"},
			Description: "Groups with members, HTTP (protocol consumer) and Kafka (classic), and every consumer id with committed offsets and no members (state Empty, no protocol), by id.",
			Responses: errs(map[string]response{"200": okJSON("The groups.", sc.of(apiclient.GroupsResponse{}), apiclient.GroupsResponse{Groups: []apiclient.GroupSummary{
				{Group: "audit", State: group.StateEmpty}, {Group: "billing", Protocol: string(group.Consumer), State: group.StateStable, Members: 2}}}),
				"421": notCoordinatorResponse()}, 503),
		}},
		{Method: http.MethodGet, Path: "/api/groups/{group}", Handler: a.handleDescribeGroup, Role: RoleRead, Operation: &operation{
			OperationID: "describeGroup", Summary: "A consumer group: members, assignments, offsets, lag", Tags: []string{"groups"},
			Description: "kafka-consumer-groups --describe: the state, epoch and members with their assignments, and per partition the group committed or is assigned " +
				"its committed offset, log end (high watermark), lag and member. A group with no members and no committed offsets is 404.",
			Parameters: []parameter{paramGroup},
			Responses: errs(map[string]response{"200": okJSON("The group.", sc.of(apiclient.GroupDescription{}), apiclient.GroupDescription{
				Group: "billing", Protocol: string(group.Consumer), State: group.StateStable, ProtocolType: "consumer", Assignor: group.AssignorName, Epoch: 4,
				Members: []apiclient.GroupMember{{MemberID: exampleMemberID, ClientID: "pystream", ClientHost: "127.0.0.1",
					Assignment: []apiclient.GroupTopicPartitions{{Topic: "orders", Partitions: []int32{0}}}}},
				Offsets: []apiclient.GroupPartitionOffset{{Topic: "orders", Partition: 0, CommittedOffset: u64(5), LogEndOffset: u64(7), Lag: u64(2), MemberID: exampleMemberID}}}),
				"421": notCoordinatorResponse()}, 400, 404, 503),
		}},
		{Method: http.MethodDelete, Path: "/api/groups/{group}", Handler: a.handleDeleteGroup, Role: RoleAdmin, Operation: &operation{
			OperationID: "deleteGroupOffsets", Summary: "Delete a consumer group's committed offsets", Tags: []string{"groups"},
			Description: "Kafka's DeleteGroups: every offset the group (consumer id) committed is deleted, durably and all or nothing. " +
				"A group with members is 409 (they must leave first); one with nothing to delete 404. No body.",
			Parameters: []parameter{paramGroup},
			Responses: errs(map[string]response{"200": okJSON("What was deleted.", sc.of(apiclient.DeleteGroupResponse{}),
				apiclient.DeleteGroupResponse{Group: "billing", OffsetsDeleted: 3}), "421": notCoordinatorResponse()}, 400, 404, 409, 503),
		}},
		{Method: http.MethodPost, Path: "/api/topics/{topic}/partitions/{p}/failover", Handler: a.handleFailover, Role: RoleAdmin, Operation: &operation{
			OperationID: "failoverPartition", Summary: "Replace a failed leader", Tags: []string{"operations"},
			Description: "The active follower with the longest log wins (ties to the lowest id). 409 while the leader is available, 503 when no follower can take over. No body.",
			Parameters:  []parameter{paramTopic, paramPartition},
			Responses: errs(map[string]response{"200": okJSON("Old and new leader, and the offset the next write gets.", sc.of(apiclient.FailoverResponse{}),
				apiclient.FailoverResponse{OldLeader: 1, NewLeader: 2, LeaderEpoch: 1, LogEndOffset: 7})}, 400, 404, 409, 503),
		}},
		{Method: http.MethodPost, Path: "/api/topics/{topic}/partitions/{p}/replicas/{broker}/catch-up", Handler: a.handleCatchUp, Role: RoleAdmin, Operation: &operation{
			OperationID: "catchUpReplica", Summary: "Catch a lagging follower up", Tags: []string{"operations"},
			Description: "Proves the follower's records are a prefix of the leader's, then copies the rest. Divergence is 409 and changes nothing. No body.",
			Parameters:  []parameter{paramTopic, paramPartition, paramReplica},
			Responses: errs(map[string]response{"200": okJSON("Records copied.", sc.of(apiclient.CatchUpResponse{}),
				apiclient.CatchUpResponse{BrokerID: 2, Copied: 3})}, 400, 404, 409, 503),
		}},
		{Method: http.MethodPost, Path: "/api/topics/{topic}/partitions/{p}/replicas/{broker}/recover", Handler: a.handleRecover, Role: RoleAdmin, Operation: &operation{
			OperationID: "recoverReplica", Summary: "Bring an inactive replica back", Tags: []string{"operations"},
			Description: "Cuts the replica back to its common prefix with the leader (those records were never acknowledged), keeping what it cut in a quarantine file, " +
				"copies the rest, verifies, then makes it active. No body.",
			Parameters: []parameter{paramTopic, paramPartition, paramReplica},
			Responses: errs(map[string]response{"200": okJSON("What recovery did; dropped_from/dropped_to are null and quarantine (relative to the data directory) is omitted when nothing was dropped.",
				sc.of(apiclient.RecoverResponse{}),
				apiclient.RecoverResponse{BrokerID: 1, CommonPrefix: 6, Dropped: 1, DroppedFrom: u64(6), DroppedTo: u64(7),
					Quarantine: "broker-000001/topics/orders/partition-000000/quarantine-6-7-1733131200000000000.bin", Copied: 2})}, 400, 404, 409, 503),
		}},
		{Method: http.MethodPost, Path: "/api/topics/{topic}/partitions/{p}/replicas/{broker}/move-leader", Handler: a.handleMoveLeader, Role: RoleAdmin, Operation: &operation{
			OperationID: "moveLeaderToReplica", Summary: "Move leadership to another replica", Tags: []string{"operations"},
			Description: "Writes pause, the follower is proven to hold the leader's log (caught up first if it lags), then it leads and the leader epoch goes up by one; " +
				"the old leader stays an active follower. Nothing is lost. The leader itself, or an inactive replica, is 409; divergence is 409 and changes nothing; " +
				"a stopped broker is 503. No body.",
			Parameters: []parameter{paramTopic, paramPartition, paramReplica},
			Responses: errs(map[string]response{"200": okJSON("Old and new leader, the new leader epoch, the offset the next write gets, and the records copied first.",
				sc.of(apiclient.MoveLeaderResponse{}),
				apiclient.MoveLeaderResponse{OldLeader: 2, NewLeader: 1, LeaderEpoch: 2, LogEndOffset: 7, Copied: 0})}, 400, 404, 409, 503),
		}},
		{Method: http.MethodGet, Path: "/api/journal", Handler: a.handleJournal, Role: RoleRead, Operation: &operation{
			OperationID: "getJournal", Summary: "The cluster journal: what changed, who asked, why", Tags: []string{"cluster"},
			Description: "Entries from offset since on, oldest first: every failover, recovery, catch-up, leader move and deactivation " +
				"(an intent before the change, then its outcome) and every broker stop and start, by the operator, the controller or start-up. " +
				"max defaults to 100 and must be from 1 to 1000. Continue from next. Unknown query parameters are refused.",
			Parameters: []parameter{
				queryUint("since", "First journal offset to return (default 0).", 0, math.MaxUint64),
				queryUint("max", "Most entries to return: 1 to 1000 (default 100).", 1, MaxJournalEntries)},
			Responses: errs(map[string]response{"200": okJSON("The entries and the offset to ask for next (since itself when there are none).",
				sc.of(apiclient.JournalResponse{}), apiclient.JournalResponse{Entries: []apiclient.JournalEntry{
					{Offset: 4, Time: "2024-12-02T09:20:00.123456789Z", Event: "failover", Phase: "intent", By: "operator",
						Topic: "orders", Partition: ptr(0), Broker: 1,
						Summary: "orders/0: leader 1 -> 2 (epoch 1): candidates 2 (log end 7), 3 (7); leaving the active set: [1]"},
					{Offset: 5, Time: "2024-12-02T09:20:00.124Z", Event: "failover", Phase: "done", By: "operator",
						Topic: "orders", Partition: ptr(0), Broker: 1, Summary: "orders/0: leader 2, epoch 1, active [2 3], log end 7", Intent: u64(4)},
				}, Next: 6})}, 400),
		}},
		{Method: http.MethodGet, Path: "/api/journal/{entry}/quarantine", Handler: a.handleQuarantine, Role: RoleRead, Operation: &operation{
			OperationID: "getQuarantinedRecords", Summary: "The records a recovery cut and kept", Tags: []string{"cluster"},
			Description: "Records a recovery cut from a replica (past its common prefix with the leader: never acknowledged), read from the quarantine file " +
				"that journal entry {entry} names (a recover intent or its outcome). offset, max and max_bytes are a fetch's; offset defaults to the first record " +
				"the file keeps. 404 when the entry names no file, or the file is not in this server's data directory (removed, or kept by another node " +
				"in cluster mode).",
			Parameters: []parameter{{Name: "entry", In: "path", Required: true, Description: "Journal entry offset, a decimal integer from 0.",
				Schema: &schema{Type: "integer", Format: "uint64", Minimum: num(0), Maximum: num(uint64(math.MaxUint64))}, Example: 12},
				queryUint("offset", "First offset to read (default: the first the file keeps).", 0, math.MaxUint64),
				paramFetchMax, paramFetchMaxBytes},
			Responses: errs(map[string]response{"200": okJSON("The entry's partition and replica, the file, the offsets it keeps, and its records from offset on.",
				sc.of(apiclient.QuarantineResponse{}), apiclient.QuarantineResponse{Entry: 12, Topic: "orders", Partition: 0, Broker: 2,
					File: "broker-000002/topics/orders/partition-000000/quarantine-6-7-1733131200000000000.bin", From: 6, To: 7,
					Records:    []apiclient.FetchedRecord{{Offset: 6, Timestamp: 1733131100000000000, TimestampMS: 1733131100000, Value: []byte("never acknowledged")}},
					NextOffset: 7})}, 400, 404),
		}},
		{Method: http.MethodDelete, Path: "/api/topics/{topic}", Handler: a.handleDeleteTopic, Role: RoleAdmin, Operation: &operation{
			OperationID: "deleteTopicAndRecords", Summary: "Delete a topic, its records and its consumer offsets", Tags: []string{"topics"},
			Description: "Durable: once answered, the topic is gone after any crash; a crash during the delete leaves the whole topic or nothing. " +
				"Sends, fetches and operations on it answer 404 from then on; a topic created again under the name starts empty, with no consumer offsets. " +
				"Journaled as delete-topic. No body.",
			Parameters: []parameter{paramTopic},
			Responses: errs(map[string]response{"200": okJSON("What was deleted.", sc.of(apiclient.DeleteTopicResponse{}),
				apiclient.DeleteTopicResponse{Name: "orders", PartitionCount: 3, ReplicationFactor: 2, ConsumerOffsets: 4})}, 400, 404, 503),
		}},
		{Method: http.MethodGet, Path: "/api/topics/{topic}/config", Handler: a.handleTopicConfig, Role: RoleRead, Operation: &operation{
			OperationID: "getTopicConfig", Summary: "A topic's configuration", Tags: []string{"topics"},
			Description: "The effective configuration (every key, the server's default where the topic sets none) and the keys the topic sets. " +
				"Values are decimal strings, as in Kafka.",
			Parameters: []parameter{paramTopic},
			Responses: errs(map[string]response{"200": okJSON("The effective configuration and the topic's own keys.",
				sc.of(apiclient.TopicConfigResponse{}), configExample)}, 400, 404),
		}},
		{Method: http.MethodPatch, Path: "/api/topics/{topic}/config", Handler: a.handleAlterTopicConfig, Role: RoleAdmin, Operation: &operation{
			OperationID: "alterTopicConfig", Summary: "Change a topic's configuration", Tags: []string{"topics"},
			Description: "A JSON object of configuration keys: a string value sets the key for the topic, null removes the topic's value " +
				"(the server's default applies again); keys left out do not change. Checked as a whole: an unknown key, a value that is not " +
				"a JSON string, or one its key does not accept is 400 naming the key, and nothing changes. Journaled as alter-config.",
			Parameters:  []parameter{paramTopic},
			RequestBody: jsonBody("The keys to set (strings) and to remove (null).", alterConfigSchema(), map[string]any{"retention.ms": "3600000", "segment.bytes": nil}),
			Responses: errs(map[string]response{"200": okJSON("The new effective configuration and the topic's own keys.",
				sc.of(apiclient.TopicConfigResponse{}), configExample)}, 400, 404, 413, 415, 503),
		}},
	}
}

// exampleMemberID is the member id of the groups' examples.
const exampleMemberID = "9f0c5c1e2b7d4a8e9d3f6a1b2c4d5e6f"

// memberConflictResponse is a group member's 409, its example built by the
// function that builds the real answer.
func memberConflictResponse() response {
	e := memberError(&group.MemberError{Group: "billing", MemberID: exampleMemberID, Epoch: 3, Current: 4, Err: group.ErrFencedMemberEpoch})
	return response{Description: "A stale member epoch (code fenced_member_epoch) or an unknown member (unknown_member_id): give up the partitions " +
		"and join again with member_epoch 0. A commit for a partition the member does not hold, a commit below the committed offset or past the " +
		"high watermark, a group held by classic (Kafka client) members, or a full group: conflict.",
		Content: jsonContent(ref("ErrorResponse"), ErrorResponse{Error: e.body})}
}

// producerConflictResponse is an idempotent producer's 409, its example
// built by the function that builds the real answer.
func producerConflictResponse() response {
	e, _ := producerRefusal(&cluster.ProducerError{Topic: "orders", Partition: 0, Producer: envelope.Producer{ID: 1000, Sequence: 7},
		Expected: 5, Rule: cluster.RuleOutOfOrder})
	return response{Description: "An idempotent producer's request refused, nothing written: out_of_order_sequence, invalid_producer_epoch, " +
		"unknown_producer, or duplicate_sequence (written before, longer ago than the partition keeps offsets: count it written).",
		Content: jsonContent(ref("ErrorResponse"), ErrorResponse{Error: e.body})}
}

// notCoordinatorResponse is cluster mode's 421, its example built by the
// function that builds the real answer.
func notCoordinatorResponse() response {
	e := notCoordinatorError(2, "127.0.0.1:8002")
	return response{Description: "Cluster mode: this node does not coordinate groups; coordinator names the node that does (the controller), " +
		"where to send the request again (apiclient does).",
		Content: jsonContent(ref("ErrorResponse"), ErrorResponse{Error: e.body})}
}

// configExample is a topic with retention.ms set to one hour.
var configExample = apiclient.TopicConfigResponse{Topic: "orders", Config: map[string]string{
	"retention.ms": "3600000", "retention.bytes": "-1", "segment.bytes": "134217728", "segment.ms": "604800000",
	"min.insync.replicas": "1", "cleanup.policy": "delete",
	"max.message.bytes": "1048588", "message.timestamp.type": "CreateTime"},
	ConfigOverrides: []string{"retention.ms"}}

func (a *API) metricsRoute() route {
	h := a.metricsHandler()
	return route{Method: http.MethodGet, Path: "/metrics", Handler: h.ServeHTTP, Role: RoleRead, Operation: &operation{
		OperationID: "getMetrics", Summary: "Prometheus metrics", Tags: []string{"system"},
		Description: "Appends, bytes, append and fsync latency, replication failures, per-partition log end, lag and high watermark, HTTP requests.",
		Responses: map[string]response{"200": {Description: "Prometheus text exposition format.",
			Content: map[string]media{"text/plain": {Schema: &schema{Type: "string"}}}}},
	}}
}
