"""Multi-head latent attention (MLA: DeepSeek-V2/V3/R1, Kimi-K2) for scripts/profile_gpu.py's
--sections mla: the kernels one MLA layer runs in vLLM, per tensor-parallel shard of its heads.

vLLM's MLA (vllm/model_executor/layers/mla.py, vllm/v1/attention/backends/mla/common.py) keeps
one latent vector per token and layer in the KV cache: kv_lora_rank (512) compressed K/V plus
qk_rope_head_dim (64) of RoPE'd key, the same on every TP rank. Per layer it runs
  - the down projections fused_qkv_a_proj (hidden -> q_lora_rank + kv_lora_rank + rope; replicated
    on every rank) and the up projection q_b_proj (q_lora_rank -> heads/tp x (nope + rope)), and
    o_proj (heads/tp x v_head_dim -> hidden): dense GEMMs, kind linear here;
  - decode: the "absorbed" form: q_nope is multiplied into the latent space by W_UK (a batched
    GEMM over heads, [B, 128] x [128, 512] per head), attention runs as MQA over the latent cache
    (query and key head dim 576 = 512 + 64, value head dim 512, one KV head), and W_UV maps the
    512-wide output back to v_head_dim (kind mla_absorb, ops w_uk_bmm / w_uv_bmm; kind mla_decode);
  - prefill of new tokens: K/V decompressed by kv_b_proj (kv_lora_rank -> heads/tp x (nope + v);
    kind linear) and ordinary causal attention with q/k head dim 192 and v head dim 128 (kind
    mla_prefill).

The decode kernel here is a split-KV flash-decoding kernel written in Triton (the same algorithm
as vLLM's TRITON_MLA backend, vllm/attention/ops/triton_decode_attention.py: stage 1 per KV split,
stage 2 merging the splits by log-sum-exp), checked against the unfused reference on the GPU
before it is timed; op triton_mla. Where Triton is missing (the CPU test) or the check fails, the
unfused reference is timed instead (op bmm_softmax: two batched GEMMs and a softmax, which
FlashMLA / CUTLASS MLA beat): the op column always says which. The prefill attention is PyTorch
SDPA with v zero-padded to the q/k head dim (what vLLM does for FlashAttention builds that need
equal head dims), op sdpa_causal_padv.
"""
import sys
import time

# model: (hidden, q_lora_rank or 0, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim,
#         v_head_dim, attention heads, dense MLP width, shared experts' width, vocab), TP degrees
# of the heads. From the models' config.json (shared width = n_shared_experts x
# moe_intermediate_size).
MLA_MODELS = {
    "deepseek-v3": ((7168, 1536, 512, 128, 64, 128, 128, 18432, 2048, 129280), [1, 2, 4, 8]),
    "kimi-k2": ((7168, 1536, 512, 128, 64, 128, 64, 18432, 2048, 163840), [1, 2, 4, 8]),
    "deepseek-v2-lite": ((2048, 0, 512, 128, 64, 128, 16, 10944, 2816, 102400), [1, 2]),
}
TINY_MLA_MODELS = {"tiny-mla": ((64, 32, 32, 16, 16, 16, 4, 128, 32, 256), [1, 2])}


