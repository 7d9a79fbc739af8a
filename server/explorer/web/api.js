// The REST API, as every other client calls it. The page has no private
// endpoint: the server checks its requests like anyone's.

let token = sessionStorage.getItem("pystream-token") || "";

export function setToken(t) {
  token = t;
  sessionStorage.setItem("pystream-token", t);
}

export function headers(extra = {}) {
  const h = { ...extra };
  if (token) h.Authorization = "Bearer " + token;
  return h;
}

// call sends one request and returns the decoded answer; an error answer
// throws an Error with the server's message.
export async function call(method, path, body) {
  const h = headers({ Accept: "application/json", "X-PyStream-Request": "1" });
  const init = { method, headers: h };
  if (body !== undefined) {
    h["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  const data = await resp.json().catch(() => ({}));
  if (!resp.ok) {
    const e = new Error((data.error && data.error.message) || resp.status + " " + resp.statusText);
    e.status = resp.status;
    throw e;
  }
  return data;
}

const enc = new TextEncoder();
export const b64 = (s) => btoa(String.fromCharCode(...enc.encode(s)));
const t = (name) => "/api/topics/" + encodeURIComponent(name);
const part = (name, p) => t(name) + "/partitions/" + p;

export const api = {
  produce: (topic, key, value) => call("POST", t(topic) + "/records",
    { records: [{ key: key === "" ? null : b64(key), value: b64(value) }] }),
  createTopic: (name, partitions, rf) => call("POST", "/api/topics",
    { name, partitions, replication_factor: rf }),
  stopBroker: (id) => call("POST", `/api/brokers/${id}/stop`),
  startBroker: (id) => call("POST", `/api/brokers/${id}/start`),
  failover: (topic, p) => call("POST", part(topic, p) + "/failover"),
  catchUp: (topic, p, b) => call("POST", part(topic, p) + `/replicas/${b}/catch-up`),
  recover: (topic, p, b) => call("POST", part(topic, p) + `/replicas/${b}/recover`),
  fetch: (topic, p, offset, max = 20) => call("GET", part(topic, p) + `/records?offset=${offset}&max=${max}`),
  quarantine: (entry, max = 20) => call("GET", `/api/journal/${entry}/quarantine?max=${max}`),
  healing: (automatic, reason) => call("PUT", "/api/controller", { automatic, reason }),
};
