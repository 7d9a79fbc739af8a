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
};

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
      return e.summary.startsWith("automatic healing off")
        ? "Automatic healing is off: the controller fails nothing over and recovers nothing; every such step is yours."
        : "Automatic healing is on: the controller fails over, shrinks active sets and recovers by its rules.";
    case "retention":
      return `Retention deleted old segments of ${p}: its log start moved up.`;
    default:
      return e.summary;
  }
}

// candidates reads a failover intent's summary, "... candidates 2 (log end
// 7), 3 (7); ...": the brokers it compared and their log ends, the winner
// first.
export function candidates(e) {
  const m = /candidates (.*?)(;|$)/.exec(e.summary || "");
  if (e.event !== "failover" || !m) return [];
  return m[1].split(", ").map((s) => {
    const c = /(\d+) \((?:log end )?(\d+)\)/.exec(s);
    return c ? { broker: +c[1], logEnd: +c[2] } : null;
  }).filter(Boolean);
}

// cut reads a recovery's summary: the offsets it cut, or null.
export function cut(e) {
  const m = /cuts offsets (\d+)\.\.(\d+) \((\d+) records/.exec(e.summary || "");
  return e.event === "recover" && m ? { from: +m[1], to: +m[2], count: +m[3] } : null;
}
