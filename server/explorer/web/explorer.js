// The explorer's main module: it follows the events stream, keeps the
// latest state, redraws, and turns clicks into REST calls.

import { api, headers, setToken } from "./api.js";
import { follow } from "./stream.js";
import { el, drawBrokers, drawPartitions, drawEntry, drawConsumers, drawGroups, drawRecords, drawQuarantine, rateText } from "./draw.js";
import { SCENARIOS } from "./scenarios.js";

const $ = (id) => document.getElementById(id);
let state = null;
// samples are each partition's leader log end over the last seconds, by
// arrival time: the records per second.
const samples = {};
const rates = {};

function onUpdate(u) {
  for (const e of u.journal || []) drawEntry(e);
  if (!u.cluster) return;
  state = u.cluster;
  const now = performance.now();
  for (const t of state.topics) for (const p of t.partitions) {
    const name = `${t.name}/${p.partition}`;
    const s = (samples[name] ||= []);
    s.push([now, p.log_end ?? 0]);
    while (s.length > 2 && now - s[1][0] > 5000) s.shift();
  }
  redrawSoon();
}

// redrawSoon draws the latest state at the browser's next frame: updates
// that come between two frames are drawn once, and a page in a hidden tab
// draws nothing until it is shown.
let redrawing = false;
function redrawSoon() {
  if (redrawing) return;
  redrawing = true;
  requestAnimationFrame(() => {
    redrawing = false;
    redraw();
  });
}

function measureRates() {
  const now = performance.now();
  for (const [name, s] of Object.entries(samples)) {
    const [t0, n0] = s[0], n1 = s[s.length - 1][1];
    rates[name] = now - t0 > 200 ? Math.max(0, n1 - n0) / ((now - t0) / 1000) : 0;
  }
}

function redraw() {
  measureRates();
  drawBrokers(state);
  drawPartitions(state, rates);
  drawConsumers(state);
  drawGroups(state);
  fillSelects();
  scenariosAllowed(state.mode !== "cluster" && state.controller.switchable, state.mode === "cluster");
}

// scenariosAllowed turns the guided scenarios off, with a sentence that
// says why, where they cannot run: in cluster mode, which leaves stopping
// and starting a broker — every scenario's first move — to the process
// manager. Automatic healing itself stays switchable there, and the
// partitions' buttons (fail over, recover, catch up) work as in one
// process.
function scenariosAllowed(ok, cluster) {
  const note = $("scenario-note");
  note.hidden = ok;
  note.textContent = ok ? "" : cluster
    ? "The guided scenarios are off in cluster mode: each stops and starts brokers, and a cluster of processes " +
      "leaves that to its process manager. Fail over, recover and catch up work from the partitions' buttons, " +
      "and the automatic healing switch below works for the whole cluster. Run the scenarios against a single server (make run)."
    : "The guided scenarios are off here: each turns automatic healing off so that you make every move, and this server cannot switch it.";
  for (const b of $("scenario-buttons").querySelectorAll("button")) b.disabled = !ok;
  if (!ok && running) $("scenario-next").disabled = true;
}

// Every second the rates decay when nothing arrives: only their text is
// redrawn.
setInterval(() => {
  const now = performance.now();
  for (const s of Object.values(samples)) { s.push([now, s[s.length - 1][1]]); while (s.length > 2 && now - s[1][0] > 5000) s.shift(); }
  measureRates();
  for (const span of document.querySelectorAll("[data-rate]")) span.textContent = rateText(rates[span.dataset.rate]);
}, 1000);

// One listener for every action button of the drawing (draw.js).
document.addEventListener("click", (ev) => {
  const b = ev.target.closest("button[data-act]");
  if (b) act(b.dataset.act, ...JSON.parse(b.dataset.args));
});

function fillSelects() {
  const names = state.topics.map((t) => t.name);
  const parts = state.topics.flatMap((t) => t.partitions.map((p) => `${t.name}/${p.partition}`));
  for (const [id, values] of [["produce-topic", names], ["browse-partition", parts]]) {
    const sel = $(id);
    if ([...sel.options].map((o) => o.value).join() === values.join()) continue;
    const keep = sel.value;
    sel.replaceChildren(...values.map((v) => el("option", { value: v }, v)));
    if (values.includes(keep)) sel.value = keep;
  }
}

// say shows what an action did, or why it was refused.
function say(text, bad = false) {
  $("outcome").textContent = text;
  $("outcome").className = bad ? "bad" : "";
}

