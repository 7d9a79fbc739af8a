// Drawing: the state and the journal into the page. Every function here
// rebuilds its part of the page from data; none calls the server.

import { RULES, explain, candidates, cut, producerText, markerText } from "./words.js";

// el builds an element: el("p", { class: "x" }, "text", child, ...).
export function el(tag, attrs = {}, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) {
      n.addEventListener(k.slice(2), v);
      listening.add(n);
    } else n.setAttribute(k, v === true ? "" : v);
  }
  n.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return n;
}

// replace makes a container's children look like new ones, changing only
// what differs: an element where the new drawing has one of the same tag
// (and the same id, if either has one) stays, with its attributes and
// text brought up to date; only what is new is put in and only what is
// gone is taken out. A redraw at ten updates a second then costs the
// browser the few numbers that moved, not a new page: a bar's width, a
// log end's text. And an element the learner is using stays the same
// element: a click that is under way when an update comes (pressed on the
// old drawing, released on the new one) still lands on its button, and
// keyboard focus stays where it was. Buttons carry their action in
// data-act and data-args; one listener (explorer.js) acts on every click.
// Where the focused element did go (its part was redrawn unlike), the
// focus moves to its like: the element with its id, or else one of the
// same tag, link and text.
export function replace(container, children) {
  // A part left out (cond && el(...), which gives false) is no child.
  children = children.flat().filter((c) => c !== null && c !== undefined && c !== false && c !== "");
  const active = document.activeElement && container.contains(document.activeElement) ? document.activeElement : null;
  const like = (n) => `${n.tagName}|${n.getAttribute("href") || ""}|${n.textContent}`;
  const look = active ? like(active) : "";
  patchChildren(container, children.map((c) => (c instanceof Node ? c : document.createTextNode(String(c)))));
  if (!active || document.activeElement === active) return;
  // Moved, where moveBefore is missing, or redrawn unlike.
  if (active.isConnected) active.focus();
  else if (active.id) document.getElementById(active.id)?.focus();
  else [...container.querySelectorAll(active.tagName)].find((n) => like(n) === look)?.focus();
}

// listening holds the elements el gave a listener: a patch copies
// attributes, not listeners, so such an element is never patched into
// another, nor another into it. Neither is a form control, whose value is
// a property the learner may be changing.
const listening = new WeakSet();
const control = (n) => n.nodeName === "INPUT" || n.nodeName === "SELECT" || n.nodeName === "TEXTAREA";

// alike tells whether node a can be patched into node b: the same kind,
// the same tag, the same id, and neither a listening element nor a form
// control.
const alike = (a, b) => a.nodeType === b.nodeType && a.nodeName === b.nodeName &&
  (a.nodeType !== Node.ELEMENT_NODE ||
    (a.id === b.id && !listening.has(a) && !listening.has(b) && !control(a)));

// move puts node n before node here in parent, keeping its focus where
// the browser can (moveBefore); insertBefore takes the focus off it, and
// replace gives it back.
const move = (parent, n, here) => (parent.moveBefore && n.isConnected ? parent.moveBefore(n, here) : parent.insertBefore(n, here));

// patchChildren makes parent's children the wanted nodes, keeping those
// that are alike, in order; an element with an id is found wherever it is
// among them.
function patchChildren(parent, wanted) {
  const byID = new Map();
  for (const n of parent.children) if (n.id) byID.set(n.id, n);
  wanted.forEach((w, i) => {
    const here = parent.childNodes[i] || null;
    const have = w.nodeType === Node.ELEMENT_NODE && w.id ? byID.get(w.id) : here;
    if (!have || !alike(have, w)) {
      parent.insertBefore(w, here);
      return;
    }
    if (have !== here) move(parent, have, here);
    patch(have, w);
  });
  while (parent.childNodes.length > wanted.length) parent.lastChild.remove();
}

// patch makes node have look like node want.
function patch(have, want) {
  if (have.nodeType !== Node.ELEMENT_NODE) {
    if (have.nodeValue !== want.nodeValue) have.nodeValue = want.nodeValue;
    return;
  }
  for (const a of [...have.attributes]) if (!want.hasAttribute(a.name)) have.removeAttribute(a.name);
  for (const a of want.attributes) {
    if (have.getAttribute(a.name) === a.value) continue;
    // The CSP allows no style attribute written as text, only the
    // element's style object.
    if (a.name === "style") have.style.cssText = want.style.cssText;
    else have.setAttribute(a.name, a.value);
  }
  patchChildren(have, [...want.childNodes]);
}

