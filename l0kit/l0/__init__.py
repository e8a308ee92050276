"""L0-Bench: the baby-Python grammar, generator, exact tracer, data sets, prompts, whole-trace scoring, tables and figures."""
