"""Shared fixtures: a small device and workload that run in milliseconds."""

import pathlib

import pytest

import ftlab

ROOT = pathlib.Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "crates" / "workload" / "tests" / "fixtures"

SMALL = """
seed = 7
[device]
chip = "small-slc"
blocks_per_plane = 64
[ftl]
kind = "pagemap"
[workload.generator]
kind = "uniform"
requests = 2000
"""


@pytest.fixture
def small():
    """A 2000-request uniform workload on a small SLC device."""
    return ftlab.Config.from_toml(SMALL)


@pytest.fixture
def fixtures():
    return FIXTURES