async function act(what, ...args) {
  try {
    switch (what) {
      case "stop": await api.stopBroker(args[0]); say(`Broker ${args[0]} stopped.`); break;
      case "start": await api.startBroker(args[0]); say(`Broker ${args[0]} started.`); break;
      case "failover": { const r = await api.failover(...args); say(`Failover: broker ${r.new_leader} leads, epoch ${r.leader_epoch}.`); break; }
      case "catchUp": { const r = await api.catchUp(...args); say(`Catch-up copied ${r.copied} record(s).`); break; }
      case "recover": { const r = await api.recover(...args); say(`Recovery: common prefix ${r.common_prefix}, cut ${r.dropped}, copied ${r.copied}.`); break; }
      case "healing": await api.healing(args[0], "from the explorer"); say(`Automatic healing ${args[0] ? "on" : "off"}.`); break;
      case "quarantine": {
        drawQuarantine(await api.quarantine(args[0]), $("browse-hex").checked);
        $("records").scrollIntoView({ block: "nearest" });
        say(`The records journal entry ${args[0]} kept are under "Browse a partition's records".`);
        break;
      }
    }
  } catch (e) {
    say(`${what} refused: ${e.message}`, true);
  }
}

$("produce-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    const r = await api.produce($("produce-topic").value, $("produce-key").value, $("produce-value").value);
    const rec = r.records[0];
    say(`Produced at ${$("produce-topic").value}/${rec.partition} offset ${rec.offset}, acknowledged by brokers ${rec.brokers.join(", ")}.`);
  } catch (e) {
    say(`Produce refused: ${e.message}`, true);
  }
});

$("topic-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  try {
    await api.createTopic($("topic-name").value, +$("topic-partitions").value, +$("topic-rf").value);
    say(`Topic ${$("topic-name").value} created.`);
  } catch (e) {
    say(`Create refused: ${e.message}`, true);
  }
});

$("browse-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const [topic, p] = $("browse-partition").value.split(/\/(?=\d+$)/);
  try {
    drawRecords(await api.fetch(topic, p, +$("browse-offset").value), $("browse-hex").checked);
  } catch (e) {
    say(`Fetch refused: ${e.message}`, true);
  }
});

$("token").value = sessionStorage.getItem("pystream-token") || "";
$("token").addEventListener("change", () => { setToken($("token").value); stream.reconnect(); });

// Scenarios: a sentence per step; Next runs it and shows the next one.
let running = null;
const ctx = {
  freshTopic: () => "demo-" + Date.now().toString(36).slice(-5),
  part: () => state?.topics.find((t) => t.name === ctx.topic)?.partitions[0],
  waitFor: async (pred, ms = 10000) => {
    const end = performance.now() + ms;
    while (!(state && pred())) {
      if (performance.now() > end) throw new Error("the cluster did not get there in time");
      await new Promise((r) => setTimeout(r, 100));
    }
  },
};

function showStep() {
  const { sc, steps, i } = running;
  const done = i >= steps.length;
  const step = steps[i];
  $("scenario").hidden = false;
  $("scenario").dataset.step = i;
  $("scenario").dataset.done = done;
  $("scenario-name").textContent = `${sc.name} — ${done ? "done" : `step ${i + 1} of ${steps.length}`}`;
  $("scenario-step").textContent = done ? "The scenario is over: the picture shows the state the phase page describes." :
    typeof step.say === "function" ? step.say() : step.say;
  $("scenario-doc").replaceChildren("The rule: ", el("a", { href: sc.doc.href, target: "_blank", rel: "noopener" }, `docs/${sc.doc.page} § ${sc.doc.heading}`));
  $("scenario-next").disabled = done;
}

$("scenario-next").addEventListener("click", async () => {
  const step = running.steps[running.i];
  $("scenario-next").disabled = true;
  try {
    say(await step.run());
    running.i++;
  } catch (e) {
    say(`This step failed: ${e.message}. Press Next to try it again.`, true);
  }
  showStep();
  $("scenario-next").focus();
});
$("scenario-close").addEventListener("click", () => { $("scenario").hidden = true; running = null; });

$("scenario-buttons").append(...SCENARIOS.map((sc) => el("button", { type: "button", id: `scenario-${sc.id}`, onclick: () => {
  running = { sc, steps: sc.steps(ctx), i: 0 };
  showStep();
  $("scenario-next").focus();
} }, sc.name)));

const stream = follow({
  tail: 200, headers, onUpdate,
  onStatus: (up) => {
    $("conn").textContent = up ? "live: following /api/events" : "disconnected: reconnecting…";
    $("conn").className = up ? "" : "down";
  },
  // The server refused the token (or its absence): say why, in its
  // words, and open the token field; a new token reconnects.
  onRefused: (message) => {
    $("conn").textContent = `refused: ${message} — type a token below`;
    $("conn").className = "down";
    $("token-box").open = true;
  },
});
