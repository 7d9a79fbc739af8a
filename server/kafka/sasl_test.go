package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/pystream/pystream/server/auth"
)

// TestKafkaSASLKgoProduceConsume: kgo, over TLS, authenticates with each
// mechanism as a write principal, produces and reads its records back
// (docs/kafka.md § Authentication and TLS: SASL_SSL).
func TestKafkaSASLKgoProduceConsume(t *testing.T) {
	s := startSecured(t, true, 1, 1, 1)
	for i, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			cl := s.as(t, mech, "writer")
			val := fmt.Sprintf("record over %s", mech)
			require.NoError(t, cl.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Value: []byte(val)}).FirstErr())
			cons := s.as(t, mech, "reader", kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"events": {0: kgo.NewOffset().At(int64(i))}}))
			fs := cons.PollFetches(ctx(t))
			require.NoError(t, fs.Err())
			require.Equal(t, val, string(fs.Records()[0].Value))
		})
	}
}

// TestKafkaSASLSaramaProduceConsume: sarama, a second client, over TLS,
// with PLAIN (handshake v0, whose messages travel bare, and v1) and
// SCRAM-SHA-256/512 (its SCRAM client made of xdg-go/scram).
func TestKafkaSASLSaramaProduceConsume(t *testing.T) {
	s := startSecured(t, true, 1, 1, 1)
	cases := []struct {
		mech      string
		handshake int16
	}{
		{auth.MechanismPlain, sarama.SASLHandshakeV0},
		{auth.MechanismPlain, sarama.SASLHandshakeV1},
		{auth.MechanismSCRAMSHA256, sarama.SASLHandshakeV1},
		{auth.MechanismSCRAMSHA512, sarama.SASLHandshakeV1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s-v%d", c.mech, c.handshake), func(t *testing.T) {
			cfg := s.saramaSecured(c.mech, "writer", c.handshake)
			cfg.ApiVersionsRequest = c.handshake != sarama.SASLHandshakeV0 // sarama's rule for v0
			cl, err := sarama.NewClient([]string{s.srv.Addr(1)}, cfg)
			require.NoError(t, err)
			defer func() { _ = cl.Close() }()
			prod, err := sarama.NewSyncProducerFromClient(cl)
			require.NoError(t, err)
			defer func() { _ = prod.Close() }()
			val := "sarama " + c.mech
			_, off, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "events", Value: sarama.StringEncoder(val)})
			require.NoError(t, err)
			cons, err := sarama.NewConsumerFromClient(cl)
			require.NoError(t, err)
			defer func() { _ = cons.Close() }()
			pc, err := cons.ConsumePartition("events", 0, off)
			require.NoError(t, err)
			defer func() { _ = pc.Close() }()
			select {
			case m := <-pc.Messages():
				require.Equal(t, val, string(m.Value))
			case err := <-pc.Errors():
				t.Fatal(err)
			case <-time.After(10 * time.Second):
				t.Fatal("no record")
			}
		})
	}
}

// TestKafkaSASLWrongPassword: a wrong token fails with
// SASL_AUTHENTICATION_FAILED for every mechanism, and nothing is written.
func TestKafkaSASLWrongPassword(t *testing.T) {
	s := startSecured(t, true, 1, 1, 1)
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			err := s.asWith(t, mech, "writer", "not-the-token").Ping(ctx(t))
			require.ErrorIs(t, err, kerr.SaslAuthenticationFailed)
			require.Contains(t, err.Error(), "unknown user or wrong token", "told what failed")
			require.NotContains(t, err.Error(), "not-the-token")
		})
	}
	// An unknown principal fails the same way.
	err := s.asWith(t, auth.MechanismSCRAMSHA256, "nobody", "x").Ping(ctx(t))
	require.ErrorIs(t, err, kerr.SaslAuthenticationFailed)
	end, err := s.c.HighWatermark("events", 0)
	require.NoError(t, err)
	require.Zero(t, end, "nothing written")
}

// TestKafkaSASLWrongMechanism: a mechanism the listener does not offer
// is UNSUPPORTED_SASL_MECHANISM with the list it does, and the
// connection is closed; a SaslAuthenticate without a handshake is
// ILLEGAL_SASL_STATE.
func TestKafkaSASLWrongMechanism(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	nc := s.dial(t, 1)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "GSSAPI"
	resp := roundTrip(t, nc, hs, 1).(*kmsg.SASLHandshakeResponse)
	require.Equal(t, kerr.UnsupportedSaslMechanism.Code, resp.ErrorCode)
	require.Equal(t, []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}, resp.SupportedMechanisms)
	requireClosed(t, nc)

	nc = s.dial(t, 1)
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 2, []byte("\x00writer\x00"+saslTokens["writer"])
	ar := roundTrip(t, nc, au, 2).(*kmsg.SASLAuthenticateResponse)
	require.Equal(t, kerr.IllegalSaslState.Code, ar.ErrorCode)
	requireClosed(t, nc)

	// kgo with a mechanism it offers but the server does not.
	err := s.client(t, kgo.SASL(fakeMechanism{})).Ping(ctx(t))
	require.ErrorIs(t, err, kerr.UnsupportedSaslMechanism)
}

