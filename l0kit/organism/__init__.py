"""The model organism: a small transformer the kit trains from scratch on its own L0 traces (data, model, training, probes)."""
