"""__main__.py: the command line of hoffopt_torch.

    python3 -m hoffopt_torch torchvision:resnet50 --batch 64 -o g.json
    python3 -m hoffopt_torch path/to/file.py:factory -o g.json

A torchvision classification model is built with weights=None on the meta
device and fed (batch, 3, size, size) images; factory() returns (model,
example_inputs) and is called with factories routed to meta. Exit codes:
0 written, 2 bad usage, an output that cannot be written, or a model the
tracer cannot follow (one line on stderr naming the module and the op),
3 an internal error (one line); nothing is written on failure. No error
prints a traceback. Outputs follow outfile.py (an output equal to an
input, e.g. the model's own source file, is refused).
"""
import argparse
import importlib
import importlib.util
import os
import signal
import sys
import time

import torch

from .export import export
from .machines import PRESETS
from .outfile import OutputError, refuse_same
from .trace import ExportError, build_on_meta


class UsageError(Exception):
    """Bad usage: one line, exit 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (UsageError) instead of usage text and
    sys.exit."""

    def error(self, message):
        raise UsageError(message)


def _first_line(e):
    s = str(e).strip()
    return "%s: %s" % (type(e).__name__, s.splitlines()[0]) if s else \
        type(e).__name__


def _user_code(what, fn, *args):
    """Runs user code (a model file, a factory, a loss module): an
    exception it raises is bad input, one line naming what failed."""
    try:
        return fn(*args)
    except (ExportError, ValueError, UsageError, OutputError):
        raise
    except Exception as e:
        raise ValueError("%s: %s" % (what, _first_line(e))) from None


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
    model = _user_code("torchvision:%s" % name, build_on_meta, factory)
    x = torch.empty(batch, 3, size, size, device="meta")
    return model, (x,), name


def _load_file(path, what):
    """The module of a .py file, run once (its errors are bad input)."""
    if not os.path.isfile(path):
        raise ValueError("%s: %s: no such file" % (what, path))
    mod_name = "hoffopt_torch_user_" + \
        os.path.splitext(os.path.basename(path))[0]
    s = importlib.util.spec_from_file_location(mod_name, path)
    if s is None:
        raise ValueError("%s: %s: not a Python file" % (what, path))
    mod = importlib.util.module_from_spec(s)
    d = os.path.dirname(os.path.abspath(path))
    if d not in sys.path:
        sys.path.insert(0, d)
    _user_code("%s: %s" % (what, path), s.loader.exec_module, mod)
    return mod


def _from_file(spec, build=build_on_meta):
    path, _, fn = spec.rpartition(":")
    mod = _load_file(path, "model")
    factory = getattr(mod, fn, None)
    if not fn or not callable(factory):
        raise ValueError("model: %s: no function \"%s\"" % (path, fn))
    res = _user_code("%s:%s" % (path, fn), build, factory)
    if not (isinstance(res, tuple) and len(res) == 2):
        raise ValueError("%s:%s: must return (model, example_inputs)"
                         % (path, fn))
    return res[0], res[1], fn


def _loss(spec):
    if spec is None:
        return None
    path, _, fn = spec.rpartition(":")
    if not path or not fn:
        raise ValueError("--loss %s: module:function or file.py:function"
                         % spec)
    if path.endswith(".py"):
        mod = _load_file(path, "--loss")
    else:
        try:
            mod = importlib.import_module(path)
        except ImportError as e:
            raise ValueError("--loss %s: cannot import module \"%s\" (%s)"
                             % (spec, path, _first_line(e))) from None
        except Exception as e:
            raise ValueError("--loss %s: %s" % (spec, _first_line(e))) \
                from None
    f = getattr(mod, fn, None)
    if not callable(f):
        raise ValueError("--loss %s: no function \"%s\"" % (spec, fn))
    return f


def _input_files(model, loss):
    """(flag, path) of the files a run reads: the model's source file and
    a loss file, so that no output overwrites them."""
    files = []
    if model and not model.startswith("torchvision:") and ":" in model:
        files.append(("model", model.rpartition(":")[0]))
    if loss and ":" in loss and loss.rpartition(":")[0].endswith(".py"):
        files.append(("--loss", loss.rpartition(":")[0]))
    return files


def main(argv=None):
    """The command line: returns the exit code; errors are one line on
    stderr, never a traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except (ExportError, ValueError, UsageError, OutputError) as e:
        print("hoffopt_torch: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hoffopt_torch: interrupted", file=sys.stderr)
        return 130
    except SystemExit as e:  # --help, a signal
        return e.code if isinstance(e.code, int) else 0
    except Exception as e:
        print("hoffopt_torch: internal error: %s" % _first_line(e),
              file=sys.stderr)
        return 3


def _main(argv):
    ap = Parser(
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
    ap.add_argument("--v1", action="store_true",
                    help="write FORMAT v1 (no repeat, no recomputable)")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.batch < 1 or a.image_size < 1:
        raise ValueError("--batch and --image-size must be >= 1")
    refuse_same(a.output, "-o", _input_files(a.model, a.loss))
    if a.model.startswith("torchvision:"):
        model, inputs, name = _torchvision(a.model.split(":", 1)[1],
                                           a.batch, a.image_size)
    elif ":" in a.model:
        model, inputs, name = _from_file(a.model)
    else:
        raise ValueError("model: torchvision:NAME or file.py:factory, "
                         "not \"%s\"" % a.model)
    opt = None if a.optimizer == "none" or a.mode == "infer" else "adam"
    loss = _loss(a.loss)
    g = export(model, inputs, path=a.output, mode=a.mode,
               machine=a.machine, weights_home=a.weights_home,
               optimizer=opt, loss=loss, bf16=a.bf16,
               optimizer_home=a.optimizer_home,
               name=a.name or "%s-%s" % (name, a.mode), v1=a.v1)
    print("hoffopt_torch: %s: %d ops, %d tensors, %d parameters; traced "
          "and written in %.2f s"
          % (a.output, len(g["ops"]), len(g["tensors"]), g["meta"]["params"],
             time.perf_counter() - t0), file=sys.stderr)
    return 0


def _on_term(signum, frame):
    raise SystemExit(128 + signum)  # unwinds: no temporary file is left


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_term)
    sys.exit(main())
