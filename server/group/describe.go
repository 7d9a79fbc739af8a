package group

// Summary is one group in a listing (Kafka's ListGroups, GET /api/groups).
type Summary struct {
	Group    string
	Protocol Protocol
	// State is the group's state in its protocol's words (State*).
	State   string
	Members int
}

// The states a group is described with. Classic groups use Kafka's
// classic names; consumer groups the names of Kafka's consumer protocol.
const (
	StateEmpty               = "Empty"
	StatePreparingRebalance  = "PreparingRebalance"
	StateCompletingRebalance = "CompletingRebalance"
	StateStable              = "Stable"
	StateDead                = "Dead"
	StateReconciling         = "Reconciling"
)

// Description is one group in detail (Kafka's DescribeGroups, GET
// /api/groups/{g}); committed offsets and lag are added by the caller,
// from the offset store.
type Description struct {
	Group    string
	Protocol Protocol
	State    string
	// ProtocolType is the classic protocol type the members joined with
	// ("consumer" for consumers); "consumer" for consumer groups.
	ProtocolType string
	// Assignor is the assignment strategy: the one the classic members
	// agreed on (range, cooperative-sticky, ...), or the coordinator's
	// own for consumer groups.
	Assignor string
	// Generation is the classic generation, or the consumer group's
	// epoch.
	Generation int32
	Members    []Member
}

// Member is one member of a described group.
type Member struct {
	ID         string
	InstanceID string // static membership; "" when none
	ClientID   string
	ClientHost string
	// Assigned is the member's partitions: decoded from the classic
	// assignment when it is Kafka's consumer protocol, or the
	// coordinator's assignment of a consumer group.
	Assigned []TopicPartitions
	// Topics is what the member subscribes to, ascending: decoded from
	// a classic member's metadata when it is Kafka's consumer protocol
	// (every protocol it named), or a consumer group member's
	// subscription. Nil when not known: a classic member whose metadata
	// is something else, which may consume any topic.
	Topics []string
	// Metadata and Assignment are a classic member's opaque bytes, as
	// DescribeGroups returns them; nil for consumer groups.
	Metadata, Assignment []byte
}

// TopicPartitions is a topic and some of its partitions, ascending.
type TopicPartitions struct {
	Topic      string
	Partitions []int32
}

// Lister is what a coordinator tells about its groups; both
// coordinators are one, so that a listing over either protocol shows
// every group.
type Lister interface {
	// List is every group with members, ascending by id.
	List() []Summary
	// Describe is one group; ok is false when it has no members here.
	Describe(group string) (d Description, ok bool)
}
