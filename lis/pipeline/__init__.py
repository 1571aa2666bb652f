"""The files rendered from the stage registry (dvc.yaml, the Snakemake rules) and the check that they are current."""
from lis.pipeline.check import problems, stale, write

__all__ = ["problems", "stale", "write"]
