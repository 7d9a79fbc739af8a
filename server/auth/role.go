package auth

// Role is what a token may do, or what an operation needs. Each role
// includes the ones below it: admin ⊇ write ⊇ read. The zero value is no
// role at all, so an operation that forgot to say what it needs is
// refused (httpapi refuses such a route at start).
type Role uint8

// The roles, in increasing order of power.
const (
	// RoleUnset is an operation that did not say what it needs.
	RoleUnset Role = iota
	// RoleOpen is an operation anyone who reaches the port may do: the
	// HTTP API's health, readiness and documentation, Kafka's ApiVersions
	// and SASL exchange. No token has it.
	RoleOpen
	// RoleRead fetches records and describes topics, the cluster, the
	// journal, consumer offsets and groups, and takes part in a group.
	RoleRead
	// RoleWrite is RoleRead plus producing and committing offsets.
	RoleWrite
	// RoleAdmin is RoleWrite plus broker, partition and topic operations
	// and offset resets.
	RoleAdmin
)

// String returns the role's name in the auth file ("open" for RoleOpen).
func (r Role) String() string {
	switch r {
	case RoleOpen:
		return "open"
	case RoleRead:
		return "read"
	case RoleWrite:
		return "write"
	case RoleAdmin:
		return "admin"
	}
	return "unset"
}

// parseRole reads a role of the auth file.
func parseRole(s string) (Role, bool) {
	switch s {
	case "read":
		return RoleRead, true
	case "write":
		return RoleWrite, true
	case "admin":
		return RoleAdmin, true
	}
	return RoleUnset, false
}
