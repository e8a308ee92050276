import pytest

def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run slow / model / server tests")

def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"): return
    skip = pytest.mark.skip(reason="needs --runslow")
    for item in items:
        if any(k in item.keywords for k in ("slow", "model", "server")): item.add_marker(skip)