// button is a button that asks explorer.js to act(what, ...args).
const button = (id, what, args, label, cls) =>
  el("button", { type: "button", id, class: cls, "data-act": what, "data-args": JSON.stringify(args) }, label);

const docLink = (r) => r && el("a", { href: r.href, target: "_blank", rel: "noopener" }, `docs/${r.page} § ${r.heading}`);

export function drawBrokers(state) {
  const lead = {}, follow = {};
  for (const t of state.topics) for (const p of t.partitions) {
    const name = `${t.name}/${p.partition}`;
    (lead[p.leader] ||= []).push(name);
    for (const f of p.followers) (follow[f] ||= []).push(name);
  }
  replace(document.getElementById("brokers"), state.brokers.map((b) => el("li",
    { class: "broker" + (b.available ? "" : " stopped"), "data-broker": b.id, "data-available": String(b.available) },
    el("h3", {}, `Broker ${b.id} `, el("span", { class: "state" }, b.available ? "● running" : "✕ stopped")),
    el("p", {}, "leads: " + (lead[b.id] || ["nothing"]).join(", ")),
    el("p", {}, "follows: " + (follow[b.id] || ["nothing"]).join(", ")),
    b.reason && el("p", { class: "note" }, b.reason),
    state.mode === "cluster"
      ? el("p", { class: "note" }, "A process: its process manager stops and starts it.")
      : button(`broker-${b.id}-toggle`, b.available ? "stop" : "start", [b.id], b.available ? `Stop broker ${b.id}` : `Start broker ${b.id}`, "quiet"))));

  const c = state.controller;
  replace(document.getElementById("healing"), [
    c.automatic ? `Automatic healing is on: the controller acts after ${c.failover_after_ms} ms. `
      : "Automatic healing is off: failover, recovery and the active set are yours. ",
    !c.switchable && "It cannot be switched from here. ",
    c.switchable && state.mode === "cluster" && "The switch is the cluster's metadata: it holds on every node, through a change of controller and a restart. ",
    c.switchable && button("healing-toggle", "healing", [!c.automatic], c.automatic ? "Turn automatic healing off" : "Turn automatic healing on", "quiet"),
    " ", docLink(RULES.healing)]);
}

// drawPartitions draws every partition: one bar per replica from log
// start to log end, the high watermark across them.
export function drawPartitions(state, rates) {
  const cards = [];
  for (const t of state.topics) for (const p of t.partitions) {
    const name = `${t.name}/${p.partition}`;
    const ends = p.replicas.map((r) => r.log_end ?? 0);
    const scale = Math.max(1, p.high_watermark, ...ends);
    const pct = (n) => (100 * n / scale).toFixed(2) + "%";
    const leader = p.replicas.find((r) => r.broker_id === p.leader);
    const rows = p.replicas.map((r) => {
      const isLeader = r.broker_id === p.leader, known = r.log_end !== null;
      const bar = el("div", { class: "bar" });
      bar.style.left = pct(p.log_start);
      bar.style.width = known ? pct(Math.max(0, r.log_end - p.log_start)) : "100%";
      const hw = el("div", { class: "hw", title: `high watermark ${p.high_watermark}` });
      hw.style.left = pct(p.high_watermark);
      return el("div", { class: ["replica", isLeader && "leader", !r.active && "inactive", !known && "unknown"].filter(Boolean).join(" "),
        "data-broker": r.broker_id, "data-log-end": known ? r.log_end : "unknown" },
        el("span", {}, isLeader && el("span", { class: "crown", "aria-label": "leader" }, "♛ "), `broker ${r.broker_id}`,
          el("span", { class: "tag" }, isLeader ? "leader" : "follower"),
          el("span", { class: "tag" }, r.active ? "active" : "inactive")),
        el("div", { class: "track", role: "img", "aria-label": known
          ? `log from ${p.log_start} to ${r.log_end}, high watermark ${p.high_watermark}` : "log end unknown: broker stopped" }, bar, hw),
        el("span", {}, known ? `end ${r.log_end}` : "end unknown", r.lag !== null && !isLeader ? ` · lag ${r.lag}` : ""));
    });
    // Both modes offer the operator's moves; in cluster mode the node asked
    // sends each to the process that runs it.
    const buttons = [];
    if (leader && !leader.available) buttons.push(button(`failover-${name}`, "failover", [t.name, p.partition], "Fail over"));
    for (const r of p.replicas) {
      if (r.broker_id === p.leader || !r.available) continue;
      if (!r.active) buttons.push(button(`recover-${name}-${r.broker_id}`, "recover", [t.name, p.partition, r.broker_id], `Recover broker ${r.broker_id}`));
      else if (r.lag > 0) buttons.push(button(`catchup-${name}-${r.broker_id}`, "catchUp", [t.name, p.partition, r.broker_id], `Catch up broker ${r.broker_id}`));
    }
    cards.push(el("div", { class: "part", "data-part": name, "data-hw": p.high_watermark, "data-leader": p.leader, "data-epoch": p.leader_epoch },
      el("h3", {}, name,
        el("span", {}, "leader ", el("span", { class: "crown", "aria-hidden": "true" }, "♛"), ` broker ${p.leader}, epoch ${p.leader_epoch}`),
        el("span", {}, `high watermark ${p.high_watermark}`),
        el("span", {}, `active [${p.active.join(" ")}]`),
        el("span", { class: "rate", "data-rate": name }, rateText(rates[name]))),
      rows, buttons.length > 0 && el("div", { class: "row actions" }, buttons)));
  }
  if (cards.length === 0) cards.push(el("p", {}, "No topic yet: create one (Do something), or start a scenario."));
  replace(document.getElementById("partitions"), cards);
}

