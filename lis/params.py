"""Pipeline parameters: ``params.yaml`` plus a profile overlay, validated by the params model (:mod:`lis.config`).

``params.yaml`` holds one section per stage at paper scale and a ``profile:`` key. The profile
names an overlay, ``workflow/params/<profile>.yaml``, that is deep-merged over it (dicts merge
key by key; lists and scalars replace). A section that some overlay sets is named by every overlay,
``{}`` where it changes nothing, because DVC tracks ``workflow/params/${profile}.yaml:<section>``
and refuses a missing key; a section no overlay sets is in params.yaml alone.

Each stage reads only its own sections (``Params.settings``: the section's typed model), so that
Snakemake and DVC re-run a stage only when a param it reads changes.
"""
from __future__ import annotations

import copy
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from lis.errors import ParamsError
from lis.util.hashing import canonical_json, hash_obj
from lis.util.quota import QUOTA_KEYS, quota_problem
from lis.util.urls import EXAMPLE, base_url_problem

PARAMS_FILE = "params.yaml"
OVERLAY_DIR = Path("workflow/params")
SCHEMA_FILE = Path("workflow/schemas/params.schema.yaml")
TOP_KEYS = ("profile",)  # keys of params.yaml that are not stage sections
BASE_ONLY = ("jobs",)     # sections only params.yaml may set: DVC builds its job matrix from this file alone
# keys only params.yaml may set: dvc.yaml names a dependency after them (DVC interpolates params.yaml alone)
BASE_ONLY_KEYS = {"throughput": ("model", "domains")}


def find_root(start: str | Path = ".") -> Path:
    """The project root: the nearest directory at or above ``start`` holding params.yaml."""
    p = Path(start).resolve()
    for d in (p, *p.parents):
        if (d / PARAMS_FILE).is_file():
            return d
    raise ParamsError(f"no {PARAMS_FILE} in {p} or any parent directory",
                      "run lis from the repository root or pass --params PATH")


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamsError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise ParamsError(f"{path} is a folder, not a params file", "give a YAML file such as params.yaml") from None
    except UnicodeDecodeError as e:
        raise ParamsError(f"{path} is not UTF-8 text (byte {e.start})", "give a YAML file such as params.yaml") from None
    except OSError as e:
        raise ParamsError(f"cannot read {path} ({e.strerror or e})", "give a readable YAML file") from None
    try:  # libyaml when the wheel has it: every lis command reads params.yaml, an overlay and the schema
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise ParamsError(f"{path}{where}: not valid YAML ({getattr(e, 'problem', e)})") from None
    except RecursionError:
        raise ParamsError(f"{path}: nested deeper than the YAML reader can go", "params nest a few levels") from None
    _check_size(data, path)
    return data


MAX_DEPTH = 64            # levels of nesting a params file may have (the schema's deepest is under 10)
MAX_VALUES = 1_000_000    # values a params file may stand for once its aliases are expanded


def _check_size(data: Any, path: Path) -> None:
    """Refuse, in one line, a document nested past :data:`MAX_DEPTH`, one whose aliases expand past
    :data:`MAX_VALUES` values (a few hundred bytes of aliases of aliases stand for billions) or one
    whose alias refers to itself. One walk over the distinct containers, without recursion: every later
    step (merging, copying, the schema) walks the expanded tree."""
    if not isinstance(data, (dict, list)):
        return
    sizes: dict[int, tuple[int, int]] = {}  # id of a container -> (values it expands to, its depth)
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, closing = stack.pop()
        kids = [v for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, (dict, list))]
        if not closing:
            if id(node) in sizes:
                continue
            if id(node) in open_:
                raise ParamsError(f"{path}: an alias refers to a value that holds it", "params cannot refer to themselves")
            open_.add(id(node))
            stack.append((node, True))
            for kid in kids:
                if id(kid) in open_:
                    raise ParamsError(f"{path}: an alias refers to a value that holds it",
                                      "params cannot refer to themselves")
                if id(kid) not in sizes:
                    stack.append((kid, False))
            if len(open_) > MAX_DEPTH:
                raise ParamsError(f"{path}: nested deeper than {MAX_DEPTH} levels", "params nest a few levels")
            continue
        open_.discard(id(node))
        count = len(node) + sum(sizes[id(k)][0] for k in kids)
        depth = 1 + max((sizes[id(k)][1] for k in kids), default=0)
        if count > MAX_VALUES:
            raise ParamsError(f"{path}: its aliases expand to more than {MAX_VALUES:,} values",
                              "use aliases for a few shared settings, not aliases of aliases")
        if depth > MAX_DEPTH:
            raise ParamsError(f"{path}: nested deeper than {MAX_DEPTH} levels", "params nest a few levels")
        sizes[id(node)] = (count, depth)


