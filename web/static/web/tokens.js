// Create (key shown once) and revoke personal API tokens.
/* global gettext, interpolate */
import { api, apiRows, dateTime, el, errorText } from "./common.js";

const tbody = document.querySelector("#token-table tbody");
const errorEl = document.getElementById("token-error");

async function load() {
  try {
    const tokens = await apiRows("/api/v1/auth/tokens/");
    tbody.replaceChildren(
      ...tokens.map((tok) =>
        el(
          "tr",
          { dataset: { tokenId: tok.id } },
          el("td", {}, tok.name),
          el("td", {}, el("code", {}, tok.prefix + "…")),
          el("td", {}, dateTime(tok.created_at)),
          el("td", {}, tok.last_used_at ? dateTime(tok.last_used_at) : gettext("never")),
          el(
            "td",
            {},
            el(
              "button",
              {
                type: "button",
                class: "button danger",
                "aria-label": interpolate(gettext("Revoke %(name)s"), { name: tok.name }, true),
                onclick: () => revoke(tok),
              },
              gettext("Revoke"),
            ),
          ),
        ),
      ),
    );
    document.getElementById("no-tokens").hidden = tokens.length > 0;
  } catch (err) {
    errorEl.textContent = errorText(err);
  }
}

let shownId = null; // the token whose key is on screen (shown once, after creating it)

async function revoke(tok) {
  if (!confirm(interpolate(gettext("Revoke the token %(name)s? Programs using it stop working."), { name: tok.name }, true)))
    return;
  try {
    await api("DELETE", `/api/v1/auth/tokens/${tok.id}/`);
    if (tok.id === shownId) {
      // The key on screen no longer works: take it away.
      document.getElementById("new-token").hidden = true;
      document.getElementById("new-token-key").textContent = "";
      shownId = null;
    }
    await load();
  } catch (err) {
    errorEl.textContent = errorText(err);
  }
}

const form = document.getElementById("token-form");
form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  errorEl.textContent = "";
  try {
    const tok = await api("POST", "/api/v1/auth/tokens/", { name: form.name.value.trim() });
    document.getElementById("new-token-key").textContent = tok.token;
    shownId = tok.id;
    document.getElementById("new-token").hidden = false;
    form.reset();
    await load();
  } catch (err) {
    errorEl.textContent = errorText(err);
  }
});

document.getElementById("copy-token").addEventListener("click", async () => {
  const key = document.getElementById("new-token-key").textContent;
  try {
    await navigator.clipboard.writeText(key);
    document.getElementById("copy-token").textContent = gettext("Copied");
  } catch (e) {
    const range = document.createRange();
    range.selectNodeContents(document.getElementById("new-token-key"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }
});

load();
