// The inspector page's editors, shown only with write access
// (--inspect-write): a typed editor per component value (a number input
// per number, a checkbox per bool, a text input per string, by the shape
// of the value's JSON: a number, an array of numbers such as a vector, an
// object of fields; JSON text for anything else), saved with PUT; a remove
// button per component (DELETE); a form that adds a component the entity
// lacks (prefilled with another entity's value of it as a template); and
// a form that creates an entity from a JSON object of values by name
// (POST /api/entity). A refused edit shows the server's message (the
// component's check, say "mass must be finite and greater than 0") under
// it, and the world is unchanged.
//
// Uses app.js's helpers (api, el, fmtNum, state, select, refreshDetail,
// loadList) at run time; loaded before it.
"use strict";

const EDIT_MAX_INLINE = 16; // longest array of scalars edited field by field
const EDIT_MAX_DEPTH = 3; // deepest object or array edited field by field
const AXES = ["x", "y", "z", "w"];

function isScalar(v) {
  return v === null || typeof v !== "object";
}

// An editor for `value`: { node, read() } where read() gives the edited
// value back, or throws an Error saying which field is wrong. `path` names
// the field ($ for the value itself, $.0, $.hp, ...), put on every input
// as data-path.
function valueEditor(value, path = "$", depth = 0) {
  if (typeof value === "number") {
    const input = el("input", { type: "number", step: "any", class: "num-input", dataset: { path } });
    input.value = fmtNum(value);
    return {
      node: input,
      read() {
        const text = input.value.trim();
        const n = Number(text);
        if (text === "" || !Number.isFinite(n)) throw new Error(`${path}: "${input.value}" is not a number`);
        return n;
      },
    };
  }
  if (typeof value === "boolean") {
    const input = el("input", { type: "checkbox", dataset: { path } });
    input.checked = value;
    return { node: input, read: () => input.checked };
  }
  if (typeof value === "string") {
    const input = el("input", { type: "text", class: "text-input", dataset: { path } });
    input.value = value;
    return { node: input, read: () => input.value };
  }
  if (value === null) {
    return { node: el("span", { class: "muted", text: "null", dataset: { path } }), read: () => null };
  }
  if (depth < EDIT_MAX_DEPTH && Array.isArray(value) && value.length <= EDIT_MAX_INLINE) {
    const flat = value.every(isScalar);
    const box = el("div", { class: flat ? "fields inline" : "fields" });
    const parts = value.map((v, i) => {
      const part = valueEditor(v, `${path}.${i}`, depth + 1);
      const name = flat && value.length <= 4 && value.every((x) => typeof x === "number") ? AXES[i] : String(i);
      box.append(el("label", {}, el("span", { class: "field", text: name }), part.node));
      return part;
    });
    return { node: box, read: () => parts.map((p) => p.read()) };
  }
  if (depth < EDIT_MAX_DEPTH && !Array.isArray(value) && Object.keys(value).length <= EDIT_MAX_INLINE) {
    const box = el("div", { class: "fields" });
    const parts = Object.entries(value).map(([k, v]) => {
      const part = valueEditor(v, `${path}.${k}`, depth + 1);
      box.append(el("label", {}, el("span", { class: "field", text: k }), part.node));
      return [k, part];
    });
    return { node: box, read: () => Object.fromEntries(parts.map(([k, p]) => [k, p.read()])) };
  }
  return jsonEditor(value, path);
}

// JSON text, for shapes without a typed editor.
function jsonEditor(value, path = "$") {
  const area = el("textarea", { rows: 3, dataset: { path } });
  area.value = value === undefined ? "" : JSON.stringify(value);
  return {
    node: area,
    read() {
      try {
        return JSON.parse(area.value);
      } catch (e) {
        throw new Error(`${path}: not JSON (${e.message})`);
      }
    },
  };
}

function componentPath(id, name) {
  return `/api/entity/${encodeURIComponent(id)}/components/${encodeURIComponent(name)}`;
}

// Edit and remove buttons for one component's box (write access only).
function addEditControls(box, head, c) {
  const buttons = el("span", { class: "buttons" });
  const error = el("div", { class: "error-text edit-error" });
  const remove = el("button", { type: "button", class: "danger remove", text: "remove", title: "remove " + c.name + " from this entity" });
  remove.addEventListener("click", async () => {
    try {
      await api(componentPath(state.selected, c.name), { method: "DELETE" });
      state.editing = false;
      refreshDetail();
    } catch (e) {
      error.textContent = e.message;
    }
  });
  if (c.kind === "json" || c.kind === "bytes") {
    const edit = el("button", { type: "button", class: "edit", text: "edit" });
    edit.addEventListener("click", () => openEditor(box, c, error));
    buttons.append(edit);
  }
  buttons.append(remove);
  head.append(buttons);
  box.append(error);
}

