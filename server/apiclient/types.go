package apiclient

import (
	"encoding/json"
	"time"
)

// This file holds the wire types of the PyStream HTTP API (phase 6), one Go
// struct per JSON shape of docs/api contract. The server encodes them and the
// client decodes them, so the two sides cannot drift apart. Every struct has
// JSON tags, so a command-line tool can print a response with --json as it
// came. Byte strings ([]byte fields) travel as standard base64, which is what
// encoding/json does with []byte. Numbers that may be unknown are pointers
// (*uint64) and encode as JSON null.

// Error codes carried in ErrorBody.Code. Clients branch on the code, never on
// the message, which is for people.
const (
	CodeInvalidArgument      = "invalid_argument"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodeConflict             = "conflict"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeUnavailable          = "unavailable"
	// CodeNotReady: the node asked is replaying its copy of the cluster's
	// metadata after a start; its answer could be wrong (an unknown topic,
	// no offsets), so it gives none. Retry after the Retry-After seconds.
	CodeNotReady = "not_ready"
	CodeInternal = "internal"
	// CodeInsufficientStorage (507): a write met a full disk (ENOSPC,
	// EDQUOT); nothing was acknowledged.
	CodeInsufficientStorage = "insufficient_storage"
	// CodeUnauthenticated: no valid bearer token (401).
	CodeUnauthenticated = "unauthenticated"
	// CodePermissionDenied: the token's role or topic prefixes do not
	// allow the request, or a browser-borne request was refused (403).
	CodePermissionDenied = "permission_denied"
	// CodeOffsetOutOfRange: a fetch asked for an offset below the
	// partition's log start, whose records retention deleted; the body
	// carries log_start and high_watermark (416), as Kafka's
	// OFFSET_OUT_OF_RANGE.
	CodeOffsetOutOfRange = "offset_out_of_range"
)

// Error codes of an idempotent producer's request refused by the
// partition's leader (ProduceRequest.Producer): 409, except
// CodeInvalidProducerBatch (400). Nothing of the request was written.
const (
	// CodeOutOfOrderSequence: the request does not start where the
	// producer's last request to the partition ended (a gap), or a new
	// epoch does not start at 0. Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER.
	CodeOutOfOrderSequence = "out_of_order_sequence"
	// CodeInvalidProducerEpoch: a newer epoch of the producer id has
	// written to the partition. Kafka's INVALID_PRODUCER_EPOCH.
	CodeInvalidProducerEpoch = "invalid_producer_epoch"
	// CodeUnknownProducer: the partition knows nothing of the producer
	// (it never wrote there, or was silent for longer than the partition
	// remembers producers) and the request does not start at sequence 0.
	// Kafka's UNKNOWN_PRODUCER_ID.
	CodeUnknownProducer = "unknown_producer"
	// CodeDuplicateSequence: the records were written before, longer ago
	// than the partition keeps their offsets: count them written.
	// Kafka's DUPLICATE_SEQUENCE_NUMBER.
	CodeDuplicateSequence = "duplicate_sequence"
	// CodeInvalidProducerBatch (400): the request's records are not one
	// producer's consecutive sequence numbers.
	CodeInvalidProducerBatch = "invalid_producer_batch"
)

// IntentHeader marks a request as sent on purpose by a program, not by a
// web page: a browser cannot add it to a cross-origin request without a
// CORS preflight, which the server refuses. A body-less state-changing
// request from a browser (broker stop, failover) must carry it; the Client
// sends it with every request.
const IntentHeader = "X-PyStream-Request"

// RequestIDHeader is the header that carries a request's id: the server
// answers every request with it (honouring a well-formed one the client
// sent) and puts the same id in every error body (ErrorBody.RequestID).
const RequestIDHeader = "X-Request-Id"

// Replica roles in ReplicaStatus.Role.
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
)

