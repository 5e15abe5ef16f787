# Sourced by the measure.sh scripts of hardware/measurements/*: checks that this machine's GPU is
# an H100 or H200, sets $tag (h100 / h200) for the file names, creates the output folder $1 and
# writes $1/env.txt (nvidia-smi, PyTorch / Triton versions, the date).
out=$1
export PYTHONUNBUFFERED=1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H200*) tag=h200 ;; *H100*) tag=h100 ;; *) echo "not an H100/H200: $gpu"; exit 1 ;; esac
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  date -u; } > "$out/env.txt" 2>&1
