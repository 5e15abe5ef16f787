"""The device side of scripts/profile_gpu.py and the scripts beside it: the gpu tag of the
device, the timer (CUDA-graph replays on a GPU, wall clock on the CPU) and attention through
PyTorch SDPA with a fallback for PyTorch versions without it or without enable_gqa."""
import statistics
import time

def device_tag(torch, device):
    if device.type != "cuda":
        return device.type
    name = torch.cuda.get_device_name(0)
    if "H200" in name:
        return "h200"
    if "H100" in name:
        return "h100"
    return name.replace(" ", "_")


def make_timer(torch, device):
    def timed_cuda(fn, inner=10, reps=7):
        fn()
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(inner):
                fn()
        g.replay()
        torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b) * 1e3 / inner)
        del g
        return statistics.median(ts)

    def timed_cpu(fn, inner=10, reps=7):
        fn()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            ts.append((time.perf_counter() - t0) * 1e6 / inner)
        return statistics.median(ts)

    return timed_cuda if device.type == "cuda" else timed_cpu


def make_sdpa(torch, F, device):
    """(sdpa, has_sdpa): sdpa(q, k, v, causal) over [batch, heads, len, head_dim] tensors with
    K/V heads dividing the query heads; causal masks the upper right (q = kv). has_sdpa is False
    on PyTorch 1.x, where the same math runs unfused (only for testing the scripts: its times are
    not a flash-attention kernel's)."""
    has_sdpa = hasattr(F, "scaled_dot_product_attention")  # PyTorch >= 2.0
    has_gqa = False
    if has_sdpa:
        try:
            F.scaled_dot_product_attention(*(torch.zeros(1, 2, 1, 8, device=device),) * 3,
                                           enable_gqa=True)
            has_gqa = True
        except TypeError:  # PyTorch < 2.5
            pass

    def sdpa(q, k, v, causal):
        if has_gqa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        rep = q.shape[1] // k.shape[1]  # expand K/V heads to the query heads
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        if has_sdpa:
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        # PyTorch 1.x (Debian bookworm's python3-torch): the same math unfused. Only for testing
        # the script; its times are not a flash-attention kernel's.
        s = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
        if causal:
            L = q.shape[-2]
            s = s.masked_fill(torch.ones(L, L, dtype=torch.bool, device=q.device).triu(1),
                              float("-inf"))
        return torch.softmax(s.float(), -1).to(q.dtype) @ v

    return sdpa, has_sdpa