// fakeMechanism is a SASL mechanism no server offers.
type fakeMechanism struct{}

func (fakeMechanism) Name() string { return "X-PYSTREAM-TEST" }
func (fakeMechanism) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	return nil, nil, errors.New("never reached")
}

// TestKafkaSASLUnauthenticated: with an auth file, a connection that has
// not authenticated may ask ApiVersions (which lists the SASL keys) and
// nothing else: a Metadata closes it, as a Kafka broker does. Without an
// auth file the SASL keys are not listed and Metadata is answered.
func TestKafkaSASLUnauthenticated(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	nc := s.dial(t, 1)
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "raw", "1"
	keys := map[int16]bool{}
	for _, k := range roundTrip(t, nc, av, 3).(*kmsg.ApiVersionsResponse).ApiKeys {
		keys[k.ApiKey] = true
	}
	require.True(t, keys[int16(kmsg.SASLHandshake)] && keys[int16(kmsg.SASLAuthenticate)], "ApiVersions lists the SASL keys")
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	_, err := nc.Write(kmsg.NewRequestFormatter().AppendRequest(nil, md, 8))
	require.NoError(t, err)
	requireClosed(t, nc)

	err = s.client(t, kgo.RequestRetries(0)).Ping(ctx(t))
	require.Error(t, err, "kgo without SASL is refused")

	open := start(t, 1, 1, 1)
	nc = open.dial(t, 1)
	for _, k := range roundTrip(t, nc, av, 3).(*kmsg.ApiVersionsResponse).ApiKeys {
		require.NotEqual(t, int16(kmsg.SASLHandshake), k.ApiKey, "no auth file: SASL not offered")
	}
	require.Len(t, roundTrip(t, nc, md, 9).(*kmsg.MetadataResponse).Topics, 1)
}

// TestKafkaSASLReadPrincipalProduce: a read principal's produce is
// TOPIC_AUTHORIZATION_FAILED and writes nothing, over TLS and SCRAM; an
// idempotent producer's InitProducerID (kgo's default) is
// CLUSTER_AUTHORIZATION_FAILED before that, as Kafka answers a principal
// allowed to write nowhere; it may read.
func TestKafkaSASLReadPrincipalProduce(t *testing.T) {
	s := startSecured(t, true, 1, 1, 1)
	idem := s.as(t, auth.MechanismSCRAMSHA256, "reader", kgo.RequestRetries(0))
	err := idem.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Value: []byte("x")}).FirstErr()
	require.ErrorIs(t, err, kerr.ClusterAuthorizationFailed)
	cl := s.as(t, auth.MechanismSCRAMSHA256, "reader", kgo.RequestRetries(0), kgo.DisableIdempotentWrite())
	err = cl.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Value: []byte("x")}).FirstErr()
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)
	end, err := s.c.HighWatermark("events", 0)
	require.NoError(t, err)
	require.Zero(t, end)
	// OffsetCommit needs write too: the group is refused whole.
	adm := kadm.NewClient(cl)
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "events", Partition: 0, At: 0})
	cr, err := adm.CommitOffsets(ctx(t), "readers", offs)
	require.NoError(t, err)
	require.ErrorIs(t, cr.Error(), kerr.GroupAuthorizationFailed)
}

