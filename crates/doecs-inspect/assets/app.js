// The doecs inspector page: polls the JSON API and renders the world's
// summary, a sortable archetype table, a live chart of per-system frame
// times, and an entity browser (the transform hierarchy as a lazily
// expanded tree, or a query's results, beside the selected entity's
// components and values). The query box takes the query language of
// GET /api/query?expr= (results list each variable's binding; an error
// shows where its column points); running the same query again passes the
// previous answer's tick as since=, so Changed(X) shows what changed
// in between.
//
// Text from the world is always inserted with textContent, never as HTML.
// Polling pauses while the tab is hidden. Edits (editors per component,
// add, remove, create, despawn: editor.js) appear only when the server
// says it has write access. The history charts, prefabs and an entity's
// relationships are drawn by explorer.js.
"use strict";

const HISTORY = 300; // frames kept for the chart
const ROOTS_PAGE = 200; // tree roots or query results per page

const state = {
  archetypes: [],
  sort: { key: "entities", dir: -1 },
  selected: null,
  editing: false,
  write: false,
  paused: false,
  lastFrame: null,
  chart: { names: [], frames: [], frame: [], series: [] },
  list: { kind: "roots", with: [], offset: 0 },
};

// ---- helpers ---------------------------------------------------------------

async function api(path, options) {
  const response = await fetch(path, options);
  let body;
  try {
    body = await response.json();
  } catch (e) {
    body = { error: "the answer is not JSON (" + response.status + ")" };
  }
  if (!response.ok) {
    const error = new Error(body.error || "HTTP " + response.status);
    error.column = body.column; // set for errors in a query's text
    throw error;
  }
  return body;
}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

function fmtBytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return (i === 0 ? n : n.toFixed(n >= 100 ? 0 : 1)) + " " + units[i];
}

function fmtInt(n) {
  return n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US");
}

function setStatus(text, cls) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = "badge " + (cls || "");
}

// A number as JSON text. Most component values are f32s, which JSON
// carries widened to f64 (135.27012634277344); a number that is exactly an
// f32 is shown as the shortest decimal that reads back as the same f32
// (135.27013), anything else as it is.
function fmtNum(v) {
  if (!Number.isFinite(v) || Number.isInteger(v)) return JSON.stringify(v);
  if (Math.fround(v) === v) {
    for (let p = 1; p <= 9; p++) {
      const short = Number(v.toPrecision(p));
      if (Math.fround(short) === v) return String(short);
    }
  }
  return String(v);
}

// Compact JSON text, numbers through fmtNum.
function jsonText(value) {
  if (typeof value === "number") return fmtNum(value);
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return "[" + value.map(jsonText).join(", ") + "]";
  return "{" + Object.entries(value).map(([k, v]) => JSON.stringify(k) + ": " + jsonText(v)).join(", ") + "}";
}

// JSON text that stays readable: short values on one line, arrays of
// scalars inline, objects one key per line. Still valid JSON.
function showValue(value, indent = "") {
  const compact = jsonText(value);
  if (compact.length <= 60 || value === null || typeof value !== "object") return compact;
  const inner = indent + "  ";
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) return compact;
    return "[\n" + value.map((v) => inner + showValue(v, inner)).join(",\n") + "\n" + indent + "]";
  }
  const lines = Object.entries(value).map(([k, v]) => inner + JSON.stringify(k) + ": " + showValue(v, inner));
  return "{\n" + lines.join(",\n") + "\n" + indent + "}";
}

// ---- summary and controls --------------------------------------------------

async function refreshWorld() {
  const w = await api("/api/world");
  const set = (key, text) => {
    const dd = document.querySelector(`#summary dd[data-key="${key}"]`);
    if (dd) dd.textContent = text;
  };
  set("entities", fmtInt(w.entities));
  set("archetypes_in_use", fmtInt(w.archetypes_in_use));
  set("chunks", fmtInt(w.chunks));
  set("bytes_used", fmtBytes(w.bytes_used));
  set("bytes_reserved", fmtBytes(w.bytes_reserved));
  set("frame", fmtInt(w.frame));
  if (w.write && !state.write) await refreshComponents();
  state.write = w.write;
  showWriteControls(w.write);
  state.paused = w.paused;
  const mode = document.getElementById("mode");
  mode.textContent = w.write ? "write access" : "read-only";
  mode.className = "badge " + (w.write ? "write" : "");
  document.getElementById("pause").classList.toggle("active", w.paused);
  document.getElementById("resume").classList.toggle("active", !w.paused);
  setStatus(w.paused ? "paused" : "running", w.paused ? "paused" : "ok");
}

