"""__main__.py: the command line of hoffopt_torch.

    python3 -m hoffopt_torch torchvision:resnet50 --batch 64 -o g.json
    python3 -m hoffopt_torch path/to/file.py:factory -o g.json

A torchvision classification model is built with weights=None on the meta
device and fed (batch, 3, size, size) images; factory() returns (model,
example_inputs) and is called with factories routed to meta. Exit codes:
0 written, 2 bad usage or a model the tracer cannot follow (one line on
stderr naming the module and the op); nothing is written on failure.
"""
import argparse
import importlib.util
import os
import sys
import time

import torch

from .export import export
from .machines import PRESETS
from .trace import ExportError, build_on_meta


def _torchvision(name, batch, size):
    try:
        import torchvision
    except ImportError:
        raise ValueError("torchvision: not installed (Debian: "
                         "python3-torchvision)")
    models = torchvision.models
    names = models.list_models(module=models) \
        if hasattr(models, "list_models") else []
    if name not in names:
        raise ValueError("torchvision:%s: no such classification model%s"
                         % (name, " (e.g. resnet50, vit_b_16)"))

    def factory():
        return models.get_model(name, weights=None)
    model = build_on_meta(factory)
    x = torch.empty(batch, 3, size, size, device="meta")
    return model, (x,), name


def _from_file(spec):
    path, _, fn = spec.rpartition(":")
    if not os.path.isfile(path):
        raise ValueError("%s: no such file" % path)
    mod_name = "hoffopt_torch_user_" + \
        os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(s)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    s.loader.exec_module(mod)
    factory = getattr(mod, fn, None)
    if not callable(factory):
        raise ValueError("%s: no function \"%s\"" % (path, fn))
    res = build_on_meta(factory)
    if not (isinstance(res, tuple) and len(res) == 2):
        raise ValueError("%s:%s: must return (model, example_inputs)"
                         % (path, fn))
    return res[0], res[1], fn


def _loss(spec):
    if spec is None:
        return None
    path, _, fn = spec.rpartition(":")
    if path.endswith(".py"):
        s = importlib.util.spec_from_file_location("hoffopt_torch_loss", path)
        mod = importlib.util.module_from_spec(s)
        s.loader.exec_module(mod)
    else:
        mod = importlib.import_module(path)
    f = getattr(mod, fn, None)
    if not callable(f):
        raise ValueError("--loss %s: no function \"%s\"" % (spec, fn))
    return f


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python3 -m hoffopt_torch",
        description="Trace a PyTorch model on the meta device into "
                    "hoffopt's graph.json.")
    ap.add_argument("model", help="torchvision:NAME or path/file.py:factory "
                    "(factory() returns (model, example_inputs))")
    ap.add_argument("-o", "--output", required=True, help="graph.json path")
    ap.add_argument("--mode", choices=("train", "infer"), default="train")
    ap.add_argument("--batch", type=int, default=1,
                    help="torchvision: images a batch (default 1)")
    ap.add_argument("--image-size", type=int, default=224,
                    help="torchvision: image side (default 224)")
    ap.add_argument("--machine", default="h100-pcie5",
                    help="a preset of hoffopt gen (%s)" % ", ".join(PRESETS))
    ap.add_argument("--weights-home", default="device",
                    help="device or a tier name (default device)")
    ap.add_argument("--optimizer-home", default=None,
                    help="device or a tier name (default: the first tier)")
    ap.add_argument("--optimizer", choices=("adam", "none"), default="adam",
                    help="train: add Adam's update ops (default adam)")
    ap.add_argument("--loss", default=None,
                    help="module:function or file.py:function taking the "
                    "outputs (default: sum of the first output)")
    ap.add_argument("--bf16", action="store_true",
                    help="count floating tensors as bf16 (Adam's moments "
                    "keep their dtype)")
    ap.add_argument("--name", default=None, help="graph name")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        if a.batch < 1 or a.image_size < 1:
            raise ValueError("--batch and --image-size must be >= 1")
        if a.model.startswith("torchvision:"):
            model, inputs, name = _torchvision(a.model.split(":", 1)[1],
                                               a.batch, a.image_size)
        elif ":" in a.model:
            model, inputs, name = _from_file(a.model)
        else:
            raise ValueError("model: torchvision:NAME or file.py:factory, "
                             "not \"%s\"" % a.model)
        opt = None if a.optimizer == "none" or a.mode == "infer" else "adam"
        g = export(model, inputs, path=a.output, mode=a.mode,
                   machine=a.machine, weights_home=a.weights_home,
                   optimizer=opt, loss=_loss(a.loss), bf16=a.bf16,
                   optimizer_home=a.optimizer_home,
                   name=a.name or "%s-%s" % (name, a.mode))
    except (ExportError, ValueError) as e:
        print("hoffopt_torch: %s" % e, file=sys.stderr)
        return 2
    print("hoffopt_torch: %s: %d ops, %d tensors, %d parameters; traced "
          "and written in %.2f s"
          % (a.output, len(g["ops"]), len(g["tensors"]), g["meta"]["params"],
             time.perf_counter() - t0), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
