// zkafka's live view: renders the state the server pushes as server-sent events. No libraries; SVG by hand.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
// this run's token, put in the page by the server: every POST sends it (zkafka.ui.guard)
const TOKEN = document.querySelector('meta[name="zkafka-token"]').content;
const COLORS = ["#2f6fdf", "#1f8a4c", "#c26a00", "#8e44ad", "#c0352b", "#127a8a", "#7a5c12", "#5561c9"];
const KINDS = { zookeeper: "rebalance · ZooKeeper group", coordinator: "rebalance · coordinator group", leader: "leader election", isr: "ISR change" };
const openEntries = new Set();
const entryNodes = new Map();
let colorOf = new Map();
let treePath = "/";

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "onclick") node.addEventListener("click", v);
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function fmt(value) { return value === null || value === undefined ? "?" : String(value); }
function clock(seconds) { return new Date(seconds * 1000).toLocaleTimeString(); }
function ms(value) { return value === null || value === undefined ? "?" : `${Math.round(value)} ms`; }

function memberColor(member) {
  if (!colorOf.has(member)) colorOf.set(member, COLORS[colorOf.size % COLORS.length]);
  return colorOf.get(member);
}

// The consumer id of a thread id: "<consumer>-<n>" -> "<consumer>".
function consumerOf(thread) { return thread ? thread.replace(/-\d+$/, "") : null; }

function renderHeader(state) {
  document.getElementById("line").textContent = `${state.line} line`;
  const extra = state.extra ? ` · produced ${state.extra.produced}` + (state.extra.paused ? " (paused)" : "") : "";
  document.getElementById("status").textContent = `ZooKeeper ${state.zookeeper} · updated ${clock(state.updated)}${extra}`;
}

// The demo's actions, each beside what it acts on, and only while it can do something.
function applicable(state) {
  const running = state.brokers.filter((b) => !b.dead).length;
  const members = state.zk_groups.reduce((n, g) => n + g.members.length, 0) + (state.coordinator_groups || []).reduce((n, g) => n + g.members.length, 0);
  const paused = state.extra ? state.extra.paused : false;
  return {
    brokers: { "kill-leader": running > 1, "stop-broker": running > 1, "start-broker": state.brokers.some((b) => b.dead) },
    topics: { "pause-producer": !paused, "resume-producer": paused },
    groups: { "add-consumer": true, "stop-consumer": members > 0 },
  };
}

function renderActions(state) {
  const where = applicable(state);
  for (const box of document.querySelectorAll(".actions")) {
    const names = Object.entries(where[box.dataset.for] || {}).filter(([name, ok]) => ok && state.actions.includes(name)).map(([name]) => name);
    if (box.dataset.names === names.join(",")) continue;
    box.dataset.names = names.join(",");
    box.replaceChildren(...names.map((name) => el("button", {
      "data-action": name, text: name.replace(/-/g, " "),
      onclick: () => fetch(`/api/action/${name}`, { method: "POST", headers: { "X-Zkafka-Token": TOKEN } }),
    })));
  }
}

function renderBrokers(state) {
  const cards = state.brokers.map((b) => {
    const controller = !b.dead && state.controller !== null && state.controller === b.id;
    return el("div", { class: `broker${controller ? " controller" : ""}${b.dead ? " dead" : ""}`, "data-id": b.id, "data-dead": b.dead ? "yes" : null, title: `${b.znode} = ${b.value}` },
      el("div", { class: "broker-name", text: `broker ${b.id}${controller ? " ★ controller" : ""}` }),
      el("div", { class: "mono", text: `${fmt(b.host)}:${fmt(b.port)}` }),
      b.dead
        ? [el("div", {}, el("span", { class: "badge bad", text: `gone at ${clock(b.dead.at)}` })), el("div", { class: "why", text: b.dead.why })]
        : el("div", { class: "muted small", text: `session ${fmt(b.session)}` }));
  });
  document.getElementById("brokers").replaceChildren(...(cards.length ? cards : [el("p", { class: "muted", text: "no broker registered" })]));
}

function bar(value, max) {
  return el("div", { class: "bar" }, el("div", { class: "fill", style: `width: ${(100 * (value || 0)) / Math.max(1, max)}%` }));
}

