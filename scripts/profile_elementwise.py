"""The elementwise chain between a layer's GEMMs, as vLLM V1 runs it compiled, for
scripts/profile_gpu.py's --sections elementwise."""
import sys
import time

def elementwise_bytes(hidden, width, q_heads, kv_heads, head_dim, fp8):
    """Bytes one token moves through a layer's elementwise chain (the ideal traffic; the gbps
    column): two fused residual-add + RMSNorms (read x and residual, write residual and the
    normed output, fp8 when the GEMMs are), RoPE on q and k (read + write), the KV-cache write
    (read k, v; write them), SiLU·mul (read gate and up, write the product) and, under fp8, the
    quantisation of the attention output before o_proj. Same formula as servesim's
    elementwise_bytes_per_token (hardware/kernel_profile.h)."""
    a, o = 2, (1 if fp8 else 2)
    b = 2 * hidden * (3 * a + o) + 2 * (q_heads + kv_heads) * head_dim * a
    b += 4 * kv_heads * head_dim * a + width * (2 * a + o)
    if fp8:
        b += q_heads * head_dim * (a + 1)
    return b


def measure_elementwise(torch, F, device, timed, w, tag, configs, tokens, fp8_ok, compile_ok,
                        deadline, skip=frozenset()):
    """The elementwise kernels between a layer's GEMMs, as vLLM V1 runs them: its ops' native
    PyTorch forms (RMSNorm.forward_native with the residual add, RotaryEmbedding.forward_native
    neox style, SiluAndMul.forward_native, static per-tensor fp8 quantisation), compiled by
    torch.compile/Inductor with the token dimension dynamic (vLLM V1 compiles the model so, with
    custom ops off by default), plus the KV-cache write (reshape_and_cache_flash: a scatter into
    the cache by slot, eager here). One row per (model, TP, dtype, tokens): op layer_compiled (what
    servesim reads) and layer_eager (the same chain unfused, for reference); a shape in `skip`
    (measured_keys) is not measured again. Returns rows."""
    rows = 0
    bf16 = torch.bfloat16
    for model, (dims, tps, dtypes) in configs.items():
        hidden, inter, qh_all, kvh_all, hd, topk = dims
        for tp in tps:
            qh, kvh = qh_all // tp, max(1, kvh_all // tp)
            inter_rank = inter // tp
            for dt in dtypes:
                fp8 = dt == "fp8"
                if fp8 and not fp8_ok:
                    continue
                if (dt, hidden, topk * inter_rank, qh, kvh, hd) in skip:
                    continue
                eps = 1e-5

                def add_rms(x, res, weight, scale):
                    xf = x.to(torch.float32) + res.to(torch.float32)
                    new_res = xf.to(bf16)
                    var = xf.pow(2).mean(-1, keepdim=True)
                    y = (xf * torch.rsqrt(var + eps)).to(bf16) * weight
                    if fp8:
                        y = (y.to(torch.float32) / scale).clamp(-448.0, 448.0).to(
                            torch.float8_e4m3fn)
                    return y, new_res

                def rope(cos_sin, x, heads):
                    x = x.reshape(x.shape[0], heads, hd)
                    cos, sin = cos_sin.chunk(2, dim=-1)
                    cos, sin = cos.unsqueeze(-2), sin.unsqueeze(-2)
                    x1, x2 = x.chunk(2, dim=-1)
                    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)

                def chain(mlp_out, o_out, res, qkv, positions, cache, gate_up, attn_out, w1, w2,
                          scale):
                    x, res = add_rms(mlp_out, res, w1, scale)  # input_layernorm
                    q, k, v = qkv.split([qh * hd, kvh * hd, kvh * hd], dim=-1)
                    cos_sin = cache.index_select(0, positions)
                    q, k = rope(cos_sin, q, qh), rope(cos_sin, k, kvh)
                    y, res = add_rms(o_out, res, w2, scale)  # post_attention_layernorm
                    d = gate_up.shape[-1] // 2
                    act = F.silu(gate_up[..., :d]) * gate_up[..., d:]
                    if fp8:
                        act = (act.to(torch.float32) / scale).clamp(-448.0, 448.0).to(
                            torch.float8_e4m3fn)
                        attn_q = (attn_out.to(torch.float32) / scale).clamp(-448.0, 448.0).to(
                            torch.float8_e4m3fn)
                        return x, q, k, v.reshape(v.shape[0], kvh, hd), y, res, act, attn_q
                    return x, q, k, v.reshape(v.shape[0], kvh, hd), y, res, act, attn_out

                variants = [("layer_eager", chain)]
                if compile_ok:
                    # A fresh compile per configuration (dynamo would count each one as a
                    # recompile of `chain` and fall back to eager past its limit); static shapes
                    # but the token dimension, as vLLM marks it.
                    torch._dynamo.reset()
                    variants.insert(0, ("layer_compiled", torch.compile(chain, dynamic=False)))
                for op, fn_chain in variants:
                    for m in tokens:
                        if time.time() > deadline:
                            return rows
                        try:
                            mk = lambda *shape: torch.randn(*shape, device=device, dtype=bf16)  # noqa: E731
                            t = dict(mlp=mk(m, hidden), o=mk(m, hidden), res=mk(m, hidden),
                                     qkv=mk(m, (qh + 2 * kvh) * hd),
                                     pos=torch.randint(0, 4096, (m,), device=device),
                                     cache=mk(4096, hd), gate_up=mk(m * topk, 2 * inter_rank),
                                     attn=mk(m, qh * hd), w1=mk(hidden), w2=mk(hidden),
                                     scale=torch.ones((), device=device))
                            if op == "layer_compiled" and m > 1:
                                for key in ("mlp", "o", "res", "qkv", "pos", "gate_up", "attn"):
                                    torch._dynamo.mark_dynamic(t[key], 0)
                            kc = torch.zeros(m, kvh, hd, device=device, dtype=bf16)
                            vc = torch.zeros(m, kvh, hd, device=device, dtype=bf16)
                            slots = torch.randperm(m, device=device)

                            def step():
                                out = fn_chain(t["mlp"], t["o"], t["res"], t["qkv"], t["pos"],
                                               t["cache"], t["gate_up"], t["attn"], t["w1"],
                                               t["w2"], t["scale"])
                                kc.index_copy_(0, slots, out[2].reshape(m, kvh, hd))
                                vc.index_copy_(0, slots, out[3])

                            us = timed(step)
                            width = topk * inter_rank
                            per_tok = elementwise_bytes(hidden, width, qh, kvh, hd, fp8)
                            w.writerow([tag, "elementwise", dt, model, tp, op, m, hidden, width,
                                        "", "", "", qh, kvh, hd, f"{us:.2f}", "",
                                        f"{per_tok * m / us / 1e3:.1f}"])
                            rows += 1
                        except Exception as e:  # report, go on
                            print("elementwise fail", model, tp, dt, op, m, repr(e)[:200],
                                  file=sys.stderr, flush=True)
                            if op == "layer_compiled":
                                break
    return rows
