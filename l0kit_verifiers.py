"""The kit's verifiers taskset under a top-level name, since verifiers finds a taskset by one:
`vf-eval l0kit_verifiers --env.taskset.benchmark l0 --env.taskset.data DIR --env.taskset.split short ...`
(the bridge itself is `l0kit.bridges.verifiers`, from `nbs/64_bridges_verifiers.ipynb`)."""
from l0kit.bridges.verifiers import *  # noqa: F401,F403
from l0kit.bridges.verifiers import __all__  # noqa: F401
