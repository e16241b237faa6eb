#!/usr/bin/env python3
"""Drive the MLRsearch authors' implementation (PyPI "MLRsearch", the version pinned in
scripts/setup.sh) against the simulated DUTs of xlatperf's `sim::LossModel`, and print its
Goal Results as JSON. Read by crates/procedures/tests/mlrsearch_reference.rs, which runs
xlatperf's search against the same DUTs and compares.

Input (stdin, JSON): {"model": {"kind": "step"|"capacity"|"buffered"|"noisy", ...},
"goals": [{"name", "loss_ratio", "exceed_ratio", "width", "initial", "final", "sum"}],
"min_load", "max_load", "seeds": [int, ...]}.
Output (stdout, JSON): one entry per seed: {"goals": {name: {"rlb", "rub", "ct"}},
"trials": n, "trial_seconds": s}.
"""

import json
import math
import random
import sys

from MLRsearch import AbstractMeasurer, Config, MeasurementResult, MultipleLossRatioSearch, SearchGoal


def loss_ratio(model, load, duration, u):
    """The same function as xlatperf's LossModel::loss_ratio (crates/procedures/src/sim.rs)."""

    def limit(fps, extra):
        sent = load * duration
        if sent <= 0.0:
            return 0.0
        return max(0.0, 1.0 - (fps * duration + extra) / sent)

    kind = model["kind"]
    if kind == "step":
        return model["ratio"] if load >= model["at"] else 0.0
    if kind == "capacity":
        return limit(model["fps"], 0.0)
    if kind == "buffered":
        return limit(model["fps"], model["buffer"])
    if kind == "noisy":
        return limit(model["fps"] * (1.0 + model["noise"] * (2.0 * u - 1.0)), 0.0)
    raise ValueError(f"unknown model {kind}")


class ModelMeasurer(AbstractMeasurer):
    def __init__(self, model, seed):
        self.model = model
        self.rng = random.Random(seed)
        self.trials = 0
        self.seconds = 0.0

    def measure(self, intended_duration, intended_load):
        sent = math.floor(intended_load * intended_duration + 0.5)
        ratio = loss_ratio(self.model, intended_load, intended_duration, self.rng.random())
        lost = min(sent, math.floor(sent * ratio + 0.5))
        self.trials += 1
        self.seconds += intended_duration
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            offered_count=sent,
            loss_count=lost,
        )


def main():
    spec = json.load(sys.stdin)
    goals = [
        SearchGoal(
            loss_ratio=g["loss_ratio"],
            exceed_ratio=g["exceed_ratio"],
            relative_width=g["width"],
            initial_trial_duration=g["initial"],
            final_trial_duration=g["final"],
            duration_sum=g["sum"],
            fail_fast=False,
        )
        for g in spec["goals"]
    ]
    out = []
    for seed in spec["seeds"]:
        config = Config()
        config.goals = goals
        config.max_load = float(spec["max_load"])
        config.min_load = float(spec["min_load"])
        config.warmup_duration = None
        config.search_duration_max = 3600.0
        measurer = ModelMeasurer(spec["model"], seed)
        results = MultipleLossRatioSearch(config=config).search(measurer=measurer)
        per_goal = {}
        for g, goal in zip(spec["goals"], goals):
            r = results[goal]
            rlb = r.relevant_lower_bound
            rub = r.relevant_upper_bound
            ct = r.conditional_throughput
            per_goal[g["name"]] = {
                "rlb": float(rlb) if rlb is not None else None,
                "rub": float(rub) if rub is not None else None,
                "ct": float(ct) if ct is not None else None,
            }
        out.append({"goals": per_goal, "trials": measurer.trials, "trial_seconds": measurer.seconds})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
