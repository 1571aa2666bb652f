"""Table 9's counts: verification phrases and structure markers per response."""
from __future__ import annotations

from lis.analysis.behaviour import count_patterns, load_rules, response_text, strip_code_fences
from tests.analysis.behaviour_helpers import episode

RULES = load_rules()

RESPONSE = """## Approach
We split the work.

---
1. Compute the sum.
2) Then the product.
- a note
* another

```python
# not a header
for i in range(3):
    print(i)  # let's verify inside code still counts
```

Let's verify: $$2 + 2 = 4$$ and \\[ 3 \\cdot 3 = 9 \\].
Let us verify again, and check that the units agree. Double-check: done. We double check once more.
***
"""


def test_counts_each_row_and_the_papers_combined_rows():
    c = count_patterns(RESPONSE, RULES)
    assert c["lets_verify"] == 3       # two in prose, one in a code comment (phrases count everywhere)
    assert c["check_that"] == 1 and c["double_check"] == 2
    assert c["headers"] == 1           # "# not a header" is inside a code fence
    assert c["separators"] == 2 and c["list_items"] == 4 and c["math_blocks"] == 2
    assert c["headers_separators"] == 3 and c["lists_math_blocks"] == 6
    assert set(c) == {r.id for r in RULES.reasoning} | set(RULES.combined)


def test_a_plain_answer_counts_nothing_and_fences_are_stripped():
    assert all(v == 0 for v in count_patterns("The answer is 42.", RULES).values())
    assert strip_code_fences("a\n```\n# x\n```\nb") == "a\n\nb"
    assert strip_code_fences("a\n```\n# unterminated") == "a\n"


def test_the_response_is_the_content_and_optionally_the_reasoning():
    rec = episode("## Final\nLet's verify.", mode="vanilla", termination="answered")
    rec.steps[0].reasoning = "Let's verify in thought."
    assert response_text(rec) == "## Final\nLet's verify."
    assert count_patterns(response_text(rec, include_reasoning=True), RULES)["lets_verify"] == 2