// TestKafkaSASLPrefixPrincipal: a principal limited to "pay" reaches its
// topics and no other: another topic is TOPIC_AUTHORIZATION_FAILED for
// Produce, Fetch, ListOffsets and Metadata, per topic, while its own
// topics in the same request are served; Metadata of every topic lists
// only its own. Its groups: TestKafkaSASLPrefixGroups.
func TestKafkaSASLPrefixPrincipal(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopic("payments", 1, 1))
	payer := s.as(t, auth.MechanismPlain, "payer", kgo.RequestRetries(0))

	require.NoError(t, payer.ProduceSync(ctx(t), &kgo.Record{Topic: "payments", Value: []byte("ok")}).FirstErr())
	err := payer.ProduceSync(ctx(t), &kgo.Record{Topic: "events", Value: []byte("no")}).FirstErr()
	require.ErrorIs(t, err, kerr.TopicAuthorizationFailed)

	nc := s.dial(t, 1)
	plainAuth(t, nc, "payer")
	fetch := kmsg.NewPtrFetchRequest()
	fetch.Version, fetch.MaxBytes, fetch.MinBytes = 11, 1<<20, 0
	for _, name := range []string{"events", "payments"} {
		ft := kmsg.NewFetchRequestTopic()
		ft.Topic = name
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.PartitionMaxBytes = 1 << 20
		ft.Partitions = append(ft.Partitions, fp)
		fetch.Topics = append(fetch.Topics, ft)
	}
	fr := roundTrip(t, nc, fetch, 11).(*kmsg.FetchResponse)
	codes := map[string]int16{}
	for _, ft := range fr.Topics {
		codes[ft.Topic] = ft.Partitions[0].ErrorCode
	}
	require.Equal(t, map[string]int16{"events": kerr.TopicAuthorizationFailed.Code, "payments": 0}, codes)

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 4
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "events"
	lt.Partitions = append(lt.Partitions, kmsg.NewListOffsetsRequestTopicPartition())
	lo.Topics = append(lo.Topics, lt)
	lr := roundTrip(t, nc, lo, 4).(*kmsg.ListOffsetsResponse)
	require.Equal(t, kerr.TopicAuthorizationFailed.Code, lr.Topics[0].Partitions[0].ErrorCode)

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	for _, name := range []string{"events", "payments"} {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(name)
		md.Topics = append(md.Topics, mt)
	}
	mr := roundTrip(t, nc, md, 9).(*kmsg.MetadataResponse)
	codes = map[string]int16{}
	for _, mt := range mr.Topics {
		codes[*mt.Topic] = mt.ErrorCode
	}
	require.Equal(t, map[string]int16{"events": kerr.TopicAuthorizationFailed.Code, "payments": 0}, codes)
}

// TestKafkaSASLFiltered: Metadata of every topic and ListGroups show a
// principal only what it may see: a "pay" principal sees its topics and
// its groups; an unlimited reader sees every topic and group.
func TestKafkaSASLFiltered(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopic("payments", 1, 1))
	store, err := s.c.OffsetStore()
	require.NoError(t, err)
	require.NoError(t, store.Commit("billing", "events", 0, 1))

	topics := func(who string) []string {
		adm := kadm.NewClient(s.as(t, auth.MechanismSCRAMSHA512, who))
		md, err := adm.Metadata(ctx(t))
		require.NoError(t, err)
		return md.Topics.Names()
	}
	groups := func(who string) []string {
		adm := kadm.NewClient(s.as(t, auth.MechanismSCRAMSHA512, who))
		ls, err := adm.ListGroups(ctx(t))
		require.NoError(t, err)
		return ls.Groups()
	}
	require.ElementsMatch(t, []string{"payments"}, topics("payer"))
	require.ElementsMatch(t, []string{"events", "payments"}, topics("reader"))
	require.NoError(t, store.Commit("pay-team", "payments", 0, 1))
	require.NoError(t, store.Commit("pay-team", "events", 0, 1))
	require.Equal(t, []string{"pay-team"}, groups("payer"))
	require.ElementsMatch(t, []string{"billing", "pay-team"}, groups("reader"))

	adm := kadm.NewClient(s.as(t, auth.MechanismPlain, "payer"))
	_, err = adm.DescribeGroups(ctx(t), "billing")
	require.ErrorIs(t, err, kerr.GroupAuthorizationFailed)
	// Its own group's committed offsets: the topics it may not reach are
	// left out.
	fo, err := adm.FetchOffsets(ctx(t), "pay-team")
	require.NoError(t, err)
	var fetched []string
	for _, o := range fo.Offsets().Sorted() {
		fetched = append(fetched, o.Topic)
	}
	require.Equal(t, []string{"payments"}, fetched)
}

