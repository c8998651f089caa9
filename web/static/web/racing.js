// What the races lobby and the race page share: links, the server's clock, error texts.
/* global gettext */
import { el, errorText, fmt } from "./common.js";

export const raceUrl = (code) => `/races/${encodeURIComponent(code)}/`;

// The server's clock as this browser sees it. Every race the server sends carries its
// server_time; a message is read a little after it was written, so the largest offset
// seen is the closest one (a countdown then never ends early because of a slow message).
let offset = null;
export function syncClock(race) {
  if (!race || !race.server_time) return;
  const seen = Date.parse(race.server_time) - Date.now();
  if (offset === null || seen > offset) offset = seen;
}
export const serverNow = () => Date.now() + (offset || 0);
export const msUntil = (iso) => (iso ? Date.parse(iso) - serverNow() : null);

// When a public race of the lobby starts.
export function startsText(race) {
  const left = msUntil(race.starts_at);
  if (left === null) return gettext("When a second player joins");
  if (left <= 0) return gettext("Now");
  return fmt(gettext("In %(s)s seconds"), { s: Math.ceil(left / 1000) });
}

// An error of a race request, with a link to the player's race when they are in another.
export function raceError(err) {
  const text = errorText(err);
  const code = err && err.details && err.details.race;
  if (err && err.code === "already_racing" && code) {
    return [text, " ", el("a", { href: raceUrl(code) }, gettext("Go to your race"))];
  }
  return [text];
}