def deep_merge(base: dict, over: dict) -> dict:
    """``over`` merged into a copy of ``base``: dicts merge recursively, anything else replaces."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def available_profiles(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / OVERLAY_DIR).glob("*.yaml"))


def _non_finite(obj: Any, path: tuple = ()) -> tuple | None:
    """The key path of the first number that is not finite (YAML's ``.nan``, ``.inf``), or None."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return path
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    else:
        return None
    for k, v in items:
        found = _non_finite(v, (*path, k))
        if found is not None:
            return found
    return None


def validate(data: dict, source: str) -> Any:
    """``data`` (a whole params file, merged or not) as the params model (:mod:`lis.config`); ParamsError
    naming the first invalid key (and how many more there are). A number that is not finite is refused
    wherever it is."""
    from pydantic import ValidationError

    from lis.config.root import ParamsModel  # lazy: the models cost ~0.2 s to import

    bad = _non_finite(data)
    if bad is not None:
        raise ParamsError(f"{source}: {'.'.join(map(str, bad)) or '(top level)'}: not a finite number",
                          f"fix {source}; give a number (YAML .nan and .inf are not)")
    try:
        return ParamsModel.model_validate(data)
    except ValidationError as e:
        raise ParamsError(f"{source}: {pydantic_problem(e, '', ParamsModel)}",
                          f"fix {source}; the schema is {SCHEMA_FILE}") from None


WANT = {"int_type": "integer", "int_parsing": "integer", "int_from_float": "integer", "float_type": "number",
        "float_parsing": "number", "string_type": "string", "bool_type": "boolean", "bool_parsing": "boolean",
        "list_type": "array", "dict_type": "object", "model_type": "object", "model_attributes_type": "object"}
"""What a value of pydantic's type errors should have been, as the JSON schema names it."""


def _unwrap(node: Any) -> Any:
    """The model or container type inside ``Annotated`` and ``X | None``."""
    while typing.get_origin(node) in (typing.Annotated, typing.Union, types.UnionType):
        args = [a for a in typing.get_args(node) if a is not type(None)]
        if typing.get_origin(node) is typing.Annotated:
            node = args[0]
        else:
            node = next((a for a in args if hasattr(a, "model_fields")), args[0])
    return node


def _walk(model: Any, loc: tuple) -> tuple[tuple, Any]:
    """``loc`` without pydantic's union tags (``int``, ``function-after[...]``), and the type it ends at."""
    node, path = _unwrap(model), []
    for part in loc:
        fields = getattr(node if isinstance(node, type) else type(node), "model_fields", None)
        if fields is not None and part in fields:
            node = fields[part].annotation
        elif fields is None and typing.get_origin(node) in (list, dict, tuple) and isinstance(part, (int, str)):
            node = typing.get_args(node)[-1]
        else:
            continue
        path.append(part)
        node = _unwrap(node)
    return tuple(path), node


def pydantic_problem(err: Any, where: str, model: Any = None) -> str:
    """One line for the first error of a pydantic ValidationError, naming the key (``where``: the section
    the model validated; ``model``: that model, to name the keys allowed beside an unknown one)."""
    first = err.errors()[0]
    loc, _ = _walk(model, tuple(first["loc"])) if model is not None else (tuple(first["loc"]), None)

    def dotted(path: tuple) -> str:
        return ".".join(str(p) for p in (where, *path) if p != "") or "(top level)"

    name = dotted(loc)
    more = f" (and {err.error_count() - 1} more problem(s))" if err.error_count() > 1 else ""
    kind, got = first["type"], first.get("input")
    if kind == "extra_forbidden":
        if model is None:
            return f"{name}: unknown key{more}"
        at, parent = _walk(model, tuple(first["loc"])[:-1])
        return (f"{dotted((*at, first['loc'][-1]))}: unknown key (allowed in {dotted(at)}: "
                f"{', '.join(getattr(parent, 'model_fields', {}))}){more}")
    if kind == "missing":
        return f"{name}: required key is missing{more}"
    if kind == "value_error":  # a model's own check: its message names the problem
        return f"{name}: {first['msg'].removeprefix('Value error, ')}"[:300] + more
    if kind in WANT:
        return f"{name}: expected {WANT[kind]}, got {got!r} ({type(got).__name__})"[:300] + more
    if kind == "literal_error":
        return f"{name}: {got!r} is not one of {first['ctx']['expected'].replace(' or ', ', ')}"[:300] + more
    return f"{name}: {first['msg']}, got {got!r}"[:300] + more


def section_model(model: Any, data: Any, name: str, source: str) -> Any:
    """``data`` validated by the section model ``model``; ParamsError in one line naming the key."""
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ParamsError(f"{source}: {pydantic_problem(e, name, model)}", f"fix {source}; the schema is {SCHEMA_FILE}") from None


@dataclass
class Params:
    """Merged, validated params of one profile."""

    root: Path
    profile: str
    data: dict
    sections: tuple[str, ...] = field(default=())
    _typed: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def section(self, name: str) -> dict:
        """The merged section of one stage (a copy: stages must not share mutable state)."""
        if name not in self.data:
            raise ParamsError(f"params have no section '{name}'", f"add it to {PARAMS_FILE} and {SCHEMA_FILE}")
        return copy.deepcopy(self.data[name])

    def settings(self, name: str, **options: Any) -> Any:
        """The section as its typed model (:mod:`lis.config`), frozen: attributes, the defaults filled in, and
        the checks across keys the schema cannot make (a one-line ParamsError naming the key). Validated once
        per Params. ``options``: a command line's values over the section's keys (None: not given), validated
        with it; code that needs other values takes ``model_copy(update=...)``. An optional section that
        params leave out is its model's defaults. ``models`` is a read-only mapping of entries
        (:class:`lis.config.models.ModelEntry` each)."""
        from lis.config.root import SECTIONS  # lazy: the models cost ~0.3 s; most commands read no section typed

        if name == "models" and not options:
            if name not in self._typed:
                from lis.config.models import ModelEntry
                self._typed[name] = MappingProxyType({
                    entry: section_model(ModelEntry, spec, f"models.{entry}", PARAMS_FILE)
                    for entry, spec in (self.data.get("models") or {}).items()})
            return self._typed[name]
        if name not in SECTIONS:
            raise ParamsError(f"params section '{name}' has no model", f"add one to lis/config and {SCHEMA_FILE}")
        given = {k: v for k, v in options.items() if v is not None}
        if given or name not in self._typed:
            data = self.section(name) if self.data.get(name) is not None else {}
            typed = section_model(SECTIONS[name], deep_merge(data, given), name,
                                  f"{PARAMS_FILE} + the command line" if given else PARAMS_FILE)
            if given:
                return typed
            self._typed[name] = typed
        return self._typed[name]

    def section_json(self, name: str) -> str:
        return canonical_json(self.data[name])

    def section_hash(self, name: str) -> str:
        return hash_obj({"profile": self.profile, name: self.data[name]})


_LOADED: dict[tuple, Params] = {}  # what load() returned, by the exact text of every file it read


def _inputs_key(pfile: Path, root: Path, profile: str | None) -> tuple | None:
    """The texts load() would read (params file, schema, every overlay): a process that loads the
    same files again (lis serve, the Inspect tasks, a test suite running commands in-process) skips
    parsing and validating them. None when one cannot be read (load() then says why)."""
    try:
        files = [pfile, root / SCHEMA_FILE, *sorted((root / OVERLAY_DIR).glob("*.yaml"))]
        return (str(pfile), profile, tuple((str(f), f.read_bytes()) for f in files))
    except OSError:
        return None


def load(root: str | Path | None = None, profile: str | None = None, params_file: str | Path | None = None) -> Params:
    """Load params.yaml, apply the profile overlay, validate, and return the merged params.

    ``profile`` overrides the file's ``profile:`` key (``snakemake --config profile=ci``).
    Raises ParamsError with one line naming the offending file and key.
    """
    if params_file is not None:
        pfile = Path(params_file).resolve()
        root = pfile.parent
    else:
        root = find_root(root or ".")
        pfile = root / PARAMS_FILE
    key = _inputs_key(pfile, root, profile)
    if key is None:
        return _load(pfile, root, profile)
    if key not in _LOADED:
        if len(_LOADED) >= 16:
            _LOADED.clear()
        _LOADED[key] = _load(pfile, root, profile)
    got = _LOADED[key]  # kept unchanged: every caller gets its own copy of the data
    return Params(root=got.root, profile=got.profile, data=copy.deepcopy(got.data), sections=got.sections)


def _load(pfile: Path, root: Path, profile: str | None) -> Params:
    base = _read_yaml(pfile)
    if not isinstance(base, dict):
        raise ParamsError(f"{pfile.name}: expected a mapping of sections, got {type(base).__name__}")
    validate(base, pfile.name)

    name = profile or base["profile"]
    profiles = available_profiles(root)
    if name not in profiles:
        raise ParamsError(f"unknown profile '{name}' (available: {', '.join(profiles) or 'none'})",
                          f"set profile: to one of them or add {OVERLAY_DIR}/{name}.yaml")
    overlay, rel = _read_overlay(root, name, profiles)
    sections = tuple(k for k in base if k not in TOP_KEYS)
    for key in overlay:
        if key in TOP_KEYS or key in BASE_ONLY:
            why = " (DVC reads job lists from it alone)" if key in BASE_ONLY else ""
            raise ParamsError(f"{rel}: '{key}' cannot be set in a profile overlay{why}", f"set it in {PARAMS_FILE}")
        if key not in sections:
            raise ParamsError(f"{rel}: {key}: unknown section (sections: {', '.join(sections)})", f"fix {rel}")
    for section, keys in BASE_ONLY_KEYS.items():
        for key in keys:
            if isinstance(overlay.get(section), dict) and key in overlay[section]:
                raise ParamsError(f"{rel}: '{section}.{key}' cannot be set in a profile overlay (dvc.yaml names a "
                                  f"dependency after it)", f"set it in {PARAMS_FILE}")
    missing = [s for s in sections if s not in overlay and s in overlay_sections(root)]
    if missing:
        raise ParamsError(f"{rel}: missing section(s) {', '.join(missing)}",
                          f"another overlay sets {missing[0]}, and DVC tracks a section in every overlay or in none; "
                          f"add `{missing[0]}: {{}}`")
    for key, val in overlay.items():
        if val is not None and not isinstance(val, dict):
            raise ParamsError(f"{rel}: {key}: expected a mapping (use {{}} to override nothing), got {val!r}")
    merged = deep_merge(base, {k: v for k, v in overlay.items() if v})
    merged["profile"] = name
    _check_merged(merged, rel, f"{pfile.name} + {rel}", pfile.name)
    return Params(root=root, profile=name, data=merged, sections=sections)


def _check_merged(merged: dict, source: str, limits_source: str, jobs_source: str) -> None:
    validate(merged, source)
    _check_models(merged, source)
    _check_sandbox_limits(merged, limits_source)
    _check_jobs(merged, jobs_source)


def with_overrides(params: Params, sets: list[str] | tuple[str, ...]) -> Params:
    """``params`` with a command line's ``--set KEY=VALUE`` applied (``sft.lr=1e-4``; VALUE is YAML) and
    checked as a params file is; a one-line ParamsError naming a bad one."""
    if not sets:
        return params
    data = copy.deepcopy(params.data)
    for item in sets:
        key, eq, text = item.partition("=")
        path = [k for k in key.strip().split(".") if k]
        if not eq or not path:
            raise ParamsError(f"--set {item!r}: expected KEY=VALUE", "write --set section.key=value, e.g. --set sft.lr=1e-4")
        if path[0] in TOP_KEYS:
            raise ParamsError(f"--set {key}: the profile is chosen with --profile", "use --profile NAME")
        if path[0] not in params.sections:
            raise ParamsError(f"--set {key}: unknown section '{path[0]}' (sections: {', '.join(params.sections)})",
                              "name a section of params.yaml")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            raise ParamsError(f"--set {key}: {text!r} is not a YAML value", "quote it: --set 'key=\"text\"'") from None
        node = data
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[path[-1]] = value
    _check_merged(data, "--set", "--set", "--set")
    return Params(root=params.root, profile=params.profile, data=data, sections=params.sections)


def overlay_sections(root: Path) -> set[str]:
    """The sections the overlay files of ``root`` name (``extends`` overlays aside). A section is named by
    every such overlay or by none: dvc.yaml tracks it in the profile's overlay only then (DVC refuses a
    tracked key that the file lacks), and a section no overlay changes is one entry in params.yaml."""
    named: set[str] = set()
    for path in sorted((Path(root) / OVERLAY_DIR).glob("*.yaml")):
        data = _read_yaml(path) or {}
        if isinstance(data, dict) and "extends" not in data:
            named |= {k for k in data if k not in TOP_KEYS and k not in BASE_ONLY}
    return named


def _read_overlay(root: Path, name: str, profiles: list[str]) -> tuple[dict, str]:
    """The overlay of profile ``name`` and its file's path; an overlay with ``extends: OTHER`` is
    OTHER's overlay with this one deep-merged over it (its sections then need name only what differs)."""
    chain = overlay_chain(root, name, profiles)
    rel, merged = chain[0]
    for rel, overlay in chain[1:]:
        for key, val in overlay.items():
            if val is not None and not isinstance(val, dict):
                raise ParamsError(f"{rel}: {key}: expected a mapping (use {{}} to override nothing), got {val!r}")
        merged = deep_merge(merged, {k: v for k, v in overlay.items() if v})
    return merged, rel


def overlay_chain(root: Path, name: str, profiles: list[str] | None = None) -> list[tuple[str, dict]]:
    """The overlay files of profile ``name``, the one it extends first: [(path relative to root, its
    mapping without ``extends``)]. Raises ParamsError for a file that is not a mapping, or an
    ``extends`` that names no profile or makes a cycle."""
    profiles = available_profiles(root) if profiles is None else profiles
    chain: list[tuple[str, dict]] = []
    seen: tuple[str, ...] = ()
    while True:
        ofile = root / OVERLAY_DIR / f"{name}.yaml"
        rel = ofile.relative_to(root).as_posix()
        overlay = _read_yaml(ofile) or {}
        if not isinstance(overlay, dict):
            raise ParamsError(f"{rel}: expected a mapping of sections, got {type(overlay).__name__}")
        parent = overlay.pop("extends", None)
        chain.insert(0, (rel, overlay))
        if parent is None:
            return chain
        if parent not in profiles or parent in seen + (name,):
            why = "a cycle" if parent in seen + (name,) else f"available: {', '.join(profiles)}"
            raise ParamsError(f"{rel}: extends: {parent!r} is not a profile it can extend ({why})",
                              f"name another overlay of {OVERLAY_DIR}")
        seen, name = seen + (name,), str(parent)


def _overridden_leaves(over: Any, base: Any, path: tuple[str, ...], out: dict[str, Any]) -> None:
    if isinstance(over, dict) and isinstance(base, dict):
        for k, v in over.items():
            if k in base:
                _overridden_leaves(v, base[k], (*path, str(k)), out)
    elif over != base:
        out[".".join(path)] = over


def overridden(params: Params, sections: tuple[str, ...] | list[str]) -> dict[str, str]:
    """The keys of ``sections`` that params.yaml sets and the active profile's overlays set to another value:
    {dotted key: the overlay file that wins}. An edit of such a key in params.yaml has no effect."""
    base = _read_yaml(params.root / PARAMS_FILE)
    if not isinstance(base, dict):
        return {}
    out: dict[str, str] = {}
    for rel, overlay in overlay_chain(params.root, params.profile):
        for sec in sections:
            if overlay.get(sec) is None:  # absent or `sec:` with nothing: overrides nothing
                continue
            found: dict[str, Any] = {}
            _overridden_leaves(overlay.get(sec), base.get(sec), (sec,), found)
            out.update({k: rel for k in found})
    return dict(sorted(out.items()))


def overridden_note(params: Params, sections: tuple[str, ...] | list[str], show: int = 6) -> str | None:
    """One line naming the keys of ``sections`` whose params.yaml value the profile overrides (None: none)."""
    keys = overridden(params, sections)
    if not keys:
        return None
    files = sorted(set(keys.values()))
    names = ", ".join(list(keys)[:show]) + (f" and {len(keys) - show} more" if len(keys) > show else "")
    return (f"note: profile {params.profile} ({', '.join(files)}) overrides {len(keys)} key(s) of params.yaml that this "
            f"stage reads, so editing them in params.yaml has no effect: {names} (`lis params show KEY` says which "
            f"file sets a value)")


def trained_models(jobs: dict) -> list[str]:
    """The models this pipeline trains (each in data/models/<name>): base, sft, rft, llm-rl and one
    grpo-<variant> per jobs.grpo_data."""
    return ["base", "sft", "rft", "llm-rl", *(f"grpo-{v}" for v in jobs.get("grpo_data", []))]


SERVE_VLLM_KEYS = ("model", "tool_call_parser", "reasoning_parser", "tensor_parallel_size", "max_model_len",
                   "enable_prefix_caching", "host", "port", "extra_args")


def _check_models(data: dict, source: str) -> None:
    """What the schema cannot say about a ``serve:`` block: only openai entries (servers) have one,
    with a base_url, and a generic ``command`` replaces the vLLM fields rather than joining them."""
    for name, spec in (data.get("models") or {}).items():
        if isinstance(spec, dict) and spec.get("base_url") is not None:
            problem = base_url_problem(spec["base_url"])
            if problem:  # now, not after a round of connection retries in the middle of a run
                raise ParamsError(f"{source}: models.{name}.base_url {str(spec['base_url'])[:200]!r} is not "
                                  f"usable: {problem}", f"set it to an OpenAI-compatible server's URL, e.g. {EXAMPLE}")
        serve = spec.get("serve")
        if serve is None:
            continue
        if spec.get("backend") != "openai":
            raise ParamsError(f"{source}: models.{name}.serve: only an openai entry is served "
                              f"(this one is {spec.get('backend')})", f"remove serve: from models.{name}")
        if not spec.get("base_url"):
            raise ParamsError(f"{source}: models.{name}.serve needs models.{name}.base_url (where the server answers)",
                              f"set models.{name}.base_url, e.g. http://127.0.0.1:8000/v1")
        both = [k for k in SERVE_VLLM_KEYS if k in serve]
        if "command" in serve and both:
            raise ParamsError(f"{source}: models.{name}.serve: command replaces the vLLM fields; it cannot go "
                              f"with {', '.join(both)}", "put those options into the command, or drop command")


def _check_sandbox_limits(data: dict, source: str) -> None:
    """The tmpfs quotas are memory: with the reserve for processes they must fit the memory limit,
    or a full disk becomes an out-of-memory kill of the sandbox."""
    limits = (data.get("sandbox") or {}).get("limits") or {}
    problem = quota_problem(limits)  # missing keys: the Limits model's defaults
    if problem:
        keys = ", ".join(f"sandbox.limits.{k}" for k in QUOTA_KEYS)
        raise ParamsError(f"{source}: sandbox.limits: {problem}",
                          f"lower {keys} or raise sandbox.limits.memory_mb until their sum fits it")


def _check_jobs(data: dict, source: str) -> None:
    """What the schema cannot say: job lists name models entries; every evaluated model is either
    trained here or listed as external (its data/models/<name> folder has exactly one producer);
    the ablation needs its domain."""
    jobs, models = data.get("jobs"), data.get("models", {})
    if not jobs:
        return
    for key in ("models", "external", "long_context_ablation"):
        for m in jobs.get(key, []):
            if m not in models:
                raise ParamsError(f"{source}: jobs.{key}: '{m}' is not a models entry ({', '.join(models)})",
                                  "add it under models: or remove it from the job list")
    trained, external = trained_models(jobs), jobs.get("external", [])
    for m in external:
        if m in trained:
            raise ParamsError(f"{source}: jobs.external: '{m}' is a model this pipeline trains",
                              "remove it from jobs.external")
    for key in ("models", "long_context_ablation"):
        for m in jobs.get(key, []):
            if m not in trained and m not in external:
                raise ParamsError(f"{source}: jobs.{key}: '{m}' is neither trained here ({', '.join(trained)}) "
                                  f"nor listed in jobs.external", f"add '{m}' to jobs.external")
    if jobs.get("replicates") and not ({"sft", "grpo-files"} <= set(jobs.get("models", []))
                                       and "files" in jobs.get("grpo_data", [])
                                       and "instruct_pretrain" in jobs.get("domains", [])):
        raise ParamsError(f"{source}: jobs.replicates repeat the learning check (sft and grpo-files on "
                          "instruct_pretrain), which the job lists do not run",
                          "add sft and grpo-files to jobs.models, files to jobs.grpo_data and instruct_pretrain "
                          "to jobs.domains, or empty jobs.replicates")
    if jobs.get("long_context_ablation") and "long_context" not in jobs.get("domains", []):
        raise ParamsError(f"{source}: jobs.long_context_ablation needs long_context in jobs.domains",
                          "add long_context to jobs.domains or empty the ablation list")
