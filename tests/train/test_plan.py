"""lis train plan: the memory model against autograd's own bookkeeping, the shapes against transformers, the
accelerate configs and launch environment, the CLI's tables and one-line refusal, and check_run on this
machine. The measured peaks (fresh processes, real steps) are in test_plan_measured.py."""
from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from lis.errors import LisError
from lis.params import load
from lis.train.plan import (ModelShape, check_run, default_setups, estimate, from_env, layer_saved_bytes, plain,
                            plan_stage, plan_stages, read_accelerate, read_shape, refusal, resolve_model, workload)
from tests.conftest import BIN, ROOT, one_line_error, run
from tests import sections

pytestmark = [pytest.mark.training]

CONFIGS = ROOT / "data" / "model_configs"
Q4B = CONFIGS / "qwen3-4b-instruct-2507.json"


def _lis(*args, check=False):
    return run([str(BIN / "lis"), *args], check=check, timeout=120)


@pytest.mark.parametrize("name", ["qwen3-4b-instruct-2507", "qwen3-validate-32m", "qwen3-rehearsal"])
def test_parameter_counts_are_transformers(name):
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from lis.offline.random_model import ARCH_KEYS, read_config

    cfg = {**read_config(CONFIGS / f"{name}.json"), "num_hidden_layers": 2}   # layers only multiply
    with torch.device("meta"):
        model = Qwen3ForCausalLM(Qwen3Config(**{k: cfg[k] for k in ARCH_KEYS if k in cfg}))
    assert ModelShape.from_config(cfg).params == sum(p.numel() for p in model.parameters())
    if name.startswith("qwen3-4b"):
        assert 4.0e9 < read_shape(Q4B).params < 4.05e9


def _saved_bytes(model, ids, attention_mask=None, autocast=False):
    """Bytes of the distinct storages autograd saves in a forward pass (parameters and their bf16 casts out)."""
    import torch

    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    shapes = {tuple(p.shape) for p in model.parameters()} | {tuple(p.t().shape) for p in model.parameters()
                                                             if p.dim() == 2}
    seen: dict[int, int] = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in params and not (autocast and tuple(t.shape) in shapes):
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), \
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        model.model(input_ids=ids, attention_mask=attention_mask)
    return sum(seen.values())


@pytest.mark.parametrize("mode,padded", [("fp32", False), ("fp32", True), ("autocast", False), ("bf16", False),
                                         ("bf16", True)])
def test_activation_formula_is_what_autograd_saves(mode, padded):
    """The per-token, per-layer bytes of the plan (memory.py's module doc) against the tensors autograd keeps,
    counted with saved_tensors_hooks, for fp32, autocast over fp32 weights and bf16 weights, with and without
    padding (the attention mask every layer converts and keeps)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    cfg = dict(hidden_size=256, intermediate_size=768, num_hidden_layers=2, num_attention_heads=8,
               num_key_value_heads=2, head_dim=32, vocab_size=512, tie_word_embeddings=True)
    model = Qwen3ForCausalLM(Qwen3Config(**cfg, attn_implementation="sdpa"))
    if mode == "bf16":
        model = model.to(torch.bfloat16)
    shape = ModelShape.from_config({**cfg, "model_type": "qwen3"})
    T = 384
    ids = torch.randint(0, 512, (1, T))
    mask = None
    if padded:
        mask = torch.ones(1, T, dtype=torch.long)
        mask[0, :7] = 0
    got = _saved_bytes(model, ids, mask, autocast=mode == "autocast")
    per_layer = layer_saved_bytes(shape, mode, padded)
    b_mask = 4 if mode == "fp32" else 2
    final = T * ((6 if mode == "bf16" else 8) * shape.hidden + 4)
    want = shape.layers * T * per_layer + final + (shape.layers * T * T * b_mask if padded else 0)
    assert abs(got / want - 1) < 0.05, (got, want)


def test_trl_tiles_and_kv_dtype_are_what_the_plan_assumes(tmp_path):
    """The fused LM head's tiles are TRL's; the KV cache of an autocast forward stores keys and values in the
    embedding's fp32 (so generation under bf16 autocast holds an fp32 cache)."""
    import torch
    from transformers import DynamicCache, Qwen3Config, Qwen3ForCausalLM
    from trl.kernels import chunked_logprob
    from trl.trainer import utils as trl_utils

    from lis.train.plan import memory

    assert memory.TRL_TOKEN_TILE == chunked_logprob.TOKEN_CHUNK_SIZE
    assert memory.TRL_VOCAB_TILE == trl_utils._CHUNKED_LOGPROB_CHUNK_SIZE
    model = Qwen3ForCausalLM(Qwen3Config(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
                                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=128))
    cache = DynamicCache()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        model(input_ids=torch.randint(0, 128, (1, 8)), past_key_values=cache, use_cache=True)
    assert cache.layers[0].keys.dtype == cache.layers[0].values.dtype == torch.float32