// ErrorResponse is the body of every non-2xx answer:
//
//	{"error": {"code": "conflict", "message": "...", "request_id": "4f1c9a0e2b7d3865",
//	           "committed": 5, "requested": 3}}
//	{"error": {"code": "conflict", "message": "...", "request_id": "4f1c9a0e2b7d3865",
//	           "high_watermark": 4, "requested": 1000}}
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inside of an ErrorResponse. Code and Message are always
// set; the other fields are extras that only some errors carry.
type ErrorBody struct {
	// Code is a stable, machine-readable code such as CodeNotFound.
	Code string `json:"code"`
	// Message explains the error to a person, in PyStream's terms (topic,
	// partition, broker, offset). It never carries a server-side path or
	// a library's error chain: those are in the server log, under
	// RequestID.
	Message string `json:"message"`
	// RequestID is the id of the request this answers, also sent as the
	// X-Request-Id header and logged by the server with the full error:
	// quote it to whoever reads the server log. PyStream's server always
	// sets it; it is empty only in a body from something else.
	RequestID string `json:"request_id,omitempty"`
	// BrokerIDs names the brokers involved in an unavailable or divergence
	// error (for example the replicas that could not be reached).
	BrokerIDs []int `json:"broker_ids,omitempty"`
	// Committed is the consumer's committed offset on an offset regression.
	Committed *uint64 `json:"committed,omitempty"`
	// Requested is the offset the consumer asked to commit on a regression,
	// or to commit or reset past the high watermark.
	Requested *uint64 `json:"requested,omitempty"`
	// HighWatermark is the partition's high watermark when a commit or
	// reset asked for an offset past it: the largest offset allowed; and
	// on an offset out of range, the end of what is readable.
	HighWatermark *uint64 `json:"high_watermark,omitempty"`
	// LogStart is the partition's first readable offset when a fetch
	// asked for one below it (offset_out_of_range).
	LogStart *uint64 `json:"log_start,omitempty"`
	// Records is set on a failed produce: per input record, in request
	// order, either its acknowledged placement or its own error, so a client
	// knows which records were written.
	Records []ProduceResult `json:"records,omitempty"`
	// Reasons is set when GET /api/ready answers 503: why the cluster
	// cannot serve every partition, one sentence each.
	Reasons []string `json:"reasons,omitempty"`
	// Coordinator is set on not_coordinator (421): the host:port of the
	// node that coordinates consumer groups, where to send the request.
	Coordinator string `json:"coordinator,omitempty"`
}

// RecordError is the error of one record of a failed produce batch.
type RecordError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// HealthResponse answers GET /api/health.
type HealthResponse struct {
	Status  string `json:"status"`
	Service string `json:"service"`
}

// ReadyResponse answers GET /api/ready when the cluster is ready.
type ReadyResponse struct {
	// Status is always "ready"; a cluster that is not ready answers 503
	// with the reasons in ErrorBody.Reasons.
	Status string `json:"status"`
}

// BrokerStatus is one broker in the cluster view, and the answer of
// POST /api/brokers/{id}/stop and /start.
type BrokerStatus struct {
	ID        int  `json:"id"`
	Available bool `json:"available"`
	// Configured is true when the server starts the broker itself: its id
	// is at most PYSTREAM_BROKERS. A broker cluster.meta knows but the
	// configuration leaves out stays unavailable (until POST
	// /api/brokers/{id}/start), and its replicas count as unavailable ones.
	Configured bool `json:"configured"`
	// Reason says, for a broker that is not configured, what that means.
	Reason string `json:"reason,omitempty"`
}

// TopicSummary describes a topic without its partitions.
type TopicSummary struct {
	Name              string `json:"name"`
	PartitionCount    int    `json:"partition_count"`
	ReplicationFactor int    `json:"replication_factor"`
}

// ClusterResponse answers GET /api/cluster.
type ClusterResponse struct {
	// ConfiguredBrokers is PYSTREAM_BROKERS: the server starts brokers
	// 1..ConfiguredBrokers. Brokers lists every broker cluster.meta knows,
	// which may be more (see BrokerStatus.Configured).
	ConfiguredBrokers int            `json:"configured_brokers"`
	Brokers           []BrokerStatus `json:"brokers"`
	Topics            []TopicSummary `json:"topics"`
}

// Modes of a server in ClusterNodesResponse.Mode.
const (
	// ModeEmbedded is the default: one process holds every broker of the
	// cluster, as logical brokers; it has no nodes to add or remove.
	ModeEmbedded = "embedded"
	// ModeCluster is cluster mode (PYSTREAM_NODE_ID and PYSTREAM_CLUSTER):
	// each server process is one broker and one voter of the metadata
	// group.
	ModeCluster = "cluster"
)

