"""Runs: the run folder format and its turns, the runner, batch files, reports and the comparison of runs."""