def test_accelerate_configs_are_read():
    acc = ROOT / "workflow" / "accelerate"
    s = read_accelerate(acc / "fsdp_offload.yaml")
    assert (s.distributed, s.processes, s.zero_stage, s.offload_params, s.offload_optimizer, s.mixed_precision) == \
        ("fsdp", 8, 3, True, True, "bf16")
    s = read_accelerate(acc / "deepspeed_zero3_offload.yaml")
    assert (s.distributed, s.processes, s.zero_stage, s.offload_params, s.offload_optimizer) == \
        ("deepspeed", 1, 3, True, True)
    assert read_accelerate(acc / "deepspeed_zero2.yaml").zero_stage == 2
    assert read_accelerate(acc / "fsdp.yaml", gpus=4).processes == 4
    assert read_accelerate(acc / "multi_gpu_ddp.yaml").distributed == "ddp"
    assert read_accelerate(acc / "cpu_2proc.yaml").processes == 2
    with pytest.raises(LisError, match="no accelerate config"):
        read_accelerate(acc / "missing.yaml")


def test_launch_environment_is_accelerates():
    """from_env reads the variables accelerate 1.15's launcher sets (their names appear in its source)."""
    import accelerate.utils.launch as launch

    src = inspect.getsource(launch)
    for name in ("ACCELERATE_USE_FSDP", "FSDP_OFFLOAD_PARAMS", "FSDP_SHARDING_STRATEGY", "ACCELERATE_USE_DEEPSPEED",
                 "ACCELERATE_DEEPSPEED_ZERO_STAGE", "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE",
                 "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE", "ACCELERATE_MIXED_PRECISION"):
        assert f'"{name}"' in src or f'+ "{name.split("_", 1)[1]}"' in src, name
    s = from_env({"WORLD_SIZE": "8", "ACCELERATE_USE_FSDP": "true", "FSDP_SHARDING_STRATEGY": "FULL_SHARD",
                  "FSDP_OFFLOAD_PARAMS": "true", "ACCELERATE_MIXED_PRECISION": "bf16"}, capacity_gb=80, device="cuda")
    assert (s.distributed, s.processes, s.zero_stage, s.offload_params) == ("fsdp", 8, 3, True)
    s = from_env({"WORLD_SIZE": "1", "ACCELERATE_USE_DEEPSPEED": "true", "ACCELERATE_DEEPSPEED_ZERO_STAGE": "3",
                  "ACCELERATE_DEEPSPEED_OFFLOAD_OPTIMIZER_DEVICE": "cpu",
                  "ACCELERATE_DEEPSPEED_OFFLOAD_PARAM_DEVICE": "none"}, capacity_gb=80, device="cuda")
    assert (s.distributed, s.zero_stage, s.offload_params, s.offload_optimizer) == ("deepspeed", 3, False, True)
    assert from_env({"WORLD_SIZE": "2"}, capacity_gb=12, device="cpu").distributed == "ddp"
    assert from_env({}, capacity_gb=12, device="cpu").distributed == "single"


