package kafka_test

import (
	"crypto/tls"
	"testing"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	kscram "github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/xdg-go/scram"

	"github.com/pystream/pystream/server/auth"
	"github.com/pystream/pystream/server/kafka"
	"github.com/pystream/pystream/server/tlstest"
)

// The principals of the SASL tests' auth file. writer and reader have a
// sha256 line (PLAIN) and SCRAM-SHA-256 and -512 lines; payer reads
// topics starting with "pay" only; ops administers; payops administers
// topics starting with "pay" only.
var saslTokens = map[string]string{
	"writer": "writer-0123456789abcdef0123456789abcdef",
	"reader": "reader-0123456789abcdef0123456789abcdef",
	"payer":  "payer-0123456789abcdef0123456789abcdef",
	"ops":    "ops-0123456789abcdef0123456789abcdef",
	"payops": "payops-0123456789abcdef0123456789abcdef",
}

// saslAuthFile is the auth file of saslTokens, parsed.
func saslAuthFile(t testing.TB) *auth.Set {
	t.Helper()
	line := func(name, role, rest string) string {
		tok := saslTokens[name]
		s := name + " " + role + " " + auth.HashToken(tok) + rest + "\n"
		for _, m := range []auth.SCRAMMechanism{auth.SCRAMSHA256, auth.SCRAMSHA512} {
			c, err := auth.NewSCRAMCredential(m, name, tok, auth.MinSCRAMIterations)
			require.NoError(t, err)
			s += name + " " + role + " " + c.String() + rest + "\n"
		}
		return s
	}
	content := line("writer", "write", "") + line("reader", "read", "") + line("payer", "write", " pay") + line("ops", "admin", "") + line("payops", "admin", " pay")
	toks, n, err := auth.Parse([]byte(content))
	require.NoError(t, err, "line %d", n)
	return auth.NewSet(toks)
}

// secured is a fixture whose listener requires SASL, over TLS when
// withTLS, and the client-side TLS configuration.
type secured struct {
	*fixture
	clientTLS *tls.Config
	pki       *tlstest.PKI
}

// startSecured is start with the SASL tests' auth file and, when withTLS,
// TLS with a test CA's server certificate (server/tlstest).
func startSecured(t testing.TB, withTLS bool, brokers, partitions, rf int, edit ...func(*kafka.Config)) *secured {
	t.Helper()
	sec := &secured{}
	set := saslAuthFile(t)
	var serverTLS *tls.Config
	if withTLS {
		sec.pki = tlstest.New(t, t.TempDir())
		pair, err := tls.LoadX509KeyPair(sec.pki.ServerCert, sec.pki.ServerKey)
		require.NoError(t, err)
		serverTLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
		sec.clientTLS = &tls.Config{RootCAs: sec.pki.Pool, MinVersion: tls.VersionTLS12}
	}
	sec.fixture = start(t, brokers, partitions, rf, append([]func(*kafka.Config){func(c *kafka.Config) {
		c.Auth, c.TLS = set, serverTLS
	}}, edit...)...)
	return sec
}

// mechanism is a kgo SASL mechanism of name for principal who, with
// secret.
func kgoMechanism(name, who, secret string) sasl.Mechanism {
	switch name {
	case auth.MechanismPlain:
		return plain.Auth{User: who, Pass: secret}.AsMechanism()
	case auth.MechanismSCRAMSHA256:
		return kscram.Auth{User: who, Pass: secret}.AsSha256Mechanism()
	}
	return kscram.Auth{User: who, Pass: secret}.AsSha512Mechanism()
}

// as is a kgo client authenticated as who with mechanism (over TLS when
// the fixture has it).
func (s *secured) as(t testing.TB, mech, who string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return s.asWith(t, mech, who, saslTokens[who], opts...)
}

func (s *secured) asWith(t testing.TB, mech, who, secret string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	o := []kgo.Opt{kgo.SASL(kgoMechanism(mech, who, secret))}
	if s.clientTLS != nil {
		o = append(o, kgo.DialTLSConfig(s.clientTLS.Clone()))
	}
	return s.client(t, append(o, opts...)...)
}

// xdgSCRAM is sarama's SCRAM client (sarama.SCRAMClient) over
// xdg-go/scram, as sarama's own example wires it.
type xdgSCRAM struct {
	hash scram.HashGeneratorFcn
	conv *scram.ClientConversation
}

func (x *xdgSCRAM) Begin(user, password, authzID string) error {
	cl, err := x.hash.NewClient(user, password, authzID)
	if err != nil {
		return err
	}
	x.conv = cl.NewConversation()
	return nil
}

func (x *xdgSCRAM) Step(challenge string) (string, error) { return x.conv.Step(challenge) }
func (x *xdgSCRAM) Done() bool                            { return x.conv.Done() }

// saramaSecured is saramaConfig with SASL as who with mech (and TLS when
// the fixture has it); handshake is the SaslHandshake version.
func (s *secured) saramaSecured(mech, who string, handshake int16) *sarama.Config {
	cfg := saramaConfig()
	cfg.Net.SASL.Enable, cfg.Net.SASL.Handshake, cfg.Net.SASL.Version = true, true, handshake
	cfg.Net.SASL.User, cfg.Net.SASL.Password = who, saslTokens[who]
	switch mech {
	case auth.MechanismPlain:
		cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	case auth.MechanismSCRAMSHA256:
		cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: scram.SHA256} }
	default:
		cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &xdgSCRAM{hash: scram.SHA512} }
	}
	if s.clientTLS != nil {
		cfg.Net.TLS.Enable, cfg.Net.TLS.Config = true, s.clientTLS.Clone()
	}
	return cfg
}

// mechanisms are the three SASL mechanisms the listener offers.
var mechanisms = []string{auth.MechanismPlain, auth.MechanismSCRAMSHA256, auth.MechanismSCRAMSHA512}