async function control(action) {
  try {
    await api("/api/controls/" + action, { method: "POST" });
    await refreshWorld();
    await refreshSystems();
    if (state.selected) await refreshDetail();
  } catch (e) {
    setStatus(e.message, "error");
  }
}

// ---- archetypes --------------------------------------------------------------

async function refreshArchetypes() {
  const a = await api("/api/archetypes");
  state.archetypes = a.archetypes;
  renderArchetypes();
  if (state.write) await refreshComponents();
}

// The components, for the add-component form.
async function refreshComponents() {
  state.components = (await api("/api/components")).components;
}

function sortValue(row, key) {
  return key === "components" ? row.components.join(",") : row[key];
}

function renderArchetypes() {
  const { key, dir } = state.sort;
  const rows = [...state.archetypes].sort((a, b) => {
    const x = sortValue(a, key), y = sortValue(b, key);
    return (x < y ? -1 : x > y ? 1 : 0) * dir || a.id - b.id;
  });
  for (const th of document.querySelectorAll("#archetypes th[data-sort]")) {
    th.classList.toggle("sorted-asc", th.dataset.sort === key && dir > 0);
    th.classList.toggle("sorted-desc", th.dataset.sort === key && dir < 0);
  }
  const body = document.querySelector("#archetypes tbody");
  body.replaceChildren(
    ...rows.map((r) => {
      const pct = (r.fill * 100).toFixed(1);
      const bar = el("span");
      bar.style.width = pct + "%";
      return el(
        "tr",
        {
          dataset: { id: r.id, components: r.components.join(","), entities: r.entities },
          title: "list the entities of archetype #" + r.id,
          onclick: () => listQuery(r.components),
        },
        el("td", { class: "num", text: r.id }),
        el("td", {}, ...(r.components.length ? r.components.map((c) => el("span", { class: "chip", text: c })) : [el("span", { class: "muted", text: "(none)" })])),
        el("td", { class: "num entities", text: fmtInt(r.entities) }),
        el("td", { class: "num", text: fmtInt(r.chunks) }),
        el("td", { class: "fill" + (r.fill < 0.5 ? " low" : "") }, el("span", { class: "bar" }, bar), pct + "%"),
        el("td", { class: "num", text: fmtBytes(r.bytes_used) }),
        el("td", { class: "num", text: fmtBytes(r.bytes_reserved) })
      );
    })
  );
}

// ---- systems chart -----------------------------------------------------------

async function refreshSystems() {
  const since = state.lastFrame === null ? "" : "?since=" + state.lastFrame;
  const s = await api("/api/systems" + since);
  const c = state.chart;
  const names = s.systems.map((x) => x.name);
  if (names.join("\n") !== c.names.join("\n")) {
    c.names = names;
    c.frames = [];
    c.frame = [];
    c.series = names.map((name, i) => ({ name, color: chartColor(i), values: [] }));
  }
  c.frames.push(...s.frames);
  c.frame.push(...s.frame_time_us);
  s.systems.forEach((x, i) => c.series[i].values.push(...x.time_us));
  const drop = Math.max(0, c.frames.length - HISTORY);
  if (drop) {
    c.frames.splice(0, drop);
    c.frame.splice(0, drop);
    c.series.forEach((x) => x.values.splice(0, drop));
  }
  if (s.frames.length) state.lastFrame = s.frames[s.frames.length - 1];
  else if (state.lastFrame !== null && s.frame < state.lastFrame) state.lastFrame = null; // restarted
  drawChart(document.getElementById("chart"), c);
  document.getElementById("chart-frames").textContent = c.frames.length;
  const mean = (v) => (v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0);
  const meanFrame = mean(c.frame);
  const dd = document.querySelector('#summary dd[data-key="mean_frame"]');
  dd.textContent = c.frame.length ? formatMicros(meanFrame) : "–";
  const rows = c.series.map((x) =>
    el(
      "tr",
      { dataset: { system: x.name } },
      el("td", {}, (() => { const sw = el("span", { class: "swatch" }); sw.style.background = x.color; return sw; })()),
      el("td", { text: x.name }),
      el("td", { class: "num", text: formatMicros(mean(x.values)) }),
      el("td", { class: "num", text: x.values.length ? formatMicros(x.values[x.values.length - 1]) : "–" })
    )
  );
  rows.push(el("tr", {}, el("td", {}, "┄"), el("td", { class: "muted", text: "whole frame" }), el("td", { class: "num", text: formatMicros(meanFrame) }), el("td", { class: "num", text: c.frame.length ? formatMicros(c.frame[c.frame.length - 1]) : "–" })));
  document.querySelector("#systems tbody").replaceChildren(...rows);
  document.getElementById("plan").textContent = s.plan || "(the program did not give its schedule's plan)";
  await refreshObservers();
}

