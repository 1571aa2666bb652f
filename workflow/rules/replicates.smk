# The learning check over seeds (jobs.replicates, empty by default: the embedded default runs one seed).
# Replicate r repeats the check's chain with other seeds — SFT (sft.seed + r) → GRPO on the files variant
# (grpo.seed + r) → held-out evaluation of both — under data/{models,train/runs,eval}/replicates/r<r>/
# (inside the folders the report stage depends on); the report pools the
# replicates with the main run (replicate 0) and shows each seed's GRPO − SFT and their mean over seeds.
REPLICATES = JOBS.get("replicates", [])
REPLICATE_MODELS = ("sft", "grpo-files")


wildcard_constraints:
    replicate="[0-9]+",


rule sft_replicate:
    priority: 30
    threads: max(1, int(P.section("sft")["threads"]))  # two 2-thread trainers on 2 cores thrash (OpenMP spin-waits)
    input:
        base="data/models/base",
        data="data/train/teacher/trajectories.jsonl",
        code=stage_code("sft_replicate"),
    output:
        directory("data/models/replicates/r{replicate}/sft"),
    params:
        **stage_params("sft_replicate"),
    log:
        "logs/replicates/r{replicate}/sft.log",
    message:
        "Learning check, replicate {wildcards.replicate}: SFT (seed sft.seed + {wildcards.replicate})"
    shell:
        "lis train sft --base {input.base} --data {input.data} --out data/models/replicates/r{wildcards.replicate}/sft "
        "--seed-offset {wildcards.replicate} --profile {params.profile} --log {log}"


rule grpo_replicate:
    priority: 30
    threads: max(1, int(P.section("grpo")["threads"]))
    input:
        init="data/models/replicates/r{replicate}/sft",
        data="data/train/context/files.jsonl",
        image="data/image/manifest.json",
        code=stage_code("grpo_replicate"),
    output:
        directory("data/models/replicates/r{replicate}/grpo-files"),
        "data/train/runs/replicates/r{replicate}/grpo-files/metrics.json",
        "data/train/runs/replicates/r{replicate}/grpo-files/train_log.csv",
    params:
        **stage_params("grpo_replicate"),
    log:
        "logs/replicates/r{replicate}/grpo-files.log",
    message:
        "Learning check, replicate {wildcards.replicate}: GRPO on files (seed grpo.seed + {wildcards.replicate})"
    shell:
        "lis train grpo --init {input.init} --data files --out data/models/replicates/r{wildcards.replicate}/grpo-files "
        "--logs data/train/runs/replicates/r{wildcards.replicate}/grpo-files --seed-offset {wildcards.replicate} "
        "--image-manifest {input.image} --profile {params.profile} --log {log}"


rule eval_replicate:
    input:
        "data/tasks/instruct_pretrain.jsonl",
        "data/models/replicates/r{replicate}/{model}",
        "data/image/manifest.json",
        stage_code("eval_replicate"),
    output:
        "data/eval/replicates/r{replicate}/{model}/instruct_pretrain/sandbox/metrics.json",
        "data/eval/replicates/r{replicate}/{model}/instruct_pretrain/sandbox/trajectories.jsonl",
    wildcard_constraints:
        model="sft|grpo-files",
    params:
        **stage_params("eval_replicate"),
    log:
        "logs/replicates/r{replicate}/eval-{model}.log",
    message:
        "Learning check, replicate {wildcards.replicate}: {wildcards.model} on the held-out context tasks"
    shell:
        "lis eval run --model {wildcards.model} --model-path data/models/replicates/r{wildcards.replicate}/{wildcards.model} "
        "--domain instruct_pretrain --mode sandbox --out data/eval/replicates/r{wildcards.replicate}/{wildcards.model}/instruct_pretrain/sandbox "
        "--profile {params.profile} --log {log}"