function table(head, rows, numeric = [], widths = []) {
  return el("table", {}, el("colgroup", {}, head.map((_, i) => el("col", { style: widths[i] ? `width: ${widths[i]}` : null }))),
    el("tr", {}, head.map((h, i) => el("th", { class: numeric.includes(i) ? "num" : null, text: h }))), rows);
}

function renderTopics(state) {
  const is08 = state.line === "0.8";
  const out = [];
  for (const topic of state.topics) {
    const ends = topic.partitions.map((p) => (is08 ? p.high_watermark : p.log_end) || 0);
    const max = Math.max(1, ...ends);
    const head = is08 ? ["partition", "leader", "replicas", "ISR", "HW", ""] : ["partition", "broker", "log end", ""];
    const rows = topic.partitions.map((p, i) => {
      const cells = is08
        ? [p.partition, p.leader < 0 ? "none" : p.leader, p.replicas.join(","), p.isr.join(","), fmt(p.high_watermark)]
        : [p.partition, p.broker, fmt(p.log_end)];
      const short = is08 && p.isr.length < p.replicas.length;
      return el("tr", { "data-partition": p.partition, class: short ? "short" : null },
        cells.map((c, j) => el("td", { class: j === cells.length - 1 ? "num" : null, text: c })), el("td", { class: "bar-cell" }, bar(ends[i], max)));
    });
    const widths = is08 ? ["16%", "12%", "16%", "13%", "14%", "29%"] : ["22%", "16%", "24%", "38%"];
    out.push(el("h3", { text: topic.name }), table(head, rows, [head.length - 2], widths));
  }
  document.getElementById("topics").replaceChildren(...(out.length ? out : [el("p", { class: "muted", text: "no topic yet" })]));
}

function lagChart(points) {
  const width = 520, height = 110, pad = 28;
  const svg = el("svg:svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", class: "lag-chart", role: "img" });
  const known = points.filter((p) => p[1] !== null);
  svg.append(el("svg:rect", { x: pad, y: 4, width: width - pad - 4, height: height - 24, fill: "#fafbfc", stroke: "#d9dee7" }));
  if (known.length < 2) {
    svg.append(el("svg:text", { x: pad + 8, y: 40, fill: "#667085", "font-size": 12, text: "lag over time: collecting…" }));
    return svg;
  }
  const t0 = known[0][0], t1 = known[known.length - 1][0];
  const max = Math.max(1, ...known.map((p) => p[1]));
  const x = (t) => pad + ((t - t0) / Math.max(1e-9, t1 - t0)) * (width - pad - 8);
  const y = (v) => 4 + (height - 28) * (1 - v / max);
  svg.append(el("svg:polyline", { points: known.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" "), fill: "none", stroke: "#c26a00", "stroke-width": 2 }));
  svg.append(el("svg:text", { x: 2, y: 14, "font-size": 10, fill: "#667085", text: String(max) }));
  svg.append(el("svg:text", { x: 2, y: height - 22, "font-size": 10, fill: "#667085", text: "0" }));
  svg.append(el("svg:text", { x: pad, y: height - 6, "font-size": 10, fill: "#667085", text: `total lag, last ${Math.round(t1 - t0)} s (now ${known[known.length - 1][1]})` }));
  return svg;
}

function renderZkGroups(state) {
  const out = state.zk_groups.map((g) => {
    const members = el("div", { class: "members" }, g.members.length
      ? g.members.map((m) => el("span", { class: "member", "data-member": m.id, style: `--c: ${memberColor(m.id)}`,
          title: `session ${m.session}`, text: `${m.id} (${Object.entries(m.subscription).map(([t, n]) => `${t}×${n}`).join(", ")})` }))
      : el("span", { class: "muted", text: "no members" }));
    const rows = g.partitions.map((p) => el("tr", { "data-partition": `${p.topic}:${p.partition}` },
      el("td", { text: `${p.topic}:${p.partition}` }),
      el("td", {}, p.owner ? el("span", { class: "member", style: `--c: ${memberColor(consumerOf(p.owner))}`, text: p.owner }) : el("span", { class: "muted", text: "none" })),
      el("td", { class: "num", text: fmt(p.committed) }), el("td", { class: "num", text: fmt(p.log_end) }),
      el("td", { class: "num", text: fmt(p.lag) })));
    return el("div", { class: "group", "data-name": g.name },
      el("h3", { text: `${g.name} ` }, el("span", { class: "badge grey", text: `total lag ${fmt(g.total_lag)}` })),
      members,
      table(["partition", "owner (thread)", "offset", "log size", "lag"], rows, [2, 3, 4], ["19%", "39%", "15%", "15%", "12%"]),
      lagChart(state.lag_history[g.name] || []));
  });
  document.getElementById("zk-groups").replaceChildren(...(out.length ? out : [el("p", { class: "muted", text: "no group in /consumers" })]));
}