// Observers are not entities: the API lists them, in the order they run.
async function refreshObservers() {
  const o = await api("/api/observers");
  document.getElementById("observer-count").textContent = o.count;
  const rows = o.observers.map((x) =>
    el(
      "tr",
      { dataset: { observer: x.id } },
      el("td", { text: x.name }),
      el("td", { text: x.event }),
      el("td", { text: x.component || "–" }),
      el("td", { text: x.entity ? x.entity.name || x.entity.id : "any" })
    )
  );
  document.querySelector("#observers tbody").replaceChildren(...rows);
}

// ---- entity list: hierarchy or query ---------------------------------------

function treeNode(ref) {
  const toggle = el("span", { class: "toggle", text: ref.children ? "▸" : "" });
  const li = el("li", { dataset: { entity: ref.id } });
  const node = el(
    "div",
    { class: "node" + (ref.id === state.selected ? " selected" : ""), title: ref.id },
    toggle,
    ...(ref.name ? [el("span", { class: "name", text: ref.name })] : []),
    el("span", { class: "id", text: ref.id }),
    ...Object.entries(ref.vars || {}).map(([k, v]) => el("span", { class: "vars", text: `$${k}=${v ? v.name || v.id : "–"}` })),
    el("span", { class: "comps", text: ref.components.join(", ") })
  );
  node.addEventListener("click", (e) => {
    if (e.target === toggle && ref.children) expand(li, toggle, ref);
    else select(ref.id);
  });
  node.addEventListener("dblclick", () => ref.children && expand(li, toggle, ref));
  li.append(node);
  return li;
}

async function expand(li, toggle, ref) {
  const open = li.querySelector(":scope > ul");
  if (open) {
    open.remove();
    toggle.textContent = "▸";
    return;
  }
  try {
    const d = await api("/api/entity/" + encodeURIComponent(ref.id));
    const ul = el("ul", {}, ...d.children.map(treeNode));
    if (d.children_total > d.children.length) ul.append(el("li", { class: "muted", text: `… ${d.children_total - d.children.length} more` }));
    li.append(ul);
    toggle.textContent = "▾";
  } catch (e) {
    setStatus(e.message, "error");
  }
}

async function loadList() {
  const l = state.list;
  const title = document.getElementById("tree-title");
  let page;
  try {
    if (l.kind === "roots") {
      page = await api(`/api/roots?offset=${l.offset}&limit=${ROOTS_PAGE}`);
      title.textContent = `hierarchy: ${fmtInt(page.total)} roots`;
    } else if (l.kind === "expr") {
      const since = l.since ? `&since=${l.since}` : "";
      page = await api(`/api/query?expr=${encodeURIComponent(l.expr)}&offset=${l.offset}&limit=${ROOTS_PAGE}${since}`);
      l.tick = page.tick;
      showQueryError(null);
      title.replaceChildren(
        `query [${page.expr}]: ${fmtInt(page.total)} results${l.since ? ` changed since tick ${l.since}` : ""} · `,
        el("a", { href: "#", onclick: (e) => { e.preventDefault(); state.list = { kind: "roots", with: [], offset: 0 }; loadList(); } }, "hierarchy")
      );
    } else {
      const w = l.with.map(encodeURIComponent).join(",");
      page = await api(`/api/query?with=${w}&offset=${l.offset}&limit=${ROOTS_PAGE}`);
      title.replaceChildren(
        `query [${l.with.join(", ") || "all"}]: ${fmtInt(page.total)} entities · `,
        el("a", { href: "#", onclick: (e) => { e.preventDefault(); state.list = { kind: "roots", with: [], offset: 0 }; loadList(); } }, "hierarchy")
      );
    }
  } catch (e) {
    if (l.kind === "expr" && e.column) showQueryError(e, l.expr);
    title.replaceChildren(el("span", { class: "error-text", text: e.message }));
    return;
  }
  document.getElementById("tree").replaceChildren(...page.results.map(treeNode));
  const more = document.getElementById("tree-more");
  more.replaceChildren();
  const shown = `${fmtInt(l.offset + 1)}–${fmtInt(l.offset + page.results.length)}`;
  if (l.offset > 0) more.append(el("button", { type: "button", onclick: () => { l.offset = Math.max(0, l.offset - ROOTS_PAGE); loadList(); } }, "◂ prev"));
  if (page.total > ROOTS_PAGE) more.append(el("span", { class: "muted", text: ` ${shown} ` }));
  if (l.offset + ROOTS_PAGE < page.total) more.append(el("button", { type: "button", onclick: () => { l.offset += ROOTS_PAGE; loadList(); } }, "next ▸"));
  if (!state.selected && page.results.length) select(page.results[0].id);
}

