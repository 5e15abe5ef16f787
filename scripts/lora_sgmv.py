"""Multi-LoRA kernels for a batch whose tokens carry different adapters: SGMV (segmented gather
matrix-vector) shrink and expand, written in Triton for scripts/profile_lora_verify.py, with a
PyTorch reference that is also the fallback where Triton is missing.

vLLM runs a LoRA layer's extra work in two kernels (the Punica design, vllm/lora/ops/triton_ops:
lora_shrink then lora_expand): for each token t with adapter a(t), the shrink projects the
layer's input onto the adapter's rank-R subspace, z[t] = scale · x[t] @ A[a(t)]^T, kept in fp32;
the expand adds the adapter's output, out[t] += z[t] @ B[a(t)]^T. A layer with several slices
(qkv_proj: q, k, v; gate_up_proj: gate, up) has one A and one B per slice; all slices read the
same input.

The tokens of a batch are grouped by adapter into segments (vLLM sorts them so); segment s is
rows seg_start[s] .. seg_start[s + 1] - 1, all with adapter seg_lora[s]. Layouts here:
  x    [T, K]                the layer's input, one row per token
  A    [L, S·R, K]           the L adapter slots' shrink weights, the S slices stacked on rows
  z    [T, S·R] fp32         the shrink output: slice s of token t at columns s·R .. s·R + R - 1
  B    [L, N, R]             the expand weights, the slices' output columns stacked (N = Σ n_s)
  out  [T, N]                the layer's output, slice s at columns off[s] .. off[s + 1] - 1
The shrink is then one segmented GEMM (N = S·R); the expand runs one program grid per slice,
since each slice reads its own R columns of z.

The kernels (this file's own design):
  shrink: a program per (segment, block of its rows, block of the S·R columns, K split); it
    walks its share of K in BLOCK_K steps and accumulates in fp32. With few tokens (decode) the
    GEMM is thin (M ≤ 16, N = S·R small) and K long, so K is split over SPLIT_K programs whose
    partial sums are added atomically into z (zeroed first).
  expand: a program per (segment, block of rows, slice × block of the slice's columns); it
    loads the slice's z block, casts it to the weights' dtype, multiplies over R and adds the
    result to out (read, add, write: no other program writes the same elements).
tl.dot needs blocks of at least 16 in every dimension: smaller ranks and slices are masked.
"""

try:
    import triton
    import triton.language as tl
except ImportError:  # no Triton: the PyTorch reference only
    triton = None


def segments(torch, tokens, adapters, device):
    """(seg_start int32 [D + 1], seg_lora int32 [D], longest segment): `tokens` tokens spread
    as evenly as possible over `adapters` adapters (slots 0 .. D - 1), grouped by adapter; the
    first tokens % D segments hold one token more. REQUIRES: 1 <= adapters <= tokens."""
    base, extra = divmod(tokens, adapters)
    lengths = [base + (1 if s < extra else 0) for s in range(adapters)]
    starts = [0]
    for n in lengths:
        starts.append(starts[-1] + n)
    return (torch.tensor(starts, dtype=torch.int32, device=device),
            torch.tensor(list(range(adapters)), dtype=torch.int32, device=device), max(lengths))


def _ints(v):
    """A list of ints from a tensor or a list. The fallback's callables get lists: a tensor read
    on the host inside a CUDA graph capture would fail."""
    return v.tolist() if hasattr(v, "tolist") else list(v)


def shrink_reference(torch, x, a, seg_start, seg_lora, scale):
    """z [T, S·R] fp32 = scale · x @ A[adapter]^T, one matmul per segment (the fallback);
    seg_start and seg_lora as tensors or lists."""
    z = torch.zeros(x.shape[0], a.shape[1], device=x.device, dtype=torch.float32)
    starts = _ints(seg_start)
    for s, lora in enumerate(_ints(seg_lora)):
        lo, hi = starts[s], starts[s + 1]
        z[lo:hi] = (x[lo:hi] @ a[lora].t()).float() * scale
    return z


def expand_reference(torch, z, b, seg_start, seg_lora, offsets, rank, out):
    """out[:, off[s]:off[s+1]] += z[:, s·R:(s+1)·R] @ B[adapter, off[s]:off[s+1]]^T for each
    slice s and segment (the fallback); z is cast to B's dtype first, as the kernel does."""
    starts = _ints(seg_start)
    for seg, lora in enumerate(_ints(seg_lora)):
        lo, hi = starts[seg], starts[seg + 1]
        for s in range(len(offsets) - 1):
            zs = z[lo:hi, s * rank:(s + 1) * rank].to(b.dtype)
            out[lo:hi, offsets[s]:offsets[s + 1]] += zs @ b[lora, offsets[s]:offsets[s + 1]].t()
    return out


