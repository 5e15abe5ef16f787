"""fp16 against bf16 GEMM and prefill-attention times on this GPU (the Argonne runs used
--dtype float16; the kernel tables are bf16). Writes CSV rows: op,m,n,k,bf16_us,fp16_us."""
import sys
import torch
import torch.nn.functional as F

sys.path.insert(0, "scripts")
import profile_gpu as pg  # noqa: E402

timed = pg.make_timer(torch, torch.device("cuda"))
w = sys.stdout
w.write("kind,op,m,n,k,bf16_us,fp16_us\n")
for op, n, k in pg.linear_shapes(pg.MODELS["llama-3.1-8b"], 1):
    for m in [1, 16, 64, 256, 1024, 4096]:
        t = {}
        for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
            a = torch.randn(m, k, device="cuda", dtype=dt)
            b = torch.randn(n, k, device="cuda", dtype=dt)
            o = torch.empty(m, n, device="cuda", dtype=dt)
            t[name] = timed(lambda: torch.matmul(a, b.t(), out=o))
        w.write(f"linear,{op},{m},{n},{k},{t['bf16']:.2f},{t['fp16']:.2f}\n")
for L in [512, 2048, 8192]:
    t = {}
    for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        q = torch.randn(1, 32, L, 128, device="cuda", dtype=dt)
        kv = torch.randn(1, 8, L, 128, device="cuda", dtype=dt)
        t[name] = timed(lambda: F.scaled_dot_product_attention(q, kv, kv, is_causal=True,
                                                               enable_gqa=True), inner=5)
    w.write(f"attn_prefill,sdpa_causal_32q_8kv,{L},,,{t['bf16']:.2f},{t['fp16']:.2f}\n")