// Runs a query of the query language in the entity list. Running the same
// text again looks for changes since the previous answer's tick.
function runQuery(expr) {
  const prev = state.list;
  const since = prev.kind === "expr" && prev.expr === expr && prev.tick ? prev.tick : 0;
  state.list = { kind: "expr", expr, offset: 0, since };
  loadList();
}

// Shows a query error under the box, with a caret under its column (1-based,
// in characters), and puts the cursor there; `null` clears it.
function showQueryError(error, expr) {
  const box = document.getElementById("query-error");
  const input = document.getElementById("qexpr");
  input.classList.toggle("bad", !!error);
  if (!error) {
    box.hidden = true;
    box.textContent = "";
    delete box.dataset.column;
    return;
  }
  const column = Math.max(1, error.column);
  const chars = [...expr];
  box.hidden = false;
  box.dataset.column = column;
  box.textContent = `${error.message}\n${chars.join("")}\n${" ".repeat(column - 1)}^`;
  const lead = input.value.length - input.value.trimStart().length;
  const at = lead + chars.slice(0, column - 1).join("").length;
  input.focus();
  input.setSelectionRange(at, Math.min(input.value.length, at + 1));
}

function listQuery(components) {
  state.list = { kind: "query", with: components, offset: 0 };
  document.getElementById("with").value = components.join(",");
  loadList();
}

// ---- entity detail -----------------------------------------------------------

async function select(id) {
  state.selected = id;
  state.editing = false;
  for (const n of document.querySelectorAll("#tree .node")) n.classList.toggle("selected", n.parentElement.dataset.entity === id);
  await refreshDetail();
}

function entityLink(ref) {
  const label = ref.name ? `${ref.name} (${ref.id})` : ref.id;
  return el("a", { href: "#", title: ref.components.join(", "), onclick: (e) => { e.preventDefault(); select(ref.id); } }, label);
}

function componentBox(c) {
  const box = el("div", { class: "component", dataset: { component: c.name, kind: c.kind } });
  const head = el("div", { class: "name" }, el("span", { text: c.name }), el("span", { class: "kind", text: `${c.kind}${c.storage === "sparse" ? " · sparse" : ""}${c.type ? " · " + c.type : ""} · ${c.size} B` }));
  const value = el("pre", { class: "value", text: showValue(c.value) });
  box.append(head, value);
  if (state.write) addEditControls(box, head, c);
  return box;
}

function managerBox(name, value) {
  return el("div", { class: "component", dataset: { manager: name } }, el("div", { class: "name" }, el("span", { text: name }), el("span", { class: "kind", text: "manager" })), el("pre", { class: "value", text: showValue(value) }));
}

