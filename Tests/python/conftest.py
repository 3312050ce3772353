"""Fixtures: the real synchub binary on a free port (hubprocess.py)."""
import pytest
from hubprocess import Hub


@pytest.fixture
def hub():
    h = Hub()
    yield h
    h.stop()


@pytest.fixture
def make_hub():
    hubs = []

    def make(**kwargs):
        h = Hub(**kwargs)
        hubs.append(h)
        return h

    yield make
    for h in hubs:
        h.stop()
