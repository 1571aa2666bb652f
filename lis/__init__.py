"""lis — LLM-in-Sandbox (Cheng et al., arXiv 2601.16206) reproduced as one pipeline.

Public API (stable names; import from here). One scored episode:

    import lis
    task = lis.load_samples("math")[0]                  # a benchmark's bundled samples as tasks
    record = lis.run_task(task, "sft")                  # a models entry or a ChatModel; sandbox mode
    print(record.termination, record.answer, record.reward)

    lis.load_params      merged, validated params of a profile
    lis.load_samples     a domain's bundled samples (data/samples/) as tasks
    lis.build_model      the ChatModel of a models entry
    lis.run_task         one episode with the project's sandbox and agent settings, scored on the host
    lis.score            score an answer for a task (the graders)
    lis.Task, lis.SandboxConfig, lis.Trajectory    the records
    lis.LisError         user-facing error with a one-line message and a fix

The names load their modules on first use (:mod:`lis.util.lazy`): ``import lis`` stays cheap.
"""
from lis.errors import LisError, ParamsError
from lis.params import Params
from lis.params import load as load_params
from lis.util.lazy import lazy_exports

__version__ = "0.1.0"

EXPORTS = {
    "build_model": "lis.api",
    "run_task": "lis.api",
    "load_samples": "lis.tasks.samples",
    "score": "lis.rewards.route",
    "Task": "lis.tasks.schema",
    "SandboxConfig": "lis.sandbox.base",
    "Trajectory": "lis.agent.trajectory",
}
__all__ = sorted(["LisError", "Params", "ParamsError", "load_params", "__version__", *EXPORTS])
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
