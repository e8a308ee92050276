"""Bridges to the tools researchers already run: lm-evaluation-harness task packs, Inspect tasks, RL rewards and Hugging Face datasets."""
