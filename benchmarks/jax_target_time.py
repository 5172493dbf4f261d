"""A JAX target's whole run against the same op in torch and against one
``jax.test_util.check_grads``, in fresh processes (issue 40).

Side by side, in one run, each command a fresh process (imports included), for
order 1 and 2 (``--orders``):

- ``gradcheck verify`` of a JAX ``custom_vjp`` gelu (tanh form, its own backward) and
  of a plain ``jax.numpy`` function (``x * tanh(x)``), ``--max-examples N --seed 0``;
- the same two ops written in torch (a ``torch.autograd.Function`` and a function of
  tensors), the same command;
- a script that imports jax and runs one ``jax.test_util.check_grads`` of each JAX op
  on one 3x4 float64 input, modes reverse, that order.

With ``--old PATH`` the JAX targets are also run with ``PYTHONPATH=PATH`` (the code
before a change). Printed: each command's wall and CPU seconds (the process and the
worker processes it waited for), and the ratios of the JAX targets' to torch's and
to ``check_grads``'s, by wall time and by CPU time (on a loaded machine the CPU
ratios are the steadier). ``--usage-error`` adds a JAX target with a bad option
(``--shape 3,-1``) beside ``python -c "import jax"``.

Run from the repository root (``PYTHONPATH`` picks the code measured)::

    PYTHONPATH=. python benchmarks/jax_target_time.py [--max-examples 100] \\
        [--orders 1,2] [--old /tmp/old] [--usage-error]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from torch_target_time import CPU, REPO, _become_subreaper, timed

JAX_OPS = textwrap.dedent(
    """
    import jax
    import jax.numpy as jnp

    C = 0.7978845608028654


    @jax.custom_vjp
    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(C * (x + 0.044715 * x**3)))


    def _fwd(x):
        return gelu(x), x


    def _bwd(x, g):
        t = jnp.tanh(C * (x + 0.044715 * x**3))
        du = C * (1 + 3 * 0.044715 * x**2)
        return (g * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * du),)


    gelu.defvjp(_fwd, _bwd)


    def xtanh(x):
        return x * jnp.tanh(x)
    """
)

TORCH_OPS = textwrap.dedent(
    """
    import torch

    C = 0.7978845608028654


    class Gelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * x * (1 + torch.tanh(C * (x + 0.044715 * x**3)))

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            t = torch.tanh(C * (x + 0.044715 * x**3))
            du = C * (1 + 3 * 0.044715 * x**2)
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * du)


    def xtanh(x):
        return x * torch.tanh(x)
    """
)

CHECK_GRADS = textwrap.dedent(
    """
    import sys

    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax.test_util import check_grads

    import jops

    x = jax.random.normal(jax.random.key(0), (3, 4), dtype=jnp.float64)
    check_grads(getattr(jops, sys.argv[1]), (x,), order=int(sys.argv[2]), modes=["rev"])
    """
)

#: (label, JAX target, torch target, check_grads's function)
OPS = (
    ("custom_vjp gelu", "jops:gelu", "tops:Gelu", "gelu"),
    ("jnp x*tanh(x)", "jops:xtanh", "tops:xtanh", "xtanh"),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--orders", default="1,2")
    parser.add_argument("--old", metavar="PATH")
    parser.add_argument("--usage-error", action="store_true")
    args = parser.parse_args()
    _become_subreaper()
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO))}
    print(f"load average at the start: {os.getloadavg()[0]:.1f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "jops.py").write_text(JAX_OPS)
        (where / "tops.py").write_text(TORCH_OPS)
        (where / "check_grads.py").write_text(CHECK_GRADS)

        def run(cmd: list[str], environ: dict[str, str] = env) -> tuple[float, float]:
            wall, _, _, code = timed(
                cmd, where, {**environ, "PYTHONPATH": f"{where}:{environ['PYTHONPATH']}"}
            )
            if code not in (0, 1):  # (1: a check failed, a verdict like any other)
                sys.exit(f"{' '.join(cmd)} exited {code}")
            if code == 1:
                print(f"  ({' '.join(cmd[2:])}: a check failed, exit 1)", flush=True)
            return wall, CPU[-1]

        def verify(target: str, order: int) -> list[str]:
            return [
                sys.executable,
                "-m",
                "gradcheck",
                "verify",
                target,
                "--order",
                str(order),
                "--max-examples",
                str(args.max_examples),
                "--seed",
                "0",
            ]

        for order in (int(o) for o in args.orders.split(",")):
            for label, jax_target, torch_target, name in OPS:
                jx = run(verify(jax_target, order))
                th = run(verify(torch_target, order))
                cg = run([sys.executable, "check_grads.py", name, str(order)])
                line = f"order {order}, {label}: JAX target {jx[0]:.1f} s (CPU {jx[1]:.1f} s), "
                line += f"torch {th[0]:.1f} s (CPU {th[1]:.1f} s), "
                line += f"check_grads {cg[0]:.1f} s (CPU {cg[1]:.1f} s); "
                line += f"JAX/torch {jx[0] / th[0]:.2f}x (CPU {jx[1] / th[1]:.2f}x), "
                line += f"JAX/check_grads {jx[0] / cg[0]:.2f}x (CPU {jx[1] / cg[1]:.2f}x)"
                if args.old:
                    old = run(verify(jax_target, order), {**env, "PYTHONPATH": args.old})
                    line += f"; old JAX target {old[0]:.1f} s (CPU {old[1]:.1f} s), "
                    line += f"new/old {jx[0] / old[0]:.2f}x (CPU {jx[1] / old[1]:.2f}x), "
                    line += f"old JAX/torch {old[0] / th[0]:.2f}x (CPU {old[1] / th[1]:.2f}x)"
                print(line, flush=True)
        if args.usage_error:
            bad = [sys.executable, "-m", "gradcheck", "verify", "jops:gelu", "--shape", "3,-1"]
            wall, _, _, code = timed(
                bad, where, {**env, "PYTHONPATH": f"{where}:{env['PYTHONPATH']}"}
            )
            imp = run([sys.executable, "-c", "import jax"])
            print(
                f"usage error of a JAX target (exit {code}): {wall:.2f} s;",
                f"import jax: {imp[0]:.2f} s",
            )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
