// Journal entries in plain words, each with the page that explains the
// rule behind it. The pages are the repository's docs/, which the server
// holds and serves at /docs/pages/{page}: the links work offline.

// anchor is a heading's id on the served page (and on GitHub): lower
// case, every character but a letter, a digit, '_', '-' and the space
// dropped, each space then '-'. The server renders the headings with the
// same rule (docs.Anchor, in the repository's docs/doc.go); a browser
// test checks that they agree for every rule below.
export const anchor = (heading) =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{Mn}_ -]/gu, "").replace(/ /g, "-");

// rule names a page and a heading of it.
const rule = (page, heading) => ({ page, heading, href: `/docs/pages/${page}#${anchor(heading)}` });

export const RULES = {
  failover: rule("phase-5-failover.md", "Candidate selection and safety checks"),
  deactivate: rule("phase-5-failover.md", "Active vs assigned replicas"),
  recover: rule("phase-5-failover.md", "Recovery, step by step"),
  "catch-up": rule("phase-4-replication.md", "Catch-up"),
  "move-leader": rule("design.md", "The controller's rules"),
  "broker-stop": rule("phase-4-replication.md", "Failure semantics and lag"),
  "broker-start": rule("phase-4-replication.md", "Failure semantics and lag"),
  healing: rule("design.md", "The controller"),
  retention: rule("phase-1-log.md", "Segments and retention"),
  "delete-topic": rule("design.md", "Deleting a topic"),
  "alter-config": rule("design.md", "Topic configuration"),
  hw: rule("phase-4-replication.md", "High watermark"),
  unacked: rule("phase-5-failover.md", "Why unacknowledged records can be lost, and offsets reused"),
  producers: rule("phase-6-network-api.md", "Producers and transaction markers"),
};

// producerText is a record's producer in the records table: its id, the
// epoch of that id and the record's sequence number, "" for a record
// without one. A marker numbers nothing: its sequence is left out.
export function producerText(r) {
  const p = r.producer;
  if (!p) return "";
  return r.marker ? `${p.id} · epoch ${p.epoch}` : `${p.id} · epoch ${p.epoch} · seq ${p.sequence}`;
}

// markerText says what a transaction marker (Kafka's control record)
// does, for the row that stands for it in the records table.
export function markerText(m) {
  return m === "commit"
    ? "commit marker: the producer's transaction ends here, committed; read_committed consumers read its records"
    : "abort marker: the producer's transaction ends here, aborted; read_committed consumers skip its records";
}

const where = (e) => (e.topic ? e.topic + (e.partition !== undefined ? "/" + e.partition : "") : "");

// explain says what an entry means, in one or two sentences.
export function explain(e) {
  const p = where(e), b = e.broker, what = `${e.event} of ${p || "broker " + b}`;
  switch (e.phase) {
    case "refused": return `The controller decided on a ${what}, and the operation refused it: nothing changed. The error says why.`;
    case "failed": return `The ${what} failed; the error says why.`;
    case "rolled-back": return `The server stopped before this ${what} took effect; starting again, it rolled it back.`;
    case "completed": return `The server stopped after this ${what} took effect; starting again, it recorded it as done.`;
  }
  switch (e.event) {
    case "failover":
      return e.phase === "intent"
        ? `Broker ${b}, the leader of ${p}, is gone. The active follower with the longest log takes over (the lowest id on a tie); ` +
          `the old leader leaves the active set and must come back through recovery.`
        : `${p} has a new leader.`;
    case "deactivate":
      return `Broker ${b} leaves the active set of ${p}: writes stop waiting for it, and the high watermark moves on without it.`;
    case "recover":
      return e.phase === "intent"
        ? `Broker ${b} comes back to ${p}: its log is cut back to the longest prefix it shares with the leader — what lies past it was ` +
          `never acknowledged — then it copies what it misses and rejoins the active set.`
        : `Broker ${b} is an active replica of ${p} again.`;
    case "catch-up":
      return `Follower ${b} of ${p} was behind: its log was proven a prefix of the leader's, then the missing records were copied.`;
    case "move-leader":
      return `Leadership of ${p} moves to broker ${b}, the preferred replica, now that it holds the whole log; the epoch goes up.`;
    case "broker-stop":
      return `Broker ${b} stopped, as if its machine had failed. Writes to partitions it leads, or that wait for it, fail until the rules act.`;
    case "broker-start":
      return `Broker ${b} started. Its replicas are not trusted back on their own: catch-up or recovery first.`;
    case "healing":
      if (e.automatic === undefined) return "Automatic healing was switched.";
      return e.automatic
        ? "Automatic healing is on: the controller fails over, shrinks active sets and recovers by its rules."
        : "Automatic healing is off: the controller fails nothing over and recovers nothing; every such step is yours.";
    case "retention":
      return `Retention deleted old segments of ${p}: its log start moved up.`;
    default:
      return e.summary;
  }
}

// candidates are the brokers a failover compared and their log ends, the
// winner first: the entry's candidates field (none on entries written
// before the journal had it).
export function candidates(e) {
  return e.event === "failover" ? (e.candidates || []).map((c) => ({ broker: c.broker, logEnd: c.log_end })) : [];
}

// cut is what a recovery cut, from the entry's cut field, once it is
// done (the intent only announces it), or null: the first and last
// offset, and how many.
export function cut(e) {
  if (e.event !== "recover" || e.phase !== "done" || !e.cut) return null;
  return { from: e.cut.from, to: e.cut.to - 1, count: e.cut.to - e.cut.from };
}
