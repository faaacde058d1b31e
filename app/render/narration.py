"""Plain-English narration: one or two sentences for every event kind and every operation.

The numbers come from the trace ("sends 1·b = 4 to a", "a.grad = 1 (through AddBackward0) +
4 (through MulBackward0) = 5"), the names from the snippet. Source excerpts are in `backticks`,
which the player may show as code. The same text feeds the player, screen readers (an aria-live
region), the no-JavaScript view and exports, so it must read well on its own.
"""

from __future__ import annotations

import bisect
import re

from app.render import ops, values
from app.render.explain import explain_error, explain_status
from app.render.graph import Scene, root_name
from app.render.spans import one_line, span_text

SOURCE_LIMIT = 40  # longest source excerpt quoted, in characters
MESSAGE_LIMIT = 200  # an error message longer than this is quoted up to its first sentence
TERMS_LIMIT = 4  # a sum of more gradients than this is summarised
ROOT_LIMIT = 24  # a backward's root with a longer (or no) name is called L in ∂L/∂x

_COMPOUND = {"for", "while", "with", "if", "def", "async"}
_NAME = re.compile(r"^[\w.\[\]]+$")
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_OPERATOR = re.compile(r"[\s+\-*/@%<>=|&^~,]")

CREATION = {  # how a creation function fills the tensor it makes
    "zeros": "filled with zeros",
    "ones": "filled with ones",
    "zeros_like": "filled with zeros",
    "ones_like": "filled with ones",
    "full": "filled with one value",
    "full_like": "filled with one value",
    "empty": "left uninitialised",
    "randn": "drawn from a normal distribution",
    "randn_like": "drawn from a normal distribution",
    "rand": "drawn uniformly from [0, 1)",
    "rand_like": "drawn uniformly from [0, 1)",
    "randint": "random integers",
    "randperm": "a random permutation",
    "arange": "a range of numbers",
    "linspace": "evenly spaced numbers",
    "eye": "an identity matrix",
}

RESULTS = {
    "compare": "compares values",
    "argmax": "finds the index of the largest value",
    "argmin": "finds the index of the smallest value",
    "indices": "computes indices",
    "all": "checks whether all values are true",
    "any": "checks whether any value is true",
    "logical_not": "negates truth values",
    "bitwise_not": "negates truth values",
    "bitwise_and": "combines truth values",
    "bitwise_or": "combines truth values",
}


def operand(name: str) -> str:
    """A name as it reads inside a formula: b and model(x) stay, a*b becomes (a*b)."""
    bare = name
    while True:  # only what is outside brackets counts: f(a, b) needs none
        inner = _BRACKETED.sub("", bare)
        if inner == bare:
            break
        bare = inner
    return f"({name})" if _OPERATOR.search(bare) else name


def listing(items: list[str]) -> str:
    """["a"] → "a"; ["a", "b", "c"] → "a, b and c" (", and" when an item has its own "and")."""
    if len(items) <= 1:
        return "".join(items)
    last = ", and " if any(" and " in item for item in items) else " and "
    return ", ".join(items[:-1]) + last + items[-1]


def article(word: str) -> str:
    """ "a MulBackward0", "an AddBackward0", "an MmBackward0" (said em-em)."""
    spelled = word.startswith(("Mm", "Mv", "Mse", "Nll"))
    return f"an {word}" if word[:1] in "AEIOUaeiou" or spelled else f"a {word}"


def count(n: int, thing: str) -> str:
    return f"{n:,} {thing}" if n == 1 else f"{n:,} {thing}s"


def first_sentence(message: str) -> str:
    """A message as a sentence: whole when short, else up to its first full stop or bracket."""
    if len(message) > MESSAGE_LIMIT:
        cuts = [c for c in (message.find(". ", 20) + 1, message.find(" (", 20)) if c > 0]
        cut = min(cuts, default=-1)
        if 0 < cut < 2 * MESSAGE_LIMIT:
            message = message[:cut]
        else:
            message = message[: MESSAGE_LIMIT - 1].rstrip() + "…"
    return message if message.endswith((".", "!", "?", "…")) else message + "."


