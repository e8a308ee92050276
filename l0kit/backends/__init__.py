"""The model backends: chat templates within bounds, transformers, OpenAI-compatible servers, replayed answers, llama.cpp, the tiny test model."""
