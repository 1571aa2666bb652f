"""Memory per process and disk per checkpoint of one training stage, derived from the model's shape.

    w = workload("grpo", params.settings("grpo"), cuda=True)
    plan = estimate(shape, w, setup)          # Plan: terms, phases, peak, fits, disk
    plan.peak_gb, plan.fits, plan.largest()

Every term is bytes computed from the shape, the stage's params and the setup; nothing is fitted to
measurements (``lis train plan --measure`` compares the sum with measured peaks on the CPU).

**State** per parameter (1/N when sharded, in CPU memory when offloaded): weights 4 B (DeepSpeed bf16:
2 B plus a 4 B master; LoRA: the frozen base 2 B when bf16, adapters 4 B); per trainable parameter
gradients 4 B and AdamW's moments 8 B; autocast (bf16 without FSDP/DeepSpeed) a bf16 copy of every
linear weight; DDP's buckets 4 B. Under sharding a process also holds the root unit, the current and
the prefetched layer gathered, and one layer's unsharded gradients.

**Activations** autograd saves per token and decoder layer of Qwen3 (hidden h, intermediate i, query
width q, key/value width kv; checked with ``saved_tensors_hooks`` in tests/train/test_plan.py): fp32
``4 × (6h + 5q + 4kv + 4i)``; autocast ``26h + 12q + 10kv + 8i``; bf16 weights (FSDP mixed precision,
DeepSpeed bf16, a bf16 LoRA base) ``16h + 12q + 10kv + 8i``; plus norm and log-sum-exp statistics. With
padding, sdpa gets keys and values repeated to q width and every layer saves the mask in the query
dtype (rows × tokens² × 2 or 4 bytes). Gradient checkpointing keeps only each layer's input and
recomputes one layer at a time; a layer's backward adds 2h + 2i per token.

**Logits.** GRPO (TRL's fused LM head, ``trl/kernels/chunked_logprob.py``) keeps the scored positions'
hidden states (CUDA: the completion's; CPU: all) and projects in tiles of :data:`TRL_TOKEN_TILE` ×
:data:`TRL_VOCAB_TILE`; the CPU fold holds several fp32 tiles at once, CUDA folds in place. SFT:
cross-entropy in chunks of :data:`SFT_LOGITS_CHUNK` labelled positions, recomputed in the backward pass.

**Generation** (GRPO, ``grpo.vllm.mode: none``): FSDP 1 summons the root unit whole in fp32 and gathers
each layer as it runs; ZeRO-3 gathers every parameter. The KV cache (keys in the RoPE tables' dtype,
values in the keys') of ``engine.max_batch_tokens`` positions, at least the longest conversation, plus
the engine's growth room and a join's merged copy (:data:`KV_GROWTH`), and the longest prefill.

**Margin**: on a GPU the CUDA context, NCCL with several processes, and 10 % for the allocator (an
allowance, not measured); on the CPU the process's own memory. Not covered: CUDA graphs, fragmentation
beyond 10 %, the processes' runtime in CPU memory, offload's pinned buffers, checkpoint serialisation.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from lis.config.training import GrpoSection, SftSection
from lis.train.plan.setups import Setup
from lis.train.plan.shapes import ModelShape
from lis.train.precision import resolve_precision

GB = 1e9
SFT_LOGITS_CHUNK = 4096        # labelled positions per cross-entropy chunk (recomputed in the backward pass)
TRL_TOKEN_TILE = 4096          # trl.kernels.chunked_logprob.TOKEN_CHUNK_SIZE
TRL_VOCAB_TILE = 32768         # trl.trainer.utils._CHUNKED_LOGPROB_CHUNK_SIZE
CPU_FOLD_TILES_FWD = 4.0       # _forward_tile: the tile, z scaled twice, z - max and its exp, e * z (fp32)
CPU_FOLD_TILES_BWD = 8.25      # _backward_tile: tile, y, z, log_p, p, grad, the target mask (bool), two temporaries
CUDA_CONTEXT_GB = 1.0
NCCL_GB = 0.5
ALLOCATOR_SHARE = 0.10
CPU_RUNTIME_GB = 1.0           # a training process before its first step (--measure), rounded up
LOSS_BYTES_PER_TOKEN = 40      # TRL's per-token loss tensors (ratios, clipped terms, masks): ~10 fp32 per token
KV_GROWTH = 1.25               # the batch engine's cache buffers: 25 % room; a join builds the merged cache anew

PHASES = ("generation", "train", "optimizer")
TERM_ORDER = ("weights", "master", "grads", "optimizer", "autocast", "buckets", "gathered", "act_on", "act_off",
              "layer_bwd", "mask", "logits_saved", "logits", "gen_model", "kv", "kv_copies", "prefill", "sync",
              "optim_tmp", "margin")


@dataclass
class Workload:
    """What one stage's params ask of memory (per micro-batch, per optimizer step, per checkpoint)."""

    stage: str                      # grpo | sft
    rows: int                       # sequences per micro-batch
    tokens: int                     # positions per sequence (the padded width)
    completion: int                 # grpo: completion positions per sequence (what CUDA scores); sft: 0
    labelled: int                   # sft: labelled positions per micro-batch (what the loss scores); grpo: 0
    group_batch: int                # sequences per optimizer step (all processes)
    bf16: bool
    checkpointing: bool
    device: str = "cuda"            # cuda | cpu: what TRL's LM head scores, which fold it uses
    padded: bool = False            # micro-batches carry padding (an attention mask): GRPO's generation batch
    lora_rank: int = 0
    lora_targets: tuple[str, ...] = ()
    lora_dropout: float = 0.0
    kv_positions: int = 0           # grpo in-process generation: engine.max_batch_tokens (0: server mode)
    prefill_tokens: int = 0         # the longest conversation prefilled at once
    keep: int = 1                   # checkpoints kept (+ the one being written)
    checkpoint_optimizer: bool = True
    optimizer: str = "fused"        # fused (HF Trainer's adamw_torch_fused) | default (torch AdamW: foreach on
                                    # CUDA, one tensor at a time on the CPU; Lightning's)
    steps: int = 1
    server_sync: str = ""           # grpo server mode: how the weights reach the vLLM server (files | trl; "": none)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def workload(stage: str, sec: GrpoSection | SftSection, *, cuda: bool, processes: int = 1) -> Workload:
    """The workload of the validated params section ``sec`` (``grpo`` or ``sft``) on CUDA or the CPU (``auto``
    precision knobs resolve to on with CUDA, off without)."""
    prec = resolve_precision(sec.precision.bf16, sec.precision.gradient_checkpointing, cuda=cuda)
    common = dict(bf16=prec.bf16, checkpointing=prec.gradient_checkpointing,
                  device="cuda" if cuda else "cpu", lora_rank=sec.lora.rank,
                  lora_targets=tuple(sec.lora.target_modules), lora_dropout=float(sec.lora.dropout))
    if stage == "grpo":
        rows = sec.micro_batch
        server = sec.vllm is not None and sec.vllm.mode == "server"
        prompt, episode = sec.max_prompt_tokens, sec.max_episode_tokens
        w = Workload(stage="grpo", rows=rows, tokens=prompt + episode, completion=episode, labelled=0,
                     group_batch=sec.group_batch, padded=rows > 1,  # lis trims each micro-batch to its own rows
                     kv_positions=0 if server else sec.engine.max_batch_tokens,
                     prefill_tokens=0 if server else prompt + episode, keep=sec.checkpoints.keep,
                     checkpoint_optimizer=sec.checkpoints.optimizer, optimizer="fused", steps=sec.steps, **common)
        if server:
            w.server_sync = sec.vllm.sync
            w.notes.append("grpo.vllm.mode server: generation on the vLLM server's own GPUs (its memory: below); "
                           "the trainer's GPUs train, and hold the weight push's transient copy")
        else:
            w.notes.append("grpo.vllm.mode none: each GPU also generates its episodes, colocated, on the trainer's own "
                           f"weights (no copy, no sync): the generation phase holds the engine's KV cache of "
                           f"{w.kv_positions:,} positions (grpo.engine.max_batch_tokens), then frees it for training")
        return w
    if stage == "sft":
        rows, tokens = sec.batch_size, sec.max_tokens
        w = Workload(stage="sft", rows=rows, tokens=tokens, completion=0, labelled=rows * tokens,
                     group_batch=rows * max(1, processes), padded=False, keep=1, checkpoint_optimizer=True,
                     optimizer="default", steps=sec.steps, **common)
        if not w.steps:
            w.notes.append("sft.steps is 0: the stage copies the base (no training); the plan is what steps > 0 "
                           "would need")
        return w
    raise ValueError(f"unknown stage {stage!r}")


