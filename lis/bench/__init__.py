"""Benchmarks that drive the agent, the sandbox or a model (above all of them): ``lis bench ...``."""
