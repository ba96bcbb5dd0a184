// zkafka's live view: renders the state the server pushes as server-sent events. No libraries; SVG by hand.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#2f6fdf", "#1f8a4c", "#c26a00", "#8e44ad", "#c0352b", "#127a8a", "#7a5c12", "#5561c9"];
const openEntries = new Set();
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

function memberColor(member) {
  if (!colorOf.has(member)) colorOf.set(member, COLORS[colorOf.size % COLORS.length]);
  return colorOf.get(member);
}

// The consumer id of a thread id: "<consumer>-<n>" -> "<consumer>".
function consumerOf(thread) { return thread ? thread.replace(/-\d+$/, "") : null; }

function renderHeader(state) {
  document.getElementById("line").textContent = `${state.line} line`;
  const when = new Date(state.updated * 1000).toLocaleTimeString();
  const extra = state.extra ? ` · produced ${state.extra.produced}` + (state.extra.paused ? " (paused)" : "") : "";
  document.getElementById("status").textContent = `ZooKeeper ${state.zookeeper} · updated ${when}${extra}`;
  const actions = document.getElementById("actions");
  if (actions.dataset.names !== state.actions.join(",")) {
    actions.dataset.names = state.actions.join(",");
    actions.replaceChildren(...state.actions.map((name) => el("button", {
      "data-action": name, text: name.replace(/-/g, " "),
      onclick: () => fetch(`/api/action/${name}`, { method: "POST" }),
    })));
  }
}

function renderBrokers(state) {
  const width = 210, height = 78, gap = 12;
  const natural = Math.max(1, state.brokers.length) * (width + gap);
  const svg = el("svg:svg", { viewBox: `0 0 ${natural} ${height + 4}`, width: "100%", style: `max-width: ${natural}px`, role: "img" });
  state.brokers.forEach((b, i) => {
    const x = i * (width + gap) + 2;
    const controller = state.controller !== null && state.controller === b.id;
    svg.append(el("svg:g", { class: "broker", "data-id": b.id },
      el("svg:rect", { x, y: 2, width, height, rx: 8, fill: "#f4f7fe", stroke: controller ? "#c26a00" : "#2f6fdf", "stroke-width": controller ? 3 : 1.5 }),
      el("svg:text", { x: x + 10, y: 22, "font-weight": 600, text: `broker ${b.id}${controller ? "  ★ controller" : ""}` }),
      el("svg:text", { x: x + 10, y: 42, "font-size": 12, text: `${fmt(b.host)}:${fmt(b.port)}` }),
      el("svg:text", { x: x + 10, y: 60, "font-size": 11, fill: "#667085", text: `session ${fmt(b.session)}` }),
      el("svg:title", { text: `${b.znode} = ${b.value}` })));
  });
  const target = document.getElementById("brokers");
  target.replaceChildren(state.brokers.length ? svg : el("p", { class: "muted", text: "no broker registered" }));
}

function renderTopics(state) {
  const out = [];
  for (const topic of state.topics) {
    const is08 = state.line === "0.8";
    const ends = topic.partitions.map((p) => (is08 ? p.high_watermark : p.log_end) || 0);
    const max = Math.max(1, ...ends);
    const head = is08 ? ["partition", "leader", "replicas", "ISR", "high watermark", ""] : ["partition", "broker", "log end", ""];
    const rows = topic.partitions.map((p, i) => {
      const bar = el("svg:svg", { width: 160, height: 12 },
        el("svg:rect", { x: 0, y: 2, width: 160, height: 8, fill: "#eef0f3", rx: 3 }),
        el("svg:rect", { x: 0, y: 2, width: (160 * ends[i]) / max, height: 8, fill: "#2f6fdf", rx: 3 }));
      const cells = is08
        ? [p.partition, p.leader < 0 ? "none" : p.leader, p.replicas.join(","), p.isr.join(","), fmt(p.high_watermark)]
        : [p.partition, p.broker, fmt(p.log_end)];
      return el("tr", { "data-partition": p.partition }, cells.map((c, j) => el("td", { class: j >= cells.length - 1 ? "num" : null, text: c })), el("td", {}, bar));
    });
    out.push(el("h3", { text: topic.name }), el("table", {}, el("tr", {}, head.map((h) => el("th", { text: h }))), rows));
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
      el("table", {}, el("tr", {}, ["partition", "owner (thread)", "committed", "log end", "lag"].map((h, i) => el("th", { class: i > 1 ? "num" : null, text: h }))), rows),
      lagChart(state.lag_history[g.name] || []));
  });
  document.getElementById("zk-groups").replaceChildren(...(out.length ? out : [el("p", { class: "muted", text: "no group in /consumers" })]));
}

