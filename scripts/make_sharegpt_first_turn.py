#!/usr/bin/env python3
"""Makes data/sharegpt_first_turn/sharegpt_first_turn_llama3.csv, the (prompt, output) token counts
that `--dataset-name sharegpt` samples when no --dataset-path is given, from measured vLLM runs.

Source: the 16 result files of data/realdata/llmk8s_llama33_70b_a100x8 (github.com/surajssd/llm-k8s,
Apache-2.0; data/realdata/README.md §1): `benchmark_serving.py --backend vllm --dataset-name sharegpt
--dataset-path ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 200` (vLLM 0.8.3, seed 0)
against Llama-3.3-70B-Instruct at 4 deployments x 4 request rates. vLLM's ShareGPT sampler takes
each entry's first turn as the prompt and its second as the completion and keeps the pairs that
pass is_valid_sequence (vllm/benchmarks/datasets.py ShareGPTDataset.sample,
vllm/benchmarks/dataset_utils.py is_valid_sequence), so every file sends the same 200 first-turn
prompts. A file's `input_lens[i]` is request i's prompt in tokens of the Llama-3.3 tokenizer (its
`tokenizer_id`); `output_lens[i]` is the number of tokens the server generated for it (vLLM's
actual_output_lens; the runs did not pass --ignore-eos, so outputs vary a little between runs).

Every request of every file becomes one row, unchanged and in file order: 16 x 200 = 3,200 rows.
Nothing is filtered, rounded or invented. Columns: prompt_tokens, output_tokens (what servesim
reads), run (the result file's folder and rate), request (its index in the file's arrays).

Usage: scripts/make_sharegpt_first_turn.py          (rewrites the CSV, prints its means)
       scripts/make_sharegpt_first_turn.py --check  (exit 1 if the checked-in CSV differs)
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "data", "realdata", "llmk8s_llama33_70b_a100x8")
OUT = os.path.join(ROOT, "data", "sharegpt_first_turn", "sharegpt_first_turn_llama3.csv")


def rows():
    files = sorted(glob.glob(os.path.join(SOURCE, "*", "serving_*_sharegpt_qps_*.json")))
    if len(files) != 16:
        sys.exit(f"make_sharegpt_first_turn: expected 16 result files under {SOURCE}, found "
                 f"{len(files)}")
    prompts = None
    out = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        ins, outs = d["input_lens"], d["output_lens"]
        if len(ins) != len(outs) or d["completed"] != len(ins):
            sys.exit(f"make_sharegpt_first_turn: {path}: {len(ins)} input_lens, {len(outs)} "
                     f"output_lens, {d['completed']} completed; expected equal counts")
        if prompts is None:
            prompts = ins
        elif ins != prompts:
            sys.exit(f"make_sharegpt_first_turn: {path}: input_lens differ from the first file's; "
                     "expected the same 200 prompts in every run")
        folder = os.path.basename(os.path.dirname(path))
        rate = re.search(r"_qps_([0-9a-z]+)\.json$", path).group(1)
        for i, (p, o) in enumerate(zip(ins, outs)):
            out.append((p, o, f"{folder}/qps_{rate}", i))
    return out


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] not in ([], ["--check"]):
        sys.exit("usage: scripts/make_sharegpt_first_turn.py [--check]")
    table = rows()
    text = "prompt_tokens,output_tokens,run,request\n" + "".join(
        f"{p},{o},{run},{i}\n" for p, o, run, i in table)
    n = len(table)
    mean_in = sum(r[0] for r in table) / n
    mean_out = sum(r[1] for r in table) / n
    if check:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit(f"{os.path.relpath(OUT, ROOT)} differs from what "
                         "scripts/make_sharegpt_first_turn.py makes; rerun it")
    else:
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w", encoding="utf-8") as f:
            f.write(text)
    print(f"{os.path.relpath(OUT, ROOT)}: {n} rows, {len(set(r[2] for r in table))} runs; "
          f"mean prompt {mean_in:.2f}, mean output {mean_out:.2f} tokens")


if __name__ == "__main__":
    main()
