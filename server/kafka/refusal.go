package kafka

import (
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Errors say why. Every item of an answer refused with a code carries an
// ErrorMessage where its version has the field — a handler's own words
// when it has them (a refused configuration value, a topic that exists),
// else the reason the exchange was given for the code (explain: the role
// a principal lacks, the versions served, the node coordinating), else
// the code's meaning in PyStream's terms (refusalText) — and the request
// is logged once (logRefused), naming the API, the correlation and
// client ids, the codes and their messages. What a client must not see
// (a path, an internal error) goes to that line only (note).

// message is the one builder of an ErrorMessage: reason when there is
// one, else what code means on a PyStream listener.
func message(code int16, reason string) string {
	if reason != "" {
		return reason
	}
	if text, ok := refusalText[code]; ok {
		return text
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok && e.Description != "" {
		return e.Description
	}
	return fmt.Sprintf("refused with error code %d", code)
}

// refusalText is what the codes PyStream answers with mean on its
// listener, when the exchange gave no reason of its own.
var refusalText = map[int16]string{
	kerr.UnknownServerError.Code:                 "an internal error of the server; its log has the details",
	kerr.KafkaStorageError.Code:                  "the broker cannot read or write its data directory now; the server's log has the details",
	kerr.UnknownTopicOrPartition.Code:            "no such topic or partition on this cluster (topics are created over HTTP, the CLI or CreateTopics, never by asking)",
	kerr.LeaderNotAvailable.Code:                 "the partition has no available leader now (its broker is down, or a failover is under way); refresh the metadata and retry",
	kerr.NotLeaderForPartition.Code:              "this broker does not lead the partition now; refresh the metadata and retry",
	kerr.CoordinatorLoadInProgress.Code:          "the coordinator is loading its state; retry shortly",
	kerr.CoordinatorNotAvailable.Code:            "no coordinator of groups and transactions is available now; find the coordinator again and retry",
	kerr.NotCoordinator.Code:                     "this node does not coordinate groups and transactions; find the coordinator again",
	kerr.UnsupportedVersion.Code:                 "this version of the API is not served (ApiVersions lists the versions that are)",
	kerr.TopicAuthorizationFailed.Code:           "the principal may not reach this topic",
	kerr.GroupAuthorizationFailed.Code:           "the principal may not reach this group",
	kerr.ClusterAuthorizationFailed.Code:         "the principal may not act on the cluster as a whole",
	kerr.TransactionalIDAuthorizationFailed.Code: "the principal may not use this transactional id",
	kerr.MessageTooLarge.Code:                    "the batch is larger than the largest payload a partition's log takes",
	kerr.InvalidTopicException.Code:              "not a valid PyStream topic name",
	kerr.TopicAlreadyExists.Code:                 "the topic exists already",
	kerr.InvalidGroupID.Code:                     "a group id must not be empty",
	kerr.GroupIDNotFound.Code:                    "no such group",
	kerr.NonEmptyGroup.Code:                      "the group has members",
	kerr.UnknownMemberID.Code:                    "the group does not know this member (it left, or its session timed out): join again",
	kerr.IllegalGeneration.Code:                  "the group's generation has moved on: join again",
	kerr.RebalanceInProgress.Code:                "the group is rebalancing: join again",
	kerr.OffsetOutOfRange.Code:                   "the offset is outside the partition's log",
	kerr.InvalidRequest.Code:                     "the request is not valid",
	kerr.OperationNotAttempted.Code:              "not attempted: another item of the request was refused",
	kerr.NotEnoughReplicas.Code:                  "written before, not yet on every active replica; send it again",
	kerr.NotEnoughReplicasAfterAppend.Code:       "the leader kept the records but a follower did not store them; not acknowledged",
	kerr.ConcurrentTransactions.Code:             "the transaction is still ending; retry shortly",
	kerr.UnknownProducerID.Code:                  "the producer id is not known to this partition",
	kerr.InvalidProducerEpoch.Code:               "the producer's epoch is not its current one: another producer with its transactional id took over",
	kerr.ProducerFenced.Code:                     "a newer producer with the same transactional id took over",
	kerr.InvalidTxnState.Code:                    "the transaction is not in a state that allows this",
	kerr.TransactionalIDNotFound.Code:            "no such transactional id",
	kerr.OutOfOrderSequenceNumber.Code:           "the batch's sequence number is not the next one the partition expects of the producer",
	kerr.DuplicateSequenceNumber.Code:            "the batch was written already",
	kerr.InvalidRecord.Code:                      "the batch is not valid for an idempotent or transactional producer",
}

// explain gives code's reason on this exchange: the ErrorMessage of every
// item refused with code that has none of its own. The first reason
// given for a code stands.
func (x *exchange) explain(code int16, reason string) {
	if code == 0 || reason == "" {
		return
	}
	for _, r := range x.reasons {
		if r.code == code {
			return
		}
	}
	x.reasons = append(x.reasons, codeReason{code, reason})
}

// refuse is code with its reason: explain, and code.
func (x *exchange) refuse(code int16, reason string) int16 {
	x.explain(code, reason)
	return x.code(code)
}

// note adds attributes for the server's log — an internal error, a path
// — to the request's refusal line (logRefused), never told the client.
func (x *exchange) note(args ...any) {
	x.notes = append(x.notes, args...)
}

// fault is note for a refusal that is the server's fault (a store that
// failed): its line is logged at Warn.
func (x *exchange) fault(args ...any) {
	x.warn = true
	x.note(args...)
}

// reason is what explain was told of code, "" if nothing.
func (x *exchange) reason(code int16) string {
	for _, r := range x.reasons {
		if r.code == code {
			return r.reason
		}
	}
	return ""
}

// codeReason is a code's reason on one exchange.
type codeReason struct {
	code   int16
	reason string
}

// refusedItem is a code an answer carries, how many of its items carry
// it, and the message of the first.
type refusedItem struct {
	code  int16
	items int
	msg   string
}

// fillMessages sets the ErrorMessage of every item of resp refused with a
// code and without a message (message), and returns the codes resp
// carries in the order first met. A field set at a version without it is
// not encoded (kmsg writes the fields of the version only).
func (x *exchange) fillMessages(resp kmsg.Response) []refusedItem {
	var out []refusedItem
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() && v.Elem().Kind() == reflect.Struct {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			sh := shapeOf(v.Type())
			if sh.code >= 0 {
				x.fillItem(v, sh, &out)
			}
			for _, i := range sh.nested {
				walk(v.Field(i))
			}
		default:
		}
	}
	walk(reflect.ValueOf(resp))
	return out
}

// shape is what fillMessages needs of a struct type of an answer: the
// index of its ErrorCode and ErrorMessage fields (-1: none), and of the
// fields that may hold items (structs, slices of them, pointers to them).
type shape struct {
	code, msg int
	nested    []int
}

// shapes caches shape by reflect.Type.
var shapes sync.Map

// shapeOf is t's shape, cached.
func shapeOf(t reflect.Type) *shape {
	if sh, ok := shapes.Load(t); ok {
		return sh.(*shape)
	}
	sh := &shape{code: -1, msg: -1}
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16:
			sh.code = i
		case f.Name == "ErrorMessage" && (f.Type.Kind() == reflect.String ||
			f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.String):
			sh.msg = i
		case f.Type.Kind() == reflect.Struct,
			(f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Pointer) && f.Type.Elem().Kind() == reflect.Struct:
			sh.nested = append(sh.nested, i)
		}
	}
	got, _ := shapes.LoadOrStore(t, sh)
	return got.(*shape)
}

