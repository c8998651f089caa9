// Log in and register through the REST API (session cookie, CSRF header).
/* global gettext */
import { api, csrfToken, errorText } from "./common.js";

function showErrors(form, err) {
  for (const node of form.querySelectorAll("[data-error-for]")) node.textContent = "";
  const details = (err && err.details) || {};
  let placed = false;
  for (const [field, problems] of Object.entries(details)) {
    const node = form.querySelector(`[data-error-for="${field}"]`);
    if (node) {
      node.textContent = [].concat(problems).join(" ");
      placed = true;
    }
  }
  const general = form.querySelector('[data-error-for="form"]');
  if (err && err.code === "authentication_failed") {
    general.textContent = gettext("Wrong username or password.");
  } else if (err && err.details && err.details.username && [].concat(err.details.username).includes("taken")) {
    form.querySelector('[data-error-for="username"]').textContent = gettext("That username is taken.");
  } else if (err && err.details && err.details.username && form.id === "register-form") {
    // The API's pattern message says nothing a player can act on: say what is allowed.
    form.querySelector('[data-error-for="username"]').textContent = gettext(
      "A username has 1 to 150 letters, digits and @ . + - _ (no spaces).",
    );
  } else if (!placed) {
    general.textContent = errorText(err);
  }
}

function wire(id, path) {
  const form = document.getElementById(id);
  if (!form) return;
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = {};
    for (const input of form.querySelectorAll("input[name]")) {
      if (input.value !== "" || input.name !== "email") body[input.name] = input.value;
    }
    const btn = form.querySelector("button[type=submit]");
    btn.disabled = true;
    try {
      await csrfToken(true);
      await api("POST", path, body);
      location.href = form.dataset.next || "/";
    } catch (err) {
      btn.disabled = false;
      showErrors(form, err);
    }
  });
}

wire("login-form", "/api/v1/auth/login/");
wire("register-form", "/api/v1/auth/register/");
