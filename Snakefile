# lis — LLM-in-Sandbox (arXiv 2601.16206) reproduced as one pipeline.
#
#   snakemake --cores all paper                       # profile from params.yaml (smoke: CPU, offline, minutes)
#   snakemake --cores all paper --config profile=ci   # another profile overlay (workflow/params/<name>.yaml)
#   snakemake --profile workflow/profiles/slurm paper # on a Slurm cluster
#
# Every rule runs one `lis <stage>` command. The rules (workflow/rules/stages.smk) and dvc.yaml are rendered
# from the stages' declarations in lis/stages/; `lis pipeline check` (run by the tests) says they are current.
configfile: "params.yaml"


envvars:
    "PATH",  # rules run `lis` from the interpreter's bin folder, prepended in common.smk


include: "workflow/rules/common.smk"
include: "workflow/rules/stages.smk"  # GENERATED from lis/stages/ (`lis pipeline write`)


rule paper:
    default_target: True
    input:
        rules.report.output,
    message:
        "paper_figures/ is up to date (profile {PROFILE})"
