package auth

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAuthDecide pins the rule of docs/security.md § Authentication and roles: each role includes the ones below it; a token limited to
// prefixes reaches only operations about one topic under one of them.
func TestAuthDecide(t *testing.T) {
	reader := &Token{Name: "r", Role: RoleRead}
	writer := &Token{Name: "w", Role: RoleWrite}
	admin := &Token{Name: "a", Role: RoleAdmin}
	pay := &Token{Name: "p", Role: RoleAdmin, Prefixes: []string{"pay", "billing."}}
	tests := []struct {
		name     string
		tok      *Token
		need     Role
		topic    string
		oneTopic bool
		want     Denial
	}{
		{"open needs nothing", nil, RoleOpen, "", false, DenyNone},
		{"no token", nil, RoleRead, "t", true, DenyUnauthenticated},
		{"read reads", reader, RoleRead, "t", true, DenyNone},
		{"read may not write", reader, RoleWrite, "t", true, DenyRole},
		{"write writes", writer, RoleWrite, "t", true, DenyNone},
		{"write may not administer", writer, RoleAdmin, "", false, DenyRole},
		{"admin administers", admin, RoleAdmin, "", false, DenyNone},
		{"prefix inside", pay, RoleWrite, "payroll", true, DenyNone},
		{"second prefix", pay, RoleRead, "billing.eu", true, DenyNone},
		{"prefix outside", pay, RoleRead, "orders", true, DenyTopic},
		{"prefix is not a substring match", pay, RoleRead, "xpay", true, DenyTopic},
		{"prefix, not about one topic", pay, RoleRead, "", false, DenyNotOneTopic},
		{"role before prefix", &Token{Role: RoleRead, Prefixes: []string{"pay"}}, RoleWrite, "orders", true, DenyRole},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Decide(tt.tok, tt.need, tt.topic, tt.oneTopic))
		})
	}
}
