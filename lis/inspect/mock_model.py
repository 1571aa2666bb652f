"""``lis-mock/model``: an offline Inspect model for trying the lis tasks without a model server.

    inspect eval lis/math --model lis-mock/model -T limit=1

A fixed policy (sandbox modes: list ``/testbed``, write ``lis-mock`` to the answer file, submit;
vanilla: answer ``lis-mock``), so every sample runs a real episode and is scored. Usage is estimated
at 4 characters a token: Inspect's own ``mockllm/model`` downloads tiktoken's encoding on first use,
so offline every call fails.
"""
from __future__ import annotations

from typing import Any

from inspect_ai.model import (ChatMessageAssistant, ChatMessageTool, GenerateConfig, ModelAPI, ModelOutput, ModelUsage,
                              modelapi)

ANSWER = "lis-mock"
COMMAND = f"ls /testbed; printf '%s' {ANSWER} > /testbed/answer.txt"


class LisMockAPI(ModelAPI):
    """The fixed policy of the module doc, as an Inspect model API (``--model lis-mock/<any name>``)."""

    def __init__(self, model_name: str, base_url: str | None = None, api_key: str | None = None,
                 config: GenerateConfig = GenerateConfig(), **model_args: Any):
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(self, input, tools, tool_choice, config) -> ModelOutput:
        names = {t.name for t in tools}
        ran = sum(isinstance(m, ChatMessageTool) for m in input)
        model = f"lis-mock/{self.model_name}"
        if "execute_bash" not in names:
            out = ModelOutput.from_content(model, ANSWER)
        elif ran == 0:
            out = ModelOutput.for_tool_call(model, "execute_bash", {"command": COMMAND})
        else:
            out = ModelOutput.for_tool_call(model, "submit", {})
        seen = sum(len(m.text) for m in input) + sum(len(t.description or "") for t in tools)
        said = len(ANSWER) + len(COMMAND) if isinstance(out.message, ChatMessageAssistant) else 0
        out.usage = ModelUsage(input_tokens=seen // 4 + 1, output_tokens=said // 4 + 1,
                               total_tokens=seen // 4 + said // 4 + 2)
        return out


@modelapi(name="lis-mock")
def lis_mock() -> type[ModelAPI]:
    return LisMockAPI
