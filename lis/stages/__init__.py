"""The pipeline's stages: one module per stage, each holding the stage's whole declaration.

A stage module defines ``STAGE = Stage(...)`` (:class:`lis.stages.spec.Stage`): the command it runs,
the params sections it reads, its data inputs and outputs, and the code it runs. The registry
(:mod:`lis.stages.registry`) lists them in pipeline order and reads their declarations without
importing them; from it come ``dvc.yaml`` (generated: ``lis pipeline dvc --write``), the Snakemake
rules' code inputs and params (``stage_code`` / ``stage_params`` in ``workflow/rules/common.smk``),
the CLI's stage commands, and ``lis pipeline check``.

This package imports nothing: a stage's code is the stage's own module and what it imports, so
that an edit to one stage's declaration re-runs that stage alone.
"""
