"""SX-Bench-style step counting: run_steps instrumentation, the atomic library, composite programs and the SX benchmark."""
