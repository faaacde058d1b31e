// The round trip of Run, around htmx: a status while a run is going (htmx itself disables the
// button, hx-disabled-elt), every answer's message where the result goes (base.html's
// htmx-config has htmx swap 4xx/5xx too; an answer that is not one of our pages, such as the
// body-size limit's or a proxy's, is put in words here, as is a failed connection), and after
// a run the editor folds into its bar and the player moves to the top of the screen.
import { problemSpot } from "./editor.js";

const form = document.querySelector("[data-run-form]");
const editor = document.querySelector("[data-editor]");
const result = document.getElementById("result");

// what an answer that brought no words of its own means, by status
const MEANING = {
  413: "The snippet is too long to run.",
  429: "Too many runs from you just now.",
  503: "The server is busy.",
};
const UNREACHABLE = "Could not reach the server: check the connection, then press Run again.";

/** Seconds until a Retry-After (delay-seconds or an HTTP date) says to try, or null. */
export function retrySeconds(header, now = Date.now()) {
  const value = (header ?? "").trim();
  if (/^\d+$/.test(value)) return Number(value);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(1, Math.ceil((when - now) / 1000));
}

export function tryAgain(seconds) {
  return seconds === null ? "" : ` Try again in ${seconds} second${seconds === 1 ? "" : "s"}.`;
}

/** The sentence for an answer that is not one of our pages. */
export function messageFor(status, statusText, contentType, body, retryAfter) {
  let said = (contentType ?? "").startsWith("text/plain") ? body.trim() : "";
  if (!said || said.length > 300) {
    said = MEANING[status] ?? `The server could not answer (${status} ${statusText}).`.replace(" )", ")");
  }
  if (!/[.!?]$/.test(said)) said += ".";
  return said + tryAgain(retrySeconds(retryAfter));
}

function ours(xhr) {
  // our pages' answers to htmx carry their message in the result partial's [data-problem]
  if (!(xhr.getResponseHeader("Content-Type") ?? "").startsWith("text/html")) return false;
  const page = new DOMParser().parseFromString(xhr.responseText, "text/html");
  return page.querySelector("[data-problem], grad-player") !== null;
}

function showProblem(text) {
  const problem = document.createElement("p");
  problem.className = "problem";
  problem.setAttribute("role", "alert");
  problem.dataset.problem = "";
  problem.textContent = text;
  result.replaceChildren(problem);
}

/** Fold the editor and bring the result to the top of the screen; with live editing on
 * (static/live.js) the editor stays open beside the player, and the focus stays in it. */
function showResult() {
  if (editor.hasAttribute("data-live-on")) {
    const player = result.querySelector("grad-player");
    if (player && player.getBoundingClientRect().top > window.innerHeight) {
      player.scrollIntoView({ block: "start" });
    }
    return;
  }
  const wasEditing = editor.contains(document.activeElement);
  editor.open = false;
  const player = result.querySelector("grad-player");
  (player ?? result).scrollIntoView({ block: "start" });
  // the focus was in what just folded away: give it to the player, whose keys step
  if (wasEditing) (player ?? result).focus({ preventScroll: true });
}

function fromRunForm(event) {
  return form && event.detail.requestConfig?.elt === form;
}

if (form && editor && result) {
  const running = form.querySelector("[data-running]");
  document.addEventListener("htmx:beforeRequest", (event) => {
    if (fromRunForm(event)) running.textContent = "Running…";
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (fromRunForm(event)) running.textContent = "";
  });
  document.addEventListener("htmx:beforeSwap", (event) => {
    const { xhr } = event.detail;
    if (!fromRunForm(event) || xhr.status < 400 || ours(xhr)) return;
    event.detail.shouldSwap = false;
    const text = messageFor(
      xhr.status,
      xhr.statusText,
      xhr.getResponseHeader("Content-Type"),
      xhr.responseText,
      xhr.getResponseHeader("Retry-After"),
    );
    showProblem(text);
  });
  document.addEventListener("htmx:sendError", (event) => {
    if (fromRunForm(event)) showProblem(UNREACHABLE);
  });
  document.addEventListener("htmx:timeout", (event) => {
    if (fromRunForm(event)) showProblem(UNREACHABLE);
  });
  document.addEventListener("htmx:afterSwap", (event) => {
    if (!fromRunForm(event)) return;
    if (event.detail.xhr.status < 300) showResult();
    // a snippet Python could not read: the editor (static/editor.js) puts its cursor there
    const spot = problemSpot();
    if (spot) editor.dispatchEvent(new CustomEvent("grad-problem-at", { detail: spot }));
  });
  // a trace's own page opens with the editor folded: start at the player too (every time:
  // the browser would otherwise put back the scroll of the entry, taken before the run)
  if (!editor.open && result.querySelector("grad-player")) {
    history.scrollRestoration = "manual";
    result.querySelector("grad-player").scrollIntoView({ block: "start" });
  }
}