// TestKafkaSASLPrefixGroups: a group's name is scoped by the principal's
// prefixes, as Kafka checks READ on the group. A "pay" principal joins,
// commits for and fetches the offsets of "pay…" groups; another group's
// JoinGroup, Heartbeat, LeaveGroup, OffsetCommit and OffsetFetch are
// answered GROUP_AUTHORIZATION_FAILED whole, and change nothing: no
// stranger forces another team's group to rebalance or moves its offsets.
// DescribeGroups and OffsetFetch of several groups refuse group by group.
func TestKafkaSASLPrefixGroups(t *testing.T) {
	s := startSecured(t, false, 1, 1, 1)
	require.NoError(t, s.c.CreateTopic("payments", 1, 1))
	store, err := s.c.OffsetStore()
	require.NoError(t, err)
	require.NoError(t, store.Commit("billing", "payments", 0, 7))

	nc := s.dial(t, 1)
	plainAuth(t, nc, "payer")
	join := func(group string) int16 {
		r := kmsg.NewPtrJoinGroupRequest()
		r.Version, r.Group, r.SessionTimeoutMillis, r.RebalanceTimeoutMillis, r.ProtocolType = 3, group, 10000, 10000, "consumer"
		pr := kmsg.NewJoinGroupRequestProtocol()
		pr.Name, pr.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0}
		r.Protocols = append(r.Protocols, pr)
		return roundTrip(t, nc, r, 3).(*kmsg.JoinGroupResponse).ErrorCode
	}
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, join("billing"))
	require.Zero(t, join("pay-team"))

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID = 3, "billing", "someone"
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, roundTrip(t, nc, hb, 3).(*kmsg.HeartbeatResponse).ErrorCode)
	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group, lv.MemberID = 0, "billing", "someone"
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, roundTrip(t, nc, lv, 0).(*kmsg.LeaveGroupResponse).ErrorCode)

	commit := func(group string) int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Version, r.Group, r.Generation, r.MemberID = 2, group, -1, ""
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "payments"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset = 0 // payments is empty: 0 is its log end
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return roundTrip(t, nc, r, 2).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, commit("billing"))
	require.Zero(t, commit("pay-solo"))
	off, ok, err := store.Load("billing", "payments", 0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, uint64(7), off, "a refused commit changes nothing")

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version, of.Group = 5, "billing"
	require.Equal(t, kerr.GroupAuthorizationFailed.Code, roundTrip(t, nc, of, 5).(*kmsg.OffsetFetchResponse).ErrorCode)
	of = kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	for _, g := range []string{"billing", "pay-solo"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		of.Groups = append(of.Groups, rg)
	}
	codes := map[string]int16{}
	for _, g := range roundTrip(t, nc, of, 8).(*kmsg.OffsetFetchResponse).Groups {
		codes[g.Group] = g.ErrorCode
	}
	require.Equal(t, map[string]int16{"billing": kerr.GroupAuthorizationFailed.Code, "pay-solo": 0}, codes)

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 3, []string{"billing", "pay-team"}
	codes = map[string]int16{}
	for _, g := range roundTrip(t, nc, dg, 3).(*kmsg.DescribeGroupsResponse).Groups {
		codes[g.Group] = g.ErrorCode
	}
	require.Equal(t, map[string]int16{"billing": kerr.GroupAuthorizationFailed.Code, "pay-team": 0}, codes)
}

// TestKafkaSASLAdminRequests: CreateTopics and DeleteTopics need an
// admin principal: a write principal is refused per topic,
// TOPIC_AUTHORIZATION_FAILED, and nothing changes; ops may.
func TestKafkaSASLAdminRequests(t *testing.T) {
	s := startSecured(t, true, 1, 1, 1)
	w := kadm.NewClient(s.as(t, auth.MechanismSCRAMSHA256, "writer"))
	cr, err := w.CreateTopics(ctx(t), 1, 1, nil, "orders")
	require.NoError(t, err)
	require.ErrorIs(t, cr["orders"].Err, kerr.TopicAuthorizationFailed)
	dr, err := w.DeleteTopics(ctx(t), "events")
	require.NoError(t, err)
	require.ErrorIs(t, dr["events"].Err, kerr.TopicAuthorizationFailed)
	_, err = s.c.Topic("events")
	require.NoError(t, err, "not deleted")
	_, err = s.c.Topic("orders")
	require.Error(t, err, "not created")

	// A principal limited to prefixes may not create, as over HTTP.
	p := kadm.NewClient(s.as(t, auth.MechanismPlain, "payer"))
	cr, err = p.CreateTopics(ctx(t), 1, 1, nil, "pay.new")
	require.NoError(t, err)
	require.ErrorIs(t, cr["pay.new"].Err, kerr.TopicAuthorizationFailed)

	ops := kadm.NewClient(s.as(t, auth.MechanismSCRAMSHA512, "ops"))
	cr, err = ops.CreateTopics(ctx(t), 1, 1, nil, "orders")
	require.NoError(t, err)
	require.NoError(t, cr["orders"].Err)
	dr, err = ops.DeleteTopics(ctx(t), "orders")
	require.NoError(t, err)
	require.NoError(t, dr["orders"].Err)
}

// plainAuth authenticates a raw connection as who with SASL/PLAIN
// (handshake v1, SaslAuthenticate v2).
func plainAuth(t *testing.T, c net.Conn, who string) {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, auth.MechanismPlain
	require.Zero(t, roundTrip(t, c, hs, 1).(*kmsg.SASLHandshakeResponse).ErrorCode)
	au := kmsg.NewPtrSASLAuthenticateRequest()
	au.Version, au.SASLAuthBytes = 2, []byte("\x00"+who+"\x00"+saslTokens[who])
	ar := roundTrip(t, c, au, 2).(*kmsg.SASLAuthenticateResponse)
	require.Zero(t, ar.ErrorCode, "%v", ar.ErrorMessage)
}
