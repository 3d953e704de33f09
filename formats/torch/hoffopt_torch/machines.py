"""machines.py: the machine presets of `hoffopt gen` (src/gen/models.c), as
graph.json `machine` blocks.

This table is a copy kept in sync by a test: tests/torch/test_export.py
(test_presets_match_gen) compares every entry with the `machine` block that
`hoffopt gen llama3-8b --machine NAME` writes, field for field.
"""
import copy

# Duplex factors (FORMAT v2, rule 3) as gen's table cites them: 0.92 each
# way over PCIe 5.0 x16 (this project's pinned copies on an H200, 1 GiB:
# h2d 55.42 GB/s alone, 51.18 both at once; d2h 55.37 and 50.89); GH200's
# C2C about 300 GB/s in total both ways against 375 + 297 one way, 0.446;
# PCIe 4.0 (nvbandwidth): h2d 25 -> 12 GB/s, 0.48, d2h keeps 0.98.
_PCIE5_HOST = {"name": "host", "h2d_Bps": 55e9, "d2h_Bps": 55e9,
               "latency_s": 10e-6, "h2d_duplex_factor": 0.92,
               "d2h_duplex_factor": 0.92}
DUPLEX = ("h2d_duplex_factor", "d2h_duplex_factor")


def _device(name, memory_bytes, flops_per_s, mem_bandwidth_Bps):
    """A preset's device block (every preset's ops pay 5 us to launch)."""
    return {"name": name, "memory_bytes": memory_bytes,
            "flops_per_s": flops_per_s,
            "mem_bandwidth_Bps": mem_bandwidth_Bps, "op_overhead_s": 5e-6}


def _tier(name, h2d_Bps, d2h_Bps, latency_s, capacity_bytes, duplex=()):
    """A tier block, its fields in gen's order; duplex: the (h2d, d2h)
    duplex factors, none for a v1-style tier."""
    t = {"name": name, "h2d_Bps": h2d_Bps, "d2h_Bps": d2h_Bps,
         "latency_s": latency_s, "capacity_bytes": capacity_bytes}
    t.update(zip(DUPLEX, duplex))
    return t


PRESETS = {
    "h100-pcie5": {
        "device": _device("H100-PCIe-80GB", 80000000000, 756e12, 2.0e12),
        "tiers": [dict(_PCIE5_HOST, capacity_bytes=2000000000000)],
    },
    "h200": {
        "device": _device("H200-SXM-141GB", 141000000000, 989e12, 4.8e12),
        "tiers": [dict(_PCIE5_HOST, capacity_bytes=2000000000000)],
    },
    "gh200": {
        "device": _device("GH200-96GB", 96000000000, 989e12, 4.0e12),
        "tiers": [_tier("host", 375e9, 297e9, 5e-6, 480000000000,
                        (0.446, 0.446))],
    },
    "supernode": {
        "device": _device("H200-class", 141000000000, 989e12, 4.8e12),
        "tiers": [dict(_PCIE5_HOST, capacity_bytes=512000000000),
                  _tier("remote", 40e9, 40e9, 20e-6, 16000000000000)],
    },
    "a100-pcie4": {
        "device": _device("A100-PCIe-80GB", 80000000000, 312e12, 1.935e12),
        "tiers": [_tier("host", 25e9, 24e9, 10e-6, 1000000000000,
                        (0.48, 0.98))],
    },
}


def uses_v2(machine):
    """True when a machine block has a FORMAT v2 field (a duplex factor)."""
    return any(k in t for t in machine.get("tiers", []) for k in DUPLEX)


def strip_v2(machine):
    """The machine block without its v2 fields (for a v1 graph)."""
    for t in machine.get("tiers", []):
        for k in DUPLEX:
            t.pop(k, None)
    return machine


def machine_block(machine):
    """The `machine` block for a preset name or a dict (checked); raises
    ValueError naming the field."""
    if isinstance(machine, str):
        if machine not in PRESETS:
            raise ValueError("machine: unknown preset \"%s\" (%s)"
                             % (machine, ", ".join(PRESETS)))
        return copy.deepcopy(PRESETS[machine])
    if not isinstance(machine, dict):
        raise ValueError("machine: a preset name or a dict")
    m = copy.deepcopy(machine)
    dev = m.get("device")
    if not isinstance(dev, dict):
        raise ValueError("machine.device: required object")
    for f in ("memory_bytes", "flops_per_s", "mem_bandwidth_Bps"):
        v = dev.get(f)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            raise ValueError("machine.device.%s: a number > 0 is required "
                             "(op times come from the roofline)" % f)
    tiers = m.get("tiers", [])
    if not isinstance(tiers, list):
        raise ValueError("machine.tiers: must be an array")
    for i, t in enumerate(tiers):
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise ValueError("machine.tiers[%d].name: required string" % i)
    return m