@dataclass
class Term:
    """One line of a plan: bytes on each process's device and in the node's CPU memory."""

    key: str
    label: str
    gpu: float = 0.0                # bytes per process (its device: a GPU, or host memory on the CPU)
    cpu: float = 0.0                # bytes in the node's CPU memory (every process together), offloaded state
    phases: tuple[str, ...] = PHASES
    counted: bool = True            # False: shown for comparison (e.g. checkpointing off while it is on)
    knob: str = ""                  # what shrinks it

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "gpu_gb": round(self.gpu / GB, 3),
                "cpu_gb": round(self.cpu / GB, 3),
                "phases": list(self.phases), "counted": self.counted, "knob": self.knob}


@dataclass
class Plan:
    """Terms, the peak over the phases, capacity and disk of one stage under one setup."""

    stage: str
    shape: ModelShape
    setup: Setup
    workload: Workload
    terms: list[Term]
    phases: dict[str, float]        # bytes per process at each phase's peak (margin included)
    margin: dict[str, float]        # the margin of each phase
    disk: dict[str, float]          # bytes: per checkpoint, checkpoints kept (+1 written), final model, total
    trainable: int
    dtypes: dict[str, str] = field(default_factory=dict)   # weights, compute, kv: what the terms assume

    @property
    def peak(self) -> float:
        return max(self.phases.values())

    @property
    def peak_phase(self) -> str:
        return max(self.phases, key=lambda k: self.phases[k])

    @property
    def peak_gb(self) -> float:
        return self.peak / GB

    @property
    def cpu_gb(self) -> float:
        return sum(t.cpu for t in self.terms if t.counted) / GB

    @property
    def fits_gpu(self) -> bool:
        return self.peak_gb <= self.setup.capacity_gb

    @property
    def fits_cpu(self) -> bool | None:
        cap = self.setup.cpu_capacity_gb
        return None if cap is None else self.cpu_gb <= cap

    @property
    def fits(self) -> bool:
        return self.fits_gpu and self.fits_cpu is not False

    def term(self, key: str) -> Term:
        return next(t for t in self.terms if t.key == key)

    def in_phase(self, phase: str) -> list[Term]:
        return [t for t in self.terms if t.counted and phase in t.phases and t.gpu > 0]

    def largest(self) -> Term:
        """The largest term on the device at the peak phase (CPU memory's when only that does not fit)."""
        if self.fits_gpu and self.fits_cpu is False:
            return max((t for t in self.terms if t.counted), key=lambda t: t.cpu)
        return max((t for t in self.in_phase(self.peak_phase) if t.key != "margin"), key=lambda t: t.gpu)

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "model": self.shape.name, "params": self.shape.params, "trainable": self.trainable,
                "shape": asdict(self.shape), "setup": self.setup.as_dict(), "workload": self.workload.as_dict(),
                "terms": [t.as_dict() for t in self.terms],
                "phases_gb": {k: round(v / GB, 3) for k, v in self.phases.items()},
                "margin_gb": {k: round(v / GB, 3) for k, v in self.margin.items()},
                "peak_gb": round(self.peak_gb, 3), "peak_phase": self.peak_phase, "capacity_gb": self.setup.capacity_gb,
                "cpu_gb": round(self.cpu_gb, 3), "cpu_capacity_gb": self.setup.cpu_capacity_gb,
                "fits": self.fits, "fits_gpu": self.fits_gpu, "fits_cpu": self.fits_cpu,
                "disk_gb": {k: round(v / GB, 3) for k, v in self.disk.items()}, "dtypes": self.dtypes}