def mla_linear_shapes(dims, tp):
    """(op, N, K) of an MLA model's dense GEMMs on one TP rank (vLLM DeepseekV2MLAAttention and
    DeepseekV2MLP): the attention projections, the dense layers' MLP, the shared experts and the
    LM head."""
    hidden, q_lora, kv_lora, nope, rope, v_dim, heads, dense, shared, vocab = dims
    h = heads // tp
    if q_lora:
        ops = [("fused_qkv_a_proj", q_lora + kv_lora + rope, hidden),
               ("q_b_proj", h * (nope + rope), q_lora)]
    else:  # no query compression (DeepSeek-V2-Lite): q_proj and kv_a_proj_with_mqa
        ops = [("q_proj", h * (nope + rope), hidden), ("kv_a_proj_with_mqa", kv_lora + rope, hidden)]
    ops += [("kv_b_proj", h * (nope + v_dim), kv_lora), ("o_proj", hidden, h * v_dim)]
    ops += [("gate_up_proj", 2 * dense // tp, hidden), ("down_proj", hidden, dense // tp),
            ("shared_experts_gate_up", 2 * shared // tp, hidden),
            ("shared_experts_down", hidden, shared // tp), ("lm_head", vocab // tp, hidden)]
    return ops


def make_triton_mla(torch):
    """The split-KV MLA decode kernel, or None without Triton."""
    try:
        import triton
        import triton.language as tl
    except Exception:  # noqa: BLE001 (no Triton, or a Triton that does not load)
        return None

    @triton.jit
    def stage1(Q, KV, O, LSE, sqb, sqh, skb, skn, sob, soh, sos, slb, slh, L, H, split_len,
               sm_scale, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, D_LAT: tl.constexpr,
               D_ROPE: tl.constexpr):
        b = tl.program_id(0)
        hb = tl.program_id(1)
        s = tl.program_id(2)
        offs_h = hb * BLOCK_H + tl.arange(0, BLOCK_H)
        mask_h = offs_h < H
        offs_d = tl.arange(0, D_LAT)
        offs_r = tl.arange(0, D_ROPE)
        q_base = Q + b * sqb + offs_h[:, None] * sqh
        q_lat = tl.load(q_base + offs_d[None, :], mask=mask_h[:, None], other=0.0)
        q_pe = tl.load(q_base + D_LAT + offs_r[None, :], mask=mask_h[:, None], other=0.0)
        start = s * split_len
        end = tl.minimum(start + split_len, L)
        m_i = tl.full([BLOCK_H], float("-inf"), dtype=tl.float32)
        l_i = tl.zeros([BLOCK_H], dtype=tl.float32)
        acc = tl.zeros([BLOCK_H, D_LAT], dtype=tl.float32)
        for n0 in range(start, end, BLOCK_N):
            offs_n = n0 + tl.arange(0, BLOCK_N)
            mask_n = offs_n < end
            kv_base = KV + b * skb + offs_n[:, None] * skn
            k_lat = tl.load(kv_base + offs_d[None, :], mask=mask_n[:, None], other=0.0)
            k_pe = tl.load(kv_base + D_LAT + offs_r[None, :], mask=mask_n[:, None], other=0.0)
            qk = tl.dot(q_lat, tl.trans(k_lat)) + tl.dot(q_pe, tl.trans(k_pe))
            qk = tl.where(mask_n[None, :], qk * sm_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, 1))
            p = tl.exp(qk - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            acc = acc * alpha[:, None] + tl.dot(p.to(k_lat.dtype), k_lat)
            l_i = l_i * alpha + tl.sum(p, 1)
            m_i = m_new
        o_ptr = O + b * sob + offs_h[:, None] * soh + s * sos + offs_d[None, :]
        tl.store(o_ptr, acc / l_i[:, None], mask=mask_h[:, None])
        tl.store(LSE + b * slb + offs_h * slh + s, m_i + tl.log(l_i), mask=mask_h)

    @triton.jit
    def stage2(O, LSE, OUT, sob, soh, sos, slb, slh, sxb, sxh, S, D_LAT: tl.constexpr):
        b = tl.program_id(0)
        h = tl.program_id(1)
        offs_d = tl.arange(0, D_LAT)
        m = tl.load(LSE + b * slb + h * slh)
        for s in range(1, S):  # the largest log-sum-exp first, then one weighted pass
            m = tl.maximum(m, tl.load(LSE + b * slb + h * slh + s))
        tot = m * 0.0
        acc = tl.zeros([D_LAT], dtype=tl.float32)
        for s in range(0, S):
            wgt = tl.exp(tl.load(LSE + b * slb + h * slh + s) - m)
            acc += wgt * tl.load(O + b * sob + h * soh + s * sos + offs_d)
            tot += wgt
        tl.store(OUT + b * sxb + h * sxh + offs_d, (acc / tot).to(OUT.dtype.element_ty))

    def run(q, kv, d_lat, sm_scale, sms):
        """q [B, H, d_lat + rope], kv [B, L, d_lat + rope] -> [B, H, d_lat]."""
        B, H, _ = q.shape
        L = kv.shape[1]
        block_h, block_n = 16, 32
        hb = triton.cdiv(H, block_h)
        want = max(1, triton.cdiv(2 * sms, B * hb))  # about two programs per SM
        split_len = max(block_n, triton.cdiv(triton.cdiv(L, want), block_n) * block_n)
        splits = triton.cdiv(L, split_len)  # every split holds at least one token
        o = torch.empty(B, H, splits, d_lat, device=q.device, dtype=torch.float32)
        lse = torch.empty(B, H, splits, device=q.device, dtype=torch.float32)
        out = torch.empty(B, H, d_lat, device=q.device, dtype=q.dtype)

        def call():
            stage1[(B, hb, splits)](q, kv, o, lse, q.stride(0), q.stride(1), kv.stride(0),
                                    kv.stride(1), o.stride(0), o.stride(1), o.stride(2),
                                    lse.stride(0), lse.stride(1), L, H, split_len, sm_scale,
                                    BLOCK_H=block_h, BLOCK_N=block_n, D_LAT=d_lat,
                                    D_ROPE=q.shape[2] - d_lat, num_warps=4, num_stages=2)
            stage2[(B, H)](o, lse, out, o.stride(0), o.stride(1), o.stride(2), lse.stride(0),
                           lse.stride(1), out.stride(0), out.stride(1), splits, D_LAT=d_lat)
            return out
        return call

    return run


def mla_reference(torch, q, kv, d_lat, sm_scale):
    """Unfused absorbed MLA decode: softmax(q kv^T * scale) kv[..., :d_lat]; q [B, H, D],
    kv [B, L, D]."""
    s = torch.matmul(q, kv.transpose(1, 2)) * sm_scale
    p = torch.softmax(s.float(), -1).to(q.dtype)
    return torch.matmul(p, kv[..., :d_lat])


def measure_mla(torch, F, device, timed, w, tag, configs, tokens, batches, lens, prefill_lens,
                fp8_ok, deadline, skip_linear=frozenset()):
    """One MLA layer's kernels per model and TP shard of the heads (module docstring). Rows:
    kind linear (the layer's dense GEMMs, bf16 and fp8 with per-tensor scales; shapes in
    `skip_linear` (dtype, m, n, k) left out), kind mla_absorb (op w_uk_bmm / w_uv_bmm: m_tokens =
    batch rows, n and k the per-head GEMM, batch = heads), kind mla_decode (op triton_mla or
    bmm_softmax: m_tokens = batch = sequences, q_len 1, kv_len = cached tokens, q_heads = heads on
    the rank, kv_heads 1, head_dim = kv_lora + rope, n = kv_lora (value width); gbps = latent cache
    bytes read / time) and kind mla_prefill (op sdpa_causal_padv: one sequence of L new tokens,
    head_dim = nope + rope, n = v_head_dim). Returns rows."""
    rows = 0
    bf16 = torch.bfloat16
    sms = (torch.cuda.get_device_properties(0).multi_processor_count
           if device.type == "cuda" else 1)
    triton_mla = make_triton_mla(torch) if device.type == "cuda" else None
    done = set(skip_linear)
    for model, (dims, tps) in configs.items():
        hidden, q_lora, kv_lora, nope, rope, v_dim, heads = dims[:7]
        d = kv_lora + rope
        scale = (nope + rope) ** -0.5
        if triton_mla is not None:  # check the kernel once per model before timing it
            try:
                for hh, ll in ((heads, 300), (max(1, heads // 16), 77)):
                    q = torch.randn(2, hh, d, device=device, dtype=bf16)
                    kv = torch.randn(2, ll, d, device=device, dtype=bf16)
                    got = triton_mla(q, kv, kv_lora, scale, sms)().float()
                    ref = mla_reference(torch, q, kv, kv_lora, scale).float()
                    err = (got - ref).abs().max().item() / max(1e-6, ref.abs().max().item())
                    if not err < 3e-2:  # bf16 outputs: a few roundings of 2^-8 each
                        raise RuntimeError(f"relative error {err:.3g} against the reference")
                print(f"mla: triton kernel checked for {model} (relative error {err:.2g})",
                      file=sys.stderr, flush=True)
            except Exception as e:  # noqa: BLE001 (time the reference instead)
                print("mla triton kernel off:", model, repr(e)[:300], file=sys.stderr, flush=True)
                triton_mla = None
        for tp in tps:
            h = heads // tp
            for op, n, k in mla_linear_shapes(dims, tp):
                for m in tokens:
                    if time.time() > deadline:
                        return rows
                    for dt in (["bf16", "fp8"] if fp8_ok else ["bf16"]):
                        if (dt, m, n, k) in done:
                            continue
                        done.add((dt, m, n, k))
                        try:
                            if dt == "bf16":
                                a = torch.randn(m, k, device=device, dtype=bf16)
                                b = torch.randn(n, k, device=device, dtype=bf16)
                                fn = lambda a=a, b=b: torch.matmul(a, b.t())  # noqa: E731
                                mm = m
                            else:
                                mm = max(16, (m + 15) // 16 * 16)
                                a = torch.randn(mm, k, device=device).to(torch.float8_e4m3fn)
                                b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn)
                                one = torch.ones((), device=device)
                                fn = lambda a=a, b=b, one=one: torch._scaled_mm(  # noqa: E731
                                    a, b.t(), scale_a=one, scale_b=one, out_dtype=bf16)
                            us = timed(fn)
                            moved = (mm * k + n * k) * (2 if dt == "bf16" else 1) + mm * n * 2
                            w.writerow([tag, "linear", dt, model, tp, op, m, n, k, "", "", "", "",
                                        "", "", f"{us:.2f}", f"{2 * mm * n * k / us / 1e6:.1f}",
                                        f"{moved / us / 1e3:.1f}"])
                            rows += 1
                        except Exception as e:  # noqa: BLE001 (report, go on)
                            print("mla linear fail", model, tp, op, m, dt, repr(e)[:160],
                                  file=sys.stderr, flush=True)
            for B in batches:  # the absorbed decode's per-head GEMMs
                if time.time() > deadline:
                    return rows
                for op, n, k in (("w_uk_bmm", kv_lora, nope), ("w_uv_bmm", v_dim, kv_lora)):
                    x = torch.randn(h, B, k, device=device, dtype=bf16)
                    wt = torch.randn(h, k, n, device=device, dtype=bf16)
                    us = timed(lambda x=x, wt=wt: torch.bmm(x, wt))
                    moved = h * (B * k + k * n + B * n) * 2
                    w.writerow([tag, "mla_absorb", "bf16", model, tp, op, B, n, k, h, "", "", h,
                                "", "", f"{us:.2f}", f"{2 * h * B * n * k / us / 1e6:.1f}",
                                f"{moved / us / 1e3:.1f}"])
                    rows += 1
            for B in batches:  # decode attention over the latent cache
                for L in lens:
                    if time.time() > deadline:
                        return rows
                    try:
                        q = torch.randn(B, h, d, device=device, dtype=bf16)
                        kv = torch.randn(B, L, d, device=device, dtype=bf16)
                        if triton_mla is not None:
                            fn, op = triton_mla(q, kv, kv_lora, scale, sms), "triton_mla"
                        else:
                            fn = lambda q=q, kv=kv: mla_reference(  # noqa: E731
                                torch, q, kv, kv_lora, scale)
                            op = "bmm_softmax"
                        us = timed(fn, inner=5)
                        fl = 2 * B * h * L * (d + kv_lora)
                        w.writerow([tag, "mla_decode", "bf16", model, tp, op, B, kv_lora, "", B,
                                    1, L, h, 1, d, f"{us:.2f}", f"{fl / us / 1e6:.1f}",
                                    f"{B * L * d * 2 / us / 1e3:.1f}"])
                        rows += 1
                        del q, kv
                    except Exception as e:  # noqa: BLE001 (report, go on)
                        print("mla decode fail", model, tp, B, L, repr(e)[:200], file=sys.stderr,
                              flush=True)
            for L in prefill_lens:  # prefill of new tokens, K/V decompressed
                if time.time() > deadline:
                    return rows
                try:
                    q = torch.randn(1, h, L, nope + rope, device=device, dtype=bf16)
                    kk = torch.randn(1, h, L, nope + rope, device=device, dtype=bf16)
                    v = torch.randn(1, h, L, v_dim, device=device, dtype=bf16)
                    vp = F.pad(v, (0, nope + rope - v_dim))

                    def pre(q=q, kk=kk, vp=vp):
                        if hasattr(F, "scaled_dot_product_attention"):
                            return F.scaled_dot_product_attention(q, kk, vp, is_causal=True,
                                                                  scale=scale)
                        s = (q @ kk.transpose(-1, -2)) * scale  # PyTorch 1.x: unfused
                        mask = torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1)
                        return torch.softmax(s.masked_fill(mask, float("-inf")).float(),
                                             -1).to(q.dtype) @ vp
                    us = timed(pre, inner=5)
                    fl = 2 * h * L * L * (nope + rope + v_dim) / 2
                    w.writerow([tag, "mla_prefill", "bf16", model, tp, "sdpa_causal_padv", L,
                                v_dim, "", 1, L, L, h, h, nope + rope, f"{us:.2f}",
                                f"{fl / us / 1e6:.1f}", ""])
                    rows += 1
                except Exception as e:  # noqa: BLE001 (report, go on)
                    print("mla prefill fail", model, tp, L, repr(e)[:200], file=sys.stderr,
                          flush=True)
    return rows