def test_the_model_of_a_plan():
    full, smoke = load(ROOT, profile="full"), load(ROOT, profile="smoke")
    shape, source = resolve_model(full, "grpo", None)
    assert shape.params == read_shape(Q4B).params and "qwen3-4b-instruct-2507.json" in source
    shape, source = resolve_model(smoke, "grpo", None)
    assert (shape.hidden, shape.layers, shape.vocab) == (64, 2, 4102) and source == "base.tiny.arch"
    assert resolve_model(full, "sft", str(CONFIGS / "qwen3-rehearsal.json"))[0].hidden == 128
    with pytest.raises(LisError, match="no such file, model folder or models entry"):
        resolve_model(full, "grpo", "no-such-model")
    with pytest.raises(LisError, match="openai entry, not a local model folder"):
        resolve_model(full, "grpo", "qwen3-4b-instruct-2507")


def test_the_paper_scale_terms():
    """Qwen3-4B at the full profile: the state per parameter, sharding and offload, checkpointing's saving,
    what server mode leaves on the trainer's GPUs, disk."""
    full = load(ROOT, profile="full")
    shape = read_shape(Q4B)
    P = shape.params
    paper, single = default_setups(ROOT)
    served = full.settings("grpo")   # the full profile generates on a vLLM server
    assert served.vllm.mode == "server" and served.vllm.sync == "files"
    grpo = sections.grpo()   # in the training process
    w = workload("grpo", grpo, cuda=True, processes=8)
    # micro-batches of one episode are trimmed of the batch's padding (lis.train.grpo.checked_trainer.trim_padding)
    assert (w.rows, w.tokens, w.completion, w.bf16, w.checkpointing, w.padded) == (1, 81920, 65536, True, True, False)
    assert workload("grpo", sections.grpo(micro_batch=2), cuda=True, processes=8).padded
    p = estimate(shape, w, paper)
    assert p.term("weights").gpu == 0 and p.term("weights").cpu == pytest.approx(4 * P)   # fp32, offloaded
    assert p.term("optimizer").cpu == pytest.approx(8 * P) and p.term("grads").cpu == pytest.approx(4 * P)
    assert p.term("act_off").gpu > 30 * p.term("act_on").gpu and not p.term("act_off").counted
    assert p.term("kv").gpu == pytest.approx(81920 * 2 * 36 * 8 * 128 * 4) and p.fits   # one longest episode
    one = estimate(shape, workload("grpo", grpo, cuda=True, processes=1), plain(1))
    assert one.term("optimizer").gpu == pytest.approx(8 * P) and one.term("weights").gpu == pytest.approx(4 * P)
    assert not one.fits and one.largest().key == "optimizer"
    server = plan_stage(shape, "grpo", served, paper)
    assert "kv" not in {t.key for t in server.terms} and server.peak < p.peak and server.phases["generation"] < p.phases["generation"]
    sync = server.term("sync")   # the weight push: the file built in host memory, nothing on the GPU without LoRA
    assert sync.phases == ("generation",) and sync.gpu == 0 and sync.cpu > 0
    notes = " ".join(server.workload.notes)
    assert "vLLM server (GPUs 7" in notes and "144 KiB per token" in notes and "weight sync (files)" in notes
    lora_push = plan_stage(shape, "grpo", sections.changed(served, lora={"rank": 64}), plain(1)).term("sync")
    assert lora_push.gpu == pytest.approx(36 * 4 * sum(a * b for n, (a, b) in shape.linear_shapes().items()
                                                        if n in served.lora.target_modules))
    lora = estimate(shape, workload("grpo", sections.grpo(lora={"rank": 64}), cuda=True), plain(1))
    assert lora.trainable == shape.lora_params(64, grpo.lora.target_modules) < P / 20
    assert lora.term("weights").gpu == pytest.approx(2 * P + 4 * lora.trainable)        # bf16 base + fp32 adapters
    assert p.disk["checkpoint"] == pytest.approx(12 * P) and p.disk["checkpoints"] == pytest.approx(36 * P)
    no_opt = estimate(shape, workload("grpo", sections.grpo(checkpoints={"keep": 2, "optimizer": False}), cuda=True),
                      paper)
    assert no_opt.disk["checkpoint"] == pytest.approx(4 * P)
    sft = plan_stages(full, ["sft"], [paper])[2]["sft"][0]
    assert sft.setup.processes == 1 and not sft.setup.offload_params   # Lightning: no accelerate config
    assert any("sft.steps is 0" in n for n in sft.workload.notes)


