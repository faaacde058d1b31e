"""What a trace proves: the answers a quick check may ask for, read from the run itself.

A lesson's question names a fact (`fact: grad a at 9`) and `gradtrace lessons check` holds the
author's answer to it; generated checks (app/lessons/generated.py) take their answers from here
and nowhere else. A fact is one of:

    grad NAME [at STEP]      NAME's .grad after STEP (default: when the run ended); `w[0]`
                             for one entry of it
    version NAME at STEP     NAME's version counter (in-place changes) after STEP
    failing-node             the node a failed backward() stopped at
    leaves                   the named tensors that are leaves
    gets-grad                the tensors whose .grad the first backward() fills
    next-backward after STEP the node whose backward runs first after STEP
    backward-order           the nodes the first backward() runs, in order
    paths NAME               how many paths lead from the first backward()'s root to leaf NAME
    second-backward-fails    whether calling backward() again would raise (saved tensors freed)

NAME is the tensor's name as the graph shows it (`a`, `model.weight`, `result₂`). Nodes are
named as in the autograd view: `MulBackward0`, `AccumulateGrad(a)` for a leaf's; where one name
means several nodes, `MulBackward0(c)` names the one that made `c`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from functools import cached_property

from app.lessons import overrides
from app.render import grads, graph, playback, steps

_FACT = re.compile(
    r"^(?:(?P<grad>grad) (?P<grad_of>\S+)(?: at (?P<grad_at>\d+))?"
    r"|(?P<version>version) (?P<version_of>\S+) at (?P<version_at>\d+)"
    r"|(?P<leaves>leaves)|(?P<gets>gets-grad)"
    r"|(?P<next>next-backward) after (?P<next_at>\d+)"
    r"|(?P<order>backward-order)|(?P<paths>paths) (?P<paths_of>\S+)"
    r"|(?P<failing>failing-node)"
    r"|(?P<again>second-backward-fails))$"
)
_INDEX = re.compile(r"^(?P<name>.+?)(?P<index>(\[\d+\])+)$")  # w[0], W[1][2]
# a name the snippet gave (`a`, `xs[0]`, `model[0].weight`, `result₂`), not code (`a*b`)
_NAMED = re.compile(r"^[A-Za-z_][\w₀-₉]*(?:\.[A-Za-z_][\w₀-₉]*|\[\d+\])*$")


def is_name(label: str) -> bool:
    """Whether a tensor's label is a name the snippet gave it (`a`, `xs[0]`), not code."""
    return _NAMED.match(label) is not None


class FactError(ValueError):
    """The fact cannot be read from this trace (a typo, a name the run never made, ...)."""


@dataclass(frozen=True)
class Fact:
    """A fact's answer: a number (or nested list), a set or list of names, or a bool; `step`
    is the step that shows it, and `elements` the graph elements it stands for, per view."""

    value: object
    step: int | None = None  # the step that shows it, from 1
    elements: dict[str, tuple[str, ...]] | None = None  # view → element ids
    subject: str = ""  # what it is of, in words: "a.grad", "the leaves"


