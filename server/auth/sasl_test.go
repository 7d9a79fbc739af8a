package auth

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// saslSet is a set with app's token as sha256 (PLAIN) and SCRAM-SHA-256
// and -512 credentials, and ro's as sha256 only.
func saslSet(t testing.TB) *Set {
	t.Helper()
	content := "app write " + HashToken("app-token") + " pay\n" +
		"app write " + scramLine(t, SCRAMSHA256, "app", "app-token") + " pay\n" +
		"app write " + scramLine(t, SCRAMSHA512, "app", "app-token") + " pay\n" +
		"ro read " + HashToken("ro-token") + "\n"
	toks, line, err := Parse([]byte(content))
	require.NoError(t, err, "line %d", line)
	return NewSet(toks)
}

// scramExchange runs a client conversation of xdg-go/scram against the
// server's: the proven principal's name, or the server's error.
func scramExchange(t *testing.T, s *Set, mech, user, secret string) (string, error) {
	t.Helper()
	m, ok := ParseSCRAMMechanism(mech)
	require.True(t, ok)
	cl, err := m.hash().NewClient(user, secret, "")
	require.NoError(t, err)
	conv := cl.NewConversation()
	srv, err := s.NewSASL(mech)
	require.NoError(t, err)
	msg, err := conv.Step("")
	require.NoError(t, err)
	for !srv.Done() {
		out, err := srv.Step([]byte(msg))
		if err != nil {
			return "", err
		}
		if msg, err = conv.Step(string(out)); err != nil {
			return "", err
		}
	}
	require.True(t, conv.Valid(), "the client checked the server's signature")
	return srv.Principal().Name, nil
}

func TestAuthSASLPlain(t *testing.T) {
	s := saslSet(t)
	plain := func(msg string) (*SASL, error) {
		c, err := s.NewSASL(MechanismPlain)
		require.NoError(t, err)
		out, err := c.Step([]byte(msg))
		if err == nil {
			require.Empty(t, out)
		}
		require.True(t, c.Done())
		return c, err
	}
	c, err := plain("\x00app\x00app-token")
	require.NoError(t, err)
	require.Equal(t, "app", c.Principal().Name)
	require.Equal(t, RoleWrite, c.Principal().Role)
	c, err = plain("app\x00app\x00app-token")
	require.NoError(t, err, "an authorization id equal to the user")
	require.Equal(t, "app", c.Principal().Name)

	for name, msg := range map[string]string{
		"wrong token":      "\x00app\x00ro-token",
		"unknown user":     "\x00nobody\x00app-token",
		"other authzid":    "ro\x00app\x00app-token",
		"no separators":    "app app-token",
		"too many":         "\x00app\x00app-token\x00",
		"empty":            "",
		"the hash":         "\x00app\x00" + HashToken("app-token"),
		"bad name":         "\x00a/b\x00app-token",
		"scram-only name?": "\x00ro\x00app-token",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := plain(msg)
			require.ErrorIs(t, err, ErrAuthenticationFailed)
			require.Nil(t, c.Principal())
			var se *SASLError
			require.ErrorAs(t, err, &se)
			require.NotContains(t, se.Error(), "app-token", "the secret is never in the error")
			_, err = c.Step([]byte("\x00app\x00app-token"))
			require.ErrorIs(t, err, ErrSASLState, "a failed exchange stays failed")
		})
	}
}

func TestAuthSASLSCRAM(t *testing.T) {
	s := saslSet(t)
	for _, mech := range []string{MechanismSCRAMSHA256, MechanismSCRAMSHA512} {
		t.Run(mech, func(t *testing.T) {
			name, err := scramExchange(t, s, mech, "app", "app-token")
			require.NoError(t, err)
			require.Equal(t, "app", name)

			_, err = scramExchange(t, s, mech, "app", "wrong")
			require.ErrorIs(t, err, ErrAuthenticationFailed)
			// ro has a sha256 line only: no SCRAM credential.
			_, err = scramExchange(t, s, mech, "ro", "ro-token")
			require.ErrorIs(t, err, ErrAuthenticationFailed)
			var se *SASLError
			require.ErrorAs(t, err, &se)
			require.Equal(t, "ro", se.User)
		})
	}
	// SHA-256's credential does not serve SHA-512 with the other's keys.
	_, err := scramExchange(t, NewSet(mustParse(t, "x read "+scramLine(t, SCRAMSHA256, "x", "tok")+"\n")), MechanismSCRAMSHA512, "x", "tok")
	require.ErrorIs(t, err, ErrAuthenticationFailed)
}

// An unknown name is answered a challenge like a known one, the same at
// every attempt: the exchange fails only at the proof.
func TestAuthSASLSCRAMUnknownUserDecoy(t *testing.T) {
	s := saslSet(t)
	first := func(user string) string {
		c, err := s.NewSASL(MechanismSCRAMSHA256)
		require.NoError(t, err)
		out, err := c.Step([]byte("n,,n=" + user + ",r=fixednonce"))
		require.NoError(t, err)
		return string(out)
	}
	salt := func(s1 string) string {
		for _, f := range strings.Split(s1, ",") {
			if v, ok := strings.CutPrefix(f, "s="); ok {
				return v
			}
		}
		return ""
	}
	require.Equal(t, salt(first("nobody")), salt(first("nobody")))
	require.NotEqual(t, salt(first("nobody")), salt(first("other")))
	require.Contains(t, first("nobody"), ",i=8192")
}

func TestAuthSASLUnsupportedMechanism(t *testing.T) {
	s := saslSet(t)
	for _, m := range []string{"GSSAPI", "OAUTHBEARER", "plain", "SCRAM-SHA-1", ""} {
		_, err := s.NewSASL(m)
		require.ErrorIs(t, err, ErrUnsupportedMechanism, m)
	}
}

func mustParse(t testing.TB, content string) []Token {
	t.Helper()
	toks, _, err := Parse([]byte(content))
	require.NoError(t, err)
	return toks
}

// FuzzSASLStep: no message sequence panics a SASL exchange of any
// mechanism; an exchange that fails stays failed and proves no one.
// Seeds in testdata/fuzz/FuzzSASLStep.
func FuzzSASLStep(f *testing.F) {
	f.Add(uint8(0), []byte("\x00app\x00app-token"), []byte(""))
	f.Add(uint8(1), []byte("n,,n=app,r=abc"), []byte("c=biws,r=abc,p=AAAA"))
	f.Add(uint8(2), []byte("n,,n=app,r=abc"), []byte("c=biws,r=abcdef,p=AAAA"))
	f.Add(uint8(1), []byte("p=tls-unique,,n=app,r=abc"), []byte{})
	f.Add(uint8(2), []byte("n,a=x,n=app,r="), []byte("\xff\x00"))
	s := saslSet(f)
	mechs := []string{MechanismPlain, MechanismSCRAMSHA256, MechanismSCRAMSHA512}
	f.Fuzz(func(t *testing.T, mech uint8, a, b []byte) {
		c, err := s.NewSASL(mechs[int(mech)%len(mechs)])
		require.NoError(t, err)
		for _, msg := range [][]byte{a, b} {
			if c.Done() {
				break
			}
			if _, err := c.Step(msg); err != nil {
				require.True(t, c.Done())
				require.Nil(t, c.Principal())
			}
		}
		if p := c.Principal(); p != nil {
			// Only PLAIN with the real token can succeed from random bytes.
			require.Equal(t, MechanismPlain, c.Mechanism())
		}
	})
}
