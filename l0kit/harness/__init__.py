"""The shared harness: prompts, models and backends, sandbox, benchmark protocol and registry, run folders, runner, scoring, figures, command line."""
