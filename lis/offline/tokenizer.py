"""A byte-level BPE tokenizer for the tiny model, trained offline on local text only.

The corpus is the first CPython standard-library sources (sorted by name) plus the warm-up's
scripted episodes under the real prompts, rendered by the chat template. Unlike GPT-2's, the
pre-tokenizer splits only at newlines and runs of spaces, so merges may cross words: a recurring
prompt phrase or the head of a tool call (``{"name": "execute_bash", "arguments": {"command": "``)
becomes one token, and a valid call is a few tokens long. Digits are single tokens (as Qwen's
tokenizer has them) and ``.``, ``,`` and ``'`` tokens of their own, so that a number or a name read
in a document is the same ids when the model writes it as an answer (a value that ends a sentence,
"1760.", would otherwise be other tokens than "1760": copying it would be impossible for a small
model). A newline is always a token of its own, so an assistant turn (after
``<|im_start|>assistant\n``) starts on a token boundary, as its labels in the warm-up need.
The chat template is TRL's copy of Qwen3-Instruct-2507's, byte for byte: TRL recognises a
template by its exact text, so its tool-call response parser applies (``add_response_schema``).
"""
from __future__ import annotations

import hashlib
import os
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lis.errors import LisError
from lis.models.toolcalls import arguments_as_dicts

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# Qwen adds these as (non-special) single tokens: a tool call starts with exactly one token.
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
TEMPLATE_NAME = "qwen3_instruct_2507.jinja"


def chat_template() -> str:
    """TRL's Qwen3-Instruct-2507 chat template text. Raises LisError when TRL lacks the file."""
    import trl

    path = Path(trl.__file__).parent / "chat_templates" / TEMPLATE_NAME
    if not path.is_file():
        raise LisError(f"TRL {trl.__version__} ships no chat_templates/{TEMPLATE_NAME}",
                       "install the pinned trl (requirements.lock)")
    return path.read_text(encoding="utf-8")


def stdlib_files(n: int) -> list[Path]:
    """The first ``n`` top-level ``.py`` files of this interpreter's standard library, by name."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return sorted(stdlib.glob("*.py"))[:n]


def corpus(files: list[Path], extra_texts: list[str]) -> Iterator[str]:
    """Tokenizer training text: the files, then ``extra_texts``."""
    for f in files:
        yield f.read_text(encoding="utf-8", errors="replace")
    yield from extra_texts


def corpus_sha256(files: list[Path], extra_texts: list[str]) -> str:
    h = hashlib.sha256()
    for text in corpus(files, extra_texts):
        h.update(text.encode("utf-8", errors="replace"))
        h.update(b"\0")
    return h.hexdigest()


def rendered_texts(conversations: list[tuple[list[dict[str, Any]], list[dict] | None]]) -> list[str]:
    """Conversations ``(messages, tools)`` rendered by the chat template and cut at the special and
    added tokens, which the tokenizer splits off before BPE: the merges then form over exactly
    the text BPE will see (role headers such as ``assistant\\n`` included)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    template = chat_template()
    cut = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS + ADDED_TOKENS))
    texts: list[str] = []
    for messages, tools in conversations:
        rendered = render_jinja_template([arguments_as_dicts(messages)], tools=tools, chat_template=template)[0][0]
        texts += [piece for piece in cut.split(rendered) if piece]
    return texts


def train_tokenizer(texts: Iterator[str], vocab_size: int, model_max_length: int):
    """A ``PreTrainedTokenizerFast`` (byte-level BPE, Qwen special tokens, TRL's Qwen3 chat template
    and the matching response template).

    Training runs on one thread (``RAYON_NUM_THREADS=1`` while it runs) so the merges, and the
    files written from them, are the same on every run.
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex("\n"), "merged_with_previous"),
                                                 pre_tokenizers.Split(Regex(" {2,}"), "isolated"),
                                                 pre_tokenizers.Digits(individual_digits=True),
                                                 pre_tokenizers.Split(Regex("[.,']"), "isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL_TOKENS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    old = os.environ.get("RAYON_NUM_THREADS")
    os.environ["RAYON_NUM_THREADS"] = "1"
    try:
        tok.train_from_iterator(texts, trainer=trainer)
    finally:
        if old is None:
            os.environ.pop("RAYON_NUM_THREADS", None)
        else:
            os.environ["RAYON_NUM_THREADS"] = old
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                 bos_token=None, unk_token=None, model_max_length=model_max_length,
                                 padding_side="left", clean_up_tokenization_spaces=False)
    hf.add_tokens(ADDED_TOKENS, special_tokens=False)
    hf.chat_template = chat_template()
    from trl.chat_template_utils import add_response_schema

    add_response_schema(hf)  # TRL's Qwen3 response template: saved with the tokenizer, parses tool calls
    return hf
