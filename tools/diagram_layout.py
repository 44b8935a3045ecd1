"""Where the states, the edges and their labels of the state diagram go
(:mod:`tools.states_diagram` draws them).

Every state gets a rank, its breadth-first distance from the entry states
(the first state of ``order`` and every state no other state leads to);
ranks are columns, left to right, and within a column states are sorted by
the mean row of the earlier states leading to them. Edges are quadratic
curves; all the edges between one pair of states fan out around the
straight line, and the fan is pushed aside when it would cross another
state. A state's transitions to itself are small loops above or below it,
each put where the curves leave the most room, and the fans are then
pushed off the loops too. Each label goes to the point of its curve that
overlaps the fewest other labels, states and curves.
"""

import collections
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

Table = Mapping[str, Mapping[str, str]]
Point = tuple[float, float]

NODE_W = 140.0
NODE_H = 40.0
COL_GAP = 270.0
ROW_GAP = 160.0
FAN = 44.0  # distance between the control points of parallel edges
SHIFT = 30.0  # step by which a fan is pushed away from other states
MAX_SHIFTS = 8
CLEARANCE = 12.0  # how far a curve keeps from states it does not touch
LOOP_HEIGHT = 34.0
LOOP_ROOM = 10.0  # free space wanted around a loop and its label
LOOP_VIEW = 40.0  # how far around a loop other curves make it look crowded
LOOP_FOOT = 10.0  # half the distance between where a loop leaves and enters
LOOP_STEP = 4.0  # the places a loop may sit on its state are this far apart
MARGIN = 20.0
STATE_FONT = 14
LABEL_FONT = 12
CHAR_W = 7.0  # rough advance of a 12px sans-serif character
LABEL_H = 16.0
LABEL_TS = (0.5, 0.42, 0.58, 0.34, 0.66, 0.26, 0.74, 0.2, 0.8)
SAMPLES = 40


def _num(value: float) -> str:
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _pt(point: Point) -> str:
    return f"{_num(point[0])},{_num(point[1])}"


@dataclass(frozen=True)
class Box:
    """An axis-aligned rectangle."""

    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def around(cls, centre: Point, width: float, height: float) -> "Box":
        x, y = centre
        return cls(x - width / 2, y - height / 2, x + width / 2, y + height / 2)

    def grow(self, by: float) -> "Box":
        return Box(self.x0 - by, self.y0 - by, self.x1 + by, self.y1 + by)

    def contains(self, point: Point) -> bool:
        x, y = point
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1

    def overlaps(self, other: "Box") -> bool:
        return (
            self.x0 < other.x1
            and other.x0 < self.x1
            and self.y0 < other.y1
            and other.y0 < self.y1
        )


def _hull(points: Sequence[Point]) -> Box:
    """The smallest box around some points."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return Box(min(xs), min(ys), max(xs), max(ys))


@dataclass(frozen=True)
class Edge:
    """One row of the table: ``event`` leads from ``source`` to ``target``."""

    source: str
    event: str
    target: str

    @property
    def element_id(self) -> str:
        return f"edge-{self.source}-{self.event}"


@dataclass(frozen=True)
class Curve:
    """How an edge is drawn: its path, points along it and its label slots."""

    edge: Edge
    path: str
    samples: tuple[Point, ...]
    slots: tuple[Point, ...]


@dataclass(frozen=True)
class Label:
    """Where the name of an edge's event is written."""

    edge: Edge
    box: Box


@dataclass(frozen=True)
class Layout:
    """Everything placed: state centres, curves and labels."""

    centres: dict[str, Point]
    curves: list[Curve]
    labels: dict[Edge, Label]


# --- the table -------------------------------------------------------------


def _nodes(transitions: Table, order: Sequence[str]) -> list[str]:
    """Every state: those of ``order`` first, then any others, sorted."""
    seen = set(order)
    extra = {s for s in transitions if s not in seen}
    extra |= {t for row in transitions.values() for t in row.values() if t not in seen}
    return list(order) + sorted(extra)


