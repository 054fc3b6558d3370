// The rowpump dashboard: polls /api/state once a second and draws each queue; actions are
// POSTs with the token the operator types in (kept for this browser tab only).
"use strict";

const POLL_MS = 1000;
const WINDOW_MS = 10 * 60 * 1000; // the charts show the last ten minutes
const queues = new Map(); // name -> {el, history: [[ms, dispatched, completed, due, ready, in_flight]]}
let since = 0;
let actions = false;

const $ = (root, sel) => root.querySelector(sel);
const fmt = (n) => (n === null || n === undefined ? "–" : Math.round(n).toLocaleString("en-US"));

function age(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  if (seconds < 60) return seconds.toFixed(1) + " s";
  if (seconds < 3600) return Math.floor(seconds / 60) + " m " + Math.floor(seconds % 60) + " s";
  return Math.floor(seconds / 3600) + " h " + Math.floor((seconds % 3600) / 60) + " m";
}

function toast(text, error) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.className = error ? "error" : "";
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (el.hidden = true), 4000);
}

async function act(queue, action, body) {
  const token = document.getElementById("token").value;
  if (!token) return toast("Type the token (http.token) first.", true);
  const res = await fetch(`/api/queues/${encodeURIComponent(queue)}/${action}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
    body: JSON.stringify(body || {}),
  });
  const answer = await res.json().catch(() => ({ error: res.statusText }));
  toast(answer.message || answer.error, !res.ok);
  poll();
}

function addQueue(name) {
  const el = document.getElementById("queue-template").content.firstElementChild.cloneNode(true);
  el.id = "queue-" + name;
  el.dataset.queue = name;
  $(el, ".name").textContent = name;
  $(el, ".pause").addEventListener("click", () =>
    act(name, el.dataset.paused === "true" ? "resume" : "pause"));
  $(el, ".retry-all").addEventListener("click", () => {
    if (confirm(`Make every dead row of ${name} due again?`)) act(name, "retry", { all: true });
  });
  $(el, ".dead-rows tbody").addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const { id, shard } = button.closest("tr").dataset;
    const where = shard ? { shard } : {};  // ids are per shard
    if (button.dataset.action === "retry") act(name, "retry", { ids: [id], ...where });
    else act(name, "discard", { ids: [id], mode: $(el, ".discard-mode").value, ...where });
  });
  document.getElementById("queues").appendChild(el);
  const q = { el, history: [] };
  queues.set(name, q);
  return q;
}

// Per-second rates between neighbouring samples.
function rates(history, column) {
  const out = [];
  for (let i = 1; i < history.length; i++) {
    const dt = (history[i][0] - history[i - 1][0]) / 1000;
    if (dt > 0) out.push([history[i][0], Math.max(0, (history[i][column] - history[i - 1][column]) / dt)]);
  }
  return out;
}

function draw(canvas, series) {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth, height = canvas.clientHeight;
  canvas.width = width * ratio;
  canvas.height = height * ratio;
  const ctx = canvas.getContext("2d");
  ctx.scale(ratio, ratio);
  ctx.clearRect(0, 0, width, height);
  const now = Date.now(), left = 48, bottom = height - 18;
  const max = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[1])));
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = "#6b7280";
  ctx.strokeStyle = "#e5e7eb";
  for (let i = 0; i <= 4; i++) {
    const y = 6 + ((bottom - 6) * i) / 4;
    ctx.beginPath(); ctx.moveTo(left, y); ctx.lineTo(width - 4, y); ctx.stroke();
    ctx.fillText(fmt((max * (4 - i)) / 4), 2, y + 4);
  }
  for (const minutes of [10, 5, 0]) {
    const x = left + ((width - 4 - left) * (10 - minutes)) / 10;
    ctx.fillText(minutes ? `-${minutes} min` : "now", Math.min(x - 12, width - 30), height - 4);
  }
  for (const s of series) {
    ctx.strokeStyle = s.color;
    ctx.lineWidth = 2;
    ctx.beginPath();
    s.points.forEach(([t, v], i) => {
      const x = left + ((width - 4 - left) * (t - (now - WINDOW_MS))) / WINDOW_MS;
      const y = bottom - ((bottom - 6) * v) / max;
      i ? ctx.lineTo(x, y) : ctx.moveTo(x, y);
    });
    ctx.stroke();
  }
}

// The workers view: what each worker's heartbeat says (text only: never markup).
function workerRows(el, data) {
  const section = $(el, ".worker-rows");
  const list = data.worker_list || [];
  $(section, "tbody").replaceChildren(
    ...list.map((w) => {
      const tr = document.createElement("tr");
      tr.dataset.id = w.id;
      tr.classList.toggle("gone", !w.alive);
      const beat = !w.alive ? "gone" : w.heartbeat_age_seconds === null ? "alive" : age(w.heartbeat_age_seconds) + " ago";
      for (const [cls, text] of [["id", w.id], ["host", w.host || "–"], ["lang", w.lang || "–"], ["version", w.version || "–"],
                                 ["in_hand", fmt(w.in_hand)], ["done", fmt(w.done)], ["heartbeat", beat]]) {
        const td = document.createElement("td");
        td.className = cls;
        td.textContent = text;
        tr.appendChild(td);
      }
      return tr;
    })
  );
  $(section, ".none").hidden = list.length > 0;
  $(section, "table").hidden = list.length === 0;
  const more = data.workers - list.length;
  $(section, ".more").hidden = more <= 0;
  $(section, ".more").textContent = `… and ${fmt(more)} more`;
}

// group_by: the leader's top keys and the per-key limits (text only: never markup; a key
// can be any text).
function keyRows(el, data) {
  const keys = data.keys, limits = data.key_limits || { shown: [], total: 0 };
  const limitOf = new Map(limits.shown.map((l) => [l.key, l.limits]));
  const section = $(el, ".key-rows");
  section.hidden = !keys;
  const row = (key, name, f) => {
    const tr = document.createElement("tr");
    if (key !== undefined) tr.dataset.key = key === null ? "" : key;
    tr.classList.toggle("other", key === undefined);
    const limit = key === undefined || key === null ? "" : limitOf.get(key) || "";
    for (const [cls, text] of [["key", name], ["pushed", fmt(f.pushed)], ["recent", fmt(f.recent)],
                               ["in_flight", fmt(f.in_flight)], ["passed_over", fmt(f.passed_over)],
                               ["limits", limit]]) {
      const td = document.createElement("td");
      td.className = cls;
      td.textContent = text;
      tr.appendChild(td);
    }
    return tr;
  };
  if (keys) {
    $(section, ".counted").textContent = `top ${keys.top.length}, counted by ${keys.counted_by}`;
    $(section, "tbody").replaceChildren(
      ...keys.top.map((f) => row(f.key, f.key === null ? "NULL" : f.key, f)),
      row(undefined, "(other keys)", keys.other));
  }
  const list = $(el, ".key-limits");
  list.hidden = limits.total === 0;
  $(list, "tbody").replaceChildren(
    ...limits.shown.map((l) => {
      const tr = document.createElement("tr");
      tr.dataset.key = l.key;
      for (const [cls, text] of [["key", l.key], ["limits", l.limits]]) {
        const td = document.createElement("td");
        td.className = cls;
        td.textContent = text;
        tr.appendChild(td);
      }
      return tr;
    }));
  const more = limits.total - limits.shown.length;
  $(list, ".more").hidden = more <= 0;
  $(list, ".more").textContent = `… and ${fmt(more)} more`;
}

function deadRows(el, dead) {
  const body = $(el, ".dead-rows tbody");
  body.replaceChildren(
    ...dead.map((row) => {
      const tr = document.createElement("tr");
      tr.dataset.id = row.id;
      tr.dataset.shard = row.shard;
      for (const [cls, text] of [["id", row.shard ? `${row.shard}: ${row.id}` : row.id], ["attempts", row.attempts], ["at", row.dead_at], ["error", row.error]]) {
        const td = document.createElement("td");
        td.className = cls;
        td.textContent = text;
        tr.appendChild(td);
      }
      const td = document.createElement("td");
      for (const [action, label] of [["retry", "Retry"], ["discard", "Discard"]]) {
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.action = action;
        b.textContent = label;
        b.disabled = !actions;
        td.append(b, " ");
      }
      tr.appendChild(td);
      return tr;
    })
  );
  $(el, ".dead-rows .none").hidden = dead.length > 0;
  $(el, ".dead-rows table").hidden = dead.length === 0;
}

function render(state) {
  const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  for (const data of state.queues) {
    const q = queues.get(data.name) || addQueue(data.name);
    const el = q.el;
    q.history.push(...data.history);
    q.history = q.history.filter((p) => p[0] >= Date.now() - WINDOW_MS);
    const dispatched = rates(q.history, 1), done = rates(q.history, 2);
    const last = (points) => (points.length ? points[points.length - 1][1] : null);
    const set = (cls, text) => ($(el, "." + cls).textContent = text);
    set("due", data.due === null ? "–" : (data.due_capped ? "> " : "") + fmt(data.due));
    set("ready", fmt(data.ready));
    set("in_flight", fmt(data.in_flight));
    set("workers", fmt(data.workers));
    set("live_workers", fmt(data.live_workers));
    set("dispatched_rate", fmt(last(dispatched)));
    set("done_rate", fmt(last(done)));
    set("latency", age(data.oldest_due_age_seconds));
    for (const name of ["retried", "dead", "stale", "bad"]) set(name, fmt(data.stats[name] || 0));
    el.dataset.paused = data.paused;
    const state = $(el, ".state");
    state.textContent = data.paused ? "paused" : "running";
    state.classList.toggle("paused", data.paused);
    $(el, ".pause").textContent = data.paused ? "Resume" : "Pause";
    for (const b of el.querySelectorAll(".pause, .retry-all")) b.disabled = !actions;
    $(el, ".dispatchers").textContent = data.dispatchers.length
      ? data.dispatchers.map((d) => `${d.role} ${d.id}`).join(" · ")
      : "no dispatcher has reported";
    $(el, ".problem").hidden = !data.problem;
    $(el, ".problem").textContent = data.problem;
    draw($(el, ".rates"), [
      { color: cssVar("--c0"), points: dispatched },
      { color: cssVar("--c1"), points: done },
    ]);
    draw($(el, ".backlog"), [
      { color: cssVar("--c2"), points: q.history.filter((p) => p[3] >= 0).map((p) => [p[0], p[3]]) },
      { color: cssVar("--c0"), points: q.history.map((p) => [p[0], p[4]]) },
      { color: cssVar("--c1"), points: q.history.map((p) => [p[0], p[5]]) },
    ]);
    workerRows(el, data);
    keyRows(el, data);
    deadRows(el, data.dead);
    for (const p of data.history) since = Math.max(since, p[0]);
  }
}

async function poll() {
  try {
    const typed = document.getElementById("token").value;
    const res = await fetch("/api/state?since=" + since, {
      cache: "no-store",
      headers: typed ? { Authorization: "Bearer " + typed } : {},
    });
    if (res.status === 401) {
      // http.read_token: the queues show once the token is typed in.
      document.getElementById("token-form").hidden = false;
      document.getElementById("updated").textContent = "type the token (http.token) to see the queues";
      return;
    }
    const state = await res.json();
    actions = state.actions;
    document.getElementById("token-form").hidden = !actions && !typed;
    document.getElementById("version").textContent = "v" + state.version;
    render(state);
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
  } catch (e) {
    document.getElementById("updated").textContent = "dispatcher unreachable (" + e.message + ")";
  }
}

const token = document.getElementById("token");
token.value = sessionStorage.getItem("rowpump-token") || "";
token.addEventListener("input", () => sessionStorage.setItem("rowpump-token", token.value));
document.getElementById("token-form").addEventListener("submit", (e) => e.preventDefault());
poll();
setInterval(poll, POLL_MS);
