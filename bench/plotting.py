"""Plot helpers the bench reports share: the timeline figure, panels
stacked over one time axis (bench/e2e/report.py's latency/CPU/RSS timeline,
bench/soak/plot.py and bench/soak/run.py: RSS/CPU/log-size).

The caller draws its series (and any reference lines) into the axes of
timeline_axes, then finish_timeline labels, grids and saves the figure.
matplotlib is imported on first use, so a script may do other work first
without it.
"""

from __future__ import annotations

from pathlib import Path


def timeline_axes(panels: int, figsize: tuple[float, float]):
    """(figure, axes): `panels` axes stacked top to bottom, sharing x."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(panels, 1, figsize=figsize, sharex=True)


def finish_timeline(fig, axes, path: Path, ylabels, xlabel: str, log_panels=(),
                    legend: dict | None = None, title: str | None = None, dpi: int = 80) -> None:
    """Labels each panel (ylabels top to bottom, xlabel under the last),
    puts the panels listed in log_panels on a log y scale, adds a grid and a
    legend (legend: keyword arguments of Axes.legend) to every panel and the
    title above them, then writes the figure to `path` and closes it."""
    import matplotlib.pyplot as plt
    for ax, label in zip(axes, ylabels):
        ax.set_ylabel(label)
    for panel in log_panels:
        axes[panel].set_yscale("log")
    axes[-1].set_xlabel(xlabel)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(**(legend or {}))
    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
