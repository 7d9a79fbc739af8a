package auth_test

import (
	"fmt"

	"github.com/pystream/pystream/server/auth"
)

// A principal limited to topic prefixes: what Decide allows it.
func ExampleDecide() {
	tokens, _, err := auth.Parse([]byte("billing-app write " + auth.HashToken("secret") + " billing.\n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	set := auth.NewSet(tokens)
	tok := set.Bearer("secret")
	fmt.Println(tok.Name, tok.Role)
	fmt.Println(auth.Decide(tok, auth.RoleWrite, "billing.eu", true) == auth.DenyNone)
	fmt.Println(auth.Decide(tok, auth.RoleWrite, "orders", true) == auth.DenyTopic)
	fmt.Println(auth.Decide(tok, auth.RoleAdmin, "billing.eu", true) == auth.DenyRole)
	fmt.Println(auth.Decide(tok, auth.RoleRead, "", false) == auth.DenyNotOneTopic)
	// Output:
	// billing-app write
	// true
	// true
	// true
	// true
}

// A SASL/PLAIN exchange: the user is the principal's name, the password
// its token.
func ExampleSet_NewSASL() {
	tokens, _, _ := auth.Parse([]byte("ops admin " + auth.HashToken("secret") + "\n"))
	conv, _ := auth.NewSet(tokens).NewSASL(auth.MechanismPlain)
	if _, err := conv.Step([]byte("\x00ops\x00secret")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(conv.Done(), conv.Principal().Name)
	// Output: true ops
}