function renderCoordinatorGroups(state) {
  const panel = document.getElementById("coordinator-panel");
  panel.hidden = state.coordinator_groups === null || state.coordinator_groups === undefined;
  if (panel.hidden) return;
  const out = state.coordinator_groups.map((g) => el("div", { class: "group", "data-name": g.name },
    el("h3", { text: `${g.name} ` }, el("span", { class: `badge ${g.state === "Stable" ? "ok" : "warn"}`, text: g.state })),
    el("p", { class: "muted", text: `coordinator broker ${fmt(g.coordinator)} · generation ${fmt(g.generation)} · leader ${fmt(g.leader)} · protocol ${g.protocol || "?"}` }),
    el("table", {}, el("tr", {}, ["member", "client", "subscribes to", "assigned"].map((h) => el("th", { text: h }))),
      g.members.map((m) => el("tr", {}, el("td", { text: m.id + (m.id === g.leader ? " (leader)" : "") }), el("td", { text: `${m.client_id}@${m.client_host}` }),
        el("td", { text: m.subscription.join(", ") }),
        el("td", { text: Object.entries(m.assignment).map(([t, ps]) => `${t}: ${ps.join(",")}`).join("; ") || "—" }))))));
  document.getElementById("coordinator-groups").replaceChildren(...(out.length ? out : [el("p", { class: "muted", text: "no coordinator group" })]));
}

// The view looks at the owners every 100 ms: a rebalance faster than that settles between two looks.
function settledText(ms) {
  if (ms === null || ms === undefined) return "";
  return ms < 100 ? " within 100 ms" : ` in ${ms} ms`;
}

function renderTimeline(state) {
  const items = state.timeline.map((e) => {
    const status = e.status === "settled" ? "ok" : e.status === "superseded" ? "grey" : "warn";
    const details = el("details", { class: "entry", "data-id": e.id, "data-kind": e.kind, "data-status": e.status, open: openEntries.has(e.id) ? "" : null },
      el("summary", {},
        el("span", { class: "when", text: new Date(e.started * 1000).toLocaleTimeString() }),
        el("span", { class: "badge", text: e.kind }),
        el("span", { class: "title", text: e.title }),
        el("span", { class: `badge ${status}`, text: e.status + settledText(e.settled_after_ms) })),
      el("ol", { class: "steps" }, e.steps.map((s) => el("li", { class: "step" },
        el("span", { class: "step-title", text: s.title }), el("code", { class: "where", text: s.where }),
        s.lines.length ? el("pre", { text: s.lines.join("\n") }) : null))),
      e.events.length ? el("pre", { class: "events", text: "observed in ZooKeeper / from the coordinator:\n" + e.events.join("\n") }) : null);
    details.addEventListener("toggle", () => (details.open ? openEntries.add(e.id) : openEntries.delete(e.id)));
    return el("li", {}, details);
  });
  document.getElementById("timeline").replaceChildren(...(items.length ? items : [el("li", { class: "muted", text: "nothing yet" })]));
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
  renderBrokers(state);
  renderTopics(state);
  renderZkGroups(state);
  renderCoordinatorGroups(state);
  renderTimeline(state);
}

const source = new EventSource("/events");
source.onmessage = (event) => render(JSON.parse(event.data));
source.onerror = () => { document.getElementById("status").textContent = "disconnected; retrying…"; };
showZnode(treePath);