def test_refusal_names_the_largest_term_and_its_knob():
    shape = read_shape(Q4B)
    grpo = sections.grpo()   # the full profile's, generation in the training process
    err = refusal(estimate(shape, workload("grpo", grpo, cuda=True), plain(1, gpu_memory_gb=80)))
    line = err.one_line()
    assert "\n" not in line and "optimizer state" in line and "grpo.lora.rank" in line and "80 GB" in line
    no_ckpt = sections.grpo(precision={"bf16": True, "gradient_checkpointing": False}, lora={"rank": 16})
    line = refusal(estimate(shape, workload("grpo", no_ckpt, cuda=True), plain(1))).one_line()
    assert "activations kept, checkpointing off" in line and "grpo.precision.gradient_checkpointing" in line
    kv = sections.grpo(lora={"rank": 16}, engine={"max_batch": 64, "max_batch_tokens": 1 << 20})
    line = refusal(estimate(shape, workload("grpo", kv, cuda=True), plain(1))).one_line()
    assert "KV" in line and "grpo.engine.max_batch_tokens" in line and "grpo.vllm.mode: server" in line


def test_cli_prints_both_setups_for_the_full_profile(tmp_path):
    out = tmp_path / "plan.json"
    r = _lis("train", "plan", "--profile", "full", "--json", str(out))
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert "qwen3-4b-instruct-2507" in text and text.count("grpo · ") == 1 and text.count("sft · ") == 1
    assert "A: paper: 8 x 80 GB, fsdp_offload" in text and "B: 1 x 80 GB, deepspeed_zero3_offload" in text
    for row in ("| weights", "| gradients (fp32)", "| optimizer state", "activations kept, checkpointing on",
                "activations kept, checkpointing off", "| weight push to the vLLM server (sync: files, transient)",
                "note: vLLM server (GPUs 7, tensor parallel 1, bfloat16): weights 8.0 GB", "| total vs capacity",
                "| fits", "| disk per checkpoint"):
        assert row in text, row
    plans = json.loads(out.read_text())["plans"]
    assert [p["setup"]["processes"] for p in plans["grpo"]] == [8, 1]
    assert all(p["capacity_gb"] == 80 for p in plans["grpo"])


def test_cli_refuses_a_plain_single_gpu_in_one_line():
    r = _lis("train", "plan", "--profile", "full", "--gpus", "1", "--gpu-memory-gb", "80")
    one_line_error(r, "grpo cannot fit", "80 GB", "optimizer state", "grpo.lora.rank")
    assert "| total vs capacity" in r.stdout          # the table first, then the one line
    r = _lis("train", "plan", "--profile", "full", "--stage", "grpo", "--accelerate",
             "workflow/accelerate/deepspeed_zero3_offload.yaml", "--gpus", "1")
    assert r.returncode == 0, r.stderr
    r = _lis("train", "plan", "--profile", "full", "--model", "no-such-model")
    one_line_error(r, "no-such-model")
    r = _lis("train", "plan", "--stage", "rl")
    one_line_error(r, "--stage")


def _model_dir(tmp_path: Path, cfg: dict) -> Path:
    d = tmp_path / "model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "qwen3", **cfg}))
    return d


