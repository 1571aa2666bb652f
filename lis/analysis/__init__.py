"""Analyses over finished episodes (above the agent, below the stages): efficiency
(``efficiency_*`` modules; docs/efficiency.md) and behaviour (the :mod:`lis.analysis.behaviour`
package; docs/behaviour.md).

Nothing is imported here on purpose: a stage that uses one analysis must not depend on the code
of another (``lis pipeline check`` counts every package ``__init__`` a stage's imports run).
"""