def _edges(transitions: Table, nodes: Sequence[str]) -> list[Edge]:
    """Every transition, by source state in ``nodes`` order, then by event."""
    index = {name: i for i, name in enumerate(nodes)}
    edges = [
        Edge(source, event, target)
        for source, row in transitions.items()
        for event, target in row.items()
    ]
    return sorted(edges, key=lambda e: (index[e.source], e.event))


# --- placing the states ----------------------------------------------------


def _ranks(nodes: Sequence[str], edges: Sequence[Edge]) -> dict[str, int]:
    """Breadth-first distance of each state from the entry states."""
    entered = {e.target for e in edges if e.source != e.target}
    roots = [n for i, n in enumerate(nodes) if i == 0 or n not in entered]
    rank = dict.fromkeys(roots, 0)
    queue = collections.deque(roots)
    while queue:
        state = queue.popleft()
        for edge in edges:
            if edge.source == state and edge.target not in rank:
                rank[edge.target] = rank[state] + 1
                queue.append(edge.target)
    unreachable = max(rank.values()) + 1
    return {n: rank.get(n, unreachable) for n in nodes}


def _column(
    members: list[str], edges: Sequence[Edge], rows: dict[str, float]
) -> list[str]:
    """Sort one column by the mean row of the placed states leading to it."""

    def key(name: str) -> tuple[int, float, int]:
        before = [
            rows[e.source] for e in edges if e.target == name and e.source in rows
        ]
        if not before:
            return (1, 0.0, members.index(name))
        return (0, sum(before) / len(before), members.index(name))

    return sorted(members, key=key)


def _centres(nodes: Sequence[str], edges: Sequence[Edge]) -> dict[str, Point]:
    ranks = _ranks(nodes, edges)
    rows: dict[str, float] = {}
    for rank in range(max(ranks.values()) + 1):
        members = _column([n for n in nodes if ranks[n] == rank], edges, rows)
        for i, name in enumerate(members):
            rows[name] = i - (len(members) - 1) / 2
    return {n: (ranks[n] * COL_GAP, rows[n] * ROW_GAP) for n in nodes}


# --- curves ----------------------------------------------------------------


def _quad(p0: Point, c: Point, p1: Point, t: float) -> Point:
    u = 1 - t
    return (
        u * u * p0[0] + 2 * u * t * c[0] + t * t * p1[0],
        u * u * p0[1] + 2 * u * t * c[1] + t * t * p1[1],
    )


def _border(centre: Point, toward: Point) -> Point:
    """Where the ray from a state's centre toward a point leaves the state."""
    dx, dy = toward[0] - centre[0], toward[1] - centre[1]
    scales = [NODE_W / 2 / abs(dx)] if dx else []
    scales += [NODE_H / 2 / abs(dy)] if dy else []
    scale = min(scales, default=0.0)
    return (centre[0] + dx * scale, centre[1] + dy * scale)


