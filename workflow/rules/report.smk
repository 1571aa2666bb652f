# Last stage: paper_figures/ with an index of what was regenerated and from what.
TABLES = [f"paper_figures/tables/{t}.{ext}" for t in ("table2_main", "table3_long_context") for ext in ("md", "csv", "tex")]


rule report:
    input:
        manifest="data/image/manifest.json",
        metrics=eval_metrics(),
        analysis=["data/analysis/behaviour.json", "data/analysis/efficiency.json", "data/analysis/storage.json",
                  "data/bench/throughput.json"],
        training=[f"data/train/runs/grpo-{v}/metrics.json" for v in JOBS["grpo_data"]] + ["data/train/runs/llm-rl/metrics.json"],
        code=code(*CORE, "lis/report", "lis/cli/report.py"),
    output:
        "paper_figures/index.md",
        "paper_figures/index.json",
        TABLES,
    params:
        **stage_params("report"),
    log:
        "logs/report.log",
    message:
        "Report: paper_figures/ (profile {params.profile})"
    shell:
        "lis report --profile {params.profile} --image-manifest {input.manifest} --eval-root data/eval --out paper_figures --log {log}"
