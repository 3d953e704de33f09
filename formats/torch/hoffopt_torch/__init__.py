"""hoffopt_torch: the PyTorch front end of hoffopt. Traces an nn.Module on
the meta device at aten level and writes hoffopt's graph.json (see
formats/torch/README.md and FORMAT.md).

    import hoffopt_torch
    hoffopt_torch.export(model, example_inputs, path="graph.json",
                         mode="train", machine="h100-pcie5")
    result, bad = hoffopt_torch.run(model, example_inputs, "graph.json",
                                    "schedule.json")   # the plan, replayed
"""
from .export import export, write
from .machines import PRESETS
from .outfile import OutputError
from .replay import PlanError, ReplayError, run
from .trace import ExportError, build_on_meta

__all__ = ["export", "write", "run", "ExportError", "OutputError",
           "PlanError", "ReplayError", "PRESETS", "build_on_meta"]
