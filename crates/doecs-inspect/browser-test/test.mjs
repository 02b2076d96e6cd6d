// The inspector page in a real browser: headless Chromium (Debian's
// `chromium`, driven through playwright-core) against a running
// `doecs run --inspect-write` on a level with prefabs. Checks that the
// archetype table and one entity's detail show the world's real data,
// compared with the JSON API, that sorting, the tree, the query box
// (results with names and bindings, and a bad query's column), pause and
// resume work, that the explorer's panels (relationships and their graph,
// prefabs, history charts) show the API's data and the editors edit the
// world (explorer.mjs), and that the page loads nothing from anywhere but
// the inspector itself. Saves a screenshot of the whole page.
//
//   node test.mjs http://127.0.0.1:PORT/ SCREENSHOT.png
//
// Exits non-zero with a message on the first failed check. Started by
// crates/doecs-cli/tests/inspector_browser.rs (see run.sh beside this file).
import { chromium } from "playwright-core";
import { existsSync } from "node:fs";
import { checkEditors, checkHistory, checkPrefabs, checkRelationships, open } from "./explorer.mjs";

const [base, screenshot] = process.argv.slice(2);
if (!base || !screenshot) {
  console.error("usage: node test.mjs URL SCREENSHOT.png");
  process.exit(2);
}
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(executablePath)) {
  console.error(`no browser at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
  process.exit(1);
}

const url = (path) => new URL(path, base).toString();
async function api(path, options) {
  const r = await fetch(url(path), options);
  const body = await r.json();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${body.error}`);
  return body;
}
function check(ok, what) {
  if (!ok) throw new Error("check failed: " + what);
  console.log("ok -", what);
}
function same(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
// Equal values, numbers compared as the f32s the page shows them as.
function sameValue(a, b) {
  if (typeof a === "number" && typeof b === "number") return a === b || Math.fround(a) === Math.fround(b);
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  const ka = Object.keys(a), kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => sameValue(a[k], b[k]));
}

