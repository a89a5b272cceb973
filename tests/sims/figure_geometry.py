"""Renderer geometry shared by the figure-layout tests (display-space boxes from matplotlib)."""

from __future__ import annotations


def drawn_renderer(fig):
    """The figure's renderer after a draw, so artists' window extents are final."""
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def overlap_area(a, b) -> float:
    """Area shared by two ``Bbox`` es (0 when they do not overlap)."""
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w * h if w > 0 and h > 0 else 0.0


def inside(inner, outer, slack=0.5) -> bool:
    """``inner`` lies within ``outer``, give or take ``slack`` display units."""
    return (outer.x0 - slack <= inner.x0 and inner.x1 <= outer.x1 + slack
            and outer.y0 - slack <= inner.y0 and inner.y1 <= outer.y1 + slack)
