"""Dense linear layers and attention for scripts/profile_gpu.py's --sections linear, attention
(causal prefill of one sequence) and decode (a batch over contiguous K/V)."""
import sys

from profile_gemm import make_gemm
from profile_shapes import linear_shapes


def measure_linear(torch, device, timed, f, w, tag, models, tps, moe, tokens, dtypes, done,
                   over_budget):
    """Each model's dense GEMMs (linear_shapes) at each TP degree in tps[model], token count and
    dtype (bf16, fp8) into the csv writer w (file f, flushed per TP degree): kind linear, one row
    per (dtype, tokens, N, K) not in `done` (a shape shared by two models appears once; `done`
    grows with each shape measured). A model in `moe` has its experts left out. Stops a TP degree's
    token loop once over_budget() is true. Returns rows."""
    rows = 0
    for model, dims in models.items():
        for tp in tps[model]:
            for op, n, k in linear_shapes(dims, tp, model in moe):
                for m in tokens:
                    if over_budget():
                        break
                    for dt in dtypes:
                        key = (dt, m, n, k)
                        if key in done:
                            continue  # a shape shared by two models appears once
                        done.add(key)
                        try:
                            fn, mm = make_gemm(torch, device, dt, m, n, k)
                            us = timed(fn)
                            bytes_ = (mm * k + n * k) * (2 if dt == "bf16" else 1) + mm * n * 2
                            w.writerow([tag, "linear", dt, model, tp, op, m, n, k, "", "", "",
                                        "", "", "", f"{us:.2f}",
                                        f"{2 * mm * n * k / us / 1e6:.1f}",
                                        f"{bytes_ / us / 1e3:.1f}"])
                            rows += 1
                        except Exception as e:  # an unsupported shape: report, go on
                            print("linear fail", model, tp, op, m, dt, repr(e)[:120],
                                  file=sys.stderr, flush=True)
            f.flush()
    return rows


def measure_attention(torch, device, timed, sdpa, f, w, tag, heads, prefill_lens,
                      decode_batches, decode_lens, over_budget):
    """Attention through sdpa (profile_device.make_sdpa), bf16, for each (q heads, kv heads,
    head_dim) per GPU in `heads`: causal prefill of one sequence of each length in prefill_lens
    (q = kv = L; kind attn_prefill, op sdpa_causal), then decode of each batch in decode_batches
    over each length in decode_lens (q = 1 per sequence over kv = L cached tokens, contiguous;
    kind attn_decode, op sdpa; shapes whose K/V exceed 24 GB are skipped). Pass empty lists to
    leave a part out. Stops a loop over lengths once over_budget() is true. Returns rows."""
    rows = 0
    for qh, kvh, hd in heads:
        for L in prefill_lens:  # prefill: one sequence, causal, q = kv = L
            if over_budget():
                break
            q = torch.randn(1, qh, L, hd, device=device, dtype=torch.bfloat16)
            kk = torch.randn(1, kvh, L, hd, device=device, dtype=torch.bfloat16)
            v = torch.randn(1, kvh, L, hd, device=device, dtype=torch.bfloat16)
            us = timed(lambda: sdpa(q, kk, v, True), inner=5)
            fl = 4 * qh * L * L * hd / 2
            w.writerow([tag, "attn_prefill", "bf16", "", "", "sdpa_causal", L, "", "", 1, L, L,
                        qh, kvh, hd, f"{us:.2f}", f"{fl / us / 1e6:.1f}", ""])
            rows += 1
        for B in decode_batches:
            # decode: q = 1 per sequence over kv = L cached tokens
            for L in decode_lens:
                if over_budget():
                    break
                if B * L * kvh * hd * 2 * 2 > 24e9:
                    continue
                q = torch.randn(B, qh, 1, hd, device=device, dtype=torch.bfloat16)
                kk = torch.randn(B, kvh, L, hd, device=device, dtype=torch.bfloat16)
                v = torch.randn(B, kvh, L, hd, device=device, dtype=torch.bfloat16)
                us = timed(lambda: sdpa(q, kk, v, False), inner=5)
                kvbytes = B * L * kvh * hd * 2 * 2
                w.writerow([tag, "attn_decode", "bf16", "", "", "sdpa", B, "", "", B, 1, L, qh,
                            kvh, hd, f"{us:.2f}", "", f"{kvbytes / us / 1e3:.1f}"])
                rows += 1
        f.flush()
    return rows
