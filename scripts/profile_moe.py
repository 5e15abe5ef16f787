"""MoE routed experts as grouped GEMMs per TP and EP shard, for scripts/profile_gpu.py's
--sections moe and moe-frontier."""
import sys
import time

def route(torch, gen, tokens, experts, topk):
    """Rows each expert gets when `tokens` tokens each pick top-k distinct experts uniformly at
    random (the routing servesim's expected_experts_touched assumes)."""
    choice = torch.rand(tokens, experts, generator=gen).topk(topk, dim=1).indices
    return torch.bincount(choice.flatten(), minlength=experts)


def measure_moe(torch, device, timed, w, tag, configs, tokens, deadline, fp8_ok=False):
    """An MoE layer's routed-expert GEMMs, bf16, as one grouped GEMM per projection
    (torch._grouped_mm where PyTorch has it, else a loop of per-expert matmuls), per shard:
    - TP (vLLM's default): every expert sliced by TP; each of `m` tokens picks top-k distinct
      experts uniformly at random (fixed seed), rows are grouped by expert, then gate_up
      [rows, hidden] x [E, hidden, 2·I/tp] and down [rows, I/tp] x [E, I/tp, hidden];
    - EP (--enable-expert-parallel with data-parallel attention, EP = DP ranks): each rank holds
      E/ep whole experts and receives, after the all-to-all dispatch, the rows that the ep ranks'
      m tokens each (m·ep tokens routed as above) sent to its experts (about m·top-k).
    Rows: kind moe, op experts_gate_up | experts_down (+ "_ep" for EP shards, + "_loop" without
    _grouped_mm), tp = the TP or EP degree, m_tokens = tokens per rank, n and k the per-rank
    GEMM, batch = experts on the rank, q_len = top-k, kv_len = routed rows on the rank, q_heads =
    experts that got at least one row. With fp8_ok and torch._scaled_grouped_mm, each grouped GEMM
    is timed again in fp8 (e4m3 inputs and weights, row-wise scales, bf16 out): dtype fp8 rows.
    Returns rows."""
    rows = 0
    bf16 = torch.bfloat16
    grouped = hasattr(torch, "_grouped_mm") and device.type == "cuda"
    grouped_fp8 = grouped and fp8_ok and hasattr(torch, "_scaled_grouped_mm")
    gen = torch.Generator(device="cpu").manual_seed(0)
    for model, ((hidden, inter, experts, topk), tps, eps) in configs.items():
        shards = [("", t, experts, inter // t) for t in tps]
        shards += [("_ep", e, experts // e, inter) for e in eps if experts % e == 0]
        for suffix, degree, local, i_rank in shards:
            if time.time() > deadline:
                return rows
            w1 = torch.randn(local, hidden, 2 * i_rank, device=device, dtype=bf16) * 0.02
            w2 = torch.randn(local, i_rank, hidden, device=device, dtype=bf16) * 0.02
            if grouped:  # _grouped_mm wants the last dimension of the weights contiguous
                w1 = w1.transpose(-2, -1).contiguous().transpose(-2, -1)
                w2 = w2.transpose(-2, -1).contiguous().transpose(-2, -1)
            weights = {"experts_gate_up": w1, "experts_down": w2}
            w8 = {}
            if grouped_fp8:  # converted once per shard (keeps the K-contiguous layout)
                w8 = {op: wt.to(torch.float8_e4m3fn) for op, wt in weights.items()}
            for m in tokens:
                if time.time() > deadline:
                    return rows
                if suffix:  # EP: the m·ep tokens of all ranks, this rank's first E/ep experts
                    counts = route(torch, gen, m * degree, experts, topk)[:local]
                else:
                    counts = route(torch, gen, m, experts, topk)
                routed = int(counts.sum())
                if routed == 0:
                    continue
                offs = torch.cumsum(counts, 0).to(torch.int32).to(device)
                inputs = {"experts_gate_up": torch.randn(routed, hidden, device=device, dtype=bf16),
                          "experts_down": torch.randn(routed, i_rank, device=device, dtype=bf16)}
                bounds = [0] + torch.cumsum(counts, 0).tolist()
                hit = int((counts > 0).sum())
                for op, wt in weights.items():
                    x = inputs[op]
                    n, k = wt.shape[2], wt.shape[1]

                    def write(dtype, name, us, moved):  # moved: bytes of weights hit + rows
                        w.writerow([tag, "moe", dtype, model, degree, name, m, n, k, local, topk,
                                    routed, hit, "", "", f"{us:.2f}",
                                    f"{2 * routed * n * k / us / 1e6:.1f}",
                                    f"{moved / us / 1e3:.1f}"])

                    def loop(x=x, wt=wt):
                        for e in range(local):
                            if bounds[e + 1] > bounds[e]:
                                torch.matmul(x[bounds[e]:bounds[e + 1]], wt[e])
                    try:
                        us, name = None, op + suffix + "_loop"
                        if grouped:
                            try:
                                us = timed(lambda: torch._grouped_mm(x, wt, offs=offs))
                                name = op + suffix
                            except Exception as e:  # this shape or build: the loop instead
                                print("moe grouped_mm fail, loop instead", model, degree, op, m,
                                      repr(e)[:200], file=sys.stderr, flush=True)
                        if us is None:
                            us = timed(loop)
                        write("bf16", name, us, hit * n * k * 2 + routed * (n + k) * 2)
                        rows += 1
                    except Exception as e:  # report, go on
                        print("moe fail", model, degree, op, m, repr(e)[:200], file=sys.stderr,
                              flush=True)
                    if op not in w8:
                        continue
                    try:
                        x8 = x.to(torch.float8_e4m3fn)
                        sa = torch.ones(x.shape[0], device=device, dtype=torch.float32)
                        sb = torch.ones(local, wt.shape[2], device=device, dtype=torch.float32)
                        us = timed(lambda: torch._scaled_grouped_mm(
                            x8, w8[op], sa, sb, offs=offs, out_dtype=bf16))
                        write("fp8", op + suffix, us, hit * n * k + routed * (k + 2 * n))
                        rows += 1
                    except Exception as e:  # report, go on
                        print("moe fp8 fail", model, degree, op, m, repr(e)[:200],
                              file=sys.stderr, flush=True)
            del w1, w2, weights, w8
    return rows