class Narrator:
    """Writes the sentences for one trace; steps tell it what is going on around an event."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.trace = scene.trace
        self.tensors = scene.trace["tensors"]
        self.nodes = scene.trace["nodes"]
        self.lines = scene.trace["code"].splitlines()
        self.uses: dict[str, list[int]] = {}  # tensor → seqs of the recorded ops that used it
        for event in scene.trace["events"]:
            if event["kind"] in ("op", "inplace") and event["node"] is not None:
                # an in-place op's first input is the old version of what it changes, not a use
                inputs = event["inputs"][1:] if event["kind"] == "inplace" else event["inputs"]
                for tid in dict.fromkeys(inputs):
                    if tid is not None:
                        self.uses.setdefault(tid, []).append(event["seq"])
        self.accumulators: dict[str, list[int]] = {}  # leaf → when each AccumulateGrad was made
        for record in self.nodes.values():
            if record["name"] == "AccumulateGrad":
                self.accumulators.setdefault(record["variable"], []).append(record["created"])
        for made in self.accumulators.values():
            made.sort()

    # ***** names and sources *****

    def name(self, tid: str | None) -> str:
        return "a number" if tid is None else self.scene.labels[tid]

    def names(self, inputs: list, span: list | None = None, op: str = "") -> list[str]:
        """The inputs' names. A Python number is named as the source writes it (2, lr) when
        the op's source shows it plainly, as in `w * 2`; ops of one tensor and a number
        (`x ** 2`) get the number as a second name."""
        names = [self.name(t) for t in inputs]
        if None in inputs and len(inputs) == 2 and span:
            written = _other_operand(self.source(span), names[inputs.index(None) ^ 1])
            if written:
                names[inputs.index(None)] = written
        number = ops.lookup(op).number if op else ""
        if number and len(inputs) == 1:
            written = _other_operand(self.source(span), names[0]) if span else None
            names.append(written or number)
        return names

    def source(self, span: list | None) -> str:
        """The source text a span covers, whitespace collapsed, cut to SOURCE_LIMIT; of a
        compound statement (`for val in x: …`) only its header."""
        text = span_text(self.lines, span)
        if not one_line(span) and text.split(" ", 1)[0] in _COMPOUND and ":" in text:
            text = text[: text.index(":") + 1]
        return text if len(text) <= SOURCE_LIMIT else text[: SOURCE_LIMIT - 1] + "…"

    def quoted(self, span: list | None) -> str:
        text = self.source(span)
        return f"`{text}`" if text else "This line"

    def is_named(self, tid: str, span: list | None) -> bool:
        """Whether a tensor's label is a name from the code rather than its source text."""
        label = self.scene.labels[tid]
        return label != self.source(span) and _NAME.match(label) is not None

    def node_name(self, nid: str | None) -> str:
        return "the root" if nid is None else ops.plain(self.nodes[nid]["name"])

    # ***** forward *****

    def unrecorded(self, inputs: list, grad_enabled: bool, in_backward: bool) -> str:
        """Why an op recorded no node. Grad mode switched by the snippet is an event; inside
        backward() and a custom Function's forward, autograd switches it off itself."""
        if not grad_enabled:
            return "grad mode is off"
        if in_backward:
            return (
                "backward() runs this code with grad mode off (create_graph=True would record it)"
            )
        needing = list(
            dict.fromkeys(t for t in inputs if t is not None and self.tensors[t]["requires_grad"])
        )
        if needing:
            return (
                f"{listing([self.name(t) for t in needing])} "
                f"require{'s' if len(needing) == 1 else ''} grad, but grad mode is off here: "
                "autograd turns it off while a custom Function's forward runs"
            )
        return "none of its inputs requires grad"

    def tensors_made(self, events: list[dict], in_backward: bool = False) -> str:
        """One or more `tensor` events from the same place."""
        first = events[0]
        kind, span = first["op"], first["span"]
        tids = [e["tensor"] for e in events]
        made = listing([self._described(t) for t in tids])
        record = self.tensors[tids[0]]
        if kind == "parameter":
            these = "its parameters" if len(tids) > 1 else "a parameter"
            return (
                f"{self.quoted(span)} creates {these} {made}: "
                f"{'leaves' if len(tids) > 1 else 'a leaf'} that "
                f"require{'' if len(tids) > 1 else 's'} grad, so backward() will fill in "
                f"their .grad."
            )
        if kind in ("detach", "data"):
            source = self.name(first["inputs"][0]) if first["inputs"] else "a tensor"
            how = ".detach()" if kind == "detach" else ".data"
            return (
                f"{self.quoted(span)} makes {made} with {how}: the same values as {source}, "
                f"but cut off from the graph, so nothing done to it reaches {source}'s gradient."
            )
        if kind in RESULTS:
            made = listing([self._described(t, bare=True) for t in tids])
            return (
                f"{self.quoted(span)} {RESULTS[kind]}, giving {made}. Results like this are "
                f"never part of the graph: they have no gradient."
            )
        if kind is None and in_backward:
            return f"Autograd made {made} while running backward() and handed it to this code."
        if kind is None:
            return f"The engine made {made} here, a temporary tensor of its own, outside the graph."
        how = f", {CREATION[kind]}" if kind in CREATION else ""
        one = len(tids) == 1
        if record["requires_grad"]:
            role = (
                "It is a leaf that requires grad, so backward() will fill in its .grad (None "
                "until then)."
                if one
                else "They are leaves that require grad."
            )
        else:
            role = (
                f"{'It does' if one else 'They do'} not require grad, so autograd treats "
                f"{'it' if one else 'them'} as {'a constant' if one else 'constants'}."
            )
        return f"{self.quoted(span)} creates {made}{how}. {role}"

    def _described(self, tid: str, bare: bool = False) -> str:
        """How a new tensor is introduced: `x = [1, 2]`, `x (16×4)`, `a tensor holding 3`;
        `bare`: an unnamed one as just its value (`False`)."""
        record = self.tensors[tid]
        shape = record["shape"]
        name = self.scene.labels[tid]
        small = not shape or (
            values.size(shape) <= values.SAY_LIMIT and isinstance(record["value"], list)
        )
        if name == self.source(self.trace["events"][record["created"]]["span"]):  # no name
            said = values.say(record["value"])
            return said if bare or not small else f"a tensor holding {said}"
        if small:
            return f"{name} = {values.say(record['value'])}"
        return f"{name} ({values.dims(shape)})"

    def op(self, event: dict, grad_enabled: bool, in_backward: bool = False) -> str:
        name = ops.plain(event["name"])
        entry = ops.lookup(name)
        inputs, outputs = event["inputs"], event["outputs"]
        names = self.names(inputs, event["span"], name)
        if (
            name in _COMMUTATIVE
            and inputs[-1] is None
            and self.source(event["span"]).startswith(names[-1])
        ):  # `0.5 * v` reads "multiplies 0.5 and v"
            names = [*reversed(names)]
        does = ops.fill(entry.does, names)
        head = f"{self.quoted(event['span'])} {does}"
        if len(outputs) > 1:
            head += f", giving {count(len(outputs), 'tensor')}"
        nid = event["node"]
        if nid is None:
            why = self.unrecorded(inputs, grad_enabled, in_backward)
            return f"{head}. Nothing is recorded: {why}."
        out = outputs[0]
        whose = (
            f"{self.scene.labels[out]}'s grad_fn"
            if self.is_named(out, event["span"])
            else "the result's grad_fn"
        )
        text = f"{head}, and autograd records {article(name)} node as {whose}. {self.saves(nid)}"
        again = self.second_paths(event)
        if again:
            text += (
                f" Note that {listing(again)} now reach{'' if len(again) > 1 else 'es'} the "
                f"graph along two paths; backward will add up the gradients from both."
            )
        first, again = self.new_accumulators(nid)
        if first:
            text += (
                f" Using {listing(first)} for the first time also creates "
                f"{_their(first)} AccumulateGrad {_nodes(first)}, which will add gradients into "
                f"{_grads(first)}."
            )
        if again:
            # a leaf holds its AccumulateGrad only weakly: it went with the graph that held it
            several = len(again) > 1
            text += (
                f" The AccumulateGrad {_nodes(again)} of {listing(again)} went away with the "
                f"graph that held {'them' if several else 'it'}, so autograd creates "
                f"{'new ones' if several else 'a new one'}, which will add gradients into "
                f"{_grads(again)}."
            )
        return text

    def saves(self, nid: str) -> str:
        record = self.nodes[nid]
        name = ops.plain(record["name"])
        entry = ops.lookup(name)
        made_at = self.trace["events"][record["created"]]["span"]
        names = self.names(record["inputs"], made_at, name)
        kept = self.kept(nid)
        if not kept:
            return f"It saves nothing: {ops.fill(entry.why_not, names)}."
        because = ops.fill(entry.why, names)
        return f"It saves {listing(kept)}" + (f", because {because}." if because else ".")

    def second_paths(self, event: dict) -> list[str]:
        """Inputs that require grad and that this op is the second, in its pass, to use."""
        gens, seq = self.scene.gens, event["seq"]
        found = []
        for tid in dict.fromkeys(event["inputs"]):
            if tid is None or not self.tensors[tid]["requires_grad"]:
                continue
            if _second_use(self.uses.get(tid, []), seq, gens):
                found.append(self.scene.labels[tid])
        return found

    def new_accumulators(self, nid: str) -> tuple[list[str], list[str]]:
        """Leaves whose AccumulateGrad node this node was the first to reach: those that never
        had one before, and those whose earlier one was freed with its graph."""
        created = self.nodes[nid]["created"]
        first, again = [], []
        for target, _ in self.nodes[nid]["next"]:
            if target is None:
                continue
            record = self.nodes[target]
            if record["name"] == "AccumulateGrad" and record["created"] == created:
                variable = record["variable"]
                had_one = self.accumulators[variable][0] < created
                (again if had_one else first).append(self.scene.labels[variable])
        return list(dict.fromkeys(first)), list(dict.fromkeys(again))

    def inplace(self, event: dict, grad_enabled: bool, saved_by: list[str]) -> str:
        name, tid = event["name"], event["tensor"]
        target = self.scene.labels[tid]
        names = self.names(event["inputs"], event["span"], name)
        if name in ops.UNRECORDED_INPLACE:
            does = ops.fill(ops.UNRECORDED_INPLACE[name][1], names)
        else:
            entry = ops.lookup(name)
            does = ops.fill(entry.inplace or f"changes {{0}} with {ops.plain(name)}", names)
        head = (
            f"{self.quoted(event['span'])} {does} in place: {target} is now "
            f"{values.say(event['value'])}, at version {event['version']}"
        )
        if event["node"] is not None:
            text = (
                f"{head}. Autograd records {ops.plain(name)} as {target}'s new grad_fn, "
                f"leading back to the old one."
            )
        else:
            why = (
                "grad mode is off (this is how optimizers update weights)"
                if not grad_enabled
                else "none of the tensors involved requires grad"
            )
            text = f"{head}. Nothing is recorded: {why}."
        if saved_by:
            text += (
                f" Careful: {listing(saved_by)} saved {target} for backward, so "
                f"{'those backwards' if len(saved_by) > 1 else 'its backward'} will now fail."
            )
        return text + self.sharing(event)

    def sharing(self, event: dict) -> str:
        """What a change of memory did to the other tensors sharing it (`aliases`)."""
        aliases = event.get("aliases") or ()
        if not aliases:
            return ""
        if len(aliases) >= TERMS_LIMIT:
            return (
                f" {count(len(aliases), 'other tensor')} share that memory, so they changed "
                f"with it."
            )
        said: dict[str, list[dict]] = {}  # what they hold → who holds it
        for alias in aliases:
            said.setdefault(values.say(alias["value"]), []).append(alias)
        parts = []
        for value, group in said.items():
            one = len(group) == 1
            names = listing([self.scene.labels[a["tensor"]] for a in group])
            part = f"{names}, which {'shares' if one else 'share'} its memory, now "
            part += f"{'holds' if one else 'hold'} {value}"
            counted = [a for a in group if a["version"] == event.get("version")]
            if event["kind"] == "inplace" and counted and len(counted) == len(group):
                part += f" (also at version {event['version']}: they share one version counter)"
            elif event["kind"] == "inplace" and not counted:
                part += " (its version counter is its own, so it did not move)" if one else ""
            parts.append(part)
        return " And " + "; ".join(parts) + "."

    def data_set(self, event: dict) -> str:
        """`w.data = t`: w's values replaced, outside autograd and without a version bump."""
        target, source = self.scene.labels[event["tensor"]], self.scene.labels[event["source"]]
        span = event["span"]
        said = self.quoted(span)
        if span and span[0] == span[2]:  # the span is only the `w.data` assigned to
            line = " ".join(self.lines[span[0] - 1].split())
            if len(line) <= SOURCE_LIMIT:
                said = f"`{line}`"
        return (
            f"{said} gives {target} the memory of {source}: {target} "
            f"now holds {values.say(event['value'])}. Assigning .data is invisible to autograd: "
            f"nothing is recorded and {target}'s version counter does not move."
        )

    def write(self, event: dict) -> str:
        """A write through a NumPy array that shares a tensor's memory, seen only afterwards;
        or by an op's kernel that changes a buffer without a version bump (`op`)."""
        target = self.scene.labels[event["tensor"]]
        if event.get("op"):
            return (
                f"{self.quoted(event['span'])} also updates {target} in place: it now holds "
                f"{values.say(event['value'])}. {event['op']} folds each training batch's "
                f"statistics into it, without bumping its version (as PyTorch's kernel does), "
                "and outside the graph: it is a buffer, not a parameter."
            ) + self.sharing(event)
        when = (
            "so it is shown at this line; the write itself was on this line or an earlier one"
            if event["span"] is not None
            else "and there was none after it, so it is shown at the end"
        )
        return (
            f"{target} now holds {values.say(event['value'])}, though no torch operation changed "
            f"it: the NumPy array that {target}.numpy() returned shares {target}'s memory, so "
            f"writing into that array changed {target}. The trace notices such a write only "
            f"at the next torch call, {when}."
        ) + self.sharing(event)

    def optimizer_step(self, events: list[dict]) -> str:
        changed = [e for e in events if e["kind"] == "inplace"]
        names = listing(list(dict.fromkeys(self.scene.labels[e["tensor"]] for e in changed)))
        version = changed[0]["version"] if changed else 0
        off = any(e["kind"] == "grad_mode" and not e["enabled"] for e in events)
        return (
            f"{self.quoted(events[0]['span'])} updates {names} in place, each a step against "
            f"its gradient (version {version} now)."
            + (" Grad mode is off meanwhile, so the update is not recorded." if off else "")
        )

    def grad_mode(self, event: dict) -> str:
        where = self.source(event["span"])
        if event["enabled"]:
            leaving = "Leaving the `with` block turns" if where.startswith("with") else "This turns"
            return (
                f"{leaving} grad mode back on: operations on tensors that require grad are "
                f"recorded again."
            )
        if where.startswith("with"):
            return (
                f"`{where.split(':')[0]}:` turns grad mode off. Until the block ends, "
                f"operations compute values but record no graph."
            )
        return "Grad mode is now off: operations compute values but record no graph."

    def retain_grad(self, event: dict, root: str) -> str:
        name = self.scene.labels[event["tensor"]]
        if not event["captured"]:
            return (
                f"{self.quoted(event['span'])} asks autograd to keep {name}'s gradient. A "
                f"non-leaf tensor normally gets no .grad: its gradient is used on the way and "
                f"thrown away."
            )
        return (
            f"Because of retain_grad(), {name}.grad keeps ∂{operand(root)}/∂{operand(name)} = "
            f"{values.say(event['grad'])}."
        )

    def grad_changes(self, events: list[dict], owner_of: dict[str, str]) -> str:
        """One statement's changes of `.grad`: `grad_set` events (`x.grad = …`, `del x.grad`,
        zero_grad()) and the in-place zeroing of zero_grad(set_to_none=False); `owner_of`
        says whose .grad each .grad tensor is."""
        statement = self.statement(events[0]["span"])
        to_none = [e["tensor"] for e in events if e["kind"] == "grad_set" and not e["grad_tensor"]]
        zeroed = [e for e in events if e["kind"] == "inplace"]
        assigned = [e for e in events if e["kind"] == "grad_set" and e["grad_tensor"]]
        parts = []
        if to_none:
            one = len(to_none) == 1
            fresh = (
                "a fresh gradient instead of adding to the old one"
                if one
                else "fresh gradients instead of adding to the old ones"
            )
            if statement.startswith("`del "):
                done = f"deletes {self.grads_of(to_none)}, which leaves {'it' if one else 'them'}"
            else:
                done = f"sets {self.grads_of(to_none)} to"
            parts.append(f"{statement} {done} None, so the next backward() starts from {fresh}.")
        if zeroed:
            owners = [owner_of.get(e["tensor"]) for e in zeroed]
            one = len(zeroed) == 1
            if None in owners:  # a .grad tensor whose owner the trace does not say
                what = listing([self.scene.labels[e["tensor"]] for e in zeroed])
            else:
                what = self.grads_of(owners)
            parts.append(
                f"{statement} fills {what} with zeros in place (the same "
                f"{'tensor' if one else 'tensors'}, now at version {zeroed[0]['version']}), so "
                f"the next backward() adds into zeros."
            )
        for event in assigned:
            owner, grad = self.scene.labels[event["tensor"]], event["grad_tensor"]
            value = values.say(event["grad"])
            label = self.scene.labels[grad]
            given = value if label == f"{owner}.grad" else f"{label} = {value} (that very tensor)"
            parts.append(
                f"{statement} sets {owner}.grad to {given}, so the next backward() adds its "
                f"gradient into it."
            )
        return " ".join(parts)

    def statement(self, span: list | None) -> str:
        """The statement a .grad change came from: a call as its span shows it, an assignment
        or `del` (whose span is only the `x.grad` it targets) as its whole line."""
        text = self.source(span)
        if span and text.endswith(".grad") and span[0] == span[2]:
            line = " ".join(self.lines[span[0] - 1].split())
            if len(line) <= SOURCE_LIMIT and not line.endswith(":"):
                return f"`{line}`"
        return self.quoted(span)

    def grads_of(self, tids: list[str]) -> str:
        """`w.grad`, `.grad of w and b`, `.grad of 4 parameters`: the .grad of these tensors."""
        if len(tids) == 1:
            return f"{self.scene.labels[tids[0]]}.grad"
        if len(tids) < TERMS_LIMIT:
            return f".grad of {listing([self.scene.labels[t] for t in tids])}"
        events = self.trace["events"]
        made = [events[self.tensors[t]["created"]] for t in tids]
        parameters = all(e["kind"] == "tensor" and e["op"] == "parameter" for e in made)
        return f".grad of {count(len(tids), 'parameter' if parameters else 'tensor')}"

    # ***** backward *****

    def root(self, tid: str, span: list | None = None) -> str:
        """How a backward's root is written in ∂root/∂x: its name (as `.backward()` was
        called on it, when `span` is that call's), or L for an expression."""
        label = root_name(self.scene.labels, self.lines, tid, span)
        return label if _NAME.match(label) and len(label) <= ROOT_LIMIT else "L"

    def backward_begin(self, event: dict) -> str:
        single = len(event["roots"]) == 1
        span = event["span"] if single else None
        roots = [root_name(self.scene.labels, self.lines, t, span) for t in event["roots"]]
        call = self.quoted(event["span"])
        if single:
            grad = event["grads"][0]
            root = self.root(event["roots"][0], span)
            start = (
                f"with ∂{root}/∂{root} = 1"
                if grad == 1
                else f"with the gradient passed in, {values.say(grad)}"
            )
            called = "" if root == roots[0] else f" (call it {root})"
            text = f"{call} starts the backward pass at {roots[0]}{called}, {start}."
        else:
            text = f"{call} starts the backward pass at {listing(roots)}."
        text += " Gradients now flow back through the graph, node by node, to the leaves."
        if event["retain_graph"]:
            text += " retain_graph=True: the saved tensors will be kept afterwards."
        return text

    def node_backward(self, event: dict, root: str) -> str:
        nid = event["node"]
        record = self.nodes[nid]
        name = ops.plain(record["name"])
        outputs = record["outputs"]
        grads = event["grad_outputs"]
        if len(outputs) == 1:
            wrt = f"∂{operand(root)}/∂{operand(self.scene.labels[outputs[0]])}"
            arriving = self._arriving(event["sources"], grads[0])
            received = f"receives {wrt} = {arriving}"
        else:
            received = f"receives the gradients of its {len(outputs)} outputs"
        incoming = values.number(grads[0]) if values.is_scalar(grads[0]) else "grad"
        made_at = self.trace["events"][record["created"]]["span"]
        formula_names = [operand(n) for n in self.names(record["inputs"], made_at, name)]
        sent = []
        for slot, ((target, _), grad) in enumerate(
            zip(record["next"], event["grad_inputs"], strict=False)
        ):
            if target is None or grad is None:
                continue
            template = ops.sends(name, slot)
            rule = ops.fill(template, formula_names, incoming, slot).replace("ᵀᵀ", "")
            value = values.say(grad)
            to = self.name(record["inputs"][slot]) if slot < len(record["inputs"]) else "it"
            if rule == value or "{g}" not in template or template == "{g}":  # nothing to show
                sent.append(f"{value} to {to}")
            elif not _compact(template):
                sent.append(f"{value} ({rule}) to {to}")
            else:
                sent.append(f"{rule} = {value} to {to}")
        if not sent:
            return f"{name} {received}; none of its inputs needs a gradient, so it sends nothing."
        return f"{name} {received} and sends {listing(sent)}."

    def _arriving(self, sources: list[dict], total) -> str:
        if len(sources) <= 1:
            return values.say(total)
        if len(sources) > TERMS_LIMIT:
            return f"{values.say(total)}, the sum of {len(sources)} gradients"
        terms = " + ".join(
            f"{values.say(s['grad'])} (from {self.node_name(s['from'])})" for s in sources
        )
        return f"{terms} = {values.say(total)}"

    def accumulate(self, event: dict, before, reset: bool = False) -> str:
        leaf = self.scene.labels[event["tensor"]]
        sources = event["sources"]
        through = [self.node_name(s["from"]) for s in sources]
        n = len(sources)
        same = n > 1 and len(set(through)) == 1  # e.g. all SelectBackward0: say it once
        nodes = len({s["from"] for s in sources})  # one node may send several (x * x)
        note = ""
        if same and nodes == 1:
            note = f", {'both' if n == 2 else f'all {n}'} through {through[0]}"
        elif same and nodes == n:
            note = f", one through each of the {n} {through[0]} nodes"
        elif same:
            note = f", through {nodes} {through[0]} nodes"
        total = values.say(event["contribution"])
        # a hook on the leaf (or on its AccumulateGrad) may change what arrives: say so, rather
        # than call the gradients' sum what the .grad gets
        arrived = [s["grad"] for s in sources]
        changed = values.same(*arrived, to=event["contribution"]) is False
        hooked = f", which {leaf}'s hooks turn into {total}" if changed else ""
        if n > TERMS_LIMIT:
            parts = f"the sum of {n} gradients" + (hooked or f" = {total}") + note
        else:
            terms = " + ".join(
                values.say(s["grad"]) + ("" if same else f" (through {node})")
                for s, node in zip(sources, through, strict=True)
            )
            parts = terms + (hooked or ("" if n == 1 else f" = {total}")) + note
        if before is None and reset:
            return (
                f"{leaf}.grad had been set back to None since the last backward(), so it "
                f"starts afresh: {leaf}.grad = {parts}."
            )
        if before is None:
            return f"{leaf}.grad = {parts}."
        return (
            f"{leaf}.grad was already {values.say(before)}, and gradients add up across "
            f"backward() calls: this pass adds {parts}, so {leaf}.grad = "
            f"{values.say(event['grad'])}."
        )

    def backward_end(self, end: dict, free: dict | None) -> str:
        if end["retain_graph"]:
            return (
                "backward() is done. retain_graph=True kept the saved tensors, so backward() "
                "can go through this graph again."
            )
        if free is None:
            return (
                "backward() is done. No node of this graph saved a tensor, so there was nothing "
                "to free."
            )
        freed = [n for n in free["nodes"] if self.kept(n)]  # (some kept only a number)
        if not freed or len(freed) > 3:
            what = f" (those of {len(freed):,} nodes)" if freed else ""
        else:
            what = f" ({listing([self._saved_names(n) for n in freed])})"
        return (
            f"backward() is done: the graph's saved tensors are freed{what}. Calling "
            f"backward() through it again raises an error unless retain_graph=True."
        )

    def _saved_names(self, nid: str) -> str:
        return f"{ops.plain(self.nodes[nid]['name'])}'s {listing(self.kept(nid, 'result'))}"

    def kept(self, nid: str, result: str = "its result") -> list[str]:
        """What a node saved, by name, in the order of its inputs (its result last)."""
        record = self.nodes[nid]
        inputs = record["inputs"]

        slots = {}  # each input's first slot, looked up once rather than searched per saved
        for slot, tid in enumerate(inputs):
            slots.setdefault(tid, slot)

        def order(s: str) -> int:
            return slots.get(s, len(inputs))

        saved = [s for s in dict.fromkeys(record["saved"]) if s is not None]
        return [result if s == "result" else self.scene.labels[s] for s in sorted(saved, key=order)]

    # ***** output, errors and limits *****

    def printed(self, event: dict) -> str:
        text = event["text"].rstrip("\n")
        first = text.split("\n")[0]
        if len(first) > 80:
            first = first[:79] + "…"
        more = " …" if "\n" in text else ""
        return f"print shows “{first}”{more}."

    def error(self, kind: str, message: str, failing: list[str], why: str) -> str:
        text = f"The snippet stops with {kind}: {first_sentence(message)}"
        if failing:
            text += f" It happened at {listing(failing)}{why}."
        return f"{text} {explain_error(kind, message)}"

    def truncated(self, last: dict | None, limit: int) -> str:
        text = (
            f"The trace stops here, after {limit:,} events, the most one run records; the "
            f"snippet was still running."
        )
        if last is not None and last.get("span"):
            line = last["span"][0]
            times = sum(1 for e in self.trace["events"] if e.get("span") and e["span"][0] == line)
            text += f" Line {line} alone made {count(times, 'event')}."
        return text + " Everything up to here is shown; a shorter loop shows the rest."

    def recording_stopped(self, line: int, limit: int, finished: bool) -> str:
        times = sum(1 for e in self.trace["events"] if e.get("span") and e["span"][0] == line)
        ran_on = "and finished" if finished else "until it stopped, as the next step says"
        return (
            f"Recording stops here, after {limit:,} events, the most one run records (this line "
            f"alone made {count(times, 'event')}). The snippet ran on to its end unrecorded, "
            f"{ran_on}: everything it printed is in the output, complete; the steps before this "
            "one show what was recorded."
        )

    def stopped(self, status: str, message: str | None) -> str:
        text = f"The run was stopped ({status}). {explain_status(status)}"
        return f"{text} {message}" if message else text


