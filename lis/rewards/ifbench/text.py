"""Text helpers shared by the IFBench checks: sentences, words, NLTK tokens, POS tags.

The sentence splitter is the rule-based one IFEval and IFBench use (not Punkt): it protects
abbreviations, initials, decimals, web addresses and ellipses, then cuts after every ``.``,
``?`` and ``!``. Word tokens and POS tags come from NLTK with the data that
:func:`lis.rewards.ifbench.data.ensure_ifbench_data` installs.
"""
from __future__ import annotations

import json
import re
import string
import threading
from functools import lru_cache

from lis.rewards.ifbench.data import TAGGER_DIR, default_root, ensure_ifbench_data

PUNCT = string.punctuation
_STRIP = PUNCT + " "
_NO_PUNCT = str.maketrans("", "", PUNCT)

_ALPHA = "([A-Za-z])"
_STARTERS = (r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s|"
             r"That\s|This\s|Wherever)")
_ACRONYM = "([A-Z][.][A-Z][.](?:[A-Z][.])?)"
_SUFFIX = "(Inc|Ltd|Jr|Sr|Co)"
# (pattern, replacement) in the order they apply; "<prd>" is a protected dot, "<stop>" a cut.
_RULES: list[tuple[re.Pattern[str], object]] = [
    (re.compile(r"(Mr|St|Mrs|Ms|Dr)[.]"), r"\1<prd>"),
    (re.compile(r"[.](com|net|org|io|gov|edu|me)"), r"<prd>\1"),
    (re.compile(r"([0-9])[.]([0-9])"), r"\1<prd>\2"),
    (re.compile(r"\.{2,}"), lambda m: "<prd>" * len(m.group(0)) + "<stop>"),
]
_RULES_AFTER_PHD: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\s" + _ALPHA + r"[.] "), r" \1<prd> "),
    (re.compile(_ACRONYM + " " + _STARTERS), r"\1<stop> \2"),
    (re.compile(_ALPHA + "[.]" + _ALPHA + "[.]" + _ALPHA + "[.]"), r"\1<prd>\2<prd>\3<prd>"),
    (re.compile(_ALPHA + "[.]" + _ALPHA + "[.]"), r"\1<prd>\2<prd>"),
    (re.compile(" " + _SUFFIX + "[.] " + _STARTERS), r" \1<stop> \2"),
    (re.compile(" " + _SUFFIX + "[.]"), r" \1<prd>"),
    (re.compile(" " + _ALPHA + "[.]"), r" \1<prd>"),
]


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` by the IFEval rules (newlines are spaces; empty tail dropped)."""
    text = (" " + text + "  ").replace("\n", " ")
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)  # type: ignore[arg-type]
    text = text.replace("Ph.D.", "Ph<prd>D<prd>")
    for pattern, repl in _RULES_AFTER_PHD:
        text = pattern.sub(repl, text)
    # Closing quotes move before the sentence mark so the quote stays with its sentence.
    text = text.replace(".\u201d", "\u201d.").replace('."', '".').replace('!"', '"!').replace('?"', '"?')
    for mark in ".?!":
        text = text.replace(mark, mark + "<stop>")
    parts = [s.strip() for s in text.replace("<prd>", ".").split("<stop>")]
    if parts and not parts[-1]:
        parts.pop()
    return parts


def count_words(text: str) -> int:
    """Number of ``\\w+`` runs (NLTK's RegexpTokenizer(r"\\w+"))."""
    return len(re.findall(r"\w+", text))


def strip_punct(text: str) -> str:
    """``text`` with every ASCII punctuation character removed."""
    return text.translate(_NO_PUNCT)


def strip_edges(word: str) -> str:
    """``word`` without leading/trailing ASCII punctuation and spaces."""
    return word.strip(_STRIP)


_ready_lock = threading.Lock()
_ready = False


def _nltk():
    """NLTK with the IFBench data registered (installs it on first use; LisError if impossible)."""
    global _ready
    import nltk

    if not _ready:
        with _ready_lock:
            if not _ready:
                ensure_ifbench_data()
                _ready = True
    return nltk


def word_tokenize(text: str) -> list[str]:
    """NLTK's Treebank word tokens (Punkt sentences first, as ``nltk.word_tokenize``)."""
    return _nltk().word_tokenize(text)


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """NLTK's English stop-word list."""
    return frozenset(_nltk().corpus.stopwords.words("english"))


@lru_cache(maxsize=1)
def _tagger():
    _nltk()  # makes sure the data (tagger included) is installed
    from nltk.tag.perceptron import PerceptronTagger

    base = default_root() / TAGGER_DIR
    tagger = PerceptronTagger(load=False)
    tagger.decode_json_params([json.loads((base / f"{name}.json").read_text()) for name in ("weights", "tagdict", "classes")])
    return tagger


def pos_tags(tokens: list[str]) -> list[tuple[str, str]]:
    """Penn Treebank tags for ``tokens`` from the averaged-perceptron English tagger."""
    return _tagger().tag(tokens) if tokens else []