// fillItem is fillMessages on one struct of an answer, of shape sh.
func (x *exchange) fillItem(v reflect.Value, sh *shape, out *[]refusedItem) {
	code := int16(v.Field(sh.code).Int())
	if code == 0 {
		return
	}
	msg := ""
	switch {
	case sh.msg < 0:
		msg = message(code, x.reason(code))
	case v.Field(sh.msg).Kind() == reflect.Pointer:
		em := v.Field(sh.msg)
		if em.IsNil() {
			em.Set(reflect.ValueOf(kmsg.StringPtr(message(code, x.reason(code)))))
		}
		msg = em.Elem().String()
	default:
		em := v.Field(sh.msg)
		if em.String() == "" {
			em.SetString(message(code, x.reason(code)))
		}
		msg = em.String()
	}
	for i := range *out {
		if (*out)[i].code == code {
			(*out)[i].items++
			return
		}
	}
	*out = append(*out, refusedItem{code, 1, msg})
}

// logRefused writes the one line of a refused request: at Warn when it
// carries UNKNOWN_SERVER_ERROR or KAFKA_STORAGE_ERROR (the server's
// fault, or a handler said so: fault), at Debug when every code it
// carries is a routine step of the protocol (routineCodes), at Info
// otherwise; nothing when nothing was refused. A request refused whole
// with no items to carry the code (an empty list) is logged by the code
// it was refused with.
func (x *exchange) logRefused(log *slog.Logger, key int16, version int16, correlationID int32, refused []refusedItem) {
	if len(refused) == 0 && len(x.codes) > 0 {
		refused = []refusedItem{{x.codes[0], 0, message(x.codes[0], x.reason(x.codes[0]))}}
	}
	if len(refused) == 0 || x.logged {
		return
	}
	level, items := slog.LevelDebug, 0
	var codes strings.Builder
	for i, r := range refused {
		items += r.items
		switch {
		case x.warn || r.code == kerr.UnknownServerError.Code || r.code == kerr.KafkaStorageError.Code:
			level = slog.LevelWarn
		case !routineCodes[r.code]:
			level = max(level, slog.LevelInfo)
		}
		if i > 0 {
			fmt.Fprintf(&codes, "; %s×%d: %s", codeName(r.code), r.items, r.msg)
		}
	}
	if key == int16(kmsg.ApiVersions) && level < slog.LevelWarn {
		// A client newer than the listener asks ApiVersions at its own
		// version and takes the v0 answer's key list: how every kgo
		// and Java connection begins, not a refusal anyone acts on.
		level = slog.LevelDebug
	}
	args := []any{"api", kmsg.NameForKey(key), "version", version, "correlation_id", correlationID,
		"client_id", x.clientIDString(), "code", codeName(refused[0].code), "message", refused[0].msg, "items", items}
	if codes.Len() > 0 {
		args = append(args, "other_codes", strings.TrimPrefix(codes.String(), "; "))
	}
	if x.c != nil && x.c.principal != nil {
		args = append(args, "principal", x.c.principal.Name)
	}
	log.Log(x.ctx, level, "kafka request refused", append(args, x.notes...)...)
}

