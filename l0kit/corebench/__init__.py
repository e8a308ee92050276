"""CoRE: a general Python tracer, implementation diversity, intermediate-state probes, prompts and the CoRE metrics."""