async function refreshDetail() {
  const pane = document.getElementById("entity-detail");
  const id = state.selected;
  if (!id || state.editing) return;
  let d;
  try {
    d = await api("/api/entity/" + encodeURIComponent(id));
  } catch (e) {
    if (state.selected !== id) return;
    pane.dataset.entity = id;
    pane.replaceChildren(el("h3", { text: id }), el("p", { class: "error-text", text: e.message }));
    return;
  }
  if (state.selected !== id) return;
  pane.dataset.entity = d.id;
  const meta = el("div", { class: "meta" }, `bits ${d.bits} · archetype #${d.archetype} · row ${d.row}`);
  if (d.parent) meta.append(" · parent ", entityLink(d.parent));
  meta.append(` · ${d.children_total} children`);
  const parts = [el("h3", { text: d.id }), meta];
  if (d.path) parts.splice(1, 0, el("div", { class: "path", title: "its path of names", text: d.path }));
  if (state.write) {
    const dependents = Object.entries(d.incoming || {}).filter(([r]) => r === "ChildOf" || r === "IsA").reduce((n, [, k]) => n + k, 0);
    const error = el("span", { class: "error-text edit-error" });
    parts.push(el("div", { class: "despawn-row" }, el("button", { type: "button", class: "danger despawn", text: "despawn", title: dependents ? `its ${dependents} children and instances go with it` : "despawn this entity", onclick: async () => {
      try {
        await api("/api/entity/" + encodeURIComponent(d.id), { method: "DELETE" });
      } catch (e) {
        error.textContent = e.message;
        return;
      }
      state.selected = null;
      state.editing = false;
      pane.dataset.entity = "";
      pane.replaceChildren(el("p", { class: "muted despawned", text: `Despawned ${d.id}.` }));
      loadList();
    } }), error));
  }
  parts.push(...d.components.map(componentBox));
  if (state.write) parts.push(addComponentForm(d));
  parts.push(...relationsLists(d));
  const graph = relationsGraph(d);
  if (graph) parts.push(graph);
  for (const [name, value] of Object.entries(d.managers || {})) parts.push(managerBox(name, value));
  if (d.children.length) {
    parts.push(el("div", { class: "meta" }, "children: ", ...d.children.slice(0, 50).flatMap((c) => [entityLink(c), " "])));
  }
  pane.replaceChildren(...parts);
}

// ---- wiring ------------------------------------------------------------------

function wire() {
  for (const th of document.querySelectorAll("#archetypes th[data-sort]")) {
    th.addEventListener("click", () => {
      const key = th.dataset.sort;
      state.sort = { key, dir: state.sort.key === key ? -state.sort.dir : key === "components" || key === "id" ? 1 : -1 };
      renderArchetypes();
    });
  }
  document.getElementById("pause").addEventListener("click", () => control("pause"));
  document.getElementById("step").addEventListener("click", () => control("step"));
  document.getElementById("resume").addEventListener("click", () => control("resume"));
  document.getElementById("find").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = document.getElementById("goto").value.trim();
    const names = document.getElementById("with").value.split(",").map((s) => s.trim()).filter(Boolean);
    // An id (12v0, or the 64-bit form) selects that entity; anything else
    // is a path of names (ship/turret).
    if (/^(\d+v\d+|\d+)$/.test(text)) select(text);
    else if (text) {
      try {
        const found = await api("/api/lookup?path=" + encodeURIComponent(text));
        select(found.entity.id);
      } catch (err) {
        setStatus(err.message, "error");
      }
    }
    if (names.length || !text) listQuery(names);
  });
  document.getElementById("query").addEventListener("submit", (e) => {
    e.preventDefault();
    const expr = document.getElementById("qexpr").value.trim();
    if (expr) runQuery(expr);
  });
  window.addEventListener("resize", () => {
    drawChart(document.getElementById("chart"), state.chart);
    drawHistory();
  });
  wireCreate();
}

let ticks = 0;
let busy = false;
async function tick() {
  if (document.hidden || busy) return;
  busy = true;
  try {
    await refreshSystems();
    await refreshHistory();
    if (ticks % 2 === 0) await refreshWorld();
    if (ticks % 2 === 1 && state.selected) await refreshDetail();
    if (ticks % 4 === 0) await refreshArchetypes();
    if (ticks % 4 === 2) await refreshPrefabs();
    ticks++;
  } catch (e) {
    setStatus("disconnected: " + e.message, "error");
  } finally {
    busy = false;
  }
}

async function start() {
  wire();
  try {
    await refreshWorld();
    await refreshArchetypes();
    await refreshSystems();
    await refreshHistory();
    await refreshPrefabs();
    await loadList();
  } catch (e) {
    setStatus("disconnected: " + e.message, "error");
  }
  document.body.dataset.ready = "true";
  setInterval(tick, 500);
}

start();