def test_check_run_accepts_the_repositorys_own_runs(tmp_path):
    """check_run at the start of the smoke and ci stages, here (CPU, this machine's memory): accepted, with a
    plan to store; as a second process of cpu_2proc too."""
    smoke = load(ROOT, profile="smoke")
    tiny, _ = resolve_model(smoke, "grpo", None)
    d = _model_dir(tmp_path, {"hidden_size": tiny.hidden, "intermediate_size": tiny.intermediate,
                              "num_hidden_layers": tiny.layers, "num_attention_heads": tiny.heads,
                              "num_key_value_heads": tiny.kv_heads, "head_dim": tiny.head_dim,
                              "vocab_size": tiny.vocab, "tie_word_embeddings": True})
    for profile in ("smoke", "ci"):
        p = load(ROOT, profile=profile)
        for stage in ("grpo", "sft"):
            plan = check_run(p.settings(stage), stage, d, env={})
            assert plan["fits"] and plan["setup"]["device"] == "cpu" and plan["peak_gb"] < 5, (profile, stage, plan)
        assert check_run(p.settings("grpo"), "grpo", d, env={"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"})["fits"]


def test_check_run_refuses_paper_scale_here(tmp_path):
    cfg = json.loads(Q4B.read_text())
    d = _model_dir(tmp_path, cfg)
    with pytest.raises(LisError) as e:
        check_run(load(ROOT, profile="full").settings("grpo"), "grpo", d, env={})
    line = e.value.one_line()
    assert "grpo cannot fit" in line and "per process" in line and "\n" not in line
    with pytest.raises(LisError, match="no model configuration"):
        check_run(load(ROOT, profile="full").settings("grpo"), "grpo", tmp_path / "nowhere", env={})


@pytest.mark.parametrize("change, names", [
    ({"hidden_size": -2560}, ["hidden_size", "-2560"]),
    ({"num_attention_heads": 0}, ["num_attention_heads", "0"]),
    ({"hidden_size": "2560"}, ["hidden_size", "'2560'"]),
    ({"intermediate_size": 9728.0}, ["intermediate_size", "9728.0"]),
    ({"num_key_value_heads": 64}, ["num_key_value_heads", "64", "does not divide"]),
    ({"num_key_value_heads": 5}, ["num_key_value_heads", "5", "does not divide"]),
    ({"hidden_size": 10 ** 12}, ["hidden_size", "1000000000000"]),
    ({"vocab_size": 10 ** 400}, ["vocab_size", "401-digit"]),
    ({"num_hidden_layers": None}, ["num_hidden_layers", "None"]),
    ({"tie_word_embeddings": "yes"}, ["tie_word_embeddings"]),
    ({"head_dim": None, "hidden_size": 2561}, ["hidden_size", "not a multiple"]),
])
def test_an_impossible_shape_is_refused_naming_its_key(tmp_path, change, names):
    cfg = {**json.loads(Q4B.read_text()), **change}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(cfg))
    with pytest.raises(LisError) as e:
        read_shape(path)
    assert all(n in str(e.value) for n in names), str(e.value)


def test_cli_refuses_an_impossible_or_unreadable_config_in_one_line(tmp_path):
    bad = tmp_path / "negative.json"
    bad.write_text(json.dumps({**json.loads(Q4B.read_text()), "hidden_size": -2560}))
    r = _lis("train", "plan", "--profile", "full", "--model", str(bad))
    one_line_error(r, "hidden_size", "-2560")
    assert "fits" not in r.stdout
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    r = _lis("train", "plan", "--profile", "full", "--model", str(deep))
    one_line_error(r, "deep.json", "cannot be read")
    huge = tmp_path / "huge.json"  # more digits than Python converts to an int
    huge.write_text('{"model_type": "qwen3", "hidden_size": 1' + "0" * 5000 + "}")
    r = _lis("train", "plan", "--profile", "full", "--model", str(huge))
    one_line_error(r, "huge.json", "cannot be read")