if triton is not None:
    @triton.jit
    def _shrink_kernel(x_ptr, a_ptr, z_ptr, seg_start_ptr, seg_lora_ptr, N, K, scale,
                       stride_xm, stride_xk, stride_al, stride_an, stride_ak, stride_zm,
                       stride_zn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, SPLIT_K: tl.constexpr):
        seg = tl.program_id(0)
        pid_m = tl.program_id(1)
        pid_nk = tl.program_id(2)
        pid_n = pid_nk // SPLIT_K
        pid_k = pid_nk % SPLIT_K
        row_end = tl.load(seg_start_ptr + seg + 1)
        lora = tl.load(seg_lora_ptr + seg)
        rows = tl.load(seg_start_ptr + seg) + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < row_end
        col_ok = cols < N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(pid_k * BLOCK_K, K, BLOCK_K * SPLIT_K):
            ks = k0 + tl.arange(0, BLOCK_K)
            k_ok = ks < K
            xv = tl.load(x_ptr + rows[:, None] * stride_xm + ks[None, :] * stride_xk,
                         mask=row_ok[:, None] & k_ok[None, :], other=0.0)
            # A's block read as [BLOCK_K, BLOCK_N] (rows of A are output columns)
            av = tl.load(a_ptr + lora * stride_al + cols[None, :] * stride_an
                         + ks[:, None] * stride_ak, mask=k_ok[:, None] & col_ok[None, :],
                         other=0.0)
            acc += tl.dot(xv, av)
        acc = acc * scale
        z_ptrs = z_ptr + rows[:, None] * stride_zm + cols[None, :] * stride_zn
        ok = row_ok[:, None] & col_ok[None, :]
        if SPLIT_K == 1:
            tl.store(z_ptrs, acc, mask=ok)
        else:
            tl.atomic_add(z_ptrs, acc, mask=ok)

    @triton.jit
    def _expand_kernel(z_ptr, b_ptr, out_ptr, seg_start_ptr, seg_lora_ptr, off_ptr, R,
                       stride_zm, stride_zn, stride_bl, stride_bn, stride_br, stride_om,
                       stride_on, BLOCKS_PER_SLICE, BLOCK_M: tl.constexpr,
                       BLOCK_N: tl.constexpr, BLOCK_R: tl.constexpr):
        seg = tl.program_id(0)
        pid_m = tl.program_id(1)
        pid_sn = tl.program_id(2)
        sl = pid_sn // BLOCKS_PER_SLICE
        pid_n = pid_sn % BLOCKS_PER_SLICE
        row_end = tl.load(seg_start_ptr + seg + 1)
        lora = tl.load(seg_lora_ptr + seg)
        col_end = tl.load(off_ptr + sl + 1)
        rows = tl.load(seg_start_ptr + seg) + pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.load(off_ptr + sl) + pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        row_ok = rows < row_end
        col_ok = cols < col_end
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for r0 in range(0, R, BLOCK_R):
            rs = r0 + tl.arange(0, BLOCK_R)
            r_ok = rs < R
            bv = tl.load(b_ptr + lora * stride_bl + cols[None, :] * stride_bn
                         + rs[:, None] * stride_br, mask=r_ok[:, None] & col_ok[None, :],
                         other=0.0)
            zv = tl.load(z_ptr + rows[:, None] * stride_zm + (sl * R + rs[None, :]) * stride_zn,
                         mask=row_ok[:, None] & r_ok[None, :], other=0.0)
            acc += tl.dot(zv.to(bv.dtype), bv)
        o_ptrs = out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on
        ok = row_ok[:, None] & col_ok[None, :]
        tl.store(o_ptrs, tl.load(o_ptrs, mask=ok, other=0.0) + acc, mask=ok)


def _block(n, low=16, high=64):
    """A power-of-two block size for a dimension of n: at least 16 (tl.dot), at most `high`."""
    return max(low, min(high, triton.next_power_of_2(n)))


def make_shrink(torch, x, a, z, seg_start, seg_lora, longest, scale):
    """A callable that runs the Triton shrink into z (zeroing it first when K is split)."""
    T, K = x.shape
    N = a.shape[1]
    bm, bn, bk = _block(longest), _block(N), 64 if K >= 64 else _block(K)
    grid_m, grid_n = triton.cdiv(longest, bm), triton.cdiv(N, bn)
    # Split K until there are about 64 programs (a few per SM of a small batch's grid); at
    # least two K blocks per program.
    programs = seg_lora.shape[0] * grid_m * grid_n
    split_k = 1
    while programs * split_k * 2 <= 64 and K >= bk * split_k * 4:
        split_k *= 2
    grid = (seg_lora.shape[0], grid_m, grid_n * split_k)

    def run():
        if split_k > 1:
            z.zero_()
        _shrink_kernel[grid](x, a, z, seg_start, seg_lora, N, K, scale, x.stride(0), x.stride(1),
                             a.stride(0), a.stride(1), a.stride(2), z.stride(0), z.stride(1),
                             BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, SPLIT_K=split_k)
    return run


def make_expand(torch, z, b, out, seg_start, seg_lora, offsets, longest, rank):
    """A callable that runs the Triton expand, adding into out. offsets: the slices' output
    column bounds (a list of S + 1 ints)."""
    widest = max(offsets[s + 1] - offsets[s] for s in range(len(offsets) - 1))
    bm, bn, br = _block(longest), _block(widest, high=128), _block(rank)
    per_slice = triton.cdiv(widest, bn)
    off = torch.tensor(offsets, dtype=torch.int32, device=z.device)
    grid = (seg_lora.shape[0], triton.cdiv(longest, bm), (len(offsets) - 1) * per_slice)

    def run():
        _expand_kernel[grid](z, b, out, seg_start, seg_lora, off, rank, z.stride(0), z.stride(1),
                             b.stride(0), b.stride(1), b.stride(2), out.stride(0), out.stride(1),
                             per_slice, BLOCK_M=bm, BLOCK_N=bn, BLOCK_R=br)
    return run