// ClusterNodesResponse answers GET /api/cluster/nodes, and POST
// /api/cluster/nodes and DELETE /api/cluster/nodes/{id} with the nodes
// after the change.
type ClusterNodesResponse struct {
	// Mode is ModeCluster or ModeEmbedded; an embedded server lists no
	// nodes.
	Mode string `json:"mode"`
	// Controller is the id of the node that leads the metadata group,
	// which runs the controller, as the answering node knows it; 0 while
	// there is none (an election) and in embedded mode.
	Controller int `json:"controller"`
	// Nodes are the voters of the metadata group and the registered
	// brokers, by id.
	Nodes []ClusterNode `json:"nodes"`
}

// ClusterNode is one node of a cluster-mode cluster.
type ClusterNode struct {
	ID int `json:"id"`
	// Addr is its internal address (Raft and replication), its entry in
	// PYSTREAM_CLUSTER.
	Addr string `json:"addr"`
	// HTTPAddr is its client address once it has registered as a broker;
	// "" before.
	HTTPAddr string `json:"http_addr"`
	// KafkaAddr is the address its Kafka listener advertises once it has
	// registered; "" before, or when it serves no Kafka listener.
	KafkaAddr string `json:"kafka_addr,omitempty"`
	// Voter is true for a member of the metadata group; a registered
	// broker that was removed from the group is listed with Voter false.
	Voter bool `json:"voter"`
	// Leader is true for the node that leads the metadata group (the
	// controller).
	Leader bool `json:"leader"`
}

// AddNodeRequest is the body of POST /api/cluster/nodes: a node started
// with PYSTREAM_JOIN=on, by its id and internal address.
type AddNodeRequest struct {
	ID   int    `json:"id"`
	Addr string `json:"addr"`
}

// TopicsResponse answers GET /api/topics.
type TopicsResponse struct {
	Topics []TopicSummary `json:"topics"`
}

// CreateTopicRequest is the body of POST /api/topics.
type CreateTopicRequest struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	// Config sets some of the topic's configuration keys (retention.ms,
	// retention.bytes, segment.bytes, segment.ms), each value a decimal
	// string; the others take the server's defaults. Optional.
	Config map[string]string `json:"config,omitempty"`
}

// UpdateTopicRequest is the body of PATCH /api/topics/{topic}: the
// topic's new partition count, more than it has (partitions are only
// ever added).
type UpdateTopicRequest struct {
	Partitions int `json:"partitions"`
}

// TopicDetail answers GET /api/topics/{topic}, POST /api/topics and
// PATCH /api/topics/{topic}.
type TopicDetail struct {
	Name              string `json:"name"`
	PartitionCount    int    `json:"partition_count"`
	ReplicationFactor int    `json:"replication_factor"`
	// Config is the topic's effective configuration: every key, each
	// value a decimal string.
	Config map[string]string `json:"config"`
	// ConfigOverrides lists, sorted, the keys of Config set for this
	// topic; every other key has the server's default.
	ConfigOverrides []string          `json:"config_overrides"`
	Partitions      []PartitionStatus `json:"partitions"`
}

// TopicConfigResponse answers GET and PATCH /api/topics/{topic}/config:
// the topic's effective configuration and which keys are its own.
type TopicConfigResponse struct {
	Topic string `json:"topic"`
	// Config is the effective configuration: every key, each value a
	// decimal string.
	Config map[string]string `json:"config"`
	// ConfigOverrides lists, sorted, the keys set for this topic; every
	// other key has the server's default.
	ConfigOverrides []string `json:"config_overrides"`
}

// AlterTopicConfigRequest is the body of PATCH /api/topics/{topic}/config:
// a key with a string value sets it for the topic, a key with null removes
// the topic's value (the server's default applies again); keys left out
// do not change.
type AlterTopicConfigRequest map[string]*string

