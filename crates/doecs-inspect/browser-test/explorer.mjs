// The explorer's panels in the browser, for test.mjs: relationships both
// ways (lists and the neighbourhood graph, whose nodes open entities), the
// prefabs with their instance counts, the world history charts, and with
// write access the editors: a typed edit that applies, a refused one that
// shows the component's check inline and changes nothing, and create, add
// a component, remove it, despawn. Every check compares the page with the
// JSON API. Runs while the simulation is paused, so values stand still.

// Opens entity `id` through the find box and waits for its detail.
export async function open(page, id) {
  await page.fill("#goto", id);
  await page.click('#find button[type="submit"]');
  await page.waitForSelector(`#entity-detail[data-entity="${id}"] h3`);
}

async function status(base, path, options) {
  return (await fetch(new URL(path, base), options)).status;
}

function component(detail, name) {
  const c = detail.components.find((x) => x.name === name);
  return c ? c.value : undefined;
}

export async function checkRelationships(page, { api, check, same }, partId) {
  await open(page, partId);
  const part = await api("/api/entity/" + partId);
  const parent = part.parent.id;
  const outgoing = await page.$$eval("#rel-out li", (lis) => lis.map((li) => [li.dataset.relation, li.dataset.target]));
  check(same(outgoing, part.relationships.map((r) => [r.relation, r.target.id])), `${partId}: its outgoing pairs are listed (${outgoing.map((p) => p.join(" → ")).join(", ")})`);
  const incoming = await page.$$eval("#rel-in li", (lis) => lis.map((li) => [li.dataset.relation, Number(li.dataset.total), li.querySelectorAll("a").length]));
  const expected = part.incoming_pairs.map((g) => [g.relation, g.total, g.sources.length]);
  check(expected.length > 0 && same(incoming, expected), `${partId}: its incoming pairs are listed with their sources (${incoming.map((g) => g[0] + " ← " + g[1]).join(", ")})`);
  const sourceName = await page.textContent("#rel-in li a");
  const first = part.incoming_pairs[0].sources[0];
  check(sourceName.includes(first.name || first.id), `${partId}: a source shows its name or id (${sourceName})`);

  // The graph: the entity in the centre, every neighbour a node, every
  // pair an edge labelled by its relation.
  const nodes = await page.$$eval("#entity-detail svg.graph g.gnode", (gs) => gs.map((g) => [g.dataset.entity, g.getAttribute("class")]));
  const neighbours = [...part.relationships.map((r) => r.target.id), ...part.incoming_pairs.flatMap((g) => g.sources.map((s) => s.id))];
  check(nodes.some(([id, cls]) => id === partId && cls.includes("centre")), `${partId}: the graph has it in the centre`);
  check(same(nodes.filter(([, c]) => !c.includes("centre")).map(([id]) => id).sort(), [...neighbours].sort()), `the graph shows its ${neighbours.length} neighbours`);
  const labels = await page.$$eval("#entity-detail svg.graph .edge-label", (ts) => ts.map((t) => t.textContent));
  check(labels.length === neighbours.length && labels.includes("ChildOf"), `its ${labels.length} edges are labelled by relation`);
  await page.click(`#entity-detail svg.graph g.gnode[data-entity="${parent}"]`);
  await page.waitForSelector(`#entity-detail[data-entity="${parent}"] h3`);
  check(true, `a click on the graph's ${parent} node opens it`);
}

export async function checkPrefabs(page, { api, check, same }) {
  await page.waitForSelector("#prefabs tbody tr[data-prefab]");
  const expected = await api("/api/prefabs?limit=100");
  const rows = await page.$$eval("#prefabs tbody tr[data-prefab]", (trs) => trs.map((tr) => [tr.dataset.prefab, Number(tr.dataset.instances), tr.cells[0].textContent]));
  check(same(rows, expected.prefabs.map((p) => [p.entity.id, p.instances, p.entity.name || "–"])), `the prefab panel lists ${rows.map((r) => `${r[2]} (${r[1]})`).join(", ")}`);
  const drone = expected.prefabs.find((p) => p.entity.name === "drone");
  check(drone && drone.instances === 5 && drone.tagged, "the drone prefab has its 5 instances");
  await page.click(`#prefabs tbody tr[data-prefab="${drone.entity.id}"]`);
  await page.waitForSelector(`#entity-detail[data-entity="${drone.entity.id}"] #rel-in li[data-relation="IsA"]`);
  const total = await page.$eval('#rel-in li[data-relation="IsA"]', (li) => Number(li.dataset.total));
  check(total === 5, "a click opens the prefab, its IsA instances listed");
  const sources = await page.$$eval("#entity-detail svg.graph g.gnode.source", (gs) => gs.length);
  check(sources === 5, "the prefab's graph shows its 5 instances");
  const caption = await page.textContent("#prefab-count");
  check(caption.includes(`${expected.total} prefabs`), `the panel says ${caption}`);
}

