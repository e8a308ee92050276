__version__ = "0.1.0"

# Module paths of earlier releases, importable for one more release with a DeprecationWarning (README: the names table).
# `l0kit.core` read as "the kit's core": CoRE's subpackage is `l0kit.corebench`; data modules are `dataset` everywhere.
import importlib as _importlib, importlib.abc as _abc, importlib.util as _util, sys as _sys, warnings as _warnings

_MOVED = {'l0kit.core.data': 'l0kit.corebench.dataset', 'l0kit.core': 'l0kit.corebench', 'l0kit.sx.data': 'l0kit.sx.dataset',
          'l0kit.harness.hf': 'l0kit.harness.transformers_backend', 'l0kit.bridges.hf': 'l0kit.bridges.hf_datasets'}

def _new_name(name: str):
    for old, new in _MOVED.items():
        if name == old or name.startswith(old + '.'): return new + name[len(old):]
    return None

class _Moved(_abc.MetaPathFinder, _abc.Loader):
    "Imports an old module path as the module that now holds its code (the same module object, not a copy)."
    def find_spec(self, name, path=None, target=None):
        return _util.spec_from_loader(name, self) if name.startswith('l0kit.') and _new_name(name) else None
    def create_module(self, spec):
        new = _new_name(spec.name)
        _warnings.warn(f"{spec.name} is now {new}; the old name goes in the next release", DeprecationWarning, stacklevel=2)
        return _importlib.import_module(new)
    def exec_module(self, module): pass

if not any(isinstance(f, _Moved) for f in _sys.meta_path): _sys.meta_path.insert(0, _Moved())  # before the path finders: never a second copy