// PartitionStatus is the replication state of one partition.
type PartitionStatus struct {
	Partition int `json:"partition"`
	// Leader is the broker id of the current leader.
	Leader int `json:"leader"`
	// LeaderEpoch counts the partition's leader changes: every failover
	// and leader move adds one.
	LeaderEpoch uint64 `json:"leader_epoch"`
	// Preferred is the first broker of Placement: the leader a rebalance
	// moves leadership back to.
	Preferred int `json:"preferred"`
	// Placement lists the assigned brokers in placement order, the
	// preferred leader first.
	Placement []int `json:"placement"`
	// Assigned lists every broker that holds a replica, leader first.
	Assigned []int `json:"assigned"`
	// Followers lists the assigned brokers other than the leader.
	Followers []int `json:"followers"`
	// Active lists the replicas that take part in replication (the
	// in-sync set).
	Active []int `json:"active"`
	// HighWatermark is the end of the acknowledged prefix: consumers read
	// below it.
	HighWatermark uint64 `json:"high_watermark"`
	// LogEnd is the leader's log end, null when unknown.
	LogEnd *uint64 `json:"log_end"`
	// Replicas has one entry per assigned broker.
	Replicas []ReplicaStatus `json:"replicas"`
}

// ReplicaStatus is one replica of a partition.
type ReplicaStatus struct {
	BrokerID  int    `json:"broker_id"`
	Role      string `json:"role"`
	Active    bool   `json:"active"`
	Available bool   `json:"available"`
	// LogEnd is the replica's log end, null when unknown (broker down).
	LogEnd *uint64 `json:"log_end"`
	// Lag is the leader's log end minus this replica's, null when unknown.
	Lag *uint64 `json:"lag"`
	// ReportedAt is when the replica's broker reported what this says,
	// as the controller received it (cluster mode, where every node
	// answers what the controller knows of the followers); absent when
	// the replica was read just now — every replica in one process, the
	// leader's, which is asked, in cluster mode.
	ReportedAt *time.Time `json:"reported_at,omitempty"`
}

// ProduceRecord is one record to produce. A nil Key means "no key" (JSON
// null: the server chooses the partition round-robin); an empty non-nil key
// is a real, empty key, routed by its SHA-256 like any other unless the
// request names a partition. The key and the headers are stored with the
// record and come back in FetchedRecord.
type ProduceRecord struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value"`
	// Headers are Kafka-style record headers, kept in order; optional.
	Headers []RecordHeader `json:"headers,omitempty"`
}

// RecordHeader is one record header, as Kafka records carry them: a
// string key (names may repeat) and a value that may be null (nil) or
// empty ([]byte{}), which stay distinct.
type RecordHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// ProduceRequest is the JSON body of POST /api/topics/{topic}/records.
type ProduceRequest struct {
	Records []ProduceRecord `json:"records"`
	// Producer, when set, makes the request an idempotent producer's
	// (Kafka's KIP-98): record i carries sequence number
	// Producer.Sequence+i (envelope.SequenceAt), and the partition's leader
	// stores a request sent again once, answering it with the offsets of
	// its first write. It needs the partition query parameter: sequence
	// numbers count per partition.
	Producer *ProducerIdentity `json:"producer,omitempty"`
}

// ProducerIdentity is who an idempotent produce request comes from, and
// the sequence number of its first record: ID and Epoch from
// POST /api/producers (NewProducerResponse), Sequence 0 for the first
// request to a partition and, after each request, the sequence past its
// last record (envelope.SequenceAt(Sequence, len(records))). In a
// FetchedRecord it is the identity the record was stored with, and
// Sequence that record's own number.
type ProducerIdentity struct {
	ID       int64 `json:"id"`
	Epoch    int16 `json:"epoch"`
	Sequence int32 `json:"sequence"`
}

// NewProducerResponse answers POST /api/producers: a producer id never
// handed out before in the cluster, at epoch 0, for ProducerIdentity.
type NewProducerResponse struct {
	ProducerID int64 `json:"producer_id"`
	Epoch      int16 `json:"epoch"`
}

// ProduceResult is where one record landed. In the records of a failed
// produce (ErrorBody.Records) it carries Error instead when that record was
// not acknowledged.
type ProduceResult struct {
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
	// Timestamp is nanoseconds since the Unix epoch. It needs 61 bits, so
	// a parser that reads JSON numbers as doubles (JavaScript's JSON.parse)
	// rounds it: such a client reads TimestampMS.
	Timestamp int64 `json:"timestamp"`
	// TimestampMS is Timestamp in whole milliseconds (rounded down), the
	// unit Kafka uses; exact in a double until the year 287396.
	TimestampMS int64 `json:"timestamp_ms"`
	Leader      int   `json:"leader"`
	// Brokers lists the replicas that hold the record.
	Brokers []int `json:"brokers"`
	// Error is set, and the other fields are zero, for a record that was not
	// acknowledged in a failed batch.
	Error *RecordError `json:"error,omitempty"`
}

