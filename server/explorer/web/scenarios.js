// Three guided scenarios. Each step is a sentence and what Next does; the
// page runs the steps through the same REST API as every other button.
// ctx gives the latest state (part, leaderOf, followersOf) and waitFor.

import { api } from "./api.js";
import { RULES } from "./words.js";

// expectFailure runs a request that the rules must refuse, and says why.
async function expectFailure(f, what) {
  try {
    await f();
  } catch (e) {
    return `${what} was refused, as the rule says: ${e.message}`;
  }
  return `${what} succeeded (the controller may have acted first).`;
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

export const SCENARIOS = [
  {
    id: "leader-dies", name: "The leader dies", doc: RULES.failover,
    steps: (ctx) => [
      { say: "We turn automatic healing off, so that you do each step, then create a topic with one partition on three brokers and write three records.",
        run: setup(ctx, "scenario: the leader dies", 3) },
      { say: () => `Broker ${ctx.leader}, the leader, stops — as if its machine had failed. Then we try to write.`,
        run: async () => { await api.stopBroker(ctx.leader); return expectFailure(() => api.produce(ctx.topic, "", "lost?"), "The write"); } },
      { say: "Fail over. The candidates are the active followers on running brokers; the one with the longest log wins, the lowest id on a tie. The epoch goes up by one.",
        run: async () => { const r = await api.failover(ctx.topic, 0); ctx.newLeader = r.new_leader;
          return `Broker ${r.new_leader} leads now, epoch ${r.leader_epoch}; the next record gets offset ${r.log_end_offset}.`; } },
      { say: "Writes resume: a record goes to the new leader and the follower that is left. The high watermark moves.",
        run: async () => { const r = await api.produce(ctx.topic, "", "after failover"); return `Written at offset ${r.records[0].offset}.`; } },
      { say: () => `Broker ${ctx.leader} starts again. It comes back as a follower, outside the active set: recovery compares it with the new leader, then re-admits it.`,
        run: async () => { await api.startBroker(ctx.leader); const r = await api.recover(ctx.topic, 0, ctx.leader);
          return `Common prefix ${r.common_prefix}, ${r.dropped} records cut, ${r.copied} copied: broker ${ctx.leader} is active again, as a follower.`; } },
      { say: "Turn automatic healing back on: the controller does all of this by itself after PYSTREAM_FAILOVER_AFTER, and moves leadership back to the preferred replica.",
        run: async () => { await api.healing(true, "scenario done: the leader dies"); return "Done: the partition is served, every replica active."; } },
    ],
  },
  {
    id: "follower-behind", name: "A follower falls behind", doc: RULES["catch-up"],
    steps: (ctx) => [
      { say: "Automatic healing off; a topic on three brokers, two records.", run: setup(ctx, "scenario: a follower falls behind", 2) },
      { say: () => `Follower ${ctx.f2} stops. A write must reach every active replica, and broker ${ctx.f2} still is one: the write fails, the high watermark stays.`,
        run: async () => { await api.stopBroker(ctx.f2); return expectFailure(() => api.produce(ctx.topic, "", "r2"), "The write"); } },
      { say: () => `Broker ${ctx.f2} starts. It is active but behind — see its lag. Catch-up proves its log is a prefix of the leader's and copies the rest; the high watermark then moves over the record the leader kept.`,
        run: async () => { await api.startBroker(ctx.f2); const r = await api.catchUp(ctx.topic, 0, ctx.f2);
          return `Copied ${r.copied} record(s) (the controller may have caught it up first).`; } },
      { say: () => `Automatic healing on, and broker ${ctx.f2} stops again. Writes fail until the controller takes it out of the active set; then they succeed with two copies.`,
        run: async () => { await api.healing(true, "scenario: a follower falls behind"); await api.stopBroker(ctx.f2);
          await ctx.waitFor(() => !ctx.part().active.includes(ctx.f2), 15000);
          const r = await api.produce(ctx.topic, "", "two copies"); return `Active set [${ctx.part().active.join(" ")}]; written at offset ${r.records[0].offset}.`; } },
      { say: () => `Broker ${ctx.f2} starts: inactive and behind. The controller recovers it — it missed records, so nothing is cut — and the active set is whole again.`,
        run: async () => { await api.startBroker(ctx.f2); await ctx.waitFor(() => ctx.part().active.includes(ctx.f2), 15000);
          return `Done: active set [${ctx.part().active.join(" ")}].`; } },
    ],
  },
  {
    id: "recovery-cuts", name: "Recovery cuts what was never acknowledged", doc: RULES.recover,
    steps: (ctx) => [
      { say: "Automatic healing off; a topic on three brokers; records r0, r1, r2 on every replica.", run: setup(ctx, "scenario: recovery cuts", 3) },
      { say: () => `Both followers (${ctx.f1}, ${ctx.f2}) stop. We write "x": only the leader stores it, at offset 3. It is never acknowledged: the write fails and the high watermark stays at 3.`,
        run: async () => { await api.stopBroker(ctx.f1); await api.stopBroker(ctx.f2);
          return expectFailure(() => api.produce(ctx.topic, "", "x"), 'The write of "x"'); } },
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
      { say: 'Automatic healing back on. A consumer reads r0 r1 r2 r3 — and never "x". Browse the partition to see.',
        run: async () => { await api.healing(true, "scenario done: recovery cuts"); return "Done."; } },
    ],
  },
];
