// The events stream, GET /api/events (docs/explorer.md § The events
// stream), read with fetch rather than EventSource so that it can carry a
// token. Each "update" message goes to onUpdate. When the stream breaks —
// the server restarted, the network went away — it reconnects after a
// second with Last-Event-ID, the offset of the last journal entry seen,
// so that no entry is missed and none comes twice. A refusal for the token
// (401, 403) is no break: retrying cannot help, so it goes to onRefused
// with the server's message, and the stream waits for reconnect() — a new
// token.

export function follow({ tail, onUpdate, onStatus, onRefused, headers }) {
  let lastID = null;
  let refused = false;
  const connect = async () => {
    try {
      const h = headers({ Accept: "text/event-stream" });
      if (lastID !== null) h["Last-Event-ID"] = lastID;
      const resp = await fetch(lastID === null ? `/api/events?tail=${tail}` : "/api/events", { headers: h });
      if (resp.status === 401 || resp.status === 403) {
        const data = await resp.json().catch(() => ({}));
        refused = true;
        onRefused((data.error && data.error.message) || `HTTP ${resp.status}`);
        return;
      }
      if (!resp.ok) throw new Error("HTTP " + resp.status);
      onStatus(true);
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const msg = parse(buf.slice(0, end));
          buf = buf.slice(end + 2);
          if (msg.id !== undefined) lastID = msg.id;
          if (msg.event === "update") onUpdate(JSON.parse(msg.data));
        }
      }
    } catch (e) {
      console.warn("events stream:", e.message);
    }
    onStatus(false);
    setTimeout(connect, 1000);
  };
  connect();
  return { reconnect: () => { if (refused) { refused = false; connect(); } } };
}

// parse reads one message's lines: "field: value"; ":" starts a comment.
function parse(block) {
  const msg = { data: "" };
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
    if (field === "data") msg.data += (msg.data ? "\n" : "") + value;
    else if (field === "id" || field === "event") msg[field] = value;
  }
  return msg;
}
