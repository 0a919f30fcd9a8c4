"""Server-rendered line charts: geometry here, SVG markup in ``history/_chart.html``.

No JavaScript and no library: a chart is a few polylines in a fixed viewBox
that scales with the page. Pure functions, so the numbers are easy to test.

>>> c = line_chart([[150, 155, 140]], y_min=0, y_max=300, width=200, height=100)
>>> c.series[0].points
'32.0,50.0 88.0,50.0 88.0,48.7 144.0,48.7 144.0,52.5 200.0,52.5'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# Room for the y-axis labels on the left and a little air elsewhere.
PAD_LEFT = 32.0
PAD_RIGHT = 0.0
PAD_Y = 12.0


@dataclass(frozen=True)
class Series:
    points: str  # SVG polyline points, "x,y x,y ..."
    css: str  # a modifier for the line's colour: "seat0", "seat1", "rating"
    label: str
    last_x: float
    last_y: float


@dataclass(frozen=True)
class Tick:
    y: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    series: tuple[Series, ...]
    ticks: tuple[Tick, ...]
    # The x of a vertical marker (the replay's current step), if any.
    marker_x: float | None
    left: float
    right: float

    @property
    def empty(self) -> bool:
        return not self.series


def _scale(v: float, lo: float, hi: float, a: float, b: float) -> float:
    if hi == lo:
        return (a + b) / 2
    return a + (v - lo) * (b - a) / (hi - lo)


def line_chart(
    values: Sequence[Sequence[float]],
    *,
    y_min: float,
    y_max: float,
    width: int = 600,
    height: int = 160,
    stepped: bool = True,
    css: Sequence[str] = ("seat0", "seat1"),
    labels: Sequence[str] = ("", ""),
    ticks: Sequence[float] = (),
    marker: int | None = None,
) -> Chart:
    """A chart of one or more series over the same x positions 0..n−1.

    ``stepped`` draws a value as held until the next one (balances change in
    jumps); otherwise points are joined directly. ``marker`` is an x index.
    """
    n = max((len(v) for v in values), default=0)
    left, right = PAD_LEFT, width - PAD_RIGHT
    top, bottom = PAD_Y, height - PAD_Y
    # With stepped lines each value owns one slot; otherwise values sit on slot edges.
    slots = n if stepped else max(n - 1, 1)

    def x_of(i: float) -> float:
        return round(_scale(i, 0, slots, left, right), 1)

    def y_of(v: float) -> float:
        return round(_scale(v, y_min, y_max, bottom, top), 1)

    series = []
    for k, vals in enumerate(values):
        if not vals:
            continue
        pts: list[tuple[float, float]] = []
        for i, v in enumerate(vals):
            y = y_of(v)
            if stepped:
                pts.append((x_of(i), y))
                pts.append((x_of(i + 1), y))
            else:
                pts.append((x_of(i) if n > 1 else (left + right) / 2, y))
        series.append(
            Series(
                points=" ".join(f"{x},{y}" for x, y in pts),
                css=css[k % len(css)],
                label=labels[k % len(labels)] if labels else "",
                last_x=pts[-1][0],
                last_y=pts[-1][1],
            )
        )
    marker_x = None
    if marker is not None and n:
        marker_x = x_of(marker + 0.5) if stepped else x_of(marker)
    return Chart(
        width=width,
        height=height,
        series=tuple(series),
        ticks=tuple(Tick(y_of(t), str(int(t)) if float(t).is_integer() else str(t)) for t in ticks),
        marker_x=marker_x,
        left=left,
        right=right,
    )


def nice_range(values: Sequence[float], *, step: int = 50, floor_pad: int = 25) -> tuple[int, int]:
    """A y range around ``values`` on multiples of ``step``, never flat.

    >>> nice_range([1500, 1520, 1480])
    (1450, 1550)
    >>> nice_range([1500])
    (1450, 1550)
    """
    lo = min(values) - floor_pad
    hi = max(values) + floor_pad
    lo = int(lo // step * step)
    hi = int(-(-hi // step) * step)
    if hi <= lo:
        hi = lo + step
    return lo, hi
