package auth

import "strings"

// Denial is why Decide refuses an operation; DenyNone allows it.
type Denial uint8

// The answers of Decide.
const (
	// DenyNone: allowed.
	DenyNone Denial = iota
	// DenyUnauthenticated: no valid token.
	DenyUnauthenticated
	// DenyRole: the token's role is below the operation's.
	DenyRole
	// DenyNotOneTopic: the token is limited to topic prefixes and the
	// operation is not about one named topic (a listing, the cluster, a
	// group as a whole, topic creation).
	DenyNotOneTopic
	// DenyTopic: the topic is outside the token's prefixes.
	DenyTopic
)

// Decide is the one rule of authorization, the same for every protocol
// (docs/security.md § Authentication and roles): may tok (nil: no valid
// token) do an operation that needs role need on topicName? oneTopic
// says whether the operation is about one named topic; topicName is
// ignored when it is not. It never looks at whether the topic exists: a
// topic outside the token's prefixes is refused the same way whether it
// exists or not.
func Decide(tok *Token, need Role, topicName string, oneTopic bool) Denial {
	if need == RoleOpen {
		return DenyNone
	}
	if tok == nil {
		return DenyUnauthenticated
	}
	if tok.Role < need {
		return DenyRole
	}
	if len(tok.Prefixes) == 0 {
		return DenyNone
	}
	if !oneTopic {
		return DenyNotOneTopic
	}
	if tok.MayReach(topicName) {
		return DenyNone
	}
	return DenyTopic
}

// MayReach reports whether topicName is inside tok's prefixes (always,
// for a token without prefixes). The role is Decide's business.
func (tok *Token) MayReach(topicName string) bool {
	if len(tok.Prefixes) == 0 {
		return true
	}
	for _, p := range tok.Prefixes {
		if strings.HasPrefix(topicName, p) {
			return true
		}
	}
	return false
}
