// Package explorer serves PyStream's explorer: a page at /explorer that
// draws the cluster live — brokers, every replica's log between its log
// start and log end, the high watermark, leaders and their epochs, the
// active sets, the journal as a timeline, the consumers and consumer
// groups with their lag — and lets a learner break
// things (stop a broker, turn automatic healing off) and watch the rules
// of phases 4 and 5 act; and the stream that feeds it, GET /api/events.
//
// # The events stream
//
// GET /api/events is a text/event-stream (server-sent events). Each
// message is an "update" whose data is an apiclient.Update: the cluster's
// state when it changed since the client's last message, and the journal
// entries written since then. A client gets at most one message per
// Config.MinGap (100 ms: ten a second), however fast the cluster changes;
// changes in between are coalesced — the state is sent as it is when the
// message goes out, the journal entries all together.
//
// A message with journal entries has an id line, the offset of its last
// entry. A client that reconnects sends it back as Last-Event-ID (a
// browser's EventSource does so by itself) and the journal resumes after
// it; the state always comes whole in the first message.
//
// # How changes are found
//
// One poller per Explorer (not one per client) reads the state and the
// journal's end every Config.Interval (100 ms) while at least one client
// is connected, and wakes the clients when either changed. It compares
// the encoded state, byte for byte, with the last one. The one change the
// cluster reports, a partition's high watermark rising
// (server/backend.Hub, Config.Advanced), has it read at once — new
// records are drawn as they are acknowledged — but never twice within
// Config.MinGap, however fast records arrive. With no client connected
// nothing is polled.
//
// # Bounded memory, slow clients
//
// A client has no queue: it holds a flag (something changed), its journal
// offset and the version of the state it last sent; the state itself is
// encoded once per change and its bytes shared by every stream. A message holds the state and at most Config.MaxEntries journal
// entries. A client that does not read blocks its own writes only; after
// Config.WriteStall without progress the write fails, the stream ends
// and the drop is logged. At most Config.MaxClients streams are served at
// once; more are refused with 503.
//
// # What it needs from the server
//
// The package never imports the server: New takes a Source (the state
// and the journal, as the HTTP API's wire shapes; the server puts its
// consumer groups into the state) and returns the handlers, which the server mounts behind its own authentication (the
// stream needs the read role; the page and its files are open, as /docs
// is) and request logging. A server shutting down calls EndStreamsOf: its
// streams end, and a request still under way opens none. The page calls the same REST API as every
// other client — produce, fetch, stop and start, failover, catch-up,
// recover, PUT /api/controller — so the same checks apply to it.
package explorer
