"""Training: the tiny offline model family, teacher data, SFT (Lightning), GRPO in the sandbox (TRL).

Models are backends only (``lis.models``); everything that makes training data or trains lives here.
"""
