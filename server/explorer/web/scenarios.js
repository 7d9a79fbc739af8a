// Three guided scenarios. Each step is a sentence and what Next does; the
// page runs the steps through the same REST API as every other button.
// ctx gives the latest state (part: the scenario topic's partition) and
// waitFor.

import { api } from "./api.js";
import { RULES } from "./words.js";

// refused runs a request that the rule must refuse and says why; if it
// goes through, the step fails: with automatic healing off nothing acts
// on its own, so a write that succeeds here breaks the rule the step
// shows.
async function refused(f, what) {
  try {
    await f();
  } catch (e) {
    return `${what} was refused, as the rule says: ${e.message}`;
  }
  throw new Error(`${what} went through, but the rule says it must be refused`);
}

const setup = (ctx, reason, n) => async () => {
  await api.healing(false, reason);
  ctx.topic = ctx.freshTopic();
  await api.createTopic(ctx.topic, 1, 3);
  await ctx.waitFor(() => ctx.part()?.replicas.every((r) => r.available && r.active));
  for (let i = 0; i < n; i++) await api.produce(ctx.topic, "", "r" + i);
  ctx.leader = ctx.part().leader;
  [ctx.f1, ctx.f2] = ctx.part().followers;
  return `Topic ${ctx.topic}: leader broker ${ctx.leader}, followers ${ctx.f1} and ${ctx.f2}; ${n} records on every replica.`;
};

// healBack turns automatic healing on and waits for the controller to
// hand leadership back to the preferred replica (ctx.leader, the first
// leader), as its last rule says.
const healBack = (ctx, reason) => async () => {
  await api.healing(true, reason);
  await ctx.waitFor(() => ctx.part().leader === ctx.leader && ctx.part().active.length === 3, 15000);
  const p = ctx.part();
  return `Broker ${p.leader}, the preferred replica, leads again at epoch ${p.leader_epoch}; active set [${p.active.join(" ")}], ` +
    `high watermark ${p.high_watermark}.`;
};

const replica = (ctx, b) => ctx.part().replicas.find((r) => r.broker_id === b);

