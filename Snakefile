# lis — LLM-in-Sandbox (arXiv 2601.16206) reproduced as one pipeline.
#
#   snakemake --cores all paper                       # profile from params.yaml (smoke: CPU, offline, minutes)
#   snakemake --cores all paper --config profile=ci   # another profile overlay (workflow/params/<name>.yaml)
#   snakemake --profile workflow/profiles/slurm paper # on a Slurm cluster
#
# Every rule runs one `lis <stage>` command; dvc.yaml declares the same stages, and
# `lis pipeline check` (run by the tests) proves the two declarations agree.
configfile: "params.yaml"


envvars:
    "PATH",  # rules run `lis` from the interpreter's bin folder, prepended in common.smk


include: "workflow/rules/common.smk"
include: "workflow/rules/image.smk"
include: "workflow/rules/tasks.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/eval.smk"
include: "workflow/rules/replicates.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"


rule paper:
    default_target: True
    input:
        rules.report.output,
    message:
        "paper_figures/ is up to date (profile {PROFILE})"
