"""The pipeline's stages: one module per stage, each holding the stage's whole declaration.

A stage module defines ``STAGE = Stage(...)`` (:class:`lis.stages.spec.Stage`): the command it runs,
the params sections it reads, its data inputs and outputs. The registry (:mod:`lis.stages.registry`)
reads the declarations without importing them and orders them by what each reads; from it come
``dvc.yaml`` and the Snakemake rules (both generated: ``lis pipeline write``), each stage's code
dependencies (computed from its command's imports), and the CLI's stage commands.

This package imports nothing: a stage's code is the stage's own module and what it imports, so
that an edit to one stage's declaration re-runs that stage alone.
"""
