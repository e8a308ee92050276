import importlib.util
import pytest

# what `python -m llama_cpp.server` imports: llama-cpp-python and the pure-Python packages of its `[server]` extra
SERVER_PACKAGES = ('llama_cpp', 'fastapi', 'uvicorn', 'sse_starlette', 'starlette_context', 'pydantic_settings')

def missing_server_packages() -> list:
    "The server packages that are not importable here."
    return [p for p in SERVER_PACKAGES if importlib.util.find_spec(p) is None]

def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run slow / model tests")

def pytest_collection_modifyitems(config, items):
    "`slow` and `model` tests need --runslow; `server` tests (a real llama.cpp server) run by default, unless also slow."
    if config.getoption("--runslow"): return
    skip = pytest.mark.skip(reason="needs --runslow")
    for item in items:
        if any(k in item.keywords for k in ("slow", "model")): item.add_marker(skip)
