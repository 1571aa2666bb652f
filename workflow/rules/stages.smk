# GENERATED from lis/stages/ by `lis pipeline write`: edit a stage's module there, not this file
# (`lis pipeline check` and the tests fail when the two differ). The helpers the rules call are in
# common.smk; the `paper` target is in the Snakefile.


rule context_tasks:
    input:
        sources("tasks.samples_dir"),
        stage_code("context_tasks"),
    output:
        "data/train/context/files.jsonl",
        "data/train/context/prompt.jsonl",
        "data/train/context/math.jsonl",
        "data/train/context/manifest.json",
    params:
        **stage_params("context_tasks"),
    log:
        "logs/train/context_tasks.log",
    message:
        "Context tasks for RL (train split; files, prompt and math variants)"
    shell:
        "lis context-tasks --out-dir data/train/context --profile {params.profile} --log logs/train/context_tasks.log"


rule base:
    priority: 50
    input:
        "data/train/context/files.jsonl",
        sources("tasks.samples_dir"),
        stage_code("base"),
    output:
        directory("data/models/base"),
    params:
        **stage_params("base"),
    log:
        "logs/train/base.log",
    message:
        "Base model ({params.profile})"
    shell:
        "lis train base --out data/models/base --context-tasks data/train/context/files.jsonl --profile "
        "{params.profile} --log logs/train/base.log"


rule image:
    input:
        sources("image.context"),
        stage_code("image"),
    output:
        "data/image/manifest.json",
    params:
        **stage_params("image"),
    log:
        "logs/image.log",
    message:
        "Sandbox image (profile {params.profile})"
    shell:
        "lis image build --profile {params.profile} --out data/image/manifest.json --log logs/image.log"


rule model_card:
    input:
        stage_code("model_card"),
    output:
        directory("data/models/{name}"),
    wildcard_constraints:
        name=one_of(value("jobs.external")),
    params:
        **stage_params("model_card"),
    log:
        "logs/models/{name}.log",
    message:
        "Model card of {wildcards.name}"
    shell:
        "lis model card --model {wildcards.name} --out data/models/{wildcards.name} --profile {params.profile} --log "
        "logs/models/{wildcards.name}.log"


rule sandbox_memory:
    input:
        "data/image/manifest.json",
        stage_code("sandbox_memory"),
    output:
        "data/bench/sandbox_memory.json",
    params:
        **stage_params("sandbox_memory"),
    log:
        "logs/bench/sandbox_memory.log",
    message:
        "Memory of an idle and a busy sandbox"
    shell:
        "lis bench memory --image-manifest data/image/manifest.json --out data/bench/sandbox_memory.json --profile "
        "{params.profile} --log logs/bench/sandbox_memory.log"


rule storage:
    input:
        "data/reference/storage_quoted.yaml",
        "data/image/manifest.json",
        "data/bench/sandbox_memory.json",
        stage_code("storage"),
    output:
        "data/analysis/storage.json",
    log:
        "logs/analysis/storage.log",
    message:
        "Storage and memory (Table 12)"
    shell:
        "lis efficiency storage --quoted data/reference/storage_quoted.yaml --image-manifest data/image/manifest.json "
        "--memory data/bench/sandbox_memory.json --out data/analysis/storage.json --log logs/analysis/storage.log"


rule tasks:
    input:
        sources("tasks.samples_dir"),
        stage_code("tasks"),
    output:
        "data/tasks/{domain}.jsonl",
        "data/tasks/{domain}.manifest.json",
    wildcard_constraints:
        domain=one_of(value("jobs.domains")),
    params:
        **stage_params("tasks"),
    log:
        "logs/tasks/{domain}.log",
    message:
        "Task set: {wildcards.domain} (profile {params.profile})"
    shell:
        "lis tasks --domain {wildcards.domain} --profile {params.profile} --out data/tasks/{wildcards.domain}.jsonl "
        "--log logs/tasks/{wildcards.domain}.log"


