# Behaviour and efficiency: how models use the computer and what it costs (issue 7). Each reads
# exactly the evaluation outputs the job lists call for.
BEHAVIOUR_MODES = P.section("behaviour")["modes"]
TP = P.data["throughput"]


def job_trajectories(modes):
    return [f"data/eval/{m}/{d}/{mode}/trajectories.jsonl" for m in JOBS["models"] for d in JOBS["domains"]
            for mode in modes]


rule behaviour:
    input:
        job_trajectories(BEHAVIOUR_MODES),
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
        "lis behaviour analyse --jobs --eval-root data/eval --out data/analysis/behaviour.json "
        "--csv-dir data/analysis/behaviour --turns-out data/analysis/behaviour/turns.jsonl --profile {params.profile} --log {log}"


rule efficiency:
    input:
        job_trajectories(["vanilla", "sandbox"]),
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
        "lis efficiency tokens --jobs --eval-root data/eval --out data/analysis/efficiency.json "
        "--episodes-csv data/analysis/efficiency_episodes.csv --profile {params.profile} --log {log}"


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
        "lis bench memory --image-manifest data/image/manifest.json --out data/bench/sandbox_memory.json "
        "--profile {params.profile} --log {log}"


rule throughput:
    input:
        [f"data/tasks/{d}.jsonl" for d in TP["domains"]],
        f"data/models/{TP['model']}",
        "data/image/manifest.json",
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
        "lis throughput --image-manifest data/image/manifest.json --tasks-dir data/tasks "
        "--out data/bench/throughput.json --profile {params.profile} --log {log}"


rule storage:
    input:
        quoted="data/reference/storage_quoted.yaml",
        image="data/image/manifest.json",
        memory="data/bench/sandbox_memory.json",
        code=stage_code("storage"),
    output:
        "data/analysis/storage.json",
    log:
        "logs/analysis/storage.log",
    message:
        "Storage and memory (Table 12)"
    shell:
        "lis efficiency storage --quoted {input.quoted} --image-manifest {input.image} --memory {input.memory} "
        "--out data/analysis/storage.json --log {log}"
