"""State machine graphs: an ASL definition drawn with box characters, one state under another.

Pure: no UI library, no I/O. `draw` returns `GraphLine`s of plain text, none wider than the
width asked for (in terminal cells), with spans saying what a stretch of text means
(succeeded, failed, caught, …) so the viewer can colour it and `awsview dump --graph` prints it
as is. `awsview.core.stateruns.run_of` says what an execution did to each state; `draw` marks it.

The layout is by hand, not a layered graph library: an ASL machine is mostly a chain with side
exits (Choice rules, Default, Catch) to a few common targets, and a layered layout puts the
branches of a Choice side by side, which a half-width pane cannot hold once names are in the
boxes. Here the states are stacked in the order a depth-first walk from StartAt meets them, Fail
and Succeed states last. The edge to the box right below is the trunk (▼); every other edge
leaves on a line of its own that names its target and runs into a lane on the right, one lane
per target, entering the target with ◀. A graph too narrow for lanes keeps the named lines.
Retry is a loop on the task's left side with its policy. Parallel branches and a Map's item
processor are drawn inside their box, narrower, until there is no room; then the box says
what it holds.

Every string from a definition or a history is cleaned of control characters, zero-width and
combining characters here, so the width of a line is the sum of its characters' widths.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from awsview.core.stateruns import ExecutionRun, StateRun, run_of
from awsview.core.textgrid import GLUE, Canvas, GraphLine, Span, cells, clean, cut, wrap
from awsview.model import keys
from awsview.model.asl import Definition, Retrier, State

if TYPE_CHECKING:
    from awsview.model.state import LabState

GUTTER = 3  # left of every box: room for the Retry loop
MIN_BOX = 22  # a box is never narrower; lanes give way first
MIN_WIDTH = 16  # below this only a list of names is drawn
MAX_LANES = 8
WRAPPED_LINES = 3  # a detail, status or Retry line wraps over at most this many lines
MAX_STATES = 300  # per machine level; a generated definition of thousands is cut, not slowed
NESTED_MIN = 24  # narrowest inner width a Parallel/Map draws its branches in
TERMINAL = ("Fail", "Succeed")
ICONS = {"succeeded": "✓", "failed": "✗", "caught": "↪", "entered": "◐", "not run": "·"}
LEGEND = ("✓ succeeded", "✗ failed", "↪ caught", "◐ running", "· not run")


def draw(
    definition: Definition | None,
    width: int = 60,
    run: ExecutionRun | None = None,
    problem: str | None = None,
) -> tuple[GraphLine, ...]:
    """The definition drawn in at most `width` cells per line, marked by `run` when given.

    Without a definition, a box saying why (`problem`, e.g. the parser's message)."""
    width = max(int(width), 1)
    if definition is None:
        return _message_box(problem or "no definition", width)
    if width < MIN_WIDTH:
        return _names_only(definition, width, run)
    lines = list(_machine(definition, width, run, 0).lines())
    if run is not None:
        lines.append(GraphLine(""))
        lines.extend(GraphLine(part, (Span(0, len(part), "muted"),)) for part in _legend(width))
    return tuple(lines)


def text(lines: Iterable[GraphLine]) -> str:
    """The lines as one string, as `dump` prints them."""
    return "\n".join(line.text for line in lines)


# -- structure -----------------------------------------------------------------------------------


@dataclass
class _Edge:
    label: str  # "" for a plain Next
    target: str | None
    kind: str  # next, choice, default, catch, end
    taken: bool = False


@dataclass
class _Lane:
    target: str
    blocks: list[int] = field(default_factory=list)  # block indices it touches
    rows: list[tuple[int, int]] = field(default_factory=list)  # (row, column its run starts at)
    column: int | None = None


def _order(definition: Definition) -> tuple[list[State], set[str]]:
    """States in the order a depth-first walk from StartAt meets them, Fail/Succeed last, then
    the states no walk reaches (returned by name as the second value)."""
    by_name = {s.name: s for s in definition.states}
    seen: set[str] = set()
    walk: list[State] = []
    terminal: list[State] = []
    stack = [definition.start_at]
    while stack:
        name = stack.pop()
        state = by_name.get(name)
        if state is None or name in seen:
            continue
        seen.add(name)
        if state.type in TERMINAL and name != definition.start_at:
            terminal.append(state)
        else:
            walk.append(state)
        stack.extend(reversed([t for t in _targets(state) if t not in seen]))
    unreachable = [s for s in definition.states if s.name not in seen]
    return walk + terminal + unreachable, {s.name for s in unreachable}


def _targets(state: State) -> list[str]:
    if state.type == "Choice":
        found = [r.next for r in state.choices if r.next] + (
            [state.default] if state.default else []
        )
    else:
        found = [state.next] if state.next else []
    return found + [c.next for c in state.catch if c.next]


def _edges(state: State, run: ExecutionRun | None) -> list[_Edge]:
    edges: list[_Edge] = []
    failed = run is not None and run.state(state.name).status == "caught"
    if state.type == "Choice":
        for rule in state.choices:
            edges.append(_Edge(clean(rule.text), rule.next, "choice"))
        if state.default is not None:
            edges.append(_Edge("default", state.default, "default"))
    elif state.next is not None:
        edges.append(_Edge("", state.next, "next"))
    for catcher in state.catch:
        edges.append(
            _Edge("catch " + clean(", ".join(catcher.error_equals) or "?"), catcher.next, "catch")
        )
    if run is not None:
        for edge in edges:
            if edge.target is not None and (state.name, edge.target) in run.taken:
                edge.taken = (edge.kind == "catch") == failed
    if state.end and state.type not in TERMINAL:
        edges.append(
            _Edge(
                "end",
                None,
                "end",
                taken=run is not None and run.state(state.name).status == "succeeded",
            )
        )
    return edges


# -- one machine level ---------------------------------------------------------------------------


def _machine(definition: Definition, width: int, run: ExecutionRun | None, depth: int) -> Canvas:
    order, unreachable = _order(definition)
    canvas = Canvas(width)
    left_out = order[MAX_STATES:]
    order = order[:MAX_STATES]
    index = {s.name: i for i, s in enumerate(order)}
    names = {s.name for s in definition.states}
    edges = [_edges(s, run) for s in order]

    lanes: dict[str, _Lane] = {}
    for i, state_edges in enumerate(edges):
        for e in state_edges:
            if e.target in index and index[e.target] != i + 1:
                lane = lanes.setdefault(e.target, _Lane(e.target, [index[e.target]]))
                lane.blocks.append(i)
    used = _assign_lanes(lanes.values(), max(0, min(MAX_LANES, (width - GUTTER - MIN_BOX) // 2)))
    box = width - GUTTER - 2 * used
    trunk = GUTTER + 2
    right = GUTTER + box  # first column right of the box

    if definition.start_at not in index:
        row = canvas.row()
        canvas.put(
            row, 0, cut(f"StartAt {clean(definition.start_at)}: no such state", width), "failed"
        )
    title_rows: dict[str, int] = {}
    for i, state in enumerate(order):
        if i == 0 and state.name == definition.start_at:
            canvas.put(canvas.row(), trunk, "▼ start", "muted")
        elif i > 0 and not _flows_into(edges[i - 1], state.name):
            canvas.row()
        title_rows[state.name] = _box(canvas, state, box, run, depth, state.name in unreachable)
        following = order[i + 1].name if i + 1 < len(order) else None
        _edge_rows(canvas, edges[i], following, names, index, lanes, trunk, right)
    if left_out:
        canvas.row()
        canvas.put(
            canvas.row(),
            GUTTER,
            cut(f"… {len(left_out)} more states not drawn", width - GUTTER),
            "muted",
        )
    for lane in lanes.values():
        if lane.column is not None and lane.target in title_rows:
            _draw_lane(canvas, lane, title_rows[lane.target], right)
    return canvas


def _assign_lanes(lanes: Iterable[_Lane], limit: int) -> int:
    """Shortest spans get the lanes nearest the boxes; a span gets the first lane free over all
    its blocks. Lanes beyond `limit` are not drawn (their lines still name the target)."""
    taken: list[list[tuple[int, int]]] = []
    for lane in sorted(lanes, key=lambda s: (max(s.blocks) - min(s.blocks), min(s.blocks))):
        low, high = min(lane.blocks), max(lane.blocks)
        for k in range(limit):
            if k == len(taken):
                taken.append([])
            if all(high < a or b < low for a, b in taken[k]):
                taken[k].append((low, high))
                lane.column = k
                break
    return sum(1 for spans in taken if spans)


def _flows_into(edges: list[_Edge], name: str) -> bool:
    return any(e.target == name for e in edges)


def _box(
    canvas: Canvas, state: State, box: int, run: ExecutionRun | None, depth: int, unreachable: bool
) -> int:
    """Draws one state's box; returns the row of its title."""
    inner = box - 4
    status = run.state(state.name) if run is not None else None
    kind = status.status if status is not None else None
    top = canvas.row()
    canvas.put(top, GUTTER, "╭" + "─" * (box - 2) + "╮")
    title = canvas.row()
    _title(canvas, title, state, box, status)

    rows: list[tuple[str, str | None]] = []
    detail = _detail(state)
    if detail:
        rows.append((detail, "muted"))
    if unreachable:
        rows.append(("not reachable from StartAt", "muted"))
    retry_rows = [("↻" + GLUE + _retrier_text(r), None) for r in state.retry]
    if status is not None and kind != "not run":
        rows.extend((line, kind) for line in _status_lines(state, status, run))
    for value, span in rows:
        for part in wrap(value, inner, WRAPPED_LINES):
            r = canvas.row()
            _sides(canvas, r, box)
            canvas.put(r, GUTTER + 2, part, span)
    last_retry = None
    for value, span in retry_rows:
        for n, part in enumerate(wrap(value, inner - 2, WRAPPED_LINES)):
            r = canvas.row()
            _sides(canvas, r, box)
            canvas.put(r, GUTTER + 2 + (2 if n else 0), part, span)
            last_retry = r
    if state.branches:
        _nested(canvas, state, box, run, depth)
    bottom = canvas.row()
    canvas.put(bottom, GUTTER, "╰" + "─" * (box - 2) + "╯")
    if last_retry is not None:  # the loop: out of the policy's last line, back into the title
        canvas.put(title, 1, "╭▶")
        for r in range(title + 1, last_retry):
            canvas.put(r, 1, "│")
        canvas.put(last_retry, 1, "╰─┤", "muted" if kind in (None, "not run") else None)
    return title


def _sides(canvas: Canvas, row: int, box: int) -> None:
    canvas.put(row, GUTTER, "│")
    canvas.put(row, GUTTER + box - 1, "│")


def _title(canvas: Canvas, row: int, state: State, box: int, status: StateRun | None) -> None:
    _sides(canvas, row, box)
    inner = box - 4
    icon = ICONS.get(status.status, "?") + " " if status is not None else ""
    suffix = ""
    if status is not None and status.attempts > max(status.visits, 1):
        suffix = f" ×{status.attempts}"
    elif status is not None and status.visits > 1:
        suffix = f" · {status.visits} visits"
    badge = clean(state.type) or "?"
    room = inner - cells(icon) - cells(suffix) - cells(badge) - 1
    if room < 6:  # a narrow box keeps the name, not the type
        badge, room = "", inner - cells(icon) - cells(suffix)
    name = cut(clean(state.name) or "(no name)", max(room, 1))
    kind = "name" if status is None else "muted" if status.status == "not run" else status.status
    col = canvas.put(row, GUTTER + 2, icon + name + suffix, kind)
    if badge:
        canvas.put(row, max(col + 1, GUTTER + 2 + inner - cells(badge)), badge, "muted")


def _detail(state: State) -> str:
    if state.type == "Task":
        if state.function:
            return "λ " + clean(state.function.rsplit(":function:", 1)[-1])
        resource = clean(state.resource or "")
        if ":activity:" in resource:
            return "activity " + resource.rsplit(":activity:", 1)[-1]
        return resource.split(":::", 1)[-1] if ":::" in resource else resource
    if state.type == "Wait":
        return clean(state.wait or "")
    if state.type == "Fail":
        return clean(" · ".join(x for x in (state.error, state.cause) if x))
    if state.type not in ("Pass", "Choice", "Succeed", "Parallel", "Map"):
        return "a state type AWS View does not know"
    return ""


def _retrier_text(retrier: Retrier) -> str:
    """E.g. "TransientOrderError 1s ×2, max 2": the errors, then the policy as the summary
    says it."""
    policy = replace(retrier, error_equals=()).describe().split(" every ", 1)[-1]
    return clean(f"{', '.join(retrier.error_equals) or '?'} {policy}")


def _status_lines(state: State, status: StateRun, run: ExecutionRun | None) -> list[str]:
    if status.status == "succeeded":  # the icon says it; a line only for the retries
        if not status.retried:
            return []
        line = "✓ succeeded"
        if status.attempts > max(status.visits, 1):
            line += f" on attempt {status.attempts}"
        return [line + " after " + ", ".join(dict.fromkeys(clean(e) for e in status.retried))]
    if status.status == "caught":
        return [f"↪ {clean(status.error or 'error')} caught → {clean(status.caught_to or '?')}"]
    if status.status == "failed":
        if state.type == "Fail":
            return ["✗ the execution failed here"]
        lines = [f"✗ failed: {clean(status.error or (run.error if run else None) or 'error')}"]
        if status.denied:
            lines.append("not authorized to invoke it: nothing ran")
        elif status.retried:
            lines.append(f"after {status.attempts} attempts")
        return lines
    if status.status == "entered":
        return [f"◐ running, attempt {status.attempts}" if status.attempts else "◐ running"]
    return []


def _nested(canvas: Canvas, state: State, box: int, run: ExecutionRun | None, depth: int) -> None:
    inner = box - 4
    branches = state.branches
    if inner < NESTED_MIN:
        count = sum(len(b.states) for b in branches)
        what = (
            "each item: "
            if state.type == "Map"
            else f"{len(branches)} branch{'es' if len(branches) != 1 else ''}, "
        )
        for part in wrap(f"{what}{count} states (no room to draw them here)", inner, WRAPPED_LINES):
            r = canvas.row()
            _sides(canvas, r, box)
            canvas.put(r, GUTTER + 2, part, "muted")
        return
    for number, branch in enumerate(branches, 1):
        r = canvas.row()
        _sides(canvas, r, box)
        label = cut(
            "┄ each item " if state.type == "Map" else f"┄ branch {number} of {len(branches)} ",
            inner,
        )
        canvas.put(r, GUTTER + 2, label + "┄" * (inner - cells(label)), "muted")
        drawn = _machine(branch, inner, run, depth + 1)
        start = len(canvas.rows)
        for _ in drawn.rows:
            _sides(canvas, canvas.row(), box)
        canvas.embed(drawn, start, GUTTER + 2)


def _edge_rows(
    canvas: Canvas,
    edges: list[_Edge],
    following: str | None,
    names: set[str],
    index: Mapping[str, int],
    lanes: Mapping[str, _Lane],
    trunk: int,
    right: int,
) -> None:
    if not edges:
        return
    down = [e for e in edges if e.target is not None and e.target == following]
    side = [e for e in edges if e not in down]
    bottom = len(canvas.rows) - 1
    canvas.put(bottom, trunk, "┬")
    for n, edge in enumerate(side):
        last = n == len(side) - 1 and not down
        mark = "taken" if edge.taken else None
        glyph = ("┗━ " if last else "┣━ ") if edge.taken else ("└─ " if last else "├─ ")
        if edge.kind == "end":
            row = canvas.row()
            canvas.put(row, trunk, glyph, mark)
            canvas.put(row, trunk + 3, "◉ end", mark)
            continue
        lane = lanes.get(edge.target) if edge.target is not None and edge.target in index else None
        if edge.target is None:
            target = "? (no Next)"
        else:
            target = clean(edge.target) + ("" if edge.target in names else " (no such state)")
        room = max(right - trunk - 4, 1)  # the lane area belongs to the lanes
        label = f"{edge.label} → {target}" if edge.label else f"→ {target}"
        parts = (
            [label]
            if cells(label) <= room
            else (wrap(edge.label, room, WRAPPED_LINES - 1) + [cut(f"→ {target}", room)])
        )
        end = row = 0
        for i, part in enumerate(parts):
            row = canvas.row()
            canvas.put(
                row,
                trunk,
                glyph if i == 0 else ("   " if last else "│  "),
                mark if i == 0 else None,
            )
            end = canvas.put(row, trunk + 3, part, mark)
        if lane is not None and lane.column is not None:
            lane.rows.append((row, end + 1))
    for edge in down:
        mark = "taken" if edge.taken else None
        for part in wrap(edge.label, right - trunk - 3, WRAPPED_LINES):
            row = canvas.row()
            canvas.put(row, trunk, "┃ " if edge.taken else "│ ", mark)
            canvas.put(row, trunk + 2, part, mark)
    if down:
        canvas.put(canvas.row(), trunk, "▼", "taken" if any(e.taken for e in down) else None)


def _draw_lane(canvas: Canvas, lane: _Lane, target_row: int, right: int) -> None:
    x = right + 1 + 2 * (lane.column or 0)
    starts = dict(lane.rows)
    starts[target_row] = right + 1
    attach = sorted(starts)
    top, bottom = attach[0], attach[-1]
    for r in range(top, bottom + 1):
        here = canvas.get(r, x)
        if r in attach:
            canvas.set(r, x, "╮" if r == top else "╯" if r == bottom else "┤")
        else:
            canvas.set(r, x, "┼" if here == "─" else "│")
    canvas.set(target_row, right, "◀")
    for r in attach:
        for c in range(starts[r], x):
            here = canvas.get(r, c)
            canvas.set(r, c, "┼" if here in ("│", "┤", "╮", "╯") else "─")


def _legend(width: int) -> list[str]:
    lines = [""]
    for item in LEGEND:
        joined = f"{lines[-1]}  {item}" if lines[-1] else item
        if cells(joined) <= width or not lines[-1]:
            lines[-1] = cut(joined, width)
        else:
            lines.append(cut(item, width))
    return lines


# -- fallbacks -------------------------------------------------------------------------------------


def _message_box(message: str, width: int) -> tuple[GraphLine, ...]:
    said = "cannot draw: " + clean(message)
    if width < 8:
        line = cut(said, width)
        return (GraphLine(line, (Span(0, len(line), "failed"),)),)
    inner = width - 4
    canvas = Canvas(width)
    canvas.put(canvas.row(), 0, "╭" + "─" * (inner + 2) + "╮")
    for part in wrap(said, inner, 4):
        r = canvas.row()
        canvas.put(r, 0, "│ ")
        canvas.put(r, 2, part, "failed")
        canvas.put(r, inner + 3, "│")
    canvas.put(canvas.row(), 0, "╰" + "─" * (inner + 2) + "╯")
    return tuple(canvas.lines())


def _names_only(
    definition: Definition, width: int, run: ExecutionRun | None
) -> tuple[GraphLine, ...]:
    order, _ = _order(definition)
    lines = []
    for state in order[:MAX_STATES]:
        status = run.state(state.name).status if run is not None else None
        icon = ICONS.get(status, "") + " " if status else ""
        value = cut(icon + clean(state.name), width)
        kind = "muted" if status == "not run" else status
        lines.append(GraphLine(value, (Span(0, len(value), kind),) if kind else ()))
    return tuple(lines)


# -- from the viewer's model -----------------------------------------------------------------------


@dataclass(frozen=True)
class Drawing:
    """What one graph is drawn from: a machine's definition (or why there is none), and the run of
    one of its executions when the graph is that execution's."""

    machine: str
    definition: Definition | None
    problem: str | None = None
    execution: str | None = None
    run: ExecutionRun | None = None

    @property
    def title(self) -> str:
        if self.execution is None:
            return clean(self.machine)
        status = (
            self.run.status if self.run is not None and self.run.status else "history not read yet"
        )
        return f"{clean(self.machine)} · {clean(self.execution)} ({clean(status)})"

    def lines(self, width: int) -> tuple[GraphLine, ...]:
        drawn = draw(self.definition, width, self.run, self.problem)
        if self.execution is not None and self.run is None and self.definition is not None:
            note = cut("history not read yet: no state is marked", max(width, 1))
            return (GraphLine(note, (Span(0, len(note), "muted"),)),) + drawn
        return drawn


def machine_drawing(model: LabState, arn: str) -> Drawing | None:
    """The state machine `arn` as the model knows it, unmarked."""
    machine = next((m for m in model.data(keys.STATE_MACHINES, ()) if m.arn == arn), None)
    if machine is None:
        return None
    problem = machine.definition_error or (
        "definition not read yet" if machine.definition is None else None
    )
    return Drawing(machine.name, machine.definition, problem)


def execution_drawing(model: LabState, arn: str) -> Drawing | None:
    """The machine of execution `arn`, marked by what its history says so far."""
    execution = next(
        (
            e
            for s in model.with_prefix(keys.EXECUTIONS_PREFIX)
            for e in s.data or ()
            if e.arn == arn
        ),
        None,
    )
    if execution is None:
        return None
    base = machine_drawing(model, execution.machine_arn) or Drawing(
        execution.machine_arn.rsplit(":", 1)[-1], None, "its state machine is not known here"
    )
    history = model.data(keys.history(arn))
    run = run_of(history.history) if history is not None else None
    return replace(base, execution=execution.name, run=run)


def drawings(model: LabState) -> list[Drawing]:
    """Every state machine, each followed by its executions (newest first) drawn on it."""
    found = []
    for machine in model.data(keys.STATE_MACHINES, ()):
        found.append(machine_drawing(model, machine.arn))
        executions = [
            e
            for s in model.with_prefix(keys.EXECUTIONS_PREFIX)
            for e in s.data or ()
            if e.machine_arn == machine.arn
        ]
        for execution in executions:
            found.append(execution_drawing(model, execution.arn))
    return [d for d in found if d is not None]