// routineCodes are the refusals every client meets as a normal step —
// a new member's first join, a rebalance, a coordinator or leader that
// moved or is loading, a transaction still ending — and retries without
// its user knowing: a busy listener would log one at Info for most
// requests of a group's life. They are logged at Debug.
var routineCodes = map[int16]bool{
	kerr.MemberIDRequired.Code: true, kerr.RebalanceInProgress.Code: true, kerr.NotCoordinator.Code: true,
	kerr.CoordinatorLoadInProgress.Code: true, kerr.CoordinatorNotAvailable.Code: true,
	kerr.NotLeaderForPartition.Code: true, kerr.LeaderNotAvailable.Code: true,
	kerr.ConcurrentTransactions.Code: true, kerr.UnstableOffsetCommit.Code: true,
	kerr.ElectionNotNeeded.Code: true,
}

// codeName is a Kafka error code's name (UNKNOWN_TOPIC_OR_PARTITION).
func codeName(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprintf("error code %d", code)
}

// gate is the code (and its reason) a request of a's at version is
// answered with before its handler: a version not served, a node still
// loading its metadata, a request for the coordinator elsewhere; 0 when
// none.
func (s *Server) gate(a *api, version int16) (int16, string) {
	switch {
	case version < a.min || version > a.max:
		return kerr.UnsupportedVersion.Code, versionsServed(a, version)
	case a.notReady != 0 && !s.c.MetadataCurrent():
		// Replaying its metadata: try again.
		return a.notReady, "this node is loading the cluster's metadata (replaying it after a start or a leader change); retry shortly"
	case a.coordinated:
		return s.coordinatorCode(), s.coordinatorReason() // NOT_COORDINATOR elsewhere
	}
	return 0, ""
}

// versionsServed is UNSUPPORTED_VERSION's reason for a's version.
func versionsServed(a *api, version int16) string {
	name := kmsg.NameForKey(int16(a.key))
	if a.min == a.max {
		return fmt.Sprintf("%s v%d is not served: PyStream serves v%d only", name, version, a.min)
	}
	return fmt.Sprintf("%s v%d is not served: PyStream serves v%d to v%d", name, version, a.min, a.max)
}

// coordinatorReason is the reason of coordinatorCode's refusal: the node
// that coordinates groups and transactions, when one is known.
func (s *Server) coordinatorReason() string {
	if s.dir == nil {
		return ""
	}
	if id, here := s.dir.GroupCoordinator(); !here && id != 0 {
		return fmt.Sprintf("node %d coordinates groups and transactions, not this one; find the coordinator again", id)
	}
	return ""
}
