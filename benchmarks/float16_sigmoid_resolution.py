"""How finely finite differences of ``sigmoid(x.half())`` can resolve its derivative
(issue 34 item 9; docs/how-good.md, "Limits of the measurement").

Over the float16 numbers in [-8, 8) (steps of 1/64): the worst-case error bound of a
central difference, min over h of q/(2h) + |s'''|·h²/6 with q float16's ulp of the
output, relative to the derivative; and, knowing the answer, the best single step and
the best Richardson pair among steps 2**-12 to 4. Run: ``python
benchmarks/float16_sigmoid_resolution.py`` (needs torch)."""

from __future__ import annotations

import numpy as np
import torch


def forward(x: np.ndarray) -> np.ndarray:
    """sigmoid computed in float16, cast back to float64."""
    return torch.sigmoid(torch.from_numpy(np.asarray(x, np.float64)).half()).double().numpy()


def main() -> None:
    xs = np.arange(-8, 8, 1 / 64.0)
    hs = np.exp2(np.arange(-12, 3))
    bound, single, paired = [], [], []
    for x in xs:
        s = 1 / (1 + np.exp(-x))
        d = s * (1 - s)
        d3 = abs(d * (1 - 6 * s + 6 * s * s))
        q = float(np.spacing(np.float16(s)))
        bound.append(np.min(q / (2 * hs) + d3 * hs**2 / 6) / d)
        quotients = (forward(x + hs) - forward(x - hs)) / (2 * hs)
        single.append(np.min(np.abs(quotients - d)) / d)
        richardson = (16 * quotients[:-2] - quotients[2:]) / 15
        paired.append(np.min(np.abs(richardson - d)) / d)
    for name, rel in (("bound", bound), ("best step", single), ("best pair", paired)):
        r = np.array(rel)
        print(
            f"{name:10s} median {np.median(r):.4f}  p10 {np.percentile(r, 10):.4f}  "
            f"p90 {np.percentile(r, 90):.4f}  below 1%: {np.mean(r < 0.01):.2f}"
        )
    print(f"1% above twice the bound at {np.mean(0.01 > 2 * np.array(bound)):.2f} of the inputs")


if __name__ == "__main__":
    main()