rule teacher:
    priority: 50
    input:
        "data/train/context/files.jsonl",
        "data/image/manifest.json",
        sources("tasks.samples_dir"),
        stage_code("teacher"),
    output:
        "data/train/teacher/trajectories.jsonl",
        "data/train/teacher/manifest.json",
    params:
        **stage_params("teacher"),
    log:
        "logs/train/teacher.log",
    message:
        "Teacher episodes in the sandbox"
    shell:
        "lis train teacher --out data/train/teacher --context-tasks data/train/context/files.jsonl --image-manifest "
        "data/image/manifest.json --profile {params.profile} --log logs/train/teacher.log"


rule sft:
    priority: 50
    threads: cores("sft.threads")
    input:
        "data/models/base",
        "data/train/teacher/trajectories.jsonl",
        stage_code("sft"),
    output:
        directory("data/models/sft"),
    params:
        **stage_params("sft"),
    log:
        "logs/train/sft.log",
    message:
        "SFT warm start (Lightning)"
    shell:
        "lis train sft --base data/models/base --data data/train/teacher/trajectories.jsonl --out data/models/sft "
        "--profile {params.profile} --log logs/train/sft.log"


rule grpo:
    priority: 40
    threads: cores("grpo.threads")
    input:
        "data/models/sft",
        "data/train/context/{variant}.jsonl",
        "data/image/manifest.json",
        stage_code("grpo"),
    output:
        directory("data/models/grpo-{variant}"),
        "data/train/runs/grpo-{variant}/metrics.json",
        "data/train/runs/grpo-{variant}/train_log.csv",
    wildcard_constraints:
        variant=one_of(value("jobs.grpo_data")),
    params:
        **stage_params("grpo"),
    log:
        "logs/train/grpo-{variant}.log",
    message:
        "GRPO in the sandbox on the {wildcards.variant} variant"
    shell:
        "lis train grpo --init data/models/sft --data {wildcards.variant} --out data/models/grpo-{wildcards.variant} "
        "--logs data/train/runs/grpo-{wildcards.variant} --image-manifest data/image/manifest.json --profile "
        "{params.profile} --log logs/train/grpo-{wildcards.variant}.log"


rule llm_rl:
    threads: cores("grpo.threads")
    input:
        "data/models/sft",
        "data/train/context/files.jsonl",
        "data/image/manifest.json",
        stage_code("llm_rl"),
    output:
        directory("data/models/llm-rl"),
        "data/train/runs/llm-rl/metrics.json",
        "data/train/runs/llm-rl/train_log.csv",
    params:
        **stage_params("llm_rl"),
    log:
        "logs/train/llm-rl.log",
    message:
        "LLM-RL baseline (context in the prompt, no tools)"
    shell:
        "lis train grpo --mode vanilla --init data/models/sft --data files --out data/models/llm-rl --logs "
        "data/train/runs/llm-rl --image-manifest data/image/manifest.json --profile {params.profile} --log "
        "logs/train/llm-rl.log"


rule eval_inline:
    input:
        "data/tasks/long_context.jsonl",
        "data/models/{model}",
        "data/image/manifest.json",
        stage_code("eval_inline"),
    output:
        "data/eval/{model}/long_context/sandbox_inline/trajectories.jsonl",
        "data/eval/{model}/long_context/sandbox_inline/metrics.json",
    wildcard_constraints:
        model=one_of(value("jobs.long_context_ablation")),
    params:
        **stage_params("eval_inline"),
    log:
        "logs/eval/{model}/long_context/sandbox_inline.log",
    message:
        "Eval {wildcards.model} / long_context / documents in the prompt (Table 3)"
    shell:
        "lis eval run --model {wildcards.model} --domain long_context --mode sandbox_inline --profile {params.profile} "
        "--log logs/eval/{wildcards.model}/long_context/sandbox_inline.log"


rule eval_sandbox:
    input:
        "data/tasks/{domain}.jsonl",
        "data/models/{model}",
        "data/image/manifest.json",
        stage_code("eval_sandbox"),
    output:
        "data/eval/{model}/{domain}/sandbox/trajectories.jsonl",
        "data/eval/{model}/{domain}/sandbox/metrics.json",
    wildcard_constraints:
        model=one_of(value("jobs.models")),
        domain=one_of(value("jobs.domains")),
    params:
        **stage_params("eval_sandbox"),
    log:
        "logs/eval/{model}/{domain}/sandbox.log",
    message:
        "Eval {wildcards.model} / {wildcards.domain} / sandbox"
    shell:
        "lis eval run --model {wildcards.model} --domain {wildcards.domain} --mode sandbox --profile {params.profile} "
        "--log logs/eval/{wildcards.model}/{wildcards.domain}/sandbox.log"


