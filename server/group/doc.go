// Package group is PyStream's group coordinator: it lets several
// consumers share a topic's partitions, each partition read by one member
// of the group at a time, and picks up committed offsets where the last
// owner stopped.
//
// Two protocols reach it, one per kind of client:
//
//   - Classic is Kafka's join/sync protocol (JoinGroup, SyncGroup,
//     Heartbeat, LeaveGroup): the coordinator gathers the members, picks
//     the assignment protocol they all support and relays the assignment
//     the group's leader computed. It never assigns partitions itself, so
//     eager and cooperative-sticky clients both work.
//   - Consumer is the model of Kafka's newer consumer protocol, fitted to
//     HTTP: each member heartbeats, and the coordinator assigns
//     partitions itself, moving one only after its previous owner released
//     it or timed out.
//
// A group speaks one protocol at a time (Registry): while a group has
// members of one kind, a member of the other kind is refused with
// ProtocolMismatchError.
//
// Membership is soft state, kept in memory only: after a server restart
// members join again, as Kafka clients do when a coordinator moves.
// Committed offsets are not kept here: they are phase 3's durable
// offsets, the group id being the consumer id. What the consumer protocol
// does keep durably, through the caller (ConsumerConfig.Save, beside the
// offsets), is each group's leases (EncodeLeases): which member may still
// read which partitions, until when. A coordinator that starts reads them
// back (ConsumerCoordinator.Restore) and withholds a partition only while
// its saved owner's lease lasts; members that join again claim what they
// hold; where the leases cannot be had, ConsumerCoordinator.Withhold
// hands out nothing unclaimed for a session timeout. So no partition is
// read by two members at once.
//
// A commit's check and its durable write are two steps, the write made by
// the caller: CheckCommit hands back a done function, and until it is
// called every change that would fence the member (a new generation or
// epoch, a removal, a static replacement, a partition released) waits
// (gate). What clients send is bounded (limits.go): members per group,
// groups per coordinator, the client id kept, the partition counts a
// group keeps; and ValidateID is the one check of a group id.
//
// The package holds no network code; the Kafka listener (server/kafka)
// and the HTTP API (server) translate their requests into its calls.
package group