def _second_use(uses: list[int], seq: int, gens: list[int]) -> bool:
    """Whether the op at `seq` is the second of its forward pass to use a tensor, given the
    sorted seqs of the ops that used it: a binary search, as a weight may have 20,000 uses."""
    upto = bisect.bisect_right(uses, seq)  # uses at or before seq
    gen = gens[seq]
    return upto >= 2 and gens[uses[upto - 2]] == gen and (upto == 2 or gens[uses[upto - 3]] != gen)


_COMMUTATIVE = {"AddBackward0", "MulBackward0"}
_LITERAL = re.compile(r"^(-?\d+(\.\d*)?([eE]-?\d+)?|[A-Za-z_]\w*)$")


def _other_operand(source: str, tensor: str) -> str | None:
    """In `w * 2` (or `0.5 * v`, `(a - b) ** 2`), the operand that is not the tensor, if it is
    a plain number or name."""
    for mark in (" ** ", " * ", " / ", " + ", " - ", " % ", "**", "*", "/", "+", "%"):
        parts = [_unwrapped(p) for p in source.split(mark)]
        if len(parts) != 2:
            continue
        if tensor in parts:
            other = parts[1 - parts.index(tensor)]
            return other if _LITERAL.match(other) else None
        numbers = [p for p in parts if _NUMBER.match(p)]
        if len(numbers) == 1:  # the tensor goes by another name here (`y` for x)
            return numbers[0]
    return None


_NUMBER = re.compile(r"^-?\d+(\.\d*)?([eE]-?\d+)?$")


def _unwrapped(part: str) -> str:
    part = part.strip()
    return part[1:-1].strip() if part.startswith("(") and part.endswith(")") else part


def _compact(template: str) -> bool:
    """A formula such as {g}·{1} or {g} @ {1}ᵀ, as opposed to a phrase ("{g} copied to…")."""
    bare = re.sub(r"\{\w+\}", "", template)
    words = [w for w in re.split(r"[^A-Za-z]+", bare) if len(w) > 3]
    return all(w in ("result", "floor", "sign", "outer", "softmax", "tanh") for w in words)


def _their(leaves: list[str]) -> str:
    return "their" if len(leaves) > 1 else "its"


def _nodes(leaves: list[str]) -> str:
    return "nodes" if len(leaves) > 1 else "node"


def _grads(leaves: list[str]) -> str:
    return listing([f"{leaf}.grad" for leaf in leaves])
