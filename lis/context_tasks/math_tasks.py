"""The ``math`` variant of the data ablation (Table 7): generated arithmetic and word problems.

Free-form problems with a whole-number answer and no documents, in the ``math`` domain: the
sandbox shows them with the math prompt (answer ``\\boxed{}`` in ``/testbed/answer.txt``) and
the math-verify reward scores them, as the official RL environment routes a ``math*`` domain.
The entities are the generator's invented names. Same seed → same problems.
"""
from __future__ import annotations

import random

from lis.context_tasks.entities import PRODUCTS, person_name, place_name
from lis.tasks.schema import Task


def _problem(rng: random.Random) -> tuple[str, str, str]:
    """(statement, answer, Python expression printing the answer)."""
    a, b, c = rng.randint(12, 480), rng.randint(2, 60), rng.randint(2, 9)
    who, where, what = person_name(rng), place_name(rng), rng.choice(PRODUCTS)
    form = rng.randrange(7)
    if form == 0:
        x, y = rng.randint(100, 9999), rng.randint(100, 9999)
        return f"Compute {x} + {y}.", str(x + y), f"{x} + {y}"
    if form == 1:
        x, y = rng.randint(12, 999), rng.randint(12, 99)
        return f"Compute {x} \\times {y}.", str(x * y), f"{x} * {y}"
    if form == 2:
        total = a + b * c
        return (f"A workshop in {where} made {total} {what}. It sent {b} {what} to each of {c} shops. How many "
                f"{what} are left?", str(a), f"{total} - {b} * {c}")
    if form == 3:
        return (f"{who} buys {c} crates of {what} with {b} in each crate and already had {a}. How many {what} does "
                f"{who.split()[0]} have now?", str(a + b * c), f"{a} + {b} * {c}")
    if form == 4:
        n = rng.randint(10, 200)
        return f"What is the sum of the integers from 1 to {n}?", str(n * (n + 1) // 2), f"sum(range(1, {n} + 1))"
    if form == 5:
        x, m = rng.randint(100, 99999), rng.randint(3, 97)
        return f"What is the remainder when {x} is divided by {m}?", str(x % m), f"{x} % {m}"
    p = rng.choice((10, 20, 25, 40, 50, 75))
    base = rng.randint(2, 90) * 4
    return (f"The town of {where} has {base} lanterns and {p}% of them are lit. How many lanterns are lit?",
            str(base * p // 100), f"{base} * {p} // 100")


def math_tasks(n: int, seed: int, split: str = "train") -> list[Task]:
    """``n`` math problems (domain ``math``, qa_type ``free-form``, no documents)."""
    rng = random.Random(f"lis.data.context.math:{seed}")
    out = []
    for i in range(n):
        text, answer, expr = _problem(rng)
        out.append(Task(id=f"math-{seed}-{i:05d}", domain="math", problem_statement=text, ground_truth=answer,
                        qa_type="free-form",
                        meta={"split": split, "variant": "math", "source": "generated", "context_id": None,
                              "needs": {"op": "arithmetic", "expr": expr}}))
    return out
