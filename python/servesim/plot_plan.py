"""The plan figures of servesim.plot: GPUs per candidate of one plan, and GPUs against the target
QPS over several plans (matplotlib; servesim.plot imports them and draws them from the command
line)."""

import matplotlib.pyplot as plt


def gpus_vs_qps(plans, ax=None):
    """GPUs against target QPS per GPU type, from one or more plan outputs. Returns the figure."""
    if isinstance(plans, dict):
        plans = [plans]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 4.5))
    verified = {}   # gpu -> [(target QPS, GPUs of its cheapest passing candidate)]
    bounds = {}     # gpu -> [(target QPS, fewest bound GPUs)] where all its candidates were pruned
    for plan in plans:
        q = plan["servesim_plan"]["target_qps"]
        best, bound = {}, {}
        for c in plan["candidates"]:
            g = c["gpu"]
            if c["status"] == "ok" and c.get("total_gpus"):
                best[g] = min(best.get(g, c["total_gpus"]), c["total_gpus"])
            elif c["status"] == "pruned" and c.get("bound_gpus"):
                bound[g] = min(bound.get(g, c["bound_gpus"]), c["bound_gpus"])
        for g, n in best.items():
            verified.setdefault(g, []).append((q, n))
        for g, n in bound.items():
            if g not in best:  # pruned: not verified, its stability bound only
                bounds.setdefault(g, []).append((q, n))
    colours = plt.cm.tab10.colors
    for i, g in enumerate(sorted(set(verified) | set(bounds))):
        colour = colours[i % len(colours)]
        if g in verified:
            pts = sorted(verified[g])
            ax.plot(*zip(*pts), "o-", color=colour, label=g)
            for q, n in pts:
                ax.annotate(str(n), (q, n), textcoords="offset points", xytext=(4, 4), fontsize=8)
        if g in bounds:
            pts = sorted(bounds[g])
            ax.plot(*zip(*pts), "o", color=colour, markerfacecolor="none",
                    label=f"{g}: pruned, at least")
            for q, n in pts:
                ax.annotate(f">={n}", (q, n), textcoords="offset points", xytext=(4, 4),
                            fontsize=8)
    ax.set_xlabel("target QPS (req/s)")
    ax.set_ylabel("GPUs")
    ax.set_title("each marker: the GPUs one plan verified at that target (any TP); hollow: "
                 "pruned, the stability bound", fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax.figure.tight_layout()
    return ax.figure


def candidate_bars(plan, ax=None):
    """GPUs per candidate of one plan, cheapest first, as horizontal bars: the answer, the other
    candidates that meet the SLOs, the pruned ones (a lighter bar at their stability bound: not
    verified) and those that do not meet them (their reason instead of a bar); each verified bar
    annotated with its cost per hour and prediction basis. Returns the figure."""
    cands = plan["candidates"]
    if ax is None:
        _, ax = plt.subplots(figsize=(9.5, 0.45 * len(cands) + 1.6))
    answer = next((c["label"] for c in cands if c["status"] == "ok"), None)
    colours = {"answer": "tab:blue", "ok": "tab:cyan", "pruned": "lavender",
               "failed": "lightgrey"}
    names, widths, kinds = [], [], []
    for c in cands:
        names.append(c["label"])
        ok = c["status"] == "ok" and c.get("total_gpus")
        pruned = c["status"] == "pruned" and c.get("bound_gpus")
        widths.append(c["total_gpus"] if ok else c["bound_gpus"] if pruned else 0)
        kinds.append("answer" if c["label"] == answer else "ok" if ok else
                     "pruned" if pruned else "failed")
    ax.barh(names, widths, color=[colours[k] for k in kinds])
    top = max(widths, default=0) or 1
    for i, c in enumerate(cands):
        if kinds[i] == "pruned":
            text = (f"at least {c['bound_gpus']} GPUs: pruned, cannot tie with the answer "
                    f"(not verified)")
        elif kinds[i] == "failed":
            text = f"no answer: {c.get('reason') or c['status']}"
        else:
            text = (f"{c['total_gpus']} GPUs ({c['replicas']} × TP{c['tensor_parallel_size']}), "
                    f"${c['cost_per_hour_usd']:.2f}/h, {c.get('prediction_basis', '')}")
        if len(text) > 100:  # a long reason: cut at a word, marked as cut
            text = text[:100].rsplit(" ", 1)[0] + " …"
        ax.annotate(text, (widths[i], i), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7)
    kinds_shown = [k for k in ("answer", "ok", "pruned", "failed") if k in kinds or k != "pruned"]
    names_of = {"answer": "the answer", "ok": "meets the SLOs",
                "pruned": "pruned (its stability bound)", "failed": "does not (reason shown)"}
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[k]) for k in kinds_shown]
    ax.legend(handles, [names_of[k] for k in kinds_shown], fontsize=7, loc="upper right")
    ax.set_xlim(0, top * 2.2)
    ax.set_xlabel("GPUs needed at the target rate (verified on the whole cluster)")
    ax.invert_yaxis()
    ax.grid(True, axis="x", alpha=0.3)
    ax.figure.tight_layout()
    return ax.figure