export const SCENARIOS = [
  {
    id: "leader-dies", name: "The leader dies", doc: RULES.failover,
    steps: (ctx) => [
      { say: "We turn automatic healing off, so that you do each step, then create a topic with one partition on three brokers and write three records.",
        run: setup(ctx, "scenario: the leader dies", 3) },
      { say: () => `Broker ${ctx.leader}, the leader, stops — as if its machine had failed. Then we try to write: with healing off nothing takes over, so the write must be refused.`,
        run: async () => { await api.stopBroker(ctx.leader); return refused(() => api.produce(ctx.topic, "", "lost?"), "The write"); } },
      { say: "Fail over. The candidates are the active followers on running brokers; the one with the longest log wins, the lowest id on a tie. The epoch goes up by one.",
        run: async () => { const r = await api.failover(ctx.topic, 0); ctx.newLeader = r.new_leader;
          return `Broker ${r.new_leader} leads now, epoch ${r.leader_epoch}; the next record gets offset ${r.log_end_offset}.`; } },
      { say: "Writes resume: a record goes to the new leader and the follower that is left. The high watermark moves.",
        run: async () => { const r = await api.produce(ctx.topic, "", "after failover"); return `Written at offset ${r.records[0].offset}.`; } },
      { say: () => `Broker ${ctx.leader} starts again. It comes back as a follower, outside the active set: recovery compares it with the new leader, then re-admits it.`,
        run: async () => { await api.startBroker(ctx.leader); const r = await api.recover(ctx.topic, 0, ctx.leader);
          return `Common prefix ${r.common_prefix}, ${r.dropped} records cut, ${r.copied} copied: broker ${ctx.leader} is active again, as a follower.`; } },
      { say: () => `Turn automatic healing back on. The controller would have done all of this by itself after PYSTREAM_FAILOVER_AFTER; now it does the one thing left: broker ${ctx.leader}, the preferred replica, is active and holds the whole log, so leadership moves back to it and the epoch goes up again.`,
        run: healBack(ctx, "scenario done: the leader dies") },
    ],
  },
  {
    id: "follower-behind", name: "A follower falls behind", doc: RULES["catch-up"],
    steps: (ctx) => [
      { say: "Automatic healing off; a topic on three brokers, two records.", run: setup(ctx, "scenario: a follower falls behind", 2) },
      { say: () => `Follower ${ctx.f2} stops. A write must reach every active replica, and broker ${ctx.f2} still is one: the write is refused, the high watermark stays at 2 — though the leader keeps the record.`,
        run: async () => { await api.stopBroker(ctx.f2); return refused(() => api.produce(ctx.topic, "", "r2"), "The write"); } },
      { say: () => `Broker ${ctx.f2} starts. It is still in the active set, but behind the leader: see its shorter bar and its lag. (The controller catches followers up by itself, even with healing off — that changes no metadata — so the lag may soon be gone.)`,
        run: async () => { await api.startBroker(ctx.f2); await ctx.waitFor(() => replica(ctx, ctx.f2).available);
          const r = replica(ctx, ctx.f2), l = replica(ctx, ctx.leader);
          return `Broker ${ctx.f2} runs again: log end ${r.log_end}, the leader's ${l.log_end}.`; } },
      { say: () => `Catch broker ${ctx.f2} up: catch-up proves its log is a prefix of the leader's and copies the rest; the high watermark then moves over the record the leader kept. If the controller caught it up first, there is nothing left to copy.`,
        run: async () => { const r = await api.catchUp(ctx.topic, 0, ctx.f2);
          await ctx.waitFor(() => ctx.part().high_watermark === 3);
          return (r.copied > 0 ? `Copied ${r.copied} record(s)` : "Nothing left to copy: the controller caught it up first") +
            "; high watermark 3."; } },
      { say: () => `Automatic healing on, and broker ${ctx.f2} stops again. Writes fail until the controller takes it out of the active set; then they succeed with two copies.`,
        run: async () => { await api.healing(true, "scenario: a follower falls behind"); await api.stopBroker(ctx.f2);
          await ctx.waitFor(() => !ctx.part().active.includes(ctx.f2), 15000);
          const r = await api.produce(ctx.topic, "", "two copies"); return `Active set [${ctx.part().active.join(" ")}]; written at offset ${r.records[0].offset}.`; } },
      { say: () => `Broker ${ctx.f2} starts: inactive and behind. The controller recovers it — it missed records, so nothing is cut — and the active set is whole again.`,
        run: async () => { await api.startBroker(ctx.f2); await ctx.waitFor(() => ctx.part().active.includes(ctx.f2), 15000);
          return `Done: active set [${ctx.part().active.join(" ")}], high watermark ${ctx.part().high_watermark}.`; } },
    ],
  },
  {
    id: "recovery-cuts", name: "Recovery cuts what was never acknowledged", doc: RULES.recover,
    steps: (ctx) => [
      { say: "Automatic healing off; a topic on three brokers; records r0, r1, r2 on every replica.", run: setup(ctx, "scenario: recovery cuts", 3) },
      { say: () => `Both followers (${ctx.f1}, ${ctx.f2}) stop. We write "x": only the leader stores it, at offset 3. It is never acknowledged: the write is refused and the high watermark stays at 3.`,
        run: async () => { await api.stopBroker(ctx.f1); await api.stopBroker(ctx.f2);
          return refused(() => api.produce(ctx.topic, "", "x"), 'The write of "x"'); } },
      { say: () => `Now the leader, broker ${ctx.leader}, stops, and the followers start again. They hold r0 r1 r2 and are still active.`,
        run: async () => { await api.stopBroker(ctx.leader); await api.startBroker(ctx.f1); await api.startBroker(ctx.f2);
          return "The leader's log is 4 records long; the followers' 3."; } },
      { say: "Fail over: both candidates have log end 3, the lower id wins. Offset 3 will be written again: nobody was ever told it held x.",
        run: async () => { const r = await api.failover(ctx.topic, 0); ctx.newLeader = r.new_leader;
          return `Broker ${r.new_leader} leads, epoch ${r.leader_epoch}.`; } },
      { say: 'Write "r3": it gets offset 3 on the new leader and the other follower.',
        run: async () => { const r = await api.produce(ctx.topic, "", "r3"); return `"r3" is at offset ${r.records[0].offset}.`; } },
      { say: () => `Broker ${ctx.leader} starts. It still holds "x" at offset 3: it has diverged. Recover it: it is cut back to the common prefix with the leader, what is cut goes to a quarantine file, and "r3" is copied.`,
        run: async () => { await api.startBroker(ctx.leader); const r = await api.recover(ctx.topic, 0, ctx.leader);
          return `Common prefix ${r.common_prefix}; cut ${r.dropped} record(s), offsets ${r.dropped_from} to ${r.dropped_to - 1}, kept in ${r.quarantine}; copied ${r.copied}.`; } },
      { say: () => `Automatic healing back on. Broker ${ctx.leader}, the preferred replica, is active again and holds the whole log, so the controller moves leadership back to it — the epoch goes up again. A consumer reads r0 r1 r2 r3, and never "x": browse the partition to see.`,
        run: healBack(ctx, "scenario done: recovery cuts") },
    ],
  },
];
