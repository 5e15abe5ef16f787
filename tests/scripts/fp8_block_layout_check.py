"""The scale-layout check of scripts/profile_fp8_block.py (find_layout) against an emulated
torch._scaled_mm, run by profile_fp8_block_test.sh (the CPU has no fp8 GEMM). Usage:
fp8_block_layout_check.py REPO_ROOT"""
import sys
sys.path.insert(0, sys.argv[1] + "/scripts")
import torch
import profile_fp8_block as p

def emulate(want_b_nk):
    def scaled_mm(a, b, scale_a, scale_b, out_dtype):
        if scale_a.stride(1) != 1:
            raise RuntimeError("scale_a must be row-major")
        if want_b_nk:
            if scale_b.shape[0] != (b.shape[1] + 127) // 128 or scale_b.stride(1) != 1:
                raise RuntimeError("scale_b must be [Nb, Kb] row-major")
            sb = scale_b.t()
        else:
            if scale_b.shape[0] != (b.shape[0] + 127) // 128 or scale_b.stride(0) != 1:
                raise RuntimeError("scale_b must be [Kb, Nb] column-major")
            sb = scale_b
        k, n = b.shape
        sa = scale_a.repeat_interleave(128, 1)[:, :k]
        sbb = sb.repeat_interleave(128, 0)[:k].repeat_interleave(128, 1)[:, :n]
        return (a.float() * sa) @ (b.float() * sbb)
    return scaled_mm

torch.float8_e4m3fn = torch.float32
dev = torch.device("cpu")
names = [n for n, _, _ in p.scale_layouts(torch, torch.ones(2, 2), torch.ones(2, 2))]
torch._scaled_mm = emulate(False)
i = p.find_layout(torch, dev, 384, 256)
assert names[i] == "a[M,Kb] row-major, b[Kb,Nb] col-major", names[i]
torch._scaled_mm = emulate(True)
i = p.find_layout(torch, dev, 384, 256)
assert names[i] == "a[M,Kb] row-major, b[Nb,Kb] row-major", names[i]
# an emulation that ignores the scales matches no layout: refused, naming each layout
torch._scaled_mm = lambda a, b, scale_a, scale_b, out_dtype: a.float() @ b.float()
try:
    p.find_layout(torch, dev, 384, 256)
except SystemExit as e:
    assert "under any scale layout" in str(e) and str(e).count("relative error") == 8, str(e)
else:
    raise AssertionError("a product without scales was accepted")
print("find_layout: picks the emulated layouts, refuses a scale-less product")
