"""The axes of a predicted-versus-measured plot, shared by plot_validation.py and plot_logo.py.

finish(ax, lo, hi, xlabel, ylabel): log-log, square limits from the data's range [lo, hi] widened
by 1.5x each way, the diagonal (exact) and dotted +-10 % bands, tick labels as plain numbers (1, 2
and 5 per decade when the panel spans under two decades, one per decade otherwise, so that they
never overlap on a 4-inch panel). An empty panel (hi == 0) keeps matplotlib's default limits.
"""
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter


def finish(ax, lo, hi, xlabel, ylabel, ylabel_fontsize=None):
    if hi > 0:
        lo, hi = lo / 1.5, hi * 1.5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.plot([lo, hi], [lo * 1.1, hi * 1.1], "k:", lw=0.6)
        ax.plot([lo, hi], [lo / 1.1, hi / 1.1], "k:", lw=0.6)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if hi > 0:
        subs = (1.0, 2.0, 5.0) if hi / lo < 100 else (1.0,)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(LogLocator(base=10, subs=subs))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel)
    if ylabel_fontsize is None:
        ax.set_ylabel(ylabel)
    else:
        ax.set_ylabel(ylabel, fontsize=ylabel_fontsize)
