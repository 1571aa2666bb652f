# The training half: context tasks → base model → teacher episodes in the sandbox → SFT warm start
# → GRPO in the sandbox (one run per training-data variant, Table 7) and the LLM-RL baseline.
# Every trained model lands in data/models/<name>; external models get a card there instead, so
# that evaluation depends on data/models/<model> whoever made it.
EXTERNAL = JOBS["external"]


rule context_tasks:
    input:
        files_under(P.section("tasks")["samples_dir"]),
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
        "lis context-tasks --out-dir data/train/context --profile {params.profile} --log {log}"


rule base:
    priority: 50  # the training chain is the run's critical path: ahead of evaluations when a core frees
    input:
        context="data/train/context/files.jsonl",
        samples=files_under(P.section("tasks")["samples_dir"]),
        code=stage_code("base"),
    output:
        directory("data/models/base"),
    params:
        **stage_params("base"),
    log:
        "logs/train/base.log",
    message:
        "Base model ({params.profile})"
    shell:
        "lis train base --out data/models/base --context-tasks {input.context} --profile {params.profile} --log {log}"


rule teacher:
    priority: 50
    input:
        context="data/train/context/files.jsonl",
        image="data/image/manifest.json",
        samples=files_under(P.section("tasks")["samples_dir"]),
        code=stage_code("teacher"),
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
        "lis train teacher --out data/train/teacher --context-tasks {input.context} --image-manifest {input.image} "
        "--profile {params.profile} --log {log}"


rule sft:
    priority: 50
    threads: max(1, int(P.section("sft")["threads"]))  # the cores its trainer uses: nothing else is given them
    input:
        base="data/models/base",
        data="data/train/teacher/trajectories.jsonl",
        code=stage_code("sft"),
    output:
        directory("data/models/sft"),
    params:
        **stage_params("sft"),
    log:
        "logs/train/sft.log",
    message:
        "SFT warm start (Lightning)"
    shell:
        "lis train sft --base {input.base} --data {input.data} --out data/models/sft --profile {params.profile} --log {log}"


rule grpo:
    priority: 40
    threads: max(1, int(P.section("grpo")["threads"]))
    input:
        init="data/models/sft",
        data="data/train/context/{variant}.jsonl",
        image="data/image/manifest.json",
        code=stage_code("grpo"),
    output:
        directory("data/models/grpo-{variant}"),
        "data/train/runs/grpo-{variant}/metrics.json",
        "data/train/runs/grpo-{variant}/train_log.csv",
    wildcard_constraints:
        variant="files|prompt|math",
    params:
        **stage_params("grpo"),
    log:
        "logs/train/grpo-{variant}.log",
    message:
        "GRPO in the sandbox on the {wildcards.variant} variant"
    shell:
        "lis train grpo --init {input.init} --data {wildcards.variant} --out data/models/grpo-{wildcards.variant} "
        "--logs data/train/runs/grpo-{wildcards.variant} --image-manifest {input.image} --profile {params.profile} --log {log}"


rule llm_rl:
    threads: max(1, int(P.section("grpo")["threads"]))
    input:
        init="data/models/sft",
        data="data/train/context/files.jsonl",
        image="data/image/manifest.json",
        code=stage_code("llm_rl"),
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
        "lis train grpo --mode vanilla --init {input.init} --data files --out data/models/llm-rl --logs data/train/runs/llm-rl "
        "--image-manifest {input.image} --profile {params.profile} --log {log}"


rule model_card:
    input:
        stage_code("model_card"),
    output:
        directory("data/models/{name}"),
    wildcard_constraints:
        name="|".join(re.escape(m) for m in EXTERNAL) or "(?!)",
    params:
        **stage_params("model_card"),
    log:
        "logs/models/{name}.log",
    message:
        "Model card of {wildcards.name}"
    shell:
        "lis model card --model {wildcards.name} --out data/models/{wildcards.name} --profile {params.profile} --log {log}"
