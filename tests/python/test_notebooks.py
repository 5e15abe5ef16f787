"""The notebooks as checked in: each opens with the question it answers and carries no outputs
(ctest's notebook.* tests execute them; outputs would make every run a diff)."""
import glob
import json
import os

import pytest

from conftest import REPO

NOTEBOOKS = sorted(glob.glob(os.path.join(REPO, "notebooks", "*.ipynb")))


def test_the_six_notebooks_exist():
    names = [os.path.basename(n) for n in NOTEBOOKS]
    for prefix in ("01_quickstart", "02_how_many_gpus", "03_max_num_seqs_what_if",
                   "04_calibrate_and_validate", "05_trace_replay", "06_bandwidth_math"):
        assert prefix + ".ipynb" in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_opens_with_a_question_and_has_no_outputs(path):
    with open(path) as f:
        nb = json.load(f)
    first = nb["cells"][0]
    title = "".join(first["source"]).splitlines()[0]
    assert first["cell_type"] == "markdown" and title.startswith("# ") and title.endswith("?")
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None