const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
  ],
});
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const foreign = [];
  const errors = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(base)) foreign.push(r.url());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.setDefaultTimeout(20000);

  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector("#archetypes tbody tr");

  // The archetype table shows the world's archetypes.
  const archetypes = (await api("/api/archetypes")).archetypes;
  const rows = await page.$$eval("#archetypes tbody tr", (trs) =>
    trs.map((tr) => ({
      id: Number(tr.dataset.id),
      components: tr.dataset.components,
      entities: Number(tr.dataset.entities),
      shown: tr.querySelector(".entities").textContent.replace(/,/g, ""),
      chips: [...tr.querySelectorAll(".chip")].map((c) => c.textContent),
    }))
  );
  check(rows.length === archetypes.length, `the table has ${archetypes.length} archetypes`);
  for (const a of archetypes) {
    const row = rows.find((r) => r.id === a.id);
    check(row && row.components === a.components.join(",") && same(row.chips, a.components), `archetype #${a.id} shows [${a.components}]`);
    check(row.entities === a.entities && Number(row.shown) === a.entities, `archetype #${a.id} shows ${a.entities} entities`);
  }
  const world = await api("/api/world");
  const shownEntities = await page.textContent('#summary dd[data-key="entities"]');
  check(Number(shownEntities.replace(/,/g, "")) === world.entities, `the summary shows ${world.entities} entities`);

  // Sorting: entities ascending, then descending.
  await page.click('#archetypes th[data-sort="entities"]');
  let order = await page.$$eval("#archetypes tbody tr", (trs) => trs.map((tr) => Number(tr.dataset.entities)));
  check(same(order, [...order].sort((a, b) => a - b)), "sorting by entities, ascending");
  await page.click('#archetypes th[data-sort="entities"]');
  order = await page.$$eval("#archetypes tbody tr", (trs) => trs.map((tr) => Number(tr.dataset.entities)));
  check(same(order, [...order].sort((a, b) => b - a)), "sorting by entities, descending");

  // Pause from the page, so values stand still while compared.
  await page.click("#pause");
  await page.waitForSelector("#status.paused");
  check((await api("/api/controls")).paused, "the pause button paused the simulation");

  // The tree: the first root, expanded, shows its children.
  const roots = await api("/api/roots?limit=1");
  const root = roots.results[0];
  const rootNode = `#tree > li[data-entity="${root.id}"]`;
  await page.click(`${rootNode} > .node .toggle`);
  await page.waitForSelector(`${rootNode} > ul > li`);
  const childIds = await page.$$eval(`${rootNode} > ul > li`, (lis) => lis.map((li) => li.dataset.entity));
  const rootDetail = await api("/api/entity/" + root.id);
  check(same(childIds, rootDetail.children.map((c) => c.id)), `the tree shows ${root.id}'s ${childIds.length} children`);

  // One entity's detail: a child, with its parent; then the root.
  for (const id of [childIds[0], root.id]) {
    await page.click(`#tree li[data-entity="${id}"] > .node .id`);
    await page.waitForSelector(`#entity-detail[data-entity="${id}"] .component`);
    const expected = await api("/api/entity/" + id);
    const shown = await page.$$eval("#entity-detail .component[data-component]", (boxes) =>
      boxes.map((b) => ({ name: b.dataset.component, kind: b.dataset.kind, text: b.querySelector(".value").textContent }))
    );
    check(shown.length === expected.components.length, `${id}: ${expected.components.length} components shown`);
    for (const c of expected.components) {
      const s = shown.find((x) => x.name === c.name);
      check(s && s.kind === c.kind && sameValue(JSON.parse(s.text), c.value), `${id}: ${c.name} = ${JSON.stringify(c.value)}`);
    }
    const heading = await page.textContent("#entity-detail h3");
    check(heading === id, `${id}: the heading names it`);
    if (expected.parent) {
      const meta = await page.textContent("#entity-detail .meta");
      check(meta.includes(expected.parent.id), `${id}: parent ${expected.parent.id} shown`);
    }
    if (expected.path) {
      const path = await page.textContent("#entity-detail .path");
      check(path === expected.path, `${id}: its path ${expected.path} shown`);
      const name = await page.textContent(`#tree li[data-entity="${id}"] > .node .name`);
      check(name === expected.name, `${id}: the tree shows its name ${expected.name}`);
      const found = await api("/api/lookup?path=" + encodeURIComponent(expected.path));
      check(found.entity.id === id, `${expected.path}: the lookup finds ${id}`);
      // The find box takes a path too.
      await page.click("#tree li > .node .id");
      await page.fill("#goto", expected.path);
      await page.click('#find button[type="submit"]');
      await page.waitForSelector(`#entity-detail[data-entity="${id}"]`);
      check(true, `${expected.path}: the find box selects ${id}`);
    }
    const transform = await page.$eval('#entity-detail [data-manager="transform"] .value', (v) => v.textContent);
    check(sameValue(JSON.parse(transform), expected.managers.transform), `${id}: its transform is shown`);
  }

  // The query box: the results the API gives, with names and each
  // variable's binding; then a query that does not parse shows its column.
  const expr = "spin, Name, (ChildOf, $ship), ?mass";
  const expected = await api("/api/query?limit=200&expr=" + encodeURIComponent(expr));
  await page.fill("#qexpr", expr);
  await page.click('#query button[type="submit"]');
  await page.waitForFunction(() => document.querySelector("#tree-title").textContent.startsWith("query ["));
  const results = await page.$$eval("#tree > li", (lis) => lis.map((li) => li.dataset.entity));
  check(expected.total > 0 && same(results, expected.results.map((r) => r.id)), `the query box lists the first ${results.length} of ${expected.total} results`);
  const titleText = await page.textContent("#tree-title");
  check(titleText.includes(expected.total.toLocaleString("en-US") + " results"), `the query box says ${expected.total} results`);
  const first = expected.results[0];
  const vars = await page.textContent(`#tree > li[data-entity="${first.id}"] > .node .vars`);
  const ship = first.vars.ship;
  check(vars === `$ship=${ship.name || ship.id}`, `${first.id}: its binding ${vars} is shown`);
  const named = expected.results.find((r) => r.name);
  check(named !== undefined, "some results have names");
  const shownName = await page.textContent(`#tree > li[data-entity="${named.id}"] > .node .name`);
  check(shownName === named.name, `${named.id}: its name ${named.name} is shown`);
  await page.fill("#qexpr", "spin, (ChildOf $part)");
  await page.click('#query button[type="submit"]');
  await page.waitForSelector("#query-error:not([hidden])");
  const column = await page.$eval("#query-error", (p) => Number(p.dataset.column));
  const errorText = await page.textContent("#query-error");
  check(column === 16 && errorText.includes("expected ',' at column 16"), `a bad query shows its column: ${errorText.split("\n")[0]}`);
  check(errorText.split("\n")[2] === " ".repeat(15) + "^", "a caret points at the column");
  check(await page.$eval("#qexpr", (i) => i.classList.contains("bad")), "the query box is marked");
  await page.fill("#qexpr", "spin");
  await page.click('#query button[type="submit"]');
  await page.waitForSelector("#query-error", { state: "hidden" });
  check(true, "a good query clears the error");

  // The systems table and chart.
  const systems = await api("/api/systems?last=1");
  const names = await page.$$eval("#systems tbody tr[data-system]", (trs) => trs.map((tr) => tr.dataset.system));
  check(same(names, systems.systems.map((s) => s.name)), `the systems table lists ${names.join(", ")}`);
  const observers = await api("/api/observers");
  const listed = await page.$$eval("#observers tbody tr[data-observer]", (trs) => trs.map((tr) => tr.cells[0].textContent));
  check(same(listed, observers.observers.map((o) => o.name)), `the observers table lists the API's ${observers.count} observers`);
  check((await page.$eval("#observer-count", (s) => s.textContent)) === String(observers.count), "the observer count is shown");
  const painted = await page.$eval("#chart", (c) => {
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  });
  check(painted > 1000, "the chart is drawn");

  // The explorer: relationships both ways, prefabs, history, editors.
  const helpers = { api, check, same };
  await checkRelationships(page, helpers, childIds[0]);
  await checkPrefabs(page, helpers);
  await checkHistory(page, helpers);
  await checkEditors(page, helpers, base);

  // Resume, let the charts fill, and take the picture with a part of the
  // first ship open (its graph has its ship and its sub-parts).
  await page.click("#resume");
  await page.waitForSelector("#status.ok");
  check(!(await api("/api/controls")).paused, "the resume button resumed");
  await page.fill("#qexpr", "");
  await page.click("#tree-title a");
  await page.waitForFunction(() => document.querySelector("#tree-title").textContent.startsWith("hierarchy"));
  await open(page, childIds[0]);
  await page.waitForTimeout(3000);
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log("screenshot:", screenshot);

  check(foreign.length === 0, "the page loads nothing from elsewhere" + (foreign.length ? ": " + foreign.join(" ") : ""));
  check(errors.length === 0, "no script errors" + (errors.length ? ": " + errors.join("; ") : ""));
} catch (e) {
  failed = true;
  console.error(e.stack || String(e));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
