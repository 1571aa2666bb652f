"""``workflow/rules/stages.smk``: the Snakemake rules, rendered from the stage registry
(:mod:`lis.stages.registry`).

The Snakefile keeps what is not a stage: the ``paper`` target, and ``workflow/rules/common.smk`` the
helpers the rules call. A stage's declaration becomes its rule so:

- ``${item}`` / ``${item.key}`` become wildcards (``{domain}``), constrained to the job list's values;
- ``${profile}`` in the command and title becomes ``{params.profile}``;
- a dependency that a params key names whole (``${tasks.samples_dir}``) becomes the files under it;
  one with a key inside (``data/models/${throughput.model}``) is filled in from the params;
- a dependency on a folder that other stages fill (``data/eval``) becomes the files the stage's
  ``inputs`` function lists; the code the command runs is added (:mod:`lis.pipeline.code_deps`);
- an output whose name has no extension is a ``directory()``.
"""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from lis.errors import LisError
from lis.stages.registry import stages
from lis.stages.spec import Stage, holds

PATH = "workflow/rules/stages.smk"
HEADER = """\
# GENERATED from lis/stages/ by `lis pipeline write`: edit a stage's module there, not this file
# (`lis pipeline check` and the tests fail when the two differ). The helpers the rules call are in
# common.smk; the `paper` target is in the Snakefile.
"""
PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9_.]+)\}")
WIDTH = 110


def _wildcards(stage: Stage) -> dict[str, tuple[str, object]]:
    """``placeholder -> (wildcard, its values)``: ``item -> (domain, "${jobs.domains}")``."""
    if stage.foreach:
        if not stage.item:
            raise LisError(f"stage {stage.name}: a foreach stage needs item=<wildcard name>",
                           "name its wildcard in lis/stages/" + stage.name + ".py (item=\"domain\")")
        return {"item": (stage.item, stage.foreach)}
    return {f"item.{key}": (key, values) for key, values in stage.matrix.items()}


def _fill(text: str, stage: Stage, *, shell: bool) -> str:
    """``text`` with the stage's placeholders in Snakemake's spelling (a path's, or a shell line's)."""
    wild = _wildcards(stage)

    def one(m: re.Match) -> str:
        key = m.group(1)
        if key in wild:
            return "{wildcards.%s}" % wild[key][0] if shell else "{%s}" % wild[key][0]
        if key == "profile" and shell:
            return "{params.profile}"
        if shell:
            raise LisError(f"stage {stage.name}: ${{{key}}} in its command or title",
                           "use ${profile}, ${item} or ${item.<key>} there; read params in the command")
        return m.group(0)  # a params key inside a path: param_path() fills it in
    return PLACEHOLDER.sub(one, text)


def _is_dir(path: str) -> bool:
    return not PurePosixPath(PLACEHOLDER.sub("x", path)).suffix


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _values(values: object) -> str:
    if isinstance(values, str):
        m = PLACEHOLDER.fullmatch(values)
        if not m:
            raise LisError(f"job list {values!r} is not a ${{section.key}}", "write foreach/matrix as ${jobs.<list>}")
        return f'one_of(value("{m.group(1)}"))'
    return f"one_of({list(values)!r})".replace("'", '"')


def _inputs(stage: Stage, outputs: list[str]) -> list[str]:
    lines = []
    for dep in stage.deps:
        whole = PLACEHOLDER.fullmatch(dep)
        if whole:
            lines.append(f'sources("{whole.group(1)}"),')
        elif any(holds(dep, out) for out in outputs):  # a folder other stages fill (data/eval)
            if not stage.inputs:
                raise LisError(f"stage {stage.name}: it depends on {dep}, which other stages fill",
                               f"give lis/stages/{stage.name}.py inputs=\"module:function\" listing the files it reads there")
        else:
            path = _fill(dep, stage, shell=False)
            lines.append(f"param_path({_quoted(path)})," if "${" in path else f"{_quoted(path)},")
    if stage.inputs:
        lines.append(f'stage_inputs("{stage.name}"),')
    lines.append(f'stage_code("{stage.name}"),')
    return lines


def _log(stage: Stage) -> str:
    words = stage.cmd.split()
    if "--log" not in words or words.index("--log") + 1 >= len(words):
        raise LisError(f"stage {stage.name}: its command has no --log", "add --log logs/<stage>.log to its cmd")
    return words[words.index("--log") + 1]


def _shell(cmd: str) -> list[str]:
    """The command as adjacent string literals, cut between words."""
    parts, line = [], ""
    for word in cmd.split():
        if line and len(line) + len(word) + 1 > WIDTH:
            parts.append(line + " ")
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [_quoted(p) for p in parts + [line]]


def render_rule(stage: Stage, outputs: list[str]) -> list[str]:
    """One stage's rule (``outputs``: every stage's output paths, to know the folders others fill)."""
    pad = " " * 8
    lines = [f"# {line}" for line in stage.comment] + [f"rule {stage.name}:"]
    if stage.priority:
        lines.append(f"    priority: {stage.priority}")
    if stage.threads:
        lines.append(f'    threads: cores("{stage.threads}")')
    lines += ["    input:", *(pad + x for x in _inputs(stage, outputs))]
    lines.append("    output:")
    for out in (*stage.outs, *stage.metrics, *(p.path for p in stage.plots)):
        path = _quoted(_fill(out, stage, shell=False))
        lines.append(f"{pad}directory({path})," if _is_dir(out) else f"{pad}{path},")
    wild = _wildcards(stage)
    if wild:
        lines += ["    wildcard_constraints:", *(f"{pad}{name}={_values(values)}," for name, values in wild.values())]
    if stage.params:
        lines += ["    params:", f'{pad}**stage_params("{stage.name}"),']
    lines += ["    log:", f"{pad}{_quoted(_fill(_log(stage), stage, shell=False))},"]
    if stage.title:
        lines += ["    message:", f"{pad}{_quoted(_fill(stage.title, stage, shell=True))}"]
    lines += ["    shell:", *(pad + x for x in _shell(_fill(stage.cmd, stage, shell=True)))]
    return lines


def render(root: Path | None = None) -> str:
    """The whole rules file, from the stages of ``root``/lis/stages (default: the installed package's)."""
    found = stages(Path(root) / "lis" / "stages" if root else None)
    outputs = [o for s in found for o in (*s.outs, *s.metrics, *(p.path for p in s.plots))]
    return HEADER + "".join("\n\n" + "\n".join(render_rule(s, outputs)) + "\n" for s in found)