// MarshalJSON writes a failed record as {"error": {...}} alone, and an
// acknowledged one with its placement, as the contract describes.
func (r ProduceResult) MarshalJSON() ([]byte, error) {
	if r.Error != nil {
		return json.Marshal(struct {
			Error *RecordError `json:"error"`
		}{r.Error})
	}
	type plain ProduceResult // no methods: avoids recursion
	return json.Marshal(plain(r))
}

// ProduceResponse answers a successful produce, one result per record in
// request order.
type ProduceResponse struct {
	Records []ProduceResult `json:"records"`
}

// FetchedRecord is one record read from a partition, with the key and
// headers it was produced with (over HTTP or Kafka).
type FetchedRecord struct {
	Offset uint64 `json:"offset"`
	// Timestamp is nanoseconds since the Unix epoch, when the partition
	// stored the record; see ProduceResult.Timestamp for JavaScript
	// clients.
	Timestamp int64 `json:"timestamp"`
	// TimestampMS is Timestamp in whole milliseconds (rounded down).
	TimestampMS int64 `json:"timestamp_ms"`
	// CreateTimestampMS is the time its producer gave the record (a Kafka
	// record's create time), milliseconds since the epoch; omitted when
	// the producer gave none.
	CreateTimestampMS *int64 `json:"create_timestamp_ms,omitempty"`
	// Producer is the idempotent producer's identity the record was
	// written with (Kafka's producer id, epoch and sequence number);
	// omitted when it has none. A transaction marker carries its
	// producer's id and epoch, and sequence 0, which numbers nothing.
	Producer *ProducerIdentity `json:"producer,omitempty"`
	// Transactional says the record belongs to its producer's transaction
	// (a read_committed reader sees it once the transaction commits);
	// omitted when false.
	Transactional bool `json:"transactional,omitempty"`
	// Marker is MarkerCommit or MarkerAbort when the record is a
	// transaction marker (Kafka's control record), which ends its
	// producer's transaction in the partition; its Key and Value are nil.
	// Omitted for every other record.
	Marker string `json:"marker,omitempty"`
	// Key is nil (JSON null) when the record has no key: records produced
	// without one, and every record written before keys were stored.
	Key []byte `json:"key"`
	// Headers are omitted when the record has none.
	Headers []RecordHeader `json:"headers,omitempty"`
	// Value is nil (JSON null) only for a null value (a Kafka tombstone);
	// an empty value is "".
	Value []byte `json:"value"`
}

// The values of FetchedRecord.Marker.
const (
	MarkerCommit = "commit"
	MarkerAbort  = "abort"
)

// FetchResponse answers GET /api/topics/{topic}/partitions/{p}/records.
type FetchResponse struct {
	Records []FetchedRecord `json:"records"`
	// NextOffset is the offset to fetch next.
	NextOffset uint64 `json:"next_offset"`
	// LogStart is the first readable offset: 0 until retention deletes
	// records from the partition's front. A fetch below it is answered
	// 416 offset_out_of_range (*OffsetOutOfRangeError).
	LogStart uint64 `json:"log_start"`
	// HighWatermark bounds every fetch: no record at or past it is returned.
	HighWatermark uint64 `json:"high_watermark"`
	// LogEnd is the leader's log end.
	LogEnd uint64 `json:"log_end"`
}

// The named times of GET /api/topics/{topic}/partitions/{p}/offsets, beside
// a time in milliseconds since the epoch.
const (
	OffsetsEarliest = "earliest"
	OffsetsLatest   = "latest"
)

// PartitionOffsetsResponse answers GET
// /api/topics/{topic}/partitions/{p}/offsets?timestamp=T, Kafka's
// ListOffsets: the offset a reader starting at T begins at.
type PartitionOffsetsResponse struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	// Timestamp is the time asked for, in milliseconds since the epoch;
	// absent for earliest and latest.
	Timestamp *int64 `json:"timestamp,omitempty"`
	// Offset is the log start for earliest, the high watermark for
	// latest, and for a time the first offset whose record's timestamp is
	// at or after it, or the high watermark when there is none.
	Offset uint64 `json:"offset"`
	// Found is false when no record below the high watermark is as late
	// as the time asked for: Offset is then the high watermark. Always
	// true for earliest and latest.
	Found bool `json:"found"`
	// LogStart and HighWatermark are the partition's readable range.
	LogStart      uint64 `json:"log_start"`
	HighWatermark uint64 `json:"high_watermark"`
}