def layer_saved_bytes(s: ModelShape, mode: str, padded: bool) -> float:
    """Bytes autograd keeps per token for one decoder layer (module doc); ``mode``: fp32 | autocast | bf16."""
    h, q, kv, i = s.hidden, s.q, s.kv, s.intermediate
    if mode == "fp32":
        b = 4 * (6 * h + 5 * q + 4 * kv + 4 * i)
        rep = 4 * 2 * (q - kv)
    elif mode == "autocast":
        b = 26 * h + 12 * q + 10 * kv + 8 * i
        rep = 2 * 2 * (q - kv)
    else:
        b = 16 * h + 12 * q + 10 * kv + 8 * i
        rep = 2 * 2 * (q - kv)
    stats = 4 * (2 + 2 * s.heads + s.kv_heads)
    return b + stats + (rep if padded else 0)


def lora_saved_bytes(s: ModelShape, w: Workload, base_bytes: int) -> float:
    """Per token and layer, what LoRA adds: each adapter's r-wide intermediate (fp32), its input cast to
    the adapters' fp32 when the base is bf16 (PEFT's _cast_input_dtype), its dropout's output."""
    if not w.lora_rank:
        return 0.0
    shapes = s.linear_shapes()
    extra = 0.0
    for t in w.lora_targets:
        fan_in = shapes[t][0]
        extra += 4 * w.lora_rank
        if base_bytes != 4:
            extra += 4 * fan_in
        if w.lora_dropout > 0:
            extra += 4 * fan_in
    return extra


