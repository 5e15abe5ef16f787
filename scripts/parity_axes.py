"""The axes of a predicted-versus-measured plot, shared by plot_validation.py and plot_logo.py.

finish(ax, lo, hi, xlabel, ylabel): log-log, square limits from the data's range [lo, hi] widened
by 1.5x each way, the diagonal (exact) and dotted +-10 % bands. An empty panel (hi == 0) keeps
matplotlib's default limits.
"""


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
    ax.set_xlabel(xlabel)
    if ylabel_fontsize is None:
        ax.set_ylabel(ylabel)
    else:
        ax.set_ylabel(ylabel, fontsize=ylabel_fontsize)
