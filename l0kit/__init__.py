"""l0kit: procedural-correctness benchmarks for language models (L0-Bench, ProcBench, SX-style step counting, CoRE).

What a benchmark plugin needs imports from here: `from l0kit import Benchmark, Reading, FirstError, SimulatedModel,
Prompt, ConfigError, DataError`, and the helpers the tutorial (`nbs/50_tutorial_new_benchmark.ipynb`) uses. They are
loaded on first use, so `import l0kit` stays light.
"""
__version__ = "0.1.0"

# name -> module that defines it (the plugin API; imported when first asked for)
_API = {
    'Benchmark': 'l0kit.protocol.benchmark', 'Reading': 'l0kit.protocol.benchmark', 'FirstError': 'l0kit.protocol.benchmark',
    'ItemLayout': 'l0kit.protocol.benchmark', 'Option': 'l0kit.protocol.benchmark', 'answer_part': 'l0kit.protocol.benchmark',
    'first_difference': 'l0kit.protocol.benchmark', 'prefix_credit': 'l0kit.protocol.benchmark',
    'read_card': 'l0kit.protocol.benchmark', 'stream_seed': 'l0kit.protocol.benchmark',
    'get_benchmark': 'l0kit.protocol.benchmark', 'benchmark_names': 'l0kit.protocol.benchmark',
    'register_benchmark': 'l0kit.protocol.benchmark',
    'SimulatedModel': 'l0kit.protocol.models', 'Prompt': 'l0kit.protocol.prompt',
    'ConfigError': 'l0kit.protocol.config', 'DataError': 'l0kit.protocol.config', 'YamlConfig': 'l0kit.protocol.config',
    'check_value': 'l0kit.protocol.config', 'safe_name': 'l0kit.protocol.config',
}
__all__ = ['__version__', *_API]

def __getattr__(name: str):
    if name not in _API: raise AttributeError(f"module 'l0kit' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(_API[name]), name)
    globals()[name] = value  # once: later lookups do not come here
    return value

def __dir__(): return sorted(set(globals()) | set(_API))
