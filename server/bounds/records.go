package bounds

// The records one produce request may carry, the same rule over every
// protocol: the HTTP API's POST .../records and the Kafka protocol's
// Produce (all partitions of the request together) refuse a request above
// the cap, PYSTREAM_MAX_REQUEST_RECORDS, before anything is written.
const (
	// DefaultMaxRequestRecords caps the records of a produce request.
	DefaultMaxRequestRecords = 10_000
	// MaxRequestRecordsLimit is the largest the setting may be.
	MaxRequestRecordsLimit = 1_000_000
)