export async function checkHistory(page, { api, check }) {
  await page.waitForFunction(() => Number(document.getElementById("h-entities").dataset.points) > 0);
  const world = await api("/api/world");
  const history = await api("/api/history?last=1");
  for (const key of ["entities", "archetypes", "memory", "frame"]) {
    const canvas = `#h-${key}`;
    const points = Number(await page.$eval(canvas, (c) => c.dataset.points));
    const painted = await page.$eval(canvas, (c) => {
      const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    check(points > 0 && painted > 500, `the ${key} history chart is drawn (${points} points)`);
  }
  const shown = Number((await page.textContent('[data-now="entities"]')).replace(/,/g, ""));
  check(shown === world.entities && history.entities[0] === world.entities, `the history shows ${world.entities} entities, as the summary does`);
  const archetypes = Number(await page.textContent('[data-now="archetypes"]'));
  check(archetypes === world.archetypes_in_use, `the history shows ${archetypes} archetypes in use`);
}

export async function checkEditors(page, { api, check, same }, base) {
  check((await page.textContent("#mode")) === "write access", "the page says it has write access");
  const ship = (await api("/api/lookup?path=ship1")).entity.id;
  await open(page, ship);

  // A typed edit of a number: the input per number, saved with PUT.
  const mass = '#entity-detail .component[data-component="mass"]';
  await page.click(`${mass} button.edit`);
  await page.fill(`${mass} input[data-path="$"]`, "5.5");
  await page.click(`${mass} button.save`);
  await page.waitForFunction((sel) => document.querySelector(sel + " .value")?.textContent === "5.5", mass);
  check(component(await api("/api/entity/" + ship), "mass") === 5.5, "a typed edit sets mass to 5.5");

  // Refused by the component's check: the message inline, nothing changed.
  await page.click(`${mass} button.edit`);
  await page.fill(`${mass} input[data-path="$"]`, "0");
  await page.click(`${mass} button.save`);
  await page.waitForSelector(`${mass} .edit-error:not(:empty)`);
  const refusal = await page.textContent(`${mass} .edit-error`);
  check(refusal.includes("mass must be finite and greater than 0"), `mass 0 is refused inline: ${refusal}`);
  check(component(await api("/api/entity/" + ship), "mass") === 5.5, "the refused edit changed nothing");
  await page.fill(`${mass} input[data-path="$"]`, "");
  await page.click(`${mass} button.save`);
  await page.waitForFunction((sel) => document.querySelector(sel + " .edit-error").textContent.includes("is not a number"), mass);
  check(true, "an empty number is caught before it is sent");
  await page.click(`${mass} .editor button[type="button"]`);

  // A vector: one input per coordinate.
  const position = '#entity-detail .component[data-component="position"]';
  await page.click(`${position} button.edit`);
  const axes = await page.$$eval(`${position} input[type="number"]`, (is) => is.map((i) => i.dataset.path));
  check(same(axes, ["$.0", "$.1", "$.2"]), "a position is edited as three numbers");
  for (const [i, v] of ["1", "2", "3"].entries()) await page.fill(`${position} input[data-path="$.${i}"]`, v);
  await page.click(`${position} button.save`);
  await page.waitForFunction((sel) => document.querySelector(sel + " .value")?.textContent === "[1, 2, 3]", position);
  check(same(component(await api("/api/entity/" + ship), "position"), [1, 2, 3]), "the position is set to [1, 2, 3]");

  // Create an entity; a refused one spawns nothing.
  const before = (await api("/api/world")).entities;
  await page.click("#new-entity");
  await page.fill("#create-json", '{"mass": 0, "Name": "probe"}');
  await page.click('#create button[type="submit"]');
  await page.waitForSelector("#create-error:not(:empty)");
  check((await page.textContent("#create-error")).includes("mass must be finite and greater than 0"), "a create with mass 0 is refused inline");
  check((await api("/api/world")).entities === before, "the refused create spawned nothing");
  await page.fill("#create-json", '{"mass": 3, "position": [0, 1, 0], "Name": "probe"}');
  await page.click('#create button[type="submit"]');
  await page.waitForFunction(() => document.querySelector("#entity-detail .path")?.textContent === "probe");
  const probe = (await api("/api/lookup?path=probe")).entity.id;
  check((await page.textContent("#entity-detail h3")) === probe, `the new entity ${probe} is created and opened`);
  check((await api("/api/world")).entities === before + 1, "one entity more");

  // Add a component it lacks (the form offers another entity's value as a
  // template), then remove it.
  await page.selectOption("#entity-detail .add-component select", "velocity");
  await page.waitForSelector('#entity-detail .add-component input[data-path="$.2"]');
  for (const [i, v] of ["4", "5", "6"].entries()) await page.fill(`#entity-detail .add-component input[data-path="$.${i}"]`, v);
  await page.click('#entity-detail .add-component button[type="submit"]');
  await page.waitForSelector('#entity-detail .component[data-component="velocity"]');
  check(same(component(await api("/api/entity/" + probe), "velocity"), [4, 5, 6]), "velocity [4, 5, 6] is added");
  await page.click('#entity-detail .component[data-component="velocity"] button.remove');
  await page.waitForSelector('#entity-detail .component[data-component="velocity"]', { state: "detached" });
  check(component(await api("/api/entity/" + probe), "velocity") === undefined, "the remove button removes it");

  // Despawn.
  await page.click("#entity-detail button.despawn");
  await page.waitForSelector("#entity-detail .despawned");
  check((await status(base, "/api/entity/" + probe)) === 404, `${probe} is despawned`);
  check((await api("/api/world")).entities === before, "the world is back to its entities");
}
