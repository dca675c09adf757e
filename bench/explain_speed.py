"""How long ``preflight explain`` takes on a big log: 150,000 lines of ordinary training output (NCCL INFO lines,
DeepSpeed / Megatron progress, tqdm bars, traceback frames, torchrun notices) with the real failure excerpts of the
first six corpus entries spread through it (issue 38).

    python3 bench/explain_speed.py              # wall time of explain_texts on the synthetic log, best of 3
    python3 bench/explain_speed.py --profile    # cProfile's top functions by cumulative time
    python3 bench/explain_speed.py --json OUT   # also write explain's --json answer (to compare before/after)
    python3 bench/explain_speed.py --silent --lines 20000   # no failure in it: every layer reads every line

The noise lines are made up (the shapes of real NCCL / DeepSpeed / Megatron / tqdm lines, hand-written), the error
lines are the corpus' real excerpts; the log is the same for every run (seeded).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from preflight.explain.matcher import explain_texts  # noqa: E402

NOISE = (
    "node1:1234:1250 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
    "node1:1234:1250 [0] NCCL INFO comm 0x5581 rank 0 nranks 16 cudaDev 0 busId 1b000 - Init COMPLETE",
    "[2024-05-01 12:00:%02d,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=0, lr=[0.0001]",
    "{'loss': 1.%d, 'learning_rate': 2e-05, 'epoch': 0.%d}",
    '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line %d, in _call_impl',
    "Epoch 3:  45%%|####5     | %d/1000 [01:23<01:40,  5.5it/s, loss=0.%d]",
    "W0501 12:00:%02d.000000 140 torch/distributed/run.py:757] Setting OMP_NUM_THREADS environment variable",
    " iteration %d/ 100000 | consumed samples: 1024 | elapsed time per iteration (ms): 512.3 | lm loss: 2.%d",
)


def synthetic_log(lines: int = 150_000, seed: int = 38, silent: bool = False) -> str:
    """The benchmark log: ``lines`` noise lines, six real failure excerpts inserted at regular intervals (none when
    ``silent``: a log where nothing is recognised, the slowest case, as no layer stops the next)."""
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        shape = rng.choice(NOISE)
        out.append(shape % tuple(rng.randint(0, 59) for _ in range(shape.count("%") - 2 * shape.count("%%"))))
    corpus = json.loads((ROOT / "tests" / "fixtures" / "explain" / "corpus.json").read_text(encoding="utf-8"))
    for k, entry in enumerate([] if silent else corpus[:6]):
        at = (k + 1) * lines // 7
        out[at:at] = entry["excerpt"].splitlines()
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--lines", type=int, default=150_000)
    parser.add_argument("--silent", action="store_true", help="no failure excerpts: nothing is recognised")
    args = parser.parse_args()
    text = synthetic_log(args.lines, silent=args.silent)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(explain_texts, {"big.log": text})
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        return
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        result = explain_texts({"big.log": text})
        best = min(best, time.perf_counter() - start)
    print(f"{len(text.splitlines())} lines: {best:.2f} s (best of 3), {len(result.matches)} matches")
    if args.json:
        args.json.write_text(json.dumps(result.to_dict(), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