rule eval_vanilla:
    input:
        "data/tasks/{domain}.jsonl",
        "data/models/{model}",
        stage_code("eval_vanilla"),
    output:
        "data/eval/{model}/{domain}/vanilla/trajectories.jsonl",
        "data/eval/{model}/{domain}/vanilla/metrics.json",
    wildcard_constraints:
        model=one_of(value("jobs.models")),
        domain=one_of(value("jobs.domains")),
    params:
        **stage_params("eval_vanilla"),
    log:
        "logs/eval/{model}/{domain}/vanilla.log",
    message:
        "Eval {wildcards.model} / {wildcards.domain} / vanilla"
    shell:
        "lis eval run --model {wildcards.model} --domain {wildcards.domain} --mode vanilla --profile {params.profile} "
        "--log logs/eval/{wildcards.model}/{wildcards.domain}/vanilla.log"


# The learning check over seeds (jobs.replicates, empty by default): replicate r repeats
# SFT (sft.seed + r) -> GRPO on files (grpo.seed + r) -> held-out evaluation under data/{models,train/runs,eval}/replicates/r<r>/.
rule sft_replicate:
    priority: 30
    threads: cores("sft.threads")
    input:
        "data/models/base",
        "data/train/teacher/trajectories.jsonl",
        stage_code("sft_replicate"),
    output:
        directory("data/models/replicates/r{replicate}/sft"),
    wildcard_constraints:
        replicate=one_of(value("jobs.replicates")),
    params:
        **stage_params("sft_replicate"),
    log:
        "logs/replicates/r{replicate}/sft.log",
    message:
        "Learning check, replicate {wildcards.replicate}: SFT (seed sft.seed + {wildcards.replicate})"
    shell:
        "lis train sft --base data/models/base --data data/train/teacher/trajectories.jsonl --out "
        "data/models/replicates/r{wildcards.replicate}/sft --seed-offset {wildcards.replicate} --profile "
        "{params.profile} --log logs/replicates/r{wildcards.replicate}/sft.log"


rule grpo_replicate:
    priority: 30
    threads: cores("grpo.threads")
    input:
        "data/models/replicates/r{replicate}/sft",
        "data/train/context/files.jsonl",
        "data/image/manifest.json",
        stage_code("grpo_replicate"),
    output:
        directory("data/models/replicates/r{replicate}/grpo-files"),
        "data/train/runs/replicates/r{replicate}/grpo-files/metrics.json",
        "data/train/runs/replicates/r{replicate}/grpo-files/train_log.csv",
    wildcard_constraints:
        replicate=one_of(value("jobs.replicates")),
    params:
        **stage_params("grpo_replicate"),
    log:
        "logs/replicates/r{replicate}/grpo-files.log",
    message:
        "Learning check, replicate {wildcards.replicate}: GRPO on files (seed grpo.seed + {wildcards.replicate})"
    shell:
        "lis train grpo --init data/models/replicates/r{wildcards.replicate}/sft --data files --out "
        "data/models/replicates/r{wildcards.replicate}/grpo-files --logs "
        "data/train/runs/replicates/r{wildcards.replicate}/grpo-files --seed-offset {wildcards.replicate} "
        "--image-manifest data/image/manifest.json --profile {params.profile} --log "
        "logs/replicates/r{wildcards.replicate}/grpo-files.log"