class TraceFacts:
    """The facts of one trace, read on demand."""

    def __init__(self, trace: dict) -> None:
        self.trace = trace
        self.scene = graph.build(trace)
        self.steps = steps.build(self.scene)
        self.labels = self.scene.labels

    # ***** reading a fact by its text *****

    def read(self, text: str) -> Fact:
        match = _FACT.match(text.strip())
        if match is None:
            raise FactError(f"{text!r} is not a fact gradtrace knows (see app/lessons/facts.py)")
        if match["grad"]:
            fact, subject = self.grad(match["grad_of"], _int(match["grad_at"])), "{}.grad"
        elif match["version"]:
            at = int(match["version_at"])
            fact, subject = self.version(match["version_of"], at), "{}._version"
        elif match["failing"]:
            fact, subject = self.failing_node(), "the node backward() fails at"
        elif match["leaves"]:
            fact, subject = self.leaves(), "the leaves"
        elif match["gets"]:
            fact, subject = self.gets_grad(), "what gets a .grad"
        elif match["next"]:
            fact, subject = self.next_backward(int(match["next_at"])), "the next node backward"
        elif match["order"]:
            fact, subject = self.backward_order(), "the backward order"
        elif match["paths"]:
            fact, subject = self.paths(match["paths_of"]), "the number of paths to {}"
        else:
            fact, subject = self.second_backward_fails(), "whether a second backward() fails"
        name = match["grad_of"] or match["paths_of"] or match["version_of"]
        indexed = _INDEX.match(name or "")
        if match["grad"] and indexed and name not in self.labels.values():
            return replace(fact, subject=f"{indexed['name']}.grad{indexed['index']}")
        return replace(fact, subject=subject.format(name))

    # ***** the facts *****

    def grad(self, name: str, at: int | None = None) -> Fact:
        """NAME's .grad; `w[0]` is one entry of it, where no tensor is called `w[0]` itself."""
        indexed = _INDEX.match(name)
        if indexed and not any(label == name for label in self.labels.values()):
            whole = self.grad(indexed["name"], at)
            value = whole.value
            for index in re.findall(r"\d+", indexed["index"]):
                if not isinstance(value, list) or int(index) >= len(value):
                    raise FactError(f"{name} is not an entry of {indexed['name']}.grad")
                value = value[int(index)]
            return replace(whole, value=value)
        tid = self.tensor(name)
        last = len(self.trace["events"]) - 1 if at is None else self._last_event(at)
        known = None
        for seq in sorted(self._history):
            if seq > last:
                break
            for changed, value in self._history[seq]:
                if changed == tid:
                    known = (seq, value.value)
        where = "when the run ended" if at is None else f"after step {at}"
        if known is None:
            raise FactError(f"{name}.grad is None {where}: backward() has not filled it")
        seq, value = known
        if value is None:
            raise FactError(
                f"{name}.grad is None {where}: it was set to None at step {self.step_of(seq)}"
            )
        return Fact(value, self.step_of(seq))

    def version(self, name: str, at: int) -> Fact:
        """NAME's version counter after step `at`: how many in-place changes it has seen."""
        tid = self.tensor(name)
        last = self._last_event(at)
        version, seq = 0, self.trace["tensors"][tid]["created"]
        for event in self.trace["events"][: last + 1]:
            if event["kind"] != "inplace":
                continue
            if event["tensor"] == tid:
                version, seq = event["version"], event["seq"]
            for shared in event.get("aliases", ()):
                if shared["tensor"] == tid:
                    version, seq = shared["version"], event["seq"]
        return Fact(version, self.step_of(seq))

    def failing_node(self) -> Fact:
        """The node a failed backward() stopped at, as the player points to it."""
        for index, step in enumerate(self._final_steps):
            if step["kind"] != "error":
                continue
            nodes = [e for e in step["autograd"].get("focus", ()) if e in self.trace["nodes"]]
            if nodes:
                return Fact(self.node_name(nodes[0]), index + 1, {"autograd": (nodes[0],)})
        raise FactError("no backward() fails at a node in this run")

    def leaves(self) -> Fact:
        names = {
            label
            for tid, record in self.trace["tensors"].items()
            if record["is_leaf"]
            and is_name(label := self.labels[tid])
            and not label.endswith(".grad")
        }
        return Fact(frozenset(names))

    def gets_grad(self) -> Fact:
        backward = self._first_backward()
        filled = [
            event["tensor"]
            for event in backward
            if event["kind"] == "accumulate"
            or (event["kind"] == "retain_grad" and event.get("captured"))
        ]
        nodes = [event["node"] for event in backward if event["kind"] == "accumulate"]
        names = frozenset(self.labels[tid] for tid in filled)
        return Fact(names, None, {"tensors": tuple(filled), "autograd": tuple(nodes)})

    def next_backward(self, after: int) -> Fact:
        last = self._last_event(after)
        for event in self.trace["events"][last + 1 :]:
            if event["kind"] in ("node_backward", "accumulate"):
                node = event["node"]
                return Fact(self.node_name(node), self.step_of(event["seq"]), {"autograd": (node,)})
            if event["kind"] == "backward_end":
                break
        raise FactError(f"no node's backward runs right after step {after}")

    def backward_order(self) -> Fact:
        nodes = [
            event["node"]
            for event in self._first_backward()
            if event["kind"] in ("node_backward", "accumulate")
        ]
        return Fact(tuple(self.node_name(n) for n in nodes), None, {"autograd": tuple(nodes)})

    def paths(self, name: str) -> Fact:
        leaf = self.tensor(name)
        backward = self._first_backward()
        begin = backward[0]
        # the AccumulateGrad this backward reached: a leaf may have had others before
        reached = [e["node"] for e in backward if e["kind"] == "accumulate" and e["tensor"] == leaf]
        target = reached[0] if reached else self.accumulator(leaf)
        nodes = self.trace["nodes"]
        roots = [self.trace["tensors"][tid]["grad_fn"] for tid in begin["roots"]]
        # paths from each node to the target, children before parents (a graph can be 20,000
        # nodes deep, too deep to recurse): a depth-first walk with an explicit stack
        counts: dict[str, int] = {target: 1}
        for root in roots:
            stack = [(root, False)] if root is not None else []
            while stack:
                node, expanded = stack.pop()
                if node in counts:
                    continue
                children = [child for child, _ in nodes[node]["next"] if child is not None]
                if expanded:
                    counts[node] = sum(counts[child] for child in children)
                    continue
                stack.append((node, True))
                stack += [(child, False) for child in children if child not in counts]
        total = sum(counts.get(root, 0) for root in roots if root is not None)
        if total == 0:
            raise FactError(f"no path leads from the first backward()'s root to {name}")
        return Fact(total)

    def second_backward_fails(self) -> Fact:
        events = self.trace["events"]
        ends = [e for e in events if e["kind"] == "backward_end"]
        if not ends:
            raise FactError("the run never finished a backward()")
        end = ends[-1]
        begin = self._begin_of(end["seq"])
        freed = any(e["kind"] == "free" and e["nodes"] for e in events[begin + 1 : end["seq"]])
        return Fact(freed and not end["retain_graph"], self.step_of(end["seq"]))

    # ***** names and steps *****

    def tensor(self, name: str) -> str:
        """The tensor the graph calls `name` (the last one made, if a name is rebound)."""
        found = [tid for tid, label in self.labels.items() if label == name]
        if not found:
            known = sorted({label for label in self.labels.values() if is_name(label)})
            raise FactError(f"no tensor is named {name!r}; the run names {', '.join(known)}")
        return found[-1]

    def accumulator(self, leaf: str) -> str:
        for nid, node in self.trace["nodes"].items():
            if node["name"] == "AccumulateGrad" and node.get("variable") == leaf:
                return nid
        raise FactError(f"{self.labels[leaf]} has no AccumulateGrad node: no graph uses it")

    def node_name(self, nid: str) -> str:
        """The node's name as answers write it: the shortest no other node has."""
        return self._names[nid][0]

    def node_names(self, nid: str) -> tuple[str, ...]:
        """Every name an answer may give the node: the short one, `Name(label)`, its id."""
        return self._names[nid]

    def resolve_node(self, answer: str, view: str, within: int | None = None) -> str:
        """The element id an answer's node name stands for, in `view`; a name that each forward
        pass has is read as the one of pass `within`."""
        answer = answer.strip().strip("`")
        if view == "tensors":
            if answer in self.scene.tensors.elements:
                return answer
            tid = self.tensor(answer)
            elements = self.scene.tensors.elements
            candidates = [eid for eid in elements if eid == tid or eid.startswith(f"{tid}-v")]
            if not candidates:
                raise FactError(f"{answer} is not drawn in the tensors view")
            return candidates[0]
        matches = [nid for nid, names in self._names.items() if answer in names]
        if len(matches) > 1 and within is not None:  # a name each pass of a loop has
            matches = [nid for nid in matches if self.pass_of(nid) == within]
        if len(matches) == 1:
            return matches[0]
        shared = matches or [nid for nid, forms in self._candidates.items() if answer in forms]
        if not shared:
            raise FactError(f"no node is named {answer!r} (write MulBackward0, AccumulateGrad(a))")
        options = ", ".join(self._names[n][0] for n in shared[:6])
        more = ", …" if len(shared) > 6 else ""
        raise FactError(f"{answer!r} names {len(shared)} nodes: write one of {options}{more}")

    def step_of(self, seq: int) -> int:
        """The step (from 1) that shows event `seq`."""
        index = bisect.bisect_left(self._ends, seq)  # the first step ending at or after it
        return min(index, len(self.steps) - 1) + 1

    def shown(self, view: str, step: int) -> dict[str, None]:
        """The elements `view` shows at `step` (from 1), as the player folds the steps."""
        return playback.state_at(self._final_steps, view, step - 1).visible

    def has_step(self, number: int) -> bool:
        return 1 <= number <= len(self.steps)

    def span_step(self, text: str) -> int | None:
        """The first step (from 1) whose span's source text is `text`, as an override finds it."""
        index = overrides.at_span(self.steps, self.trace["code"].splitlines(), text)
        return None if index is None else index + 1

    # ***** helpers *****

    def _last_event(self, step: int) -> int:
        if not self.has_step(step):
            raise FactError(f"there is no step {step}: the run has {len(self.steps)}")
        return self._ends[step - 1]

    def _first_backward(self) -> list[dict]:
        events = self.trace["events"]
        begins = [e["seq"] for e in events if e["kind"] == "backward_begin"]
        if not begins:
            raise FactError("the snippet never calls backward()")
        out = []
        for event in events[begins[0] :]:
            out.append(event)
            if event["kind"] == "backward_end":
                break
        return out

    def _begin_of(self, end: int) -> int:
        begins = [e["seq"] for e in self.trace["events"][:end] if e["kind"] == "backward_begin"]
        return begins[-1] if begins else -1

    @cached_property
    def _ends(self) -> list[int]:
        """Each step's last event; a step of no event of its own (how a run stopped) ends
        where the step before it did."""
        out, last = [], -1
        for step in self.steps:
            if step["seq"] is not None:
                last = step["seq"][1]
            out.append(last)
        return out

    @cached_property
    def _final_steps(self) -> list[dict]:
        return steps.finish(self.steps, {})

    @cached_property
    def _history(self) -> dict:
        return grads.history(self.trace)

    @cached_property
    def _candidates(self) -> dict[str, list[str]]:
        """Each node's possible names, shortest first: `MulBackward0`, `MulBackward0(c)`."""
        forms: dict[str, list[str]] = {}
        for nid, node in self.trace["nodes"].items():
            name = node["name"]
            if name == "AccumulateGrad":
                forms[nid] = [f"AccumulateGrad({self.labels.get(node.get('variable'), '?')})"]
            else:
                made = node["outputs"][0] if node["outputs"] else None
                forms[nid] = [name, f"{name}({self.labels.get(made, '?')})"]
        return forms

    @cached_property
    def _names(self) -> dict[str, tuple[str, ...]]:
        """The names that single a node out, the one shown first: the shortest no other node of
        its forward pass has (a training loop makes the same nodes every pass; `… #2` for the
        second of two alike in one pass), then those no other node at all has, `… in pass 3`,
        and its id."""
        forms = self._candidates
        in_pass: dict[tuple[int, str], int] = {}
        anywhere: dict[str, int] = {}
        for nid, candidates in forms.items():
            for text in candidates:
                key = (self.pass_of(nid), text)
                in_pass[key] = in_pass.get(key, 0) + 1
                anywhere[text] = anywhere.get(text, 0) + 1
        out = {}
        ordinal: dict[tuple[int, str], int] = {}  # the k-th node of one pass with one name
        for nid, candidates in forms.items():
            g = self.pass_of(nid)
            names = [text for text in candidates if in_pass[(g, text)] == 1]
            if not names:  # two alike nodes in one pass (`x * x` twice): the first, the second
                key = (g, candidates[-1])
                ordinal[key] = ordinal.get(key, 0) + 1
                names = [f"{candidates[-1]} #{ordinal[key]}"]
            names += [text for text in candidates if anywhere[text] == 1 and text not in names]
            names.append(f"{names[0]} in pass {g}")
            out[nid] = (*names, nid)
        return out

    def pass_of(self, nid: str) -> int:
        """The forward pass (from 1) that recorded node `nid`."""
        return self.scene.gens[self.trace["nodes"][nid]["created"]]

    def pass_at(self, step: int) -> int:
        """The forward pass step `step` (from 1) belongs to."""
        last = self._ends[step - 1]
        return self.scene.gens[last] if self.scene.gens and last >= 0 else 1


def _int(text: str | None) -> int | None:
    return None if text is None else int(text)
