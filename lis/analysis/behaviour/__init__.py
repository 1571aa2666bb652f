"""Behaviour analysis: how models use the computer (the paper's Figure 2, Tables 4, 8 and 9).
Definitions and rules: docs/behaviour.md; the rules themselves: ``patterns.yaml`` beside this file.

    from lis.analysis.behaviour import classify_episode, load_rules, load_trajectories, behaviour_report
    inputs, records = load_trajectories([Path("data/eval/base/math/sandbox/trajectories.jsonl")])
    result = behaviour_report(records, inputs, validate_settings({"groups": {"strong": ["base"]}}))
"""
from lis.analysis.behaviour.aggregate import EpisodeRow, episode_rows
from lis.analysis.behaviour.classify import (EXCLUDED, EpisodeClassifier, EpisodeVerdict, Evidence, TurnVerdict,
                                             classify_episode, classify_episodes)
from lis.analysis.behaviour.inputs import job_files, jobs_paths, load_trajectories
from lis.analysis.behaviour.official import import_official, import_rl_jsonl, official_files
from lis.analysis.behaviour.reasoning import count_patterns, response_text, strip_code_fences
from lis.analysis.behaviour.report import SCHEMA, behaviour_report, write_csvs, write_turns
from lis.analysis.behaviour.rules import PATTERNS_FILE, Rule, Rules, load_rules, parse_rules, render_rules_markdown
from lis.analysis.behaviour.settings import validate_settings
from lis.analysis.behaviour.shell import parse_command
from lis.analysis.behaviour.tables import behaviour_tables

__all__ = [
    "EXCLUDED", "PATTERNS_FILE", "SCHEMA", "EpisodeClassifier", "EpisodeRow", "EpisodeVerdict", "Evidence",
    "Rule", "Rules", "TurnVerdict", "behaviour_report", "behaviour_tables", "classify_episode", "classify_episodes",
    "count_patterns", "episode_rows", "import_official", "import_rl_jsonl", "job_files", "jobs_paths",
    "load_rules", "load_trajectories", "official_files", "parse_command", "parse_rules", "render_rules_markdown",
    "response_text", "strip_code_fences", "validate_settings", "write_csvs", "write_turns",
]
