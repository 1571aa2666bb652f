"""The offline scaffolding: what stands in for a hub model and a strong teacher where neither is at hand.

- :mod:`lis.offline.tokenizer`, :mod:`lis.offline.base`: the tiny Qwen3-shaped base (its tokenizer, its
  random-init weights); the smoke profile's ``base.source: tiny``.
- :mod:`lis.offline.random_model`: a random-init model of a published shape (``lis model random``), for
  the paper-scale rehearsals of lis/train/rehearsal and lis/train/plan.
- :mod:`lis.offline.teacher`: the scripted teacher, whose episodes in the real sandbox are the SFT data of
  the smoke profile (``lis train teacher``).
- :mod:`lis.offline.agent_check`: how an agent model behaves in the real loop (``lis train check``).

None of it runs at paper scale: there the base is a hub model and the SFT data a strong model's episodes.
lis/train imports from here (its rehearsals, the test suite's tiny agent in lis/train/tiny_agent.py);
nothing here imports lis/train.
"""
