// The inspector page's explorer panels: the world's history charts (GET
// /api/history: entities, archetypes, storage bytes and frame time per
// frame), the prefabs with their instance counts (GET /api/prefabs), and
// an entity's relationships both ways, as lists and as a small SVG graph
// of its neighbourhood (the entity in the centre, its targets on the
// right, the entities pointing at it on the left, each edge labelled by its
// relation; a click on a node opens that entity).
//
// Uses app.js's helpers (api, el, fmtInt, fmtBytes, select, state) at run
// time; loaded before it. Text from the world goes in with textContent.
"use strict";

// ---- history charts ----------------------------------------------------------

const TREND_COLORS = { entities: "#4aa3ff", archetypes: "#c792ea", used: "#7bd88f", reserved: "#f5b461", frame: "#d7dce3" };

const trend = { frames: [], frame: [], entities: [], archetypes: [], used: [], reserved: [], lastFrame: null };

async function refreshHistory() {
  const since = trend.lastFrame === null ? "" : "?since=" + trend.lastFrame;
  const h = await api("/api/history" + since);
  if (!h.frames.length && trend.lastFrame !== null && h.frame < trend.lastFrame) {
    // The program restarted its frame count: start again.
    for (const k of ["frames", "frame", "entities", "archetypes", "used", "reserved"]) trend[k] = [];
    trend.lastFrame = null;
  }
  trend.frames.push(...h.frames);
  trend.frame.push(...h.frame_time_us);
  trend.entities.push(...h.entities);
  trend.archetypes.push(...h.archetypes);
  trend.used.push(...h.bytes_used);
  trend.reserved.push(...h.bytes_reserved);
  const drop = Math.max(0, trend.frames.length - HISTORY);
  if (drop) for (const k of ["frames", "frame", "entities", "archetypes", "used", "reserved"]) trend[k].splice(0, drop);
  if (h.frames.length) trend.lastFrame = h.frames[h.frames.length - 1];
  drawHistory();
}

function drawHistory() {
  const last = (v) => (v.length ? v[v.length - 1] : null);
  const count = (v) => fmtInt(Math.round(v));
  const charts = [
    ["entities", [{ name: "entities", color: TREND_COLORS.entities, values: trend.entities }], count, fmtInt(last(trend.entities))],
    ["archetypes", [{ name: "archetypes", color: TREND_COLORS.archetypes, values: trend.archetypes }], count, fmtInt(last(trend.archetypes))],
    [
      "memory",
      [
        { name: "used", color: TREND_COLORS.used, values: trend.used },
        { name: "reserved", color: TREND_COLORS.reserved, values: trend.reserved, dashed: true },
      ],
      fmtBytes,
      `${fmtBytes(last(trend.used))} used · ${fmtBytes(last(trend.reserved))} reserved`,
    ],
    ["frame", [{ name: "frame time", color: TREND_COLORS.frame, values: trend.frame }], formatMicros, trend.frame.length ? formatMicros(last(trend.frame)) : "–"],
  ];
  for (const [key, series, format, now] of charts) {
    const canvas = document.getElementById("h-" + key);
    if (!canvas) continue;
    const clip = key === "frame" ? 0.98 : undefined;
    canvas.dataset.points = drawTrend(canvas, { frames: trend.frames, series, format, clip });
    document.querySelector(`#history-panel [data-now="${key}"]`).textContent = now;
  }
  document.getElementById("history-frames").textContent = trend.frames.length;
}

// ---- prefabs -----------------------------------------------------------------

async function refreshPrefabs() {
  const p = await api("/api/prefabs?limit=100");
  document.getElementById("prefab-count").textContent = `${fmtInt(p.total)} prefabs, ${fmtInt(p.instances)} instances`;
  const rows = p.prefabs.map((x) =>
    el(
      "tr",
      { dataset: { prefab: x.entity.id, instances: x.instances }, title: "open " + x.entity.id, onclick: () => select(x.entity.id) },
      el("td", { text: x.entity.name || "–" }),
      el("td", { class: "num", text: x.entity.id }),
      el("td", { class: "num instances", text: fmtInt(x.instances) }),
      el("td", { class: "muted", text: (x.tagged ? "Prefab" : "") + (x.instance_of ? (x.tagged ? " · " : "") + "IsA " + (x.instance_of.name || x.instance_of.id) : "") })
    )
  );
  if (!rows.length) rows.push(el("tr", {}, el("td", { class: "muted", colspan: 4, text: "no prefabs: nothing is the target of IsA or tagged Prefab" })));
  if (p.total > p.prefabs.length) rows.push(el("tr", {}, el("td", { class: "muted", colspan: 4, text: `… ${fmtInt(p.total - p.prefabs.length)} more` })));
  document.querySelector("#prefabs tbody").replaceChildren(...rows);
}

// ---- relationships -------------------------------------------------------------

function refLabel(ref) {
  return ref.name || ref.id;
}

