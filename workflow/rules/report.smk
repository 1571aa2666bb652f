# Last stage: paper_figures/ — every table and figure, with an index of what was regenerated and from what.
# The inputs are exactly what `lis report` reads for the configured jobs (lis.report.inputs.declared_inputs:
# the image manifest, the reference data, the analysis outputs, every job's metrics, the learning check's
# trajectories, the training logs of the configured runs and the evaluated models' manifests or cards).
from lis.report.inputs import declared_inputs

rule report:
    input:
        manifest="data/image/manifest.json",
        declared=declared_inputs(P.data),
        code=stage_code("report"),
    output:  # everything the report writes (all of it versioned: dvc push carries the whole of paper_figures/)
        "paper_figures/index.md",
        "paper_figures/index.json",
        "paper_figures/index.html",
        directory("paper_figures/tables"),
        directory("paper_figures/figures"),
        directory("paper_figures/trajectories"),   # the trajectory viewer (report.trajectories: true, the default)
    params:
        **stage_params("report"),
    log:
        "logs/report.log",
    message:
        "Report: paper_figures/ (profile {params.profile})"
    shell:
        "lis report --profile {params.profile} --image-manifest {input.manifest} --eval-root data/eval --out paper_figures --log {log}"
