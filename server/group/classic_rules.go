package group

import (
	"bytes"
	"fmt"
	"time"
)

// The rules of the classic protocol that need no state but their
// arguments: which protocols a group can agree on, which one it picks,
// whether a member's protocols changed, and the session timeout's
// bounds. They are table-tested in classic_rules_test.go.

// candidateProtocols is the set of protocol names every member in prefs
// supports (each member's protocols, in its order of preference).
func candidateProtocols(prefs [][]ProtocolMetadata) map[string]bool {
	count := map[string]int{}
	for _, ps := range prefs {
		seen := map[string]bool{}
		for _, p := range ps {
			if !seen[p.Name] {
				seen[p.Name] = true
				count[p.Name]++
			}
		}
	}
	out := map[string]bool{}
	for name, n := range count {
		if n == len(prefs) {
			out[name] = true
		}
	}
	return out
}

// selectProtocol is the protocol a group of members with prefs agrees
// on, as Kafka chooses it: among the protocols every member supports,
// each member votes for the first in its own order of preference, and
// the most votes win. Kafka breaks a tie in no particular order; here
// the tie goes to the protocol the first member (prefs[0], the earliest
// to join) prefers. "" when the members share no protocol.
func selectProtocol(prefs [][]ProtocolMetadata) string {
	if len(prefs) == 0 {
		return ""
	}
	candidates := candidateProtocols(prefs)
	votes := map[string]int{}
	for _, ps := range prefs {
		for _, p := range ps {
			if candidates[p.Name] {
				votes[p.Name]++
				break
			}
		}
	}
	best, most := "", 0
	for _, p := range prefs[0] {
		if n := votes[p.Name]; n > most {
			best, most = p.Name, n
		}
	}
	return best
}

// sameProtocols reports whether a member's protocols are unchanged:
// the same names with the same metadata, in the same order (Kafka's
// MemberMetadata.matches).
func sameProtocols(a, b []ProtocolMetadata) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Metadata, b[i].Metadata) {
			return false
		}
	}
	return true
}

// metadataFor is a member's metadata for protocol name; nil when it
// does not support it.
func metadataFor(ps []ProtocolMetadata, name string) []byte {
	for _, p := range ps {
		if p.Name == name {
			return p.Metadata
		}
	}
	return nil
}

// checkSessionTimeout refuses a session timeout outside min..max
// (Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms).
func checkSessionTimeout(d, min, max time.Duration) error {
	if d < min || d > max {
		return fmt.Errorf("%w: %v is outside %v..%v", ErrInvalidSessionTimeout, d, min, max)
	}
	return nil
}

// joinable reports whether a member with protocolType and protocols may
// join a group whose members have groupType and prefs: a new group takes
// any non-empty type and list, an existing one the same type and at
// least one protocol every member supports.
func joinable(groupType string, prefs [][]ProtocolMetadata, protocolType string, protocols []ProtocolMetadata) bool {
	if protocolType == "" || len(protocols) == 0 {
		return false
	}
	if len(prefs) == 0 {
		return true
	}
	if protocolType != groupType {
		return false
	}
	candidates := candidateProtocols(prefs)
	for _, p := range protocols {
		if candidates[p.Name] {
			return true
		}
	}
	return false
}