function renderCoordinatorGroups(state) {
  const panel = document.getElementById("coordinator-panel");
  panel.hidden = state.coordinator_groups === null || state.coordinator_groups === undefined;
  if (panel.hidden) return;
  const out = state.coordinator_groups.map((g) => {
    const rows = g.members.map((m) => el("tr", { "data-member": m.id },
      el("td", { text: m.id + (m.id === g.leader ? " (leader)" : "") }), el("td", { text: `${m.client_id}@${m.client_host}` }),
      el("td", { text: m.subscription.join(", ") }),
      el("td", { text: Object.entries(m.assignment).map(([t, ps]) => `${t}: ${ps.join(",")}`).join("; ") || "—" })));
    return el("div", { class: "group", "data-name": g.name },
      el("h3", { text: `${g.name} ` }, el("span", { class: `badge ${g.state === "Stable" ? "ok" : "warn"}`, text: g.state })),
      el("p", { class: "muted", text: `coordinator broker ${fmt(g.coordinator)} · generation ${fmt(g.generation)} · leader ${fmt(g.leader)} · protocol ${g.protocol || "?"}` }),
      table(["member", "client", "subscribes to", "assigned"], rows, [], ["34%", "24%", "20%", "22%"]));
  });
  document.getElementById("coordinator-groups").replaceChildren(...(out.length ? out : [el("p", { class: "muted", text: "no coordinator group" })]));
}

// -- sequence diagrams: lanes as grid columns, a row per message, the note beside it ----------------------

function sequence(lanes, rows) {
  const grid = el("div", { class: "sequence", style: `grid-template-columns: 5.5rem repeat(${lanes.length}, minmax(4.5rem, 1fr)) minmax(12rem, 2.2fr)` });
  grid.append(el("div", { class: "seq-head", text: "time" }), ...lanes.map((lane) => el("div", { class: "seq-head lane-name", title: lane, text: lane })), el("div", { class: "seq-head", text: "what the step does" }));
  const explained = new Set();
  rows.forEach((row, r) => {
    const line = r + 2;
    grid.append(el("div", { class: "seq-time", style: `grid-row: ${line}`, text: row.time }));
    lanes.forEach((_, c) => grid.append(el("div", { class: "seq-lane", style: `grid-row: ${line}; grid-column: ${c + 2}` })));
    const a = lanes.indexOf(row.from), b = lanes.indexOf(row.to);
    const lo = Math.min(a, b), hi = Math.max(a, b), span = hi - lo + 1;
    grid.append(el("div", { ...row.attrs, class: `seq-msg ${a > b ? "left" : a === b ? "self" : "right"} ${row.cls || ""}`, title: row.title,
      style: `grid-row: ${line}; grid-column: ${lo + 2} / ${hi + 3}; --span: ${span}` },
      el("span", { class: "seq-label", text: row.label }), row.answer ? el("span", { class: "seq-answer", text: row.answer }) : null));
    const first = !explained.has(row.kind);  // each kind of step explained once, at its first row
    explained.add(row.kind);
    grid.append(el("div", { class: "seq-note", style: `grid-row: ${line}; grid-column: ${lanes.length + 2}` }, first ? row.note : null, row.handler ? el("code", { class: "where", text: row.handler }) : null));
  });
  return grid;
}

function fieldsText(row) {
  return `request: ${JSON.stringify(row.request, null, 1)}\nanswer: ${JSON.stringify(row.response, null, 1)}\nhandled by ${row.handler}`;
}

