# Stage 1: the sandbox image. Builds only when images/ or the image params change (content-hash tag).
rule image:
    input:
        files_under(P.section("image")["context"]),
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
        "lis image build --profile {params.profile} --out {output} --log {log}"