def _control(a: Point, b: Point, bend: float) -> Point:
    """The control point ``bend`` away from the middle of a->b, to its left."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = (dx * dx + dy * dy) ** 0.5 or 1.0
    return (
        (a[0] + b[0]) / 2 - dy / length * bend,
        (a[1] + b[1]) / 2 + dx / length * bend,
    )


def _curve(edge: Edge, centres: dict[str, Point], control: Point) -> Curve:
    start = _border(centres[edge.source], control)
    end = _border(centres[edge.target], control)
    samples = tuple(_quad(start, control, end, i / SAMPLES) for i in range(SAMPLES + 1))
    slots = tuple(_quad(start, control, end, t) for t in LABEL_TS)
    path = f"M{_pt(start)} Q{_pt(control)} {_pt(end)}"
    return Curve(edge, path, samples, slots)


def _hits(curves: Iterable[Curve], obstacles: Sequence[Box]) -> int:
    return sum(
        1 for c in curves for p in c.samples if any(b.contains(p) for b in obstacles)
    )


def _fan(
    pair: tuple[str, str],
    members: list[Edge],
    centres: dict[str, Point],
    loops: Sequence[Curve],
) -> list[Curve]:
    """Curves for all edges between two states, pushed clear of the others.

    The fan is shifted sideways step by step; the first shift with the
    least cost wins: a point near another state costs more than a point on
    a loop, and each step costs a little so that curves stay flat.
    """
    a, b = centres[pair[0]], centres[pair[1]]
    states_near = [
        Box.around(p, NODE_W, NODE_H).grow(CLEARANCE)
        for name, p in centres.items()
        if name not in pair
    ]
    loop_hulls = [box for loop in loops for box in _loop_boxes(loop)]
    bends = [(i - (len(members) - 1) / 2) * FAN for i in range(len(members))]
    best: list[Curve] = []
    best_cost = -1
    for step in range(2 * MAX_SHIFTS + 1):
        shift = SHIFT * ((step + 1) // 2) * (1 if step % 2 else -1)
        curves = [
            _curve(edge, centres, _control(a, b, bend + shift))
            for edge, bend in zip(members, bends, strict=True)
        ]
        cost = 10 * _hits(curves, states_near) + 3 * _hits(curves, loop_hulls) + step
        if best_cost < 0 or cost < best_cost:
            best, best_cost = curves, cost
    return best


def _pairs(
    edges: Sequence[Edge], nodes: Sequence[str]
) -> dict[tuple[str, str], list[Edge]]:
    """Edges between two distinct states, by pair in table order."""
    index = {name: i for i, name in enumerate(nodes)}
    pairs: dict[tuple[str, str], list[Edge]] = {}
    for edge in edges:
        if edge.source == edge.target:
            continue
        ends = sorted((edge.source, edge.target), key=index.__getitem__)
        pairs.setdefault((ends[0], ends[1]), []).append(edge)
    for (first, _), members in pairs.items():
        members.sort(key=lambda e: (e.source != first, e.event))
    return dict(
        sorted(pairs.items(), key=lambda kv: (index[kv[0][0]], index[kv[0][1]]))
    )


# --- self loops ------------------------------------------------------------


def _cubic(p0: Point, c1: Point, c2: Point, p1: Point, t: float) -> Point:
    u = 1 - t
    a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
    return (
        a * p0[0] + b * c1[0] + c * c2[0] + d * p1[0],
        a * p0[1] + b * c1[1] + c * c2[1] + d * p1[1],
    )


def _loop(edge: Edge, centre: Point, offset: float, side: float) -> Curve:
    """A small loop on the top (side -1) or bottom (side 1) of a state."""
    x, y = centre[0] + offset, centre[1] + side * NODE_H / 2
    reach = y + side * LOOP_HEIGHT * 4 / 3
    start, end = (x - LOOP_FOOT, y), (x + LOOP_FOOT, y)
    c1, c2 = (x - 26, reach), (x + 26, reach)
    samples = tuple(_cubic(start, c1, c2, end, i / SAMPLES) for i in range(SAMPLES + 1))
    label = (x, y + side * (LOOP_HEIGHT + LABEL_H / 2 + 2))
    path = f"M{_pt(start)} C{_pt(c1)} {_pt(c2)} {_pt(end)}"
    return Curve(edge, path, samples, (label,))


def _loop_offsets() -> list[float]:
    """Where a loop may sit, from the middle of its state, the middle first."""
    steps = int((NODE_W / 2 - LOOP_FOOT - 20) // LOOP_STEP)
    return sorted((i * LOOP_STEP for i in range(-steps, steps + 1)), key=abs)


def _loop_boxes(loop: Curve) -> list[Box]:
    return [_hull(loop.samples).grow(2), _label_box(loop.edge, loop.slots[0])]


def _crowding(
    loop: Curve, obstacles: Sequence[Box], curves: Sequence[Curve]
) -> tuple[int, int]:
    """How much a loop and its label overlap what is drawn already.

    Other states and loops must not be overlapped; arrows ending next to
    the loop are worse than curves passing by, which count by how many
    of their points are in or near the loop or its label; between equal
    places, the one with fewer curves in view wins.
    """
    boxes = _loop_boxes(loop)
    clashes = sum(1 for b in boxes for o in obstacles if b.overlaps(o))
    near = [b.grow(LOOP_ROOM) for b in boxes]
    ends = [p for c in curves for p in (c.samples[0], c.samples[-1])]
    crowded = sum(1 for p in ends if near[0].contains(p))
    crossed = sum(1 for b in boxes for c in curves for p in c.samples if b.contains(p))
    close = sum(1 for b in near for c in curves for p in c.samples if b.contains(p))
    room = [b.grow(LOOP_VIEW) for b in boxes]
    around = sum(1 for b in room for c in curves for p in c.samples if b.contains(p))
    return (1000 * clashes + 50 * crowded + 5 * crossed + close, around)


def _loops(
    edges: Sequence[Edge], centres: dict[str, Point], curves: Sequence[Curve]
) -> list[Curve]:
    """Loops for transitions to the same state, each where it is least crowded."""
    placed: list[Curve] = []
    for edge in (e for e in edges if e.source == e.target):
        centre = centres[edge.source]
        obstacles = [
            Box.around(p, NODE_W, NODE_H)
            for n, p in centres.items()
            if n != edge.source
        ]
        obstacles += [b for loop in placed for b in _loop_boxes(loop)]
        options = [
            _loop(edge, centre, offset, side)
            for side in (-1.0, 1.0)
            for offset in _loop_offsets()
        ]
        placed.append(min(options, key=lambda o: _crowding(o, obstacles, curves)))
    return placed


# --- labels ----------------------------------------------------------------


def _label_box(edge: Edge, centre: Point) -> Box:
    return Box.around(centre, CHAR_W * len(edge.event) + 8, LABEL_H)


def _place(curve: Curve, taken: list[Box], curves: Sequence[Curve]) -> Label:
    """The label slot of a curve overlapping the fewest things drawn."""
    others = [p for c in curves if c is not curve for p in c.samples]

    def cost(slot: Point) -> int:
        box = _label_box(curve.edge, slot)
        clashes = sum(1 for t in taken if box.overlaps(t))
        return 1000 * clashes + sum(1 for p in others if box.contains(p))

    best = min(curve.slots, key=cost)
    return Label(curve.edge, _label_box(curve.edge, best))


def _labels(curves: Sequence[Curve], centres: dict[str, Point]) -> dict[Edge, Label]:
    taken = [Box.around(p, NODE_W, NODE_H).grow(4) for p in centres.values()]
    labels: dict[Edge, Label] = {}
    for curve in sorted(curves, key=lambda c: len(c.slots)):
        label = _place(curve, taken, curves)
        labels[curve.edge] = label
        taken.append(label.box)
    return labels


def _layout(transitions: Table, order: Sequence[str]) -> Layout:
    nodes = _nodes(transitions, order)
    edges = _edges(transitions, nodes)
    centres = _centres(nodes, edges)
    pairs = _pairs(edges, nodes)
    free = [c for pair, m in pairs.items() for c in _fan(pair, m, centres, [])]
    loops = _loops(edges, centres, free)
    curves = [c for pair, m in pairs.items() for c in _fan(pair, m, centres, loops)]
    curves += loops
    position = {e: i for i, e in enumerate(edges)}
    curves.sort(key=lambda c: position[c.edge])
    return Layout(centres, curves, _labels(curves, centres))


# --- SVG -------------------------------------------------------------------