// ConsumerOffset is one committed offset in ConsumerOffsetsResponse.
type ConsumerOffset struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
}

// ConsumerOffsetsResponse answers GET /api/consumers/{id}/offsets.
type ConsumerOffsetsResponse struct {
	ConsumerID string           `json:"consumer_id"`
	Offsets    []ConsumerOffset `json:"offsets"`
}

// ConsumerOffsetResponse answers GET, PUT and reset of
// /api/consumers/{id}/offsets/{topic}/{p}. Offset is null when the consumer
// never committed on that partition.
type ConsumerOffsetResponse struct {
	ConsumerID string  `json:"consumer_id"`
	Topic      string  `json:"topic"`
	Partition  int     `json:"partition"`
	Offset     *uint64 `json:"offset"`
}

// OffsetRequest is the body of the commit (PUT) and reset (POST) of a
// consumer offset.
type OffsetRequest struct {
	Offset uint64 `json:"offset"`
}

// FailoverResponse answers POST /api/topics/{topic}/partitions/{p}/failover.
type FailoverResponse struct {
	OldLeader int `json:"old_leader"`
	NewLeader int `json:"new_leader"`
	// LeaderEpoch is the partition's leader epoch after the failover.
	LeaderEpoch  uint64 `json:"leader_epoch"`
	LogEndOffset uint64 `json:"log_end_offset"`
}

// MoveLeaderResponse answers POST .../replicas/{broker}/move-leader.
type MoveLeaderResponse struct {
	// OldLeader stays an active follower.
	OldLeader int `json:"old_leader"`
	NewLeader int `json:"new_leader"`
	// LeaderEpoch is the partition's leader epoch after the move.
	LeaderEpoch uint64 `json:"leader_epoch"`
	// LogEndOffset is the new leader's log end: the offset the next write
	// gets.
	LogEndOffset uint64 `json:"log_end_offset"`
	// Copied is how many records the new leader caught up before the
	// switch (usually none).
	Copied uint64 `json:"copied"`
}

// CatchUpResponse answers POST .../replicas/{broker}/catch-up.
type CatchUpResponse struct {
	BrokerID int    `json:"broker_id"`
	Copied   uint64 `json:"copied"`
}

// RecoverResponse answers POST .../replicas/{broker}/recover. DroppedFrom and
// DroppedTo are null, and Quarantine is omitted, when nothing was dropped.
type RecoverResponse struct {
	BrokerID     int     `json:"broker_id"`
	CommonPrefix uint64  `json:"common_prefix"`
	Dropped      uint64  `json:"dropped"`
	DroppedFrom  *uint64 `json:"dropped_from"`
	DroppedTo    *uint64 `json:"dropped_to"`
	// Quarantine is the file that keeps the dropped records, relative to
	// the server's data directory (`pystream log dump` reads it).
	Quarantine string `json:"quarantine,omitempty"`
	Copied     uint64 `json:"copied"`
}