function renderProtocol(state) {
  const protocol = state.protocol;
  for (const id of ["protocol-panel", "stw-panel", "replication-panel"]) document.getElementById(id).hidden = !protocol;
  if (!protocol) return;
  const groups = protocol.groups.map((g) => {
    const lanes = [...g.lanes, `coordinator (broker ${fmt(g.coordinator)})`];
    const coordinator = lanes[lanes.length - 1];
    const t0 = g.rows.length ? g.rows[0].start : 0;
    const rows = g.rows.map((row) => ({
      time: `+${((row.start - t0)).toFixed(3)} s`, from: row.client, to: coordinator,
      label: `${row.api} v${row.version}${row.count > 1 ? ` ×${row.count}` : ""}`,
      answer: [row.answer, row.took_ms !== null && row.took_ms !== undefined ? ms(row.took_ms) : null, row.parked ? "parked" : null].filter(Boolean).join(" · "),
      cls: row.error && row.error !== "NONE" ? "error" : "", note: row.note, handler: row.handler, kind: `${row.api}:${row.error}`,
      title: `${row.api} v${row.version} from ${row.client}, correlation id ${row.correlation_id}\n${fieldsText(row)}`,
      attrs: { "data-api": row.api, "data-client": row.client, "data-answer": row.answer },
    }));
    return el("div", { class: "group protocol-group", "data-group": g.group },
      el("h3", { text: `${g.group} ` }, el("span", { class: "badge", text: `generation ${fmt(g.generation)}` }), " ", el("span", { class: "badge grey", text: `${g.protocol || "?"} · ${g.rebalance}` })),
      sequence(lanes, rows));
  });
  document.getElementById("protocol-groups").replaceChildren(...(groups.length ? groups : [el("p", { class: "muted", text: "no group request logged yet" })]));
  renderLanes(protocol, state.updated);
  renderReplication(protocol.replication);
}

function renderLanes(protocol, now) {
  const out = protocol.groups.map((g) => {
    const starts = g.members.flatMap((m) => m.segments.map((s) => s.start));
    const t0 = Math.max(Math.min(now, ...starts), now - 180), span = Math.max(1, now - t0);
    const width = 1000, label = 0;
    const x = (t) => label + ((Math.max(t, t0) - t0) / span) * (width - label);
    const lanes = g.members.map((m) => {
      const svg = el("svg:svg", { viewBox: `0 0 ${width} 18`, preserveAspectRatio: "none", class: "lane-bar", role: "img" },
        m.segments.map((s) => el("svg:rect", { class: `segment ${s.state}`, "data-state": s.state, x: x(s.start), y: 1, height: 16,
          width: Math.max(1.5, x(s.end ?? now) - x(s.start)) }, el("svg:title", { text: `${s.state} from ${clock(s.start)} for ${ms(((s.end ?? now) - s.start) * 1000)}` }))));
      const pause = m.longest_pause_ms === null ? "never paused" : `longest pause ${m.longest_pause_ms} ms (${m.pauses} pause${m.pauses === 1 ? "" : "s"})`;
      return el("div", { class: "lane-row", "data-client": m.client },
        el("span", { class: "lane-label", title: m.client, text: m.client }), svg,
        el("span", { class: "lane-pause", "data-longest": m.longest_pause_ms ?? "", text: `${m.rebalance}: ${pause}` }));
    });
    return el("div", { class: "group stw-group", "data-group": g.group },
      el("h3", { text: `${g.group} ` }, el("span", { class: "muted small", text: `last ${Math.round(span)} s` })), lanes);
  });
  document.getElementById("stw").replaceChildren(...(out.length ? out : [el("p", { class: "muted", text: "no member seen yet" })]));
}

function renderReplication(trace) {
  const target = document.getElementById("replication");
  if (!trace) { target.replaceChildren(el("p", { class: "muted", text: "no produce traced yet (one is traced a second while produces arrive)" })); return; }
  const rows = trace.steps.map((s, i) => ({
    time: `+${Number(s.at_ms).toFixed(1)} ms`, from: s.from, to: s.to, label: s.title, answer: s.detail, note: s.note, handler: s.handler,
    title: `${s.title}\n${s.detail}\nrequest: ${JSON.stringify(s.request, null, 1)}\nanswer: ${JSON.stringify(s.response, null, 1)}`,
    attrs: { "data-step": i }, kind: s.note,
  }));
  target.replaceChildren(el("h3", { text: `${trace.partition} ` }, el("span", { class: "badge grey", text: `acks=${fmt(trace.acks)} · traced ${clock(trace.started)}` })), sequence(trace.lanes, rows));
}

