package bounds

// What one topic creation may cost, the same rule over every protocol:
// every partition is a directory and an open log file per replica, so an
// unbounded count would let one request fill the disk and the process's
// file descriptors. The HTTP API's POST /api/topics creates one topic of
// at most MaxTopicPartitions; the Kafka protocol's CreateTopics may name
// several, and is bounded as a whole so that one request costs at most
// what one largest topic costs over HTTP. A request past a bound is
// refused before anything is created.
const (
	// MaxTopicPartitions is the most partitions one topic may be created
	// with, over HTTP and Kafka.
	MaxTopicPartitions = 1024
	// MaxCreatePartitions is the most partitions one CreateTopics
	// request may create, all its topics together: one largest topic's
	// worth, at most MaxCreatePartitions × the brokers replica logs.
	MaxCreatePartitions = MaxTopicPartitions
	// MaxCreateTopics is the most topics one CreateTopics request may
	// name. Each has a partition at least, so no request past it could
	// pass MaxCreatePartitions: it is checked first, before anything
	// about the topics is read.
	MaxCreateTopics = MaxCreatePartitions
)
