// What a view shows at step k: the steps' changes folded up to k (docs/render.md, "Steps").
//
// The same fold as app/render/playback.state_at and the same classes as playback.still, so the
// player, the exports and the no-JavaScript page agree (tests/browser/test_fold.py compares
// them on every example). Pure: no DOM, so it can be tested and reused anywhere.

const CHECKPOINT_EVERY = 64;

// The state classes an element can get; a painter toggles each of them.
export const STATE_CLASSES = ["hidden", "freed", "focus", "error"];

// The state of `view` after steps 0..k: {visible: Set, values: Map, grads: Map, marks: Map,
// focus: Set}. `checkpoints`, an object the caller keeps for one `steps` array (any views),
// remembers the state every 64 steps, so a jump across a 20,000-step trace folds at most 64.
export function foldView(steps, view, k, checkpoints) {
  if (!steps.length) return { ...emptyState(), focus: new Set() };
  k = Math.max(0, Math.min(k, steps.length - 1));
  const saved = checkpoints ? (checkpoints[view] ??= []) : [];
  const block = Math.floor(k / CHECKPOINT_EVERY);
  let state;
  let from;
  if (saved[block]) {
    state = cloneState(saved[block]);
    from = block * CHECKPOINT_EVERY;
  } else {
    // start from the latest checkpoint below k, not from scratch
    let below = block;
    while (below > 0 && !saved[below]) below--;
    state = saved[below] ? cloneState(saved[below]) : emptyState();
    from = saved[below] ? below * CHECKPOINT_EVERY : 0;
  }
  for (let i = from; i <= k; i++) {
    // a checkpoint holds the state *before* its step, i.e. after steps 0..i-1
    if (checkpoints && i % CHECKPOINT_EVERY === 0 && !saved[i / CHECKPOINT_EVERY]) {
      saved[i / CHECKPOINT_EVERY] = cloneState(state);
    }
    apply(state, steps[i][view] || {});
  }
  state.focus = new Set((steps[k][view] || {}).focus || []);
  return state;
}

// The state classes element `id` gets in `state` on a step of `phase`, in playback.still's
// order: `hidden` unless visible, its mark ("freed"), and `focus`, which on an error step is
// `error` instead (an error step's focus is where the run failed).
export function elementClasses(state, id, phase) {
  const classes = [];
  if (!state.visible.has(id)) classes.push("hidden");
  const mark = state.marks.get(id);
  if (mark) classes.push(mark);
  if (state.focus.has(id)) classes.push(phase === "error" ? "error" : "focus");
  return classes;
}

// The first step, up to `last`, at which `view` shows every one of `ids` (else the first that
// shows any of them), or null: where a question about those elements can be answered.
export function firstShowing(steps, view, ids, last = steps.length - 1) {
  const state = emptyState();
  let any = null;
  for (let i = 0; i <= Math.min(last, steps.length - 1); i++) {
    apply(state, steps[i][view] || {});
    const shown = ids.filter((id) => state.visible.has(id)).length;
    if (ids.length && shown === ids.length) return i;
    if (shown && any === null) any = i;
  }
  return any;
}

function apply(state, delta) {
  for (const id of delta.hide || []) state.visible.delete(id);
  for (const id of delta.reveal || []) state.visible.add(id);
  for (const [id, text] of Object.entries(delta.values || {})) state.values.set(id, text);
  for (const [id, text] of Object.entries(delta.grads || {})) state.grads.set(id, text);
  for (const [id, mark] of Object.entries(delta.marks || {})) state.marks.set(id, mark);
}

function emptyState() {
  return { visible: new Set(), values: new Map(), grads: new Map(), marks: new Map() };
}

function cloneState(state) {
  return {
    visible: new Set(state.visible),
    values: new Map(state.values),
    grads: new Map(state.grads),
    marks: new Map(state.marks),
  };
}
