"""The tiny offline model: its tokenizer and its base (random-init Qwen3) build."""
