import numpy as np
import pytest

import chiputil


@pytest.fixture(scope="session")
def edge():
    return chiputil.target("tpu_edge")


@pytest.fixture(scope="session")
def pro():
    return chiputil.target("tpu_pro")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