export const rateText = (r) => `${(r || 0).toFixed(1)} records/s`;

// kept tells whether a journal entry names a quarantine file that its
// recovery wrote: a done entry, or the one start-up writes for a recovery
// a crash interrupted and it completed.
const kept = (e) => e.quarantine && (e.phase === "done" || e.phase === "completed");

// drawEntry adds one journal entry at the top of the timeline.
export function drawEntry(e) {
  const list = document.getElementById("timeline");
  const cands = candidates(e), c = cut(e);
  const r = RULES[e.event];
  list.prepend(el("li", { value: e.offset, "data-event": e.event, "data-phase": e.phase, "data-offset": e.offset, class: e.phase },
    el("span", { class: "what" }, `${e.event} ${e.phase}`), " ",
    el("span", { class: "by" }, `by ${e.by}, ${new Date(e.time).toLocaleTimeString()}`),
    el("div", {}, explain(e)),
    cands.length > 0 && el("div", {}, "Candidates compared (log end):",
      el("ul", { class: "cands" }, cands.map((k, i) => el("li", { "data-candidate": k.broker },
        `broker ${k.broker}: log end ${k.logEnd}`, i === 0 ? " — chosen" : "")))),
    c && el("div", { class: "quarantine", "data-quarantine": `${c.from}-${c.to}` },
      `Quarantined: offsets ${c.from} to ${c.to} (${c.count} record${c.count === 1 ? "" : "s"}), never acknowledged`,
      e.quarantine ? `, kept in ${e.quarantine}` : "", ". ", docLink(RULES.unacked),
      kept(e) && " ", kept(e) && button(`quarantine-${e.offset}`, "quarantine", [e.offset], "Show the records", "quiet")),
    el("div", { class: "note" }, e.summary, e.reason ? ` — because ${e.reason}` : "", e.error ? ` — error: ${e.error}` : ""),
    r && el("div", {}, "Rule: ", docLink(r))));
  while (list.children.length > 300) list.lastChild.remove();
}

export function drawConsumers(state) {
  const hw = {};
  for (const t of state.topics) for (const p of t.partitions) hw[`${t.name}/${p.partition}`] = p.high_watermark;
  const rows = state.consumers.map((c) => {
    const name = `${c.topic}/${c.partition}`, h = hw[name] ?? 0;
    return el("tr", {}, el("td", {}, c.consumer_id), el("td", {}, name), el("td", {}, String(c.offset)),
      el("td", {}, String(h)), el("td", {}, String(Math.max(0, h - c.offset))));
  });
  if (rows.length === 0) rows.push(el("tr", {}, el("td", { colspan: 5 }, "No committed offsets yet (PUT /api/consumers/{id}/offsets/...).")));
  replace(document.querySelector("#consumers tbody"), rows);
}