// -- the timeline: entries keyed by id, rebuilt only when they change, so a click always lands -------------

function entryNode(e) {
  const status = e.status === "settled" ? "ok" : e.status === "superseded" ? "grey" : "warn";
  const details = el("details", { class: "entry", "data-id": e.id, "data-kind": e.kind, "data-status": e.status, open: openEntries.has(e.id) ? "" : null },
    el("summary", {},
      el("span", { class: "when", text: clock(e.started) }),
      el("span", { class: `badge kind-${e.kind}`, text: KINDS[e.kind] || e.kind }),
      el("span", { class: "title", text: e.title }),
      el("span", { class: `badge ${status} measure`, text: e.status === "settled" ? e.measure || "settled" : e.status })),
    el("ol", { class: "steps" }, e.steps.map((s) => el("li", { class: "step" },
      el("span", { class: "step-title", text: s.title }), el("code", { class: "where", text: s.where }),
      s.lines.length ? el("pre", { text: s.lines.join("\n") }) : null))),
    e.events.length ? el("pre", { class: "events", text: "observed in ZooKeeper / from the coordinator:\n" + e.events.join("\n") }) : null);
  details.addEventListener("toggle", () => (details.open ? openEntries.add(e.id) : openEntries.delete(e.id)));
  return el("li", {}, details);
}

function renderTimeline(state) {
  const list = document.getElementById("timeline");
  if (!state.timeline.length) { list.replaceChildren(el("li", { class: "muted", text: "nothing yet" })); entryNodes.clear(); return; }
  const items = state.timeline.map((e) => {
    const key = JSON.stringify(e), known = entryNodes.get(e.id);
    if (known && known.key === key) return known.node;
    const node = entryNode(e);
    entryNodes.set(e.id, { key, node });
    return node;
  });
  const wanted = new Set(state.timeline.map((e) => e.id));
  for (const id of entryNodes.keys()) if (!wanted.has(id)) entryNodes.delete(id);
  if (items.length !== list.children.length || items.some((node, i) => list.children[i] !== node)) list.replaceChildren(...items);
}

async function showZnode(path) {
  treePath = path;
  const answer = await fetch(`/api/znode?path=${encodeURIComponent(path)}`);
  const node = await answer.json();
  const tree = document.getElementById("tree");
  if (node.error) { tree.replaceChildren(el("p", { class: "muted", text: node.error })); return; }
  const parts = node.path.split("/").filter(Boolean);
  const crumbs = el("div", { class: "crumbs mono" }, el("a", { onclick: () => showZnode("/"), text: "/" }),
    parts.map((p, i) => [el("a", { onclick: () => showZnode("/" + parts.slice(0, i + 1).join("/")), text: p }), "/"]));
  tree.replaceChildren(...[crumbs,
    node.role ? el("div", { class: "muted", text: node.role }) : null,
    node.ephemeral_owner ? el("div", {}, el("span", { class: "badge warn", text: `ephemeral, session ${node.ephemeral_owner}` })) : null,
    node.value ? el("div", { class: "value mono", text: node.value }) : null,
    el("div", {}, node.children.map((c) => el("div", { class: "child mono" },
      el("a", { onclick: () => showZnode(c.path), text: c.name }), c.role ? el("span", { class: "role", text: c.role }) : null)))]
    .filter((child) => child !== null));
}

function render(state) {
  renderHeader(state);
  renderActions(state);
  renderBrokers(state);
  renderTopics(state);
  renderZkGroups(state);
  renderCoordinatorGroups(state);
  renderProtocol(state);
  renderTimeline(state);
}

const source = new EventSource("/events");
source.onmessage = (event) => render(JSON.parse(event.data));
source.onerror = () => { document.getElementById("status").textContent = "disconnected; retrying…"; };
showZnode(treePath);
