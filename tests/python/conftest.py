"""Shared fixtures of the Python tests. Run by ctest (python.pytest) with PYTHONPATH=build/python,
or by hand: PYTHONPATH=build/python /usr/bin/python3 -m pytest tests/python"""
import os

import pytest

import servesim

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def cli_binary():
    """The servesim executable of the build the module came from (build/servesim)."""
    path = os.path.abspath(os.path.join(os.path.dirname(servesim.__file__), "..", "..", "servesim"))
    assert os.access(path, os.X_OK), f"{path}: the servesim binary of this build is missing"
    return path


# A small, fast run (Llama-3.1-8B on one H100, 200 requests): tens of milliseconds.
SMALL = dict(model="llama-3.1-8b", gpu="h100-sxm", request_rate=10, num_prompts=200,
             random_input_len=512, random_output_len=64, seed=1)