// JournalEntry is one entry of the cluster journal: what changed, who
// asked, why, and how it ended. Optional fields are omitted when empty.
type JournalEntry struct {
	// Offset is the entry's position in the journal, from 0.
	Offset uint64 `json:"offset"`
	// Time is when the entry was written, RFC 3339 with nanoseconds, UTC.
	Time string `json:"time"`
	// Event is what the entry is about: catch-up, deactivate, failover,
	// recover, move-leader, broker-stop, broker-start, delete-topic,
	// alter-config, retention or healing (automatic healing switched at run
	// time: PUT /api/controller).
	Event string `json:"event"`
	// Phase is intent, done, failed, completed or rolled-back.
	Phase string `json:"phase"`
	// By is operator, controller, startup or retention.
	By string `json:"by"`
	// Topic and Partition name the partition; both are omitted for a
	// broker's stop or start, Partition for a topic's deletion.
	Topic     string `json:"topic,omitempty"`
	Partition *int   `json:"partition,omitempty"`
	// Broker is the broker acted on.
	Broker int `json:"broker"`
	// Summary says what happened, with its numbers, in one line.
	Summary string `json:"summary"`
	// Reason is the controller's reason for its decision.
	Reason string `json:"reason,omitempty"`
	// Intent is the offset of the intent an outcome belongs to.
	Intent *uint64 `json:"intent,omitempty"`
	// Quarantine is the file, relative to the data directory, that keeps
	// the records a recovery cut (its intent and done entries).
	Quarantine string `json:"quarantine,omitempty"`
	// Candidates are the followers a failover compared, the winner first,
	// each with its log end (a failover's intent; in cluster mode its done
	// entry). Omitted elsewhere, and on entries written before the field
	// existed, whose summary alone says it.
	Candidates []JournalCandidate `json:"candidates,omitempty"`
	// Cut is the offsets a recovery cut, never acknowledged: from up to,
	// not including, to (a recover entry that cut something). Omitted
	// elsewhere, and on entries written before the field existed.
	Cut *JournalCut `json:"cut,omitempty"`
	// Automatic is what a healing entry switched automatic healing to;
	// omitted elsewhere, and on entries written before the field existed.
	Automatic *bool `json:"automatic,omitempty"`
	// ConfigBefore and ConfigAfter are a topic's configuration overrides
	// before and after an alter-config (omitted when there were none).
	ConfigBefore map[string]string `json:"config_before,omitempty"`
	ConfigAfter  map[string]string `json:"config_after,omitempty"`
	// Removed are the segments a retention pass deleted: per broker, the
	// offsets [base, next) each held.
	Removed []RemovedSegment `json:"removed,omitempty"`
	// Error says why an operation failed.
	Error string `json:"error,omitempty"`
}

// JournalCandidate is one follower a failover compared.
type JournalCandidate struct {
	Broker int    `json:"broker"`
	LogEnd uint64 `json:"log_end"`
}

// JournalCut is a range of offsets a recovery cut: From up to, not
// including, To.
type JournalCut struct {
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
}

// RemovedSegment is one segment file a retention pass deleted.
type RemovedSegment struct {
	Broker int    `json:"broker"`
	Base   uint64 `json:"base"`
	Next   uint64 `json:"next"`
}

// JournalResponse answers GET /api/journal.
type JournalResponse struct {
	Entries []JournalEntry `json:"entries"`
	// Next is the offset to ask for next: one past the last entry, or the
	// since of the request when there were none.
	Next uint64 `json:"next"`
}

// QuarantineResponse answers GET /api/journal/{entry}/quarantine: records
// a recovery cut from a replica (never acknowledged) and kept in the
// quarantine file the journal entry names.
type QuarantineResponse struct {
	// Entry is the journal entry asked about; Topic, Partition and Broker
	// are its: the replica the records were cut from.
	Entry     uint64 `json:"entry"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Broker    int    `json:"broker"`
	// File is the quarantine file, relative to the data directory.
	File string `json:"file"`
	// From and To are the offsets the file keeps: From to To-1.
	From uint64 `json:"from"`
	To   uint64 `json:"to"`
	// Records are as a fetch gives them, from the offset asked for.
	Records []FetchedRecord `json:"records"`
	// NextOffset is the offset to ask for next; To once all are read.
	NextOffset uint64 `json:"next_offset"`
}

// DeleteTopicResponse answers DELETE /api/topics/{topic}: what was deleted.
type DeleteTopicResponse struct {
	Name              string `json:"name"`
	PartitionCount    int    `json:"partition_count"`
	ReplicationFactor int    `json:"replication_factor"`
	// ConsumerOffsets is the number of committed consumer offsets of the
	// topic that were removed (one per consumer and partition).
	ConsumerOffsets int `json:"consumer_offsets"`
}

// ReopenResponse is the answer of POST /api/brokers/{id}/reopen.
type ReopenResponse struct {
	BrokerID int `json:"broker_id"`
	// Reopened are the replicas whose failed logs were opened again.
	Reopened []ReplicaRef `json:"reopened"`
	// Journal is true when the cluster journal was reopened too.
	Journal bool `json:"journal"`
}

// ReplicaRef names one replica of a broker by its partition.
type ReplicaRef struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}