// drawGroups draws every consumer group with members: its protocol,
// state and epoch, each member with the partitions it holds, and per
// partition the committed offset against the high watermark, and the lag.
export function drawGroups(state) {
  const parts = (tps) => tps.flatMap((tp) => tp.partitions.map((p) => `${tp.topic}/${p}`)).join(", ");
  const num = (n) => (n === null || n === undefined ? "—" : String(n));
  const cards = (state.groups || []).map((g) => el("div", { class: "group card", "data-group": g.group, "data-state": g.state },
    el("h4", {}, `Group ${g.group} `, el("span", { class: "note" },
      `${g.protocol === "classic" ? "Kafka classic protocol" : "consumer protocol (HTTP)"}, ${g.state}, epoch ${g.epoch}`)),
    el("ul", { class: "members" }, g.members.map((m) => el("li", { "data-member": m.member_id },
      `member ${m.member_id}`, m.client_id ? ` (${m.client_id})` : "", ": ",
      m.assignment.length > 0 ? "holds " + parts(m.assignment) : "holds no partition yet"))),
    g.offsets.length > 0 && el("table", {},
      el("thead", {}, el("tr", {}, ["Partition", "Member", "Committed", "High watermark", "Lag"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, g.offsets.map((o) => el("tr", { "data-part": `${o.topic}/${o.partition}` },
        el("td", {}, `${o.topic}/${o.partition}`), el("td", {}, o.member_id || "none"), el("td", {}, num(o.committed_offset)),
        el("td", {}, num(o.log_end_offset)), el("td", { "data-lag": num(o.lag) }, num(o.lag))))))));
  if (cards.length === 0) cards.push(el("p", { class: "note" }, "No consumer group has members: POST /api/groups/{group}/heartbeat joins one, ",
    "so does pystream consume -G, or a Kafka client's consumer group."));
  replace(document.getElementById("groups"), cards);
}

const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
const decode = (s, asHex) => {
  if (s === null || s === undefined) return "(null)";
  const bytes = Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
  return asHex ? hex(bytes) : new TextDecoder().decode(bytes);
};

export function drawRecords(resp, asHex) {
  drawRecordTable(resp.records, asHex, `log start ${resp.log_start}, high watermark ${resp.high_watermark}, ` +
    `leader's log end ${resp.log_end}: a fetch stops at the high watermark.`);
}

// drawQuarantine shows the records a recovery cut, read back from their
// quarantine file through the journal entry that names it.
export function drawQuarantine(resp, asHex) {
  const n = resp.to - resp.from;
  drawRecordTable(resp.records, asHex, `Quarantined by journal entry ${resp.entry}: ${n} record${n === 1 ? "" : "s"} ` +
    `cut from broker ${resp.broker}'s replica of ${resp.topic}/${resp.partition}, offsets ${resp.from} to ${resp.to - 1}, ` +
    `never acknowledged, kept in ${resp.file}` + (resp.next_offset < resp.to ? ` (the first ${resp.records.length} shown).` : "."));
}

// drawRecordTable draws records one row each. A record of an idempotent
// producer names it in the producer column, with a "txn" tag when it
// belongs to a transaction; a transaction marker is a row of its own
// style, which says in words what it does instead of a key and a value.
function drawRecordTable(records, asHex, note) {
  const rows = records.map((r) => {
    const attrs = { "data-offset": r.offset, "data-producer": r.producer?.id, "data-transactional": r.transactional,
      "data-marker": r.marker, class: r.marker && `marker ${r.marker}` };
    const producer = el("td", { class: "producer" }, producerText(r), r.transactional && !r.marker && " ",
      r.transactional && !r.marker && el("span", { class: "tag", title: "in a transaction" }, "txn"));
    const time = el("td", {}, new Date(r.timestamp_ms).toISOString());
    if (r.marker) return el("tr", attrs, el("td", {}, String(r.offset)), time, el("td", { colspan: 3 }, markerText(r.marker)), producer);
    return el("tr", attrs, el("td", {}, String(r.offset)), time,
      el("td", {}, decode(r.key, asHex)), el("td", {}, decode(r.value, asHex)),
      el("td", {}, (r.headers || []).map((h) => `${h.key}=${decode(h.value, asHex)}`).join(", ")), producer);
  });
  const withProducer = records.some((r) => r.producer);
  replace(document.getElementById("records"), [
    el("p", { class: "note" }, note),
    withProducer && el("p", { class: "note" }, "producer: the idempotent producer's id · epoch · sequence number; " +
      "txn: the record belongs to a transaction, which a commit or abort marker ends. ", docLink(RULES.producers)),
    el("table", {}, el("thead", {}, el("tr", {}, ["offset", "time", "key", "value", "headers", "producer"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows))]);
}
