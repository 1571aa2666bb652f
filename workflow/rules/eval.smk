# Evaluation: one job per (model, domain, mode), so that caching is fine-grained. Every job resumes
# from its journal (data/journal/): a re-run repeats no finished episode.
rule eval_vanilla:
    input:
        "data/tasks/{domain}.jsonl",
        "data/models/{model}",
        stage_code("eval_vanilla"),
    output:
        "data/eval/{model}/{domain}/vanilla/metrics.json",
        "data/eval/{model}/{domain}/vanilla/trajectories.jsonl",
    params:
        **stage_params("eval_vanilla"),
    log:
        "logs/eval/{model}/{domain}/vanilla.log",
    message:
        "Eval {wildcards.model} / {wildcards.domain} / vanilla"
    shell:
        "lis eval run --model {wildcards.model} --domain {wildcards.domain} --mode vanilla --profile {params.profile} --log {log}"


rule eval_sandbox:
    input:
        "data/tasks/{domain}.jsonl",
        "data/models/{model}",
        "data/image/manifest.json",
        stage_code("eval_sandbox"),
    output:
        "data/eval/{model}/{domain}/sandbox/metrics.json",
        "data/eval/{model}/{domain}/sandbox/trajectories.jsonl",
    params:
        **stage_params("eval_sandbox"),
    log:
        "logs/eval/{model}/{domain}/sandbox.log",
    message:
        "Eval {wildcards.model} / {wildcards.domain} / sandbox"
    shell:
        "lis eval run --model {wildcards.model} --domain {wildcards.domain} --mode sandbox --profile {params.profile} --log {log}"


rule eval_inline:
    input:
        "data/tasks/long_context.jsonl",
        "data/models/{model}",
        "data/image/manifest.json",
        stage_code("eval_inline"),
    output:
        "data/eval/{model}/long_context/sandbox_inline/metrics.json",
        "data/eval/{model}/long_context/sandbox_inline/trajectories.jsonl",
    params:
        **stage_params("eval_inline"),
    log:
        "logs/eval/{model}/long_context/sandbox_inline.log",
    message:
        "Eval {wildcards.model} / long_context / documents in the prompt (Table 3)"
    shell:
        "lis eval run --model {wildcards.model} --domain long_context --mode sandbox_inline --profile {params.profile} --log {log}"


def eval_metrics():
    """Every metrics.json the job lists call for."""
    out = []
    for m in JOBS["models"]:
        for d in JOBS["domains"]:
            out += [f"data/eval/{m}/{d}/vanilla/metrics.json", f"data/eval/{m}/{d}/sandbox/metrics.json"]
    out += [f"data/eval/{m}/long_context/sandbox_inline/metrics.json" for m in JOBS["long_context_ablation"]]
    return out