def estimate(s: ModelShape, w: Workload, st: Setup) -> Plan:
    """The plan of workload ``w`` for a model of shape ``s`` under setup ``st`` (module doc)."""
    n = max(1, st.processes)
    cuda = st.device == "cuda"
    lora = w.lora_rank > 0
    P = s.params
    trainable = s.lora_params(w.lora_rank, w.lora_targets) if lora else P
    deepspeed_bf16 = st.distributed == "deepspeed" and w.bf16 and not lora
    bf16_weights = w.bf16 and (st.distributed in ("fsdp", "deepspeed") or lora)
    mode = "fp32" if not w.bf16 else ("bf16" if bf16_weights else "autocast")
    b_c = 2 if w.bf16 else 4                           # compute dtype
    b_res = 2 if mode == "bf16" else 4                 # the residual stream, the layers' inputs
    b_w = 2 if mode == "bf16" else 4                   # weights as the module computes with them
    knobs = _knobs(w.stage)
    dtypes: dict[str, str] = {}

    # -- state ----------------------------------------------------------------------------------
    if lora:
        base_b = 2 if w.bf16 else 4
        weights = P * base_b + trainable * 4
        master = 0.0
    else:
        base_b = 2 if deepspeed_bf16 else 4
        weights = P * base_b
        master = P * 4.0 if deepspeed_bf16 else 0.0
    grads = trainable * 4.0
    optim = trainable * 8.0
    sh_w = n if st.shards_params else 1
    sh_g = n if st.shards_grads else 1
    sh_o = n if st.shards_optimizer else 1
    w_off = st.offload_params and cuda
    o_off = st.offload_optimizer and cuda
    g_off = cuda and ((st.distributed == "fsdp" and st.offload_params) or (st.distributed == "deepspeed" and o_off))
    terms: list[Term] = []

    def state(key: str, label: str, total: float, shards: int, offloaded: bool, phases=PHASES) -> Term:
        per = total / shards
        t = Term(key, label, gpu=0.0 if offloaded else per, cpu=per * n if offloaded else 0.0, phases=phases,
                 knob=knobs[key])
        terms.append(t)
        return t

    dtypes["weights"] = (f"{'bf16' if base_b == 2 else 'fp32'} base + fp32 adapters" if lora else
                         ("bf16 + fp32 master" if master else "fp32"))
    dtypes["compute"] = {"fp32": "fp32", "autocast": "bf16 autocast", "bf16": "bf16 (mixed-precision weights)"}[mode]
    state("weights", "weights (frozen base + adapters)" if lora else "weights", weights, sh_w, w_off)
    if master:
        state("master", "master weights (fp32)", master, sh_o, o_off)
    grads_t = state("grads", f"gradients (fp32{', adapters' if lora else ''})", grads, sh_g, g_off,
                    phases=("train", "optimizer"))
    state("optimizer", f"optimizer state (AdamW 2 x fp32{', adapters' if lora else ''})", optim, sh_o, o_off)
    accumulation = max(1, w.group_batch // max(1, w.rows * n))
    # gradients at the activation peak (the start of the backward pass): all of them from the second
    # micro-batch of an accumulated step on; without accumulation (zeroed with set_to_none after every
    # step) only the output layer's, which the loss's backward pass writes first
    grads_at_peak = grads_t.gpu if accumulation > 1 else (0.0 if lora or g_off else s.vocab * s.hidden * 4.0 / sh_g)
    if mode == "autocast":
        copies = 2.0 * s.layers * s.layer_linear_params + (2.0 * s.vocab * s.hidden if w.stage == "sft" else 0.0)
        if lora:
            copies = 0.0
        terms.append(Term("autocast", "autocast bf16 weight copies", gpu=copies, phases=("train",),
                          knob=knobs["weights"]))
    if st.distributed == "ddp" and n > 1:
        terms.append(Term("buckets", "DDP gradient buckets (fp32)", gpu=trainable * 4.0, phases=("train", "optimizer"),
                          knob=knobs["weights"]))
    if st.shards_params or st.offload_params:
        root = s.embed_params + s.head_params + s.hidden
        gathered = (root + 2 * s.layer_params) * b_c + s.layer_params * (4 if not w.bf16 else 2)
        terms.append(Term("gathered", "layers gathered for compute", gpu=gathered,
                          phases=("train",), knob=knobs["weights"]))

    # -- activations ------------------------------------------------------------------------------
    T = w.rows * w.tokens                        # positions of a micro-batch
    per_layer = layer_saved_bytes(s, mode, w.padded) + lora_saved_bytes(s, w, base_b)
    final = T * ((8 if b_res == 4 else 6) * s.hidden + 4)
    saved_off = s.layers * T * per_layer + final
    kept_on = s.layers * T * s.hidden * b_res + final
    layer_bwd = T * (per_layer + 2 * s.hidden * b_res + 2 * s.intermediate * b_c)
    mask_b = 4 if mode == "fp32" else 2
    mask_bool = w.rows * w.tokens ** 2 if w.padded else 0
    mask_layer = w.rows * w.tokens ** 2 * mask_b if w.padded else 0
    ck = w.checkpointing
    terms.append(Term("act_on", "activations kept, checkpointing on", gpu=kept_on, phases=("train",), counted=ck,
                      knob=knobs["activations"]))
    terms.append(Term("act_off", "activations kept, checkpointing off", gpu=saved_off, phases=("train",),
                      counted=not ck, knob=knobs["activations"]))
    terms.append(Term("layer_bwd", "one layer's backward (recomputed + gradients)" if ck else
                      "one layer's backward (gradients)", gpu=layer_bwd if ck else layer_bwd - T * per_layer,
                      phases=("train",), knob=knobs["activations"]))
    if w.padded:
        terms.append(Term("mask", f"attention mask (padded micro-batch, {'1 layer' if ck else 'every layer'})",
                          gpu=mask_bool + mask_layer * (1 if ck else s.layers), phases=("train",), knob=knobs["mask"]))

    # -- logits ---------------------------------------------------------------------------------
    logits_saved, logits_fwd, logits_bwd, label = _logits(s, w, mode, b_c, b_w)
    terms.append(Term("logits_saved", f"{label}: kept", gpu=logits_saved, phases=("train",), knob=knobs["logits"]))
    terms.append(Term("logits", f"{label}: working set", gpu=max(logits_fwd, logits_bwd), phases=("train",),
                      knob=knobs["logits"]))

    # -- generation (grpo, in-process) ------------------------------------------------------------
    if w.stage == "grpo" and w.kv_positions:
        # keys take the dtype of the RoPE tables, i.e. of the embedding's output (fp32 unless the module's
        # weights are bf16: DeepSpeed bf16, a bf16 LoRA base); transformers' cache stores the values in the
        # keys' dtype (DynamicLayer starts from an empty tensor of it; checked on the CPU under autocast)
        b_kv = 2 if (deepspeed_bf16 or (lora and w.bf16)) else 4
        dtypes["kv"] = "bf16" if b_kv == 2 else "fp32"
        if st.distributed == "fsdp" and (st.shards_params or st.offload_params):
            # FSDP 1: the root unit summoned whole (fp32), each layer gathered by its own unit as it runs
            root = s.embed_params + s.head_params + s.hidden
            terms.append(Term("gen_model", "weights gathered for generation",
                              gpu=root * 4.0 + 2 * s.layer_params * b_c, phases=("generation",),
                              knob=knobs["gen_model"]))
        elif st.shards_params or st.offload_params:   # ZeRO-3: every parameter gathered (ds3_gather_for_generation)
            terms.append(Term("gen_model", "weights gathered for generation",
                              gpu=P * base_b + (trainable * 4 if lora else 0), phases=("generation",),
                              knob=knobs["gen_model"]))
        # a request larger than the budget runs alone: the longest conversation's cache is the floor
        positions = max(w.kv_positions, w.prefill_tokens)
        kv = positions * s.kv_bytes_per_position(b_kv)
        terms.append(Term("kv", f"KV cache ({positions:,} positions)", gpu=kv,
                          phases=("generation",), knob=knobs["kv"]))
        terms.append(Term("kv_copies", "KV growth room + a join's merged copy (worst case)", gpu=kv * KV_GROWTH,
                          phases=("generation",), knob=knobs["kv"]))
        terms.append(Term("prefill", f"prefill of {w.prefill_tokens:,} tokens", gpu=w.prefill_tokens *
                          (3 * s.intermediate * b_c + 2 * s.hidden * b_res), phases=("generation",),
                          knob=knobs["prefill"]))

    # -- the weight push to a vLLM server (server mode), before each step's generation -----------------
    if w.stage == "grpo" and w.server_sync:
        # LoRA: the adapters merged out of place, every adapted weight's delta at once (fp32), on the trainer's GPU.
        # files: the safetensors file is built in host memory whole (the weights in their dtype) and written;
        # trl: NCCL broadcasts parameter by parameter (ZeRO-3 gathers each in turn: the largest one).
        delta = 0.0 if not lora else s.layers * 4.0 * sum(a * b for name, (a, b) in s.linear_shapes().items()
                                                          if name in w.lora_targets)
        largest = max(s.embed_params, max(a * b for a, b in s.linear_shapes().values())) * base_b
        gathered = largest if (w.server_sync == "trl" and st.shards_params) else 0.0
        terms.append(Term("sync", f"weight push to the vLLM server (sync: {w.server_sync}, transient)",
                          gpu=delta + gathered, cpu=P * b_w if w.server_sync == "files" else 0.0,
                          phases=("generation",), knob="grpo.vllm.sync; LoRA merges its deltas"))

    # -- optimizer step -----------------------------------------------------------------------------
    if w.optimizer == "default":   # torch.optim.AdamW: foreach on CUDA (sqrt of every second moment at once),
        if cuda:                   # one tensor at a time on the CPU (two temporaries of the largest parameter)
            tmp = 0.0 if o_off else trainable * 4.0 / sh_o
        else:
            largest = max(s.embed_params, max(a * b for a, b in s.linear_shapes().values())) if not lora else 0
            tmp = 2 * 4.0 * largest
        terms.append(Term("optim_tmp", "optimizer step temporaries", gpu=tmp, phases=("optimizer",),
                          knob=knobs["optimizer"]))

    # -- phases ---------------------------------------------------------------------------------
    def total(phase: str) -> float:
        return sum(t.gpu for t in terms if t.counted and phase in t.phases)

    resident = sum(t.gpu for t in terms if t.counted and t.key in ("weights", "master", "optimizer"))
    by_key = {t.key: t for t in terms}
    train_fixed = resident + grads_at_peak + sum(by_key[k].gpu for k in ("autocast", "buckets", "gathered")
                                                 if k in by_key)
    kept = by_key["act_on" if ck else "act_off"].gpu + by_key["logits_saved"].gpu
    # the boolean mask is kept (a checkpoint's input); the float masks the layers make are kept by every layer
    # without checkpointing, by the recomputed layer alone with it (during its backward pass)
    mask_kept = mask_bool + (0 if ck else s.layers * mask_layer)
    mask_recomputed = mask_layer if ck else 0
    # the logits' working set and a layer's backward never coexist: the larger of the two moments
    train = train_fixed + kept + mask_kept + max(by_key["logits"].gpu, by_key["layer_bwd"].gpu + mask_recomputed)
    # the end of the backward pass: every gradient, the embedding's dense gradient being added
    train = max(train, resident + by_key["grads"].gpu + (0 if lora else s.embed_params * 4.0 / sh_g))
    phases = {"train": train, "optimizer": total("optimizer")}
    if w.stage == "grpo" and (w.kv_positions or w.server_sync):
        phases["generation"] = total("generation")
    margin = {}
    for k, v in phases.items():
        if cuda:
            margin[k] = CUDA_CONTEXT_GB * GB + (NCCL_GB * GB if n > 1 else 0.0) + ALLOCATOR_SHARE * v
        else:
            margin[k] = CPU_RUNTIME_GB * GB
        phases[k] = v + margin[k]
    terms.append(Term("margin", "margin (CUDA context, NCCL, allocator 10 %)" if cuda else
                      "margin (the process's runtime)", gpu=max(margin.values()), phases=PHASES, knob=""))
    return Plan(stage=w.stage, shape=s, setup=st, workload=w, terms=terms, phases=phases, margin=margin,
                disk=_disk(s, w, st, trainable, deepspeed_bf16), trainable=trainable, dtypes=dtypes)


def _logits(s: ModelShape, w: Workload, mode: str, b_c: int, b_w: int) -> tuple[float, float, float, str]:
    """(kept, forward working set, backward working set, label) of the output layer's loss (module doc)."""
    h, V = s.hidden, s.vocab
    b_h = 2 if mode == "bf16" else 4
    cast_w = V * h * b_c if b_w != b_c else 0       # a vocabulary chunk of the weight cast to the compute dtype
    if w.stage == "grpo":
        cpu = w.device != "cuda"
        scored = w.rows * (w.tokens - 1) if cpu else w.rows * w.completion
        tile_t, tile_v = min(scored, TRL_TOKEN_TILE), min(V, TRL_VOCAB_TILE)
        tile = tile_t * tile_v
        kept = scored * (h * b_h + 16) + w.rows * w.completion * LOSS_BYTES_PER_TOKEN
        w_chunk = tile_v * h * b_c if b_w != b_c else 0
        fwd = tile * b_c + (CPU_FOLD_TILES_FWD - 1 + (1 if b_c != 4 else 0)) * tile * 4 * cpu + w_chunk
        bwd = (scored * h * 4 + V * h * 4 + tile * b_c + (CPU_FOLD_TILES_BWD - 1) * tile * 4 * cpu + w_chunk
               + (V * h * b_w if b_w != 4 else 0) + (scored * h * b_h if b_h != 4 else 0))
        where = "completion positions" if not cpu else "every position"
        return kept, fwd, bwd, f"logits (TRL fused LM head, {scored:,} {where})"
    n = w.labelled
    c = min(n, SFT_LOGITS_CHUNK)
    kept = n * h * b_h
    fwd = c * V * (b_c + 4 + (4 if b_c != 4 else 0)) + cast_w
    bwd = max(3 * c * V * 4, c * V * 4 + V * h * 4) + n * h * 4 + (c * V * b_c if b_c != 4 else 0) + cast_w
    return kept, fwd, bwd, f"logits (cross-entropy, {n:,} labelled in chunks of {c:,})"


def _disk(s: ModelShape, w: Workload, st: Setup, trainable: int, deepspeed_bf16: bool) -> dict[str, float]:
    """Bytes on disk: one checkpoint (weights as saved, plus the optimizer state when kept), the
    checkpoints kept plus the one being written, and the finished model (fp32, bf16 from DeepSpeed)."""
    P = s.params
    if w.lora_rank:
        weights, optim = trainable * 4.0, trainable * 8.0
        final = P * (2.0 if w.bf16 else 4.0)
    elif deepspeed_bf16:    # the 16-bit model, the engine's bf16 module states, its fp32 master + moments
        weights, optim = P * 2.0, P * (2.0 + 12.0)
        final = P * 2.0
    else:
        weights, optim = P * 4.0, P * 8.0
        final = P * 4.0
    per = weights + (optim if w.checkpoint_optimizer else 0.0)
    kept = per * (w.keep + 1)
    return {"checkpoint": per, "checkpoints": kept, "final_model": final, "total": kept + final}


def _knobs(stage: str) -> dict[str, str]:
    """What shrinks each term, in the words of the params and the configs (the refusal's hint)."""
    p = stage
    offload = "an offload config (--accelerate workflow/accelerate/deepspeed_zero3_offload.yaml or fsdp_offload.yaml)"
    if stage == "sft":
        offload = "fewer trainable parameters (Lightning runs sft without sharding or offload)"
    return {
        "weights": f"shard or offload them ({offload}) or train LoRA adapters ({p}.lora.rank > 0)",
        "master": f"{offload} or {p}.lora.rank > 0",
        "grads": f"{offload} or {p}.lora.rank > 0",
        "optimizer": f"{offload} or {p}.lora.rank > 0",
        "activations": f"{p}.precision.gradient_checkpointing: true, a smaller {p}."
                       f"{'micro_batch' if p == 'grpo' else 'batch_size'}, or shorter "
                       + ("grpo.max_prompt_tokens / grpo.max_episode_tokens" if p == "grpo" else "sft.max_tokens"),
        "mask": "a smaller grpo.micro_batch or shorter grpo.max_prompt_tokens / max_episode_tokens (the mask is "
                "tokens squared)",
        "logits": ("shorter grpo.max_episode_tokens or a smaller grpo.micro_batch" if p == "grpo" else
                   "a smaller sft.batch_size or shorter sft.max_tokens"),
        "gen_model": "grpo.vllm.mode: server (generation on other GPUs)",
        "kv": "a smaller grpo.engine.max_batch_tokens or grpo.vllm.mode: server",
        "prefill": "grpo.vllm.mode: server or shorter grpo.max_prompt_tokens / max_episode_tokens",
    }
