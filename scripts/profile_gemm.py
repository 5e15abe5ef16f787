"""One dense GEMM as scripts/profile_gpu.py and scripts/profile_mla.py time it."""


def make_gemm(torch, device, dtype, m, n, k):
    """(fn, rows): a [m, k] x [k, n] GEMM in dtype bf16 (torch.matmul into a preallocated output)
    or fp8 (torch._scaled_mm, e4m3, per-tensor scales, bf16 out; M padded to a multiple of 16,
    which _scaled_mm needs), and the rows it runs at."""
    if dtype == "bf16":
        a = torch.randn(m, k, device=device, dtype=torch.bfloat16)
        b = torch.randn(n, k, device=device, dtype=torch.bfloat16)
        o = torch.empty(m, n, device=device, dtype=torch.bfloat16)
        return (lambda: torch.matmul(a, b.t(), out=o)), m
    mm = max(16, (m + 15) // 16 * 16)
    a = torch.randn(mm, k, device=device).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=device).to(torch.float8_e4m3fn)
    one = torch.ones((), device=device)
    return (lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                     out_dtype=torch.bfloat16)), mm
