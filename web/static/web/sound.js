// Short sounds of play (a move, a deal, a win), made with the Web Audio API: no files.
// Off unless the player ticks the setting; the audio context starts on the first sound,
// which always follows a click or key (browsers allow sound only after one).

let ctx = null;

function tone(at, freq, length, { type = "sine", gain = 0.12, to = null } = {}) {
  const osc = ctx.createOscillator();
  const amp = ctx.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, at);
  if (to) osc.frequency.exponentialRampToValueAtTime(to, at + length);
  amp.gain.setValueAtTime(0.0001, at);
  amp.gain.exponentialRampToValueAtTime(gain, at + 0.008);
  amp.gain.exponentialRampToValueAtTime(0.0001, at + length);
  osc.connect(amp).connect(ctx.destination);
  osc.start(at);
  osc.stop(at + length + 0.02);
}

const SOUNDS = {
  // A card laid down: a short soft tick.
  move: (t) => tone(t, 520, 0.06, { type: "triangle", gain: 0.1, to: 300 }),
  // A row dealt: three quick ticks.
  deal: (t) => [0, 0.06, 0.12].forEach((d) => tone(t + d, 420, 0.05, { type: "triangle", gain: 0.08, to: 260 })),
  // A win: a rising major arpeggio.
  win: (t) => [523.25, 659.25, 783.99, 1046.5].forEach((f, k) => tone(t + k * 0.12, f, 0.35, { gain: 0.1 })),
};

// Play a sound by name, if `on`; a browser without Web Audio stays silent.
export function play(name, on) {
  if (!on || !SOUNDS[name]) return;
  try {
    ctx = ctx || new (window.AudioContext || window.webkitAudioContext)();
    if (ctx.state === "suspended") ctx.resume();
    SOUNDS[name](ctx.currentTime + 0.01);
  } catch (e) {
    /* no sound */
  }
}
