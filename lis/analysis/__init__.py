"""Analyses over finished episodes (above the agent, below the stages):

- efficiency: :mod:`lis.analysis.efficiency_tokens` (one episode's token and time split),
  :mod:`lis.analysis.efficiency_tables` (Tables 10 and 11), :mod:`lis.analysis.efficiency_storage`
  (Table 12), :mod:`lis.analysis.efficiency_stats` (intervals). Definitions: docs/efficiency.md.
- behaviour: :mod:`lis.analysis.behaviour` (a package: capability usage per turn, Figure 2,
  Tables 4, 8, 9; its public names are re-exported from its ``__init__``). Definitions and rules:
  docs/behaviour.md, lis/analysis/behaviour/patterns.yaml.

Nothing is imported here on purpose: a stage that uses one analysis must not depend on the code
of another (``lis pipeline check`` counts every package ``__init__`` a stage's imports run).
"""