// The lists: outgoing pairs, then incoming pairs per relation (the first
// sources, with the total).
function relationsLists(d) {
  const out = el("ul", { class: "pairs", id: "rel-out" });
  for (const r of d.relationships) {
    out.append(el("li", { dataset: { relation: r.relation, target: r.target.id } }, el("span", { class: "rel", text: r.relation }), " → ", entityLink(r.target)));
  }
  const incoming = el("ul", { class: "pairs", id: "rel-in" });
  for (const group of d.incoming_pairs || []) {
    const li = el("li", { dataset: { relation: group.relation, total: group.total } }, el("span", { class: "rel", text: group.relation }), ` ← ${fmtInt(group.total)}: `);
    group.sources.forEach((s, i) => li.append(i ? ", " : "", entityLink(s)));
    if (group.total > group.sources.length) li.append(el("span", { class: "muted", text: ` … ${fmtInt(group.total - group.sources.length)} more` }));
    incoming.append(li);
  }
  const parts = [];
  if (d.relationships.length) parts.push(el("div", { class: "meta" }, "outgoing pairs"), out);
  if ((d.incoming_pairs || []).length) parts.push(el("div", { class: "meta" }, "incoming pairs"), incoming);
  return parts;
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

const GRAPH_TARGETS = 8; // targets drawn at most
const GRAPH_SOURCES = 12; // sources drawn at most, over all relations

// The neighbourhood graph of detail `d`, or null when it has no pairs.
function relationsGraph(d) {
  const targets = d.relationships.slice(0, GRAPH_TARGETS).map((r) => ({ ref: r.target, relation: r.relation, out: true }));
  const moreTargets = d.relationships.length - targets.length;
  const sources = [];
  let totalIn = 0;
  for (const g of d.incoming_pairs || []) {
    totalIn += g.total;
    for (const s of g.sources) if (sources.length < GRAPH_SOURCES) sources.push({ ref: s, relation: g.relation, out: false });
  }
  const moreSources = totalIn - sources.length;
  if (!targets.length && !sources.length) return null;
  const W = 440, H = 280, cx = W / 2, cy = H / 2, rx = 150, ry = 105;
  const root = svg("svg", { class: "graph", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "relationships of " + d.id });
  const defs = svg("defs");
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8a93a0" }));
  defs.append(marker);
  root.append(defs);
  // Positions: targets on the right, sources on the left; one side alone
  // takes the whole circle.
  const place = (items, from, to) =>
    items.map((item, i) => {
      const a = items.length === 1 ? (from + to) / 2 : from + ((to - from) * i) / (items.length - 1);
      return { ...item, x: cx + rx * Math.cos(a), y: cy + ry * Math.sin(a) };
    });
  const deg = Math.PI / 180;
  let placed;
  if (!sources.length) placed = place(targets, -90 * deg, (targets.length > 1 ? 270 - 360 / targets.length : 90) * deg);
  else if (!targets.length) placed = place(sources, 90 * deg, (sources.length > 1 ? 450 - 360 / sources.length : 270) * deg);
  else placed = [...place(targets, -70 * deg, 70 * deg), ...place(sources, 110 * deg, 250 * deg)];
  const edges = svg("g", { class: "edges" });
  const nodes = svg("g", { class: "nodes" });
  const R = 7;
  for (const p of placed) {
    // An edge from source to target, ending at the node's rim.
    const [x1, y1, x2, y2] = p.out ? [cx, cy, p.x, p.y] : [p.x, p.y, cx, cy];
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const ux = (x2 - x1) / len, uy = (y2 - y1) / len;
    edges.append(svg("line", { x1: x1 + ux * R, y1: y1 + uy * R, x2: x2 - ux * (R + 1), y2: y2 - uy * (R + 1), "marker-end": "url(#arrow)", class: "edge", "data-relation": p.relation }));
    edges.append(svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 3, class: "edge-label", "text-anchor": "middle" }, p.relation));
    nodes.append(graphNode(p.ref, p.x, p.y, p.out ? "target" : "source"));
  }
  nodes.append(graphNode({ id: d.id, name: d.name }, cx, cy, "centre"));
  root.append(edges, nodes);
  const note = [];
  if (moreTargets > 0) note.push(`+${fmtInt(moreTargets)} more targets`);
  if (moreSources > 0) note.push(`+${fmtInt(moreSources)} more sources`);
  if (note.length) root.append(svg("text", { x: 6, y: H - 6, class: "graph-note" }, note.join(" · ")));
  return root;
}

function graphNode(ref, x, y, role) {
  const g = svg("g", { class: "gnode " + role, "data-entity": ref.id, transform: `translate(${x.toFixed(1)},${y.toFixed(1)})` });
  g.append(svg("title", {}, ref.name ? `${ref.name} (${ref.id})` : ref.id));
  g.append(svg("circle", { r: role === "centre" ? 10 : 7 }));
  const label = refLabel(ref);
  const below = role === "centre" ? 24 : 18;
  g.append(svg("text", { y: below, "text-anchor": "middle" }, label.length > 18 ? label.slice(0, 17) + "…" : label));
  if (role !== "centre") {
    g.addEventListener("click", () => select(ref.id));
  }
  return g;
}
