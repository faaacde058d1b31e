// The embed's postMessage API (docs/embedding.md): the page that frames an embed drives its
// player and follows it.
//
// Host → embed: {gradtrace: "goto", step: N} (1-based), {gradtrace: "play"}, "pause", "next",
// "prev". Only the framing page is listened to; a message of any other shape is ignored, and a
// step out of range is clamped by the player, never an error. Nothing in a message is run.
//
// Embed → host, to window.parent with targetOrigin "*" (a trace is public to anyone with its
// link, and these say no more than the embed shows): {gradtrace: "ready", id, steps, from, to}
// once, then {gradtrace: "step", id, step, steps, phase, text} on every step change, steps
// 1-based.

import { plain } from "./inline-code.js";

const root = document.documentElement;
const id = root.dataset.traceId || "";
const framed = window.parent !== window;

function tell(kind, fields) {
  if (framed) window.parent.postMessage({ gradtrace: kind, id, ...fields }, "*");
}

async function start() {
  await customElements.whenDefined("grad-player");
  const player = document.querySelector("grad-player");
  if (!player?.ready) {
    // the trace was too large to draw, or recorded nothing: say so rather than keep a host waiting
    tell("ready", { steps: 0, from: null, to: null });
    return;
  }
  const link = document.querySelector("[data-open-full]");
  const shown = (step) => {
    const { phase, text } = player.steps[step];
    tell("step", { step: step + 1, steps: player.steps.length, phase, text: plain(text) });
    // the full page opens where the embed is
    if (link) link.href = `/t/${encodeURIComponent(id)}#step=${step + 1}`;
  };
  player.addEventListener("grad-step", (event) => shown(event.detail.step));

  const commands = new Map([
    ["goto", (message) => Number.isFinite(message.step) && player.goto(Math.round(message.step) - 1)],
    ["play", () => player.play()],
    ["pause", () => player.pause()],
    ["next", () => player.goto(player.step + 1)],
    ["prev", () => player.goto(player.step - 1)],
  ]);
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || typeof message !== "object" || typeof message.gradtrace !== "string") return;
    commands.get(message.gradtrace)?.(message);
  });

  const [first, last] = player.range;
  tell("ready", { steps: player.steps.length, from: first + 1, to: last + 1 });
  shown(player.step);
}

start();
