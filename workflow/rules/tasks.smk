# Task sets: one job per domain of jobs.domains (offline samples or the hub, per tasks.domains.<d>).
rule tasks:
    input:
        files_under(P.section("tasks")["samples_dir"]),
        stage_code("tasks"),
    output:
        "data/tasks/{domain}.jsonl",
        "data/tasks/{domain}.manifest.json",
    params:
        **stage_params("tasks"),
    log:
        "logs/tasks/{domain}.log",
    message:
        "Task set: {wildcards.domain} (profile {params.profile})"
    shell:
        "lis tasks --domain {wildcards.domain} --profile {params.profile} --out {output[0]} --log {log}"