rule eval_replicate:
    input:
        "data/tasks/instruct_pretrain.jsonl",
        "data/models/replicates/r{replicate}/{model}",
        "data/image/manifest.json",
        stage_code("eval_replicate"),
    output:
        "data/eval/replicates/r{replicate}/{model}/instruct_pretrain/sandbox/trajectories.jsonl",
        "data/eval/replicates/r{replicate}/{model}/instruct_pretrain/sandbox/metrics.json",
    wildcard_constraints:
        replicate=one_of(value("jobs.replicates")),
        model=one_of(["sft", "grpo-files"]),
    params:
        **stage_params("eval_replicate"),
    log:
        "logs/replicates/r{replicate}/eval-{model}.log",
    message:
        "Learning check, replicate {wildcards.replicate}: {wildcards.model} on the held-out context tasks"
    shell:
        "lis eval run --model {wildcards.model} --model-path "
        "data/models/replicates/r{wildcards.replicate}/{wildcards.model} --domain instruct_pretrain --mode sandbox "
        "--out data/eval/replicates/r{wildcards.replicate}/{wildcards.model}/instruct_pretrain/sandbox --profile "
        "{params.profile} --log logs/replicates/r{wildcards.replicate}/eval-{wildcards.model}.log"


rule behaviour:
    input:
        stage_inputs("behaviour"),
        stage_code("behaviour"),
    output:
        "data/analysis/behaviour.json",
        "data/analysis/behaviour/groups.csv",
        "data/analysis/behaviour/figure2_by_domain.csv",
        "data/analysis/behaviour/table4.csv",
        "data/analysis/behaviour/table8.csv",
        "data/analysis/behaviour/table9.csv",
        "data/analysis/behaviour/table9_pairs.csv",
        "data/analysis/behaviour/turns.jsonl",
        "data/analysis/behaviour/turns.parquet",
    params:
        **stage_params("behaviour"),
    log:
        "logs/analysis/behaviour.log",
    message:
        "Behaviour: external resources, files, computation, turns (Figure 2, Tables 4, 8, 9)"
    shell:
        "lis behaviour analyse --jobs --eval-root data/eval --out data/analysis/behaviour.json --csv-dir "
        "data/analysis/behaviour --turns-out data/analysis/behaviour/turns.jsonl --profile {params.profile} --log "
        "logs/analysis/behaviour.log"


rule efficiency:
    input:
        stage_inputs("efficiency"),
        stage_code("efficiency"),
    output:
        "data/analysis/efficiency.json",
        "data/analysis/efficiency_episodes.csv",
        "data/analysis/efficiency_episodes.parquet",
    params:
        **stage_params("efficiency"),
    log:
        "logs/analysis/efficiency.log",
    message:
        "Efficiency: prompt, model and environment tokens; environment time (Tables 10, 11)"
    shell:
        "lis efficiency tokens --jobs --eval-root data/eval --out data/analysis/efficiency.json --episodes-csv "
        "data/analysis/efficiency_episodes.csv --profile {params.profile} --log logs/analysis/efficiency.log"


rule throughput:
    input:
        param_path("data/models/${throughput.model}"),
        "data/image/manifest.json",
        stage_inputs("throughput"),
        stage_code("throughput"),
    output:
        "data/bench/throughput.json",
    params:
        **stage_params("throughput"),
    log:
        "logs/bench/throughput.log",
    message:
        "Queries per minute, vanilla vs sandbox"
    shell:
        "lis throughput --image-manifest data/image/manifest.json --tasks-dir data/tasks --out "
        "data/bench/throughput.json --profile {params.profile} --log logs/bench/throughput.log"


rule report:
    input:
        "data/image/manifest.json",
        "data/reference/paper_numbers.yaml",
        "data/reference/design_tables.yaml",
        "data/analysis/behaviour.json",
        "data/analysis/behaviour/turns.jsonl",
        "data/analysis/efficiency.json",
        "data/analysis/storage.json",
        "data/bench/throughput.json",
        stage_inputs("report"),
        stage_code("report"),
    output:
        "paper_figures/index.md",
        "paper_figures/index.json",
        "paper_figures/index.html",
        directory("paper_figures/tables"),
        directory("paper_figures/figures"),
        directory("paper_figures/trajectories"),
    params:
        **stage_params("report"),
    log:
        "logs/report.log",
    message:
        "Report: paper_figures/ (profile {params.profile})"
    shell:
        "lis report --profile {params.profile} --image-manifest data/image/manifest.json --eval-root data/eval --out "
        "paper_figures --log logs/report.log"