function openEditor(box, c, error) {
  state.editing = true;
  const editor = valueEditor(c.value);
  const form = el("form", { class: "editor" }, editor.node);
  const save = el("button", { type: "submit", class: "save", text: "save" });
  const cancel = el("button", { type: "button", text: "cancel" });
  form.append(el("div", { class: "editor-buttons" }, save, cancel));
  cancel.addEventListener("click", () => {
    state.editing = false;
    refreshDetail();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.textContent = "";
    let value;
    try {
      value = editor.read();
      await api(componentPath(state.selected, c.name), { method: "PUT", body: JSON.stringify(value) });
    } catch (err) {
      error.textContent = err.message;
      box.classList.add("refused");
      return;
    }
    state.editing = false;
    refreshDetail();
  });
  box.querySelector(".value").replaceWith(form);
  box.querySelector(".buttons .edit")?.remove();
  form.querySelector("input, textarea")?.focus();
}

// A value of component `name` from some entity that has it, as a
// template for adding it; undefined when no entity has one.
async function sampleValue(name) {
  try {
    const q = await api(`/api/query?with=${encodeURIComponent(name)}&limit=1&values=true`);
    const v = q.results.length ? q.results[0].values.find((x) => x.name === name) : undefined;
    return v && v.kind === "json" ? v.value : undefined;
  } catch (e) {
    return undefined;
  }
}

// The form that adds a component the entity `d` lacks.
function addComponentForm(d) {
  const have = new Set(d.components.map((c) => c.name));
  const choices = (state.components || []).filter((c) => (c.serde || (c.plain_bytes && !c.registered)) && !have.has(c.name));
  const form = el("form", { class: "add-component" });
  if (!choices.length) return form;
  const pick = el("select", { name: "component" }, el("option", { value: "", text: "add a component…" }), ...choices.map((c) => el("option", { value: c.name, text: c.name })));
  const slot = el("div", { class: "add-value" });
  const add = el("button", { type: "submit", text: "add", disabled: "" });
  const error = el("div", { class: "error-text edit-error" });
  let editor = null;
  pick.addEventListener("change", async () => {
    error.textContent = "";
    const name = pick.value;
    editor = null;
    slot.replaceChildren();
    add.disabled = true;
    if (!name) {
      state.editing = false;
      return;
    }
    state.editing = true; // keep the form while it is filled in
    const sample = await sampleValue(name);
    if (pick.value !== name) return;
    editor = sample === undefined ? jsonEditor(undefined) : valueEditor(sample);
    if (sample === undefined) editor.node.placeholder = "its value as JSON";
    slot.replaceChildren(editor.node);
    add.disabled = false;
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!editor || !pick.value) return;
    error.textContent = "";
    try {
      await api(componentPath(state.selected, pick.value), { method: "PUT", body: JSON.stringify(editor.read()) });
    } catch (err) {
      error.textContent = err.message;
      return;
    }
    state.editing = false;
    refreshDetail();
  });
  form.append(el("div", { class: "add-row" }, pick, add), slot, error);
  return form;
}

// The "new entity" form in the entities panel.
function wireCreate() {
  const open = document.getElementById("new-entity");
  const form = document.getElementById("create");
  const area = document.getElementById("create-json");
  const error = document.getElementById("create-error");
  open.addEventListener("click", () => {
    form.hidden = !form.hidden;
    if (!form.hidden) area.focus();
  });
  document.getElementById("create-cancel").addEventListener("click", () => {
    form.hidden = true;
    error.textContent = "";
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    error.textContent = "";
    let body = area.value.trim();
    if (body) {
      try {
        JSON.parse(body);
      } catch (err) {
        error.textContent = "not JSON: " + err.message;
        return;
      }
    }
    try {
      const d = await api("/api/entity", { method: "POST", body });
      form.hidden = true;
      area.value = "";
      await loadList();
      select(d.id);
    } catch (err) {
      error.textContent = err.message;
    }
  });
}

// Shows the edit controls the server's access allows.
function showWriteControls(write) {
  document.getElementById("new-entity").hidden = !write;
  if (!write) document.getElementById("create").hidden = true;
}
