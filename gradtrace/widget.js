// The notebook widget's front end, to anywidget's contract: a default export whose
// `render({ model, el })` draws into `el` and returns what undoes it. gradtrace/notebook.py
// puts the player's own modules before this text, joined into one module, so <grad-player> is
// defined by the time a widget renders. Steps are 1-based in the model, as the reader sees them
// (and as `step=` in Python), 0-based in the player.
//
// Everything lives inside the object: the joined player's names are this module's too.

export default {
  render({ model, el }) {
    const root = document.createElement("div");
    root.className = "gradtrace-widget";
    el.append(root);
    // A host may render into an element it puts in the page later, so the player may not be
    // live yet: it then opens where the model says, from the data attributes it reads once.
    const player = () => root.querySelector("grad-player"); // none: the steps in words
    const paintTheme = () => {
      const dark = model.get("theme") === "dark";
      root.classList.toggle("theme-dark", dark);
      root.classList.toggle("theme-light", !dark);
    };
    const showStep = () => {
      const element = player();
      if (!element) return;
      const step = model.get("step");
      element.dataset.start = String(step);
      // the model echoing the player's own step must not stop it playing
      if (element.ready && element.step !== step - 1) element.goto(step - 1);
    };
    const showView = () => {
      const element = player();
      if (!element) return;
      element.dataset.view = model.get("view");
      if (element.ready) element.showView(model.get("view"));
    };
    const paintMarkup = () => {
      // The markup is our own template's output (templates/_notebook.html, autoescaped by
      // Jinja; the trace's data sits in a JSON block, escaped by `tojson`), drawn in the kernel:
      // innerHTML is given nothing else, and never any trace text of its own.
      root.innerHTML = model.get("html");
      showView();
      showStep();
    };
    // the player moved (its buttons, keys, scrubber): the model follows, and so does Python
    const onStep = (event) => {
      model.set("step", event.detail.step + 1);
      model.save_changes();
    };
    const onViewPicked = (event) => {
      if (!event.target.matches?.("input[name=view]")) return;
      model.set("view", event.target.value);
      model.save_changes();
    };
    root.addEventListener("grad-step", onStep);
    root.addEventListener("change", onViewPicked);
    model.on("change:html", paintMarkup);
    model.on("change:step", showStep);
    model.on("change:view", showView);
    model.on("change:theme", paintTheme);
    paintTheme();
    paintMarkup();
    return () => {
      model.off("change:html", paintMarkup);
      model.off("change:step", showStep);
      model.off("change:view", showView);
      model.off("change:theme", paintTheme);
      root.remove();
    };
  },
};
