"""The dtype a forward computes in: the narrower dtype a forward given float64 (or
float32) rounds through (``f(x.half())`` cast back), told from the outputs it gives
(:meth:`ComputedIn._computes_in`), and whether arrays are numbers of a narrower dtype
(:func:`exact_in`, :func:`narrow_numbers`).

:class:`ComputedIn` is a base of :class:`~gradcheck.checking.forward_rounding.ForwardRounding`
(and so of the :class:`~gradcheck.checking.numerical.Evaluator`): it reads the
evaluator's working inputs and its forward (``call``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcheck.checking.levels import step_sizes
from gradcheck.checking.thresholds import (
    CELL_SHARE,
    HIGHEST_LEVEL,
    LEVEL_RATIO,
    OFF_STEP_SHARE,
    QUARTER_SHARES,
)


def _wider(dtype: np.dtype) -> np.dtype | None:
    """A float dtype finer than ``dtype`` to measure its rounding with, or None."""
    if dtype in (np.float16, np.float32):
        return np.dtype(np.float64)
    longdouble = np.dtype(np.longdouble)
    if dtype == np.float64 and np.finfo(longdouble).eps < np.finfo(np.float64).eps:
        return longdouble  # 80-bit extended on x86; the same as float64 elsewhere
    return None


#: How many leading elements :func:`exact_in` tries before the whole array: most
#: arrays it is asked about are not numbers of the narrower dtype, which shows there.
_EXACT_SAMPLE = 8


#: float16's and float32's numbers as Python packs them: a float that comes back from
#: its packing unchanged is a number of that dtype (one that does not fit raises).
_PACKINGS = {np.dtype(np.float16): struct.Struct("e"), np.dtype(np.float32): struct.Struct("f")}


def exact_in(a: np.ndarray, dtype: np.dtype) -> bool:
    """Whether every finite element of ``a`` is a number of ``dtype``."""
    a = np.asarray(a, dtype=np.float64)
    packing = _PACKINGS.get(dtype)
    if packing is not None and a.size:  # (a cheap "no" first: the same answer, sooner)
        first = a.item(0)
        # (the first element alone, in Python: no NumPy call, no error state; a
        # finite element that is no number of the dtype is the whole array's "no")
        if first - first == 0.0 and not _packs_back(packing, first):
            return False
    if a.size > _EXACT_SAMPLE:
        head = a.reshape(-1)[:_EXACT_SAMPLE]
        with np.errstate(all="ignore"):  # (an infinity is its own; NaN is left out)
            if not ((head.astype(dtype).astype(np.float64) == head) | np.isnan(head)).all():
                return False
    finite = a[np.isfinite(a)]
    with np.errstate(all="ignore"):
        return bool(np.array_equal(finite.astype(dtype).astype(np.float64), finite))


def _packs_back(packing: struct.Struct, x: float) -> bool:
    """Whether the finite float ``x`` is a number of ``packing``'s dtype (exact, whatever
    the rounding: only such a number comes back from its packing as it was)."""
    try:
        back: float = packing.unpack(packing.pack(x))[0]
    except OverflowError:  # (beyond the dtype's largest number)
        return False
    return back == x


def narrow_numbers(*arrays: np.ndarray) -> np.dtype | None:
    """float16 (else float32) where every element of the float64 (or float32)
    ``arrays`` is a number of that narrower dtype and some element is no whole number
    (a gradient of zeros or of whole numbers is every dtype's): a gradient computed in
    it and cast back (torch's autograd through ``x.half()``), which rounds at its
    ulps; else None. (float32 inputs through ``x.half()``: their gradients, float32
    copies of float16 numbers, round at float16's subnormal steps below 6e-5, which
    -2·v does not commute with: a 6e-8 difference at x = ±10 read as nonlinear.)"""
    dtypes = {np.asarray(a).dtype for a in arrays}
    if not arrays or len(dtypes) != 1 or not dtypes <= {np.dtype(np.float64), np.dtype(np.float32)}:
        return None
    wide = dtypes.pop()
    for narrow in (np.dtype(np.float16), np.dtype(np.float32)):
        if narrow.itemsize < wide.itemsize and all(exact_in(a, narrow) for a in arrays):
            # (whole numbers are every dtype's: asked only here, as most gradients
            # are numbers of neither narrow dtype, which exact_in tells at once)
            with np.errstate(invalid="ignore"):
                if all(np.all(np.asarray(a)[np.isfinite(a)] % 1 == 0) for a in arrays):
                    return None
            return narrow
    return None


class ComputedIn:
    """The measures of the dtype the forward computes in, a base of
    :class:`~gradcheck.checking.forward_rounding.ForwardRounding`."""

    # (set by the Evaluator: its working inputs and their dtype, that dtype's eps and
    # the output at the point in float64)
    work: list[np.ndarray]
    eval_dtype: np.dtype
    eps: float
    f0: np.ndarray
    inner: np.dtype | None

    def call(self, arrays: Sequence[np.ndarray]) -> np.ndarray:
        raise NotImplementedError  # (the Evaluator's)

    def _computes_in(self, out0: np.ndarray) -> np.dtype | None:
        """The dtype narrower than float64 that a forward given float64 computes in
        (``f(x.half())`` cast back), or None. Such a forward is ``F(round(x))``, so
        three evaluations tell it from one that computes in float64:

        * its output is a number of that dtype at x;
        * it is the very same output at x rounded to that dtype and moved a quarter of
          that dtype's ulp away from zero (which rounds back): a float64 forward moves
          there wherever it depends on x at all, ``exp`` at 0 included, where the
          output of ``exp(x.half())`` stays 1;
        * at x moved by that dtype's own finite-difference steps (every float element
          up) some output moved, and every output is a number of that dtype (a
          forward constant in x is not one); where every output at x is a whole
          number, at least half of them moved (a piecewise constant forward, such as
          ``floor``, ``sign`` or a cosine of one-element rows, ±1, is not one because
          a few of those steps cross its jumps; tanh(x.half()) at 2, 4, 4 is one,
          though only its output at 2 moved).

        These replaced "at least half the outputs moved by 1.5 ulps and stay numbers
        of that dtype", which missed ``exp(x.half())`` at inputs that are mostly 0
        (the move of 0 is below float16's smallest number) and ``tanh(x.half())`` at
        3 (its 1.5-ulp move is below half an ulp of its output), and so let float64's
        steps (1e-5), absorbed by the rounding of x, see a staircase of float16 ulps:
        numeric 0 against a right gradient, and any gradient passed below what they
        (did not) resolve. Steps for that dtype (in it: the forward rounds to it
        anyway) see the function."""
        if self.eval_dtype != np.float64 or out0.dtype != np.float64 or not out0.size:
            return None
        if not exact_in(out0, np.dtype(np.float32)):
            return None  # (nor in float16, whose numbers are float32's too)
        for narrow in (np.dtype(np.float16), np.dtype(np.float32)):
            if not exact_in(out0, narrow):
                continue
            with np.errstate(all="ignore"):
                rounded = [
                    a.astype(narrow).astype(np.float64) if a.dtype.kind == "f" else a
                    for a in self.work
                ]
            unmoved = self._unmoved_by_a_quarter(rounded, out0, narrow)
            if unmoved is None:
                return None
            if not unmoved:
                continue
            found = self._moved_in(rounded, out0, narrow, scatter=False)
            if found == "still":
                found = self._moved_in(rounded, out0, narrow, scatter=True)
            for reach in (LEVEL_RATIO, LEVEL_RATIO**2, LEVEL_RATIO**HIGHEST_LEVEL):
                if found != "still":
                    break
                # (exp(x.half()) - 1 at -10 is -1 in float16 up to moves of 4: the
                # levels reach 64 times the step, and so do these moves)
                found = self._moved_in(rounded, out0, narrow, scatter=False, reach=reach)
            if found == "raised":
                return None
            if found == "narrow":
                return narrow if self._same_there(out0, narrow) else None
        return None

    def _same_there(self, out0: np.ndarray, inner: np.dtype) -> bool:
        """Whether the forward given ``inner`` inputs gives its output at x within a
        few of ``inner``'s ulps, as one that rounds to ``inner`` inside does (or raises
        there: it may refuse them). One whose outputs only look like it ((x + 1e9) - 1e9,
        at 2**-23 as float32 near 1) computes another function in ``inner`` (float32's
        ulp of 1e9 is 64): taken for it, a backward 2x off passed on a numeric 0."""
        narrow = [a.astype(inner) if a.dtype.kind == "f" else a for a in self.work]
        try:
            out = np.asarray(self.call(narrow), dtype=np.float64)
        except Exception:
            return True
        if out.shape != out0.shape:
            return True
        with np.errstate(all="ignore"):
            ulps = np.spacing(np.abs(out0).astype(inner)).astype(np.float64)
            return bool(np.all((out == out0) | (np.abs(out - out0) <= 4 * ulps)))

    def rounds_to_half(self) -> np.dtype | None:
        """float32 (the dtype to step in) where a forward given float64, whose outputs
        are float64 numbers and not all whole, rounds its inputs to float16 inside: at x
        rounded to float16 it stands still under a move of a quarter of float16's ulp
        and moves under float16's steps (:meth:`_moved_in`); else None. Asked only of a
        check that would otherwise fail or find a kink (two to four forward calls, where
        every float64 check asking it cost two more, and turned logabsdet near a
        singular matrix inconclusive): ``1 - cos(x.half())``, its subtraction in float64,
        at 177.5 is 1 + 1.5e-5 (cos a float16 subnormal there), no float32 number, which
        :meth:`_computes_in` does not ask about; taken for a float64 forward, it was
        differenced with float64's steps, which its rounding to float16 absorbs (numeric
        0 against an analytic 0.126)."""
        out0 = self.f0
        if self.eval_dtype != np.float64 or self.inner is not None or not out0.size:
            return None
        with np.errstate(invalid="ignore"):
            if not np.all(np.isfinite(out0)) or np.all(out0 % 1 == 0):
                return None
        half = np.dtype(np.float16)
        with np.errstate(all="ignore"):
            rounded = [
                a.astype(half).astype(np.float64) if a.dtype.kind == "f" else a for a in self.work
            ]
            if not all(np.all(np.isfinite(a)) for a in rounded):
                return None
        try:
            out = np.asarray(self.call(rounded))
        except Exception:
            return None
        if out.shape != out0.shape or out.dtype != np.float64:
            return None
        if not self._unmoved_by_a_quarter(rounded, out, half):
            return None
        found = self._moved_in(rounded, out, half, scatter=False)
        if found == "still":
            found = self._moved_in(rounded, out, half, scatter=True)
        return None if found in ("still", "raised") else np.dtype(np.float32)

    def _rounds_inputs_to(self, inner: np.dtype | None, out0: np.ndarray) -> np.dtype | None:
        """float16 where the forward computes in float32 (``inner``) and yet stands
        still under a move of its inputs, rounded to float16, by a quarter of float16's
        ulp: it rounds them to float16 inside, and its outputs are no float16 numbers
        (``1 - cos(x.half())``, the subtraction in float64). Steps below half that ulp
        are absorbed there, and a level of them that stood still says nothing of the
        function (see :meth:`LevelScores.quantize_noise`); else None."""
        if inner != np.float32:
            return None
        narrow = np.dtype(np.float16)
        with np.errstate(all="ignore"):
            rounded = [
                a.astype(narrow).astype(np.float64) if a.dtype.kind == "f" else a for a in self.work
            ]
        try:
            out = np.asarray(self.call(rounded))
        except Exception:
            return None
        if out.shape != out0.shape:
            return None
        return narrow if self._unmoved_by_a_quarter(rounded, out, narrow) else None

    def _moved_in(
        self,
        rounded: list[np.ndarray],
        out0: np.ndarray,
        narrow: Any,
        *,
        scatter: bool,
        reach: float = 1.0,
    ) -> str:
        """The last test of :meth:`_computes_in`: whether the forward at ``rounded``
        moved by ``narrow``'s steps (every element up; with ``scatter``, each element
        its own way, up or down by its step over a power of two) moved some output, to numbers of
        ``narrow`` only, and stands still a quarter of an ulp further ("narrow");
        "still" where no output moved, "raised" where the forward raised, else
        "wide"; the steps times ``reach``. The scattered move is tried where the
        common one moved nothing, then longer ones (a forward that rounds to a
        constant near x, exp(x.half()) - 1 at -10, moves further out): a
        softmax is shift invariant, and softmax(x.half()) at [0, 0] moved by one step
        everywhere stays [0.5, 0.5] in every dtype, so it was taken for a float64
        forward, differenced with float64's steps that float16 rounds away (numeric 0
        against its right gradient), or its staircase read as a kink."""
        narrow_eps = float(np.finfo(narrow).eps)
        steps: list[Any] = []
        with np.errstate(all="ignore"):
            for a in rounded:
                if a.dtype.kind != "f":
                    steps.append(None)
                    continue
                step = step_sizes(a, narrow_eps) * reach
                if scatter:  # (1, -1/2, 1/4, -1, ...: neighbours differ, sums are not 0)
                    k = np.arange(a.size).reshape(a.shape)
                    step = step * np.where(k % 2, -1.0, 1.0) * np.exp2(-(k % 3))
                steps.append(step)
        moved = _narrow_moved_by(rounded, steps, narrow, 1.0)
        try:
            out1 = np.asarray(self.call(moved))
        except Exception:
            return "raised"
        if out1.shape != out0.shape or out1.dtype != np.float64:
            return "raised"
        with np.errstate(invalid="ignore"):
            moved_out = out1 != out0
            if not np.any(moved_out):
                return "still"
            whole = bool(np.all(out0[np.isfinite(out0)] % 1 == 0))
            changed = np.mean(moved_out) >= 0.5 or not whole
        if not (changed and exact_in(out1, narrow)):
            return "wide"
        if (
            whole
            and self._whole_staircase(out0, out1, narrow)
            and not (
                self._moves_at_every_ulp(rounded, out0) and self._still_in_cells(rounded, out0)
            )
        ):
            return "wide"
        if not self._unmoved_by_a_quarter(moved, out1, narrow):
            return "wide"
        return "narrow" if self._narrow_off_the_steps(rounded, steps, narrow) else "wide"

    def _narrow_off_the_steps(
        self, rounded: list[np.ndarray], steps: list[Any], narrow: Any
    ) -> bool:
        """Whether the forward gives numbers of ``narrow`` where every float element of
        ``rounded`` moves by a share of its step ``steps`` (:data:`OFF_STEP_SHARE`), taken
        to a number of ``narrow``: a forward computing in ``narrow`` gives one at every
        such input. x and x + step are short binary fractions (2 and 2.25), which a
        staircase of decimal treads keeps as they are: round(x, 3) at 2 (and round(x, 1)
        at -4, round(x, 2) at 7.25...) gave numbers of float16 there, stood still a
        quarter of float16's ulp away (its tread, 1e-3, is wider), and was taken for a
        float16 forward, differenced with float16's steps over its treads: numeric 1
        against its right gradient 0 (torch's gradcheck passes it). Off the steps it
        gives 2.075, no number of float16."""
        between = _narrow_moved_by(rounded, steps, narrow, OFF_STEP_SHARE)
        try:
            out = np.asarray(self.call(between))
        except Exception:
            return False
        return exact_in(out, narrow)

    def _still_in_cells(self, rounded: list[np.ndarray], out0: np.ndarray) -> bool:
        """Whether the forward stands still where every float element of ``rounded``, taken
        to its float16 number, moves 3/8 of the way to the next one, up and then down: inside
        the float16 rounding cell, where ``F(round(x))`` cannot move. A staircase whose tread
        is finer than float16's ulp moves there: round(4x) at |x| of 512 to 1024 (its tread
        0.25, float16's ulp 0.5), which moves at every whole float16 ulp too and whose
        gradient, 0, was judged against the slope 4 of the steps it climbs."""
        outs = self._at_float16_moves(rounded, out0, CELL_SHARE)
        return outs is not None and all(np.array_equal(o, out0, equal_nan=True) for o in outs)

    def _at_float16_moves(
        self, rounded: list[np.ndarray], out0: np.ndarray, share: float, away: bool = False
    ) -> list[np.ndarray] | None:
        """The forward's outputs where every float element of ``rounded``, taken to its
        float16 number, moves ``share`` of the way to the next one up, and where each
        moves so down (with ``away``: away from 0, and towards it); None where it raised
        or gave outputs of another shape."""
        outs = []
        for direction in (np.inf, -np.inf):
            with np.errstate(all="ignore"):
                moved = [
                    _float16_moved(a, np.where(away & (a < 0), -direction, direction), share)
                    if a.dtype.kind == "f"
                    else a
                    for a in rounded
                ]
            try:
                out = np.asarray(self.call(moved))
            except Exception:
                return None
            if out.shape != out0.shape:
                return None
            outs.append(out)
        return outs

    def _moves_at_every_ulp(self, rounded: list[np.ndarray], out0: np.ndarray) -> bool:
        """Whether a forward whose inputs are all below 1024 in size (float16's ulps at
        most 0.5 there) moves its outputs, none of them 0, where every float element
        moves to its next float16 number up and where each moves to the next one down
        (at least half of them on both sides, every one on one: the moves may cancel
        in one), with no more float elements than outputs. A staircase of whole numbers
        of unit tread (round, floor, sign), elementwise, stands still at such moves
        unless one crosses a jump, and never on both sides at once; a forward that
        rounds its inputs to float16 and computes there moves at each. ``1 - z·z`` in
        complex32 at |z| of 30 to 100 has outputs whose float16 ulps are 0.5 to 8, all
        whole numbers (-953 beside 8625): taken for a staircase, it was differenced
        with float64's steps, which its rounding of z absorbs (numeric 0 against an
        analytic 120)."""
        half = np.dtype(np.float16)
        whole_from = 2.0 ** np.finfo(half).nmant
        floats = [a for a in rounded if a.dtype.kind == "f"]
        if not floats or any(not np.all(np.abs(a) < whole_from) for a in floats):
            return False
        if not np.all(np.isfinite(out0)) or np.any(out0 == 0):
            return False
        if out0.size < sum(a.size for a in floats):
            return False  # (a sum of rounds moves where any of its elements crosses)
        for away in (False, True):
            # (then each element away from 0 and towards it, where some output stood
            # still: 1 - z·z at z = -8.1 + 70.5i moves Im z² by 2(y·dx + x·dy), which
            # cancels below its float16 ulp where x and y, of opposite signs, move alike;
            # an elementwise forward's outputs move at these moves as at the others)
            outs = self._at_float16_moves(rounded, out0, 1.0, away)
            if outs is None:
                return False
            sides = sum((out != out0).astype(int) for out in outs)
            if np.all(sides >= 1):
                return bool(np.mean(sides == 2) >= 0.5)
        return False

    @staticmethod
    def _whole_staircase(out0: np.ndarray, out1: np.ndarray, narrow: Any) -> bool:
        """Whether the forward rounds to whole numbers, whatever dtype it computes in:
        its outputs at x and at x moved by ``narrow``'s steps are all whole, and some of
        them are smaller than the numbers from which on ``narrow`` holds only whole
        ones (1024 for float16), where a forward computing in ``narrow`` would show
        fractions. ``round``, ``floor``, ``sign`` are such staircases: their outputs are
        numbers of float16, and where float16's step (1 at |x| >= 8) crosses their
        jumps every output moves; taken for float16 forwards, they were differenced
        with float16's steps across their jumps (numeric 1 against their right
        gradient 0) and failed at every input above 8 in size (and ``round`` at -4.83,
        torch's OpInfo sample round.decimals_0[2], where the step 0.5 crosses -4.5).
        Float64's steps see their flat stairs, exactly."""
        whole_from = 2.0 ** (np.finfo(narrow).nmant)
        with np.errstate(invalid="ignore"):
            both = np.concatenate([out0.reshape(-1), out1.reshape(-1)])
            both = both[np.isfinite(both)]
            if not both.size or not np.all(both % 1 == 0):
                return False
            return bool(np.any(np.abs(both) < whole_from))

    def _unmoved_by_a_quarter(
        self, at: list[np.ndarray], out: np.ndarray, narrow: Any
    ) -> bool | None:
        """Whether the forward at ``at`` (every float input a number of the dtype
        ``narrow``) moved away from 0 by a quarter of that dtype's ulp (each element a
        share of it, :data:`QUARTER_SHARES`, all short of the half that rounds away)
        gives ``out`` again, as ``F(round(x))`` does; None where it raised there. At
        x = 0 alone the quarter ulp is a quarter of a subnormal, which a float64 forward
        that rounds coarsely there, (x + 1e6) - 1e6, does not see either; a step away it
        does (a quarter float32 ulp at 2**-8 is 1e6's ulp)."""
        quarter, counted = [], 0
        with np.errstate(all="ignore"):
            for a in at:
                if a.dtype.kind != "f":
                    quarter.append(a)
                    continue
                # (each element its own share of its ulp, counted over every input: a
                # forward invariant to a common shift (x - max(x), softmax) stands
                # still where all its elements share a binade and move alike, and
                # x - max(x) at float32 numbers 0.02, 0.021 was taken for a forward
                # rounding its inputs to float16, whose noise hid the tie 1e-3 away)
                k = counted + np.arange(a.size).reshape(a.shape)
                counted += a.size
                share = np.asarray(QUARTER_SHARES)[k % len(QUARTER_SHARES)]
                quarter.append(a + np.spacing(a.astype(narrow)).astype(np.float64) * share)
        try:
            again = np.asarray(self.call(quarter))
        except Exception:
            return None
        return bool(again.shape == out.shape and np.array_equal(again, out, equal_nan=True))


def _narrow_moved_by(
    rounded: list[np.ndarray], steps: list[Any], narrow: Any, share: float
) -> list[np.ndarray]:
    """Each float array of ``rounded`` moved by ``share`` of its ``steps`` and taken to
    a number of ``narrow`` (in float64); the others as they are."""
    with np.errstate(all="ignore"):
        return [
            a if step is None else (a + step * share).astype(narrow).astype(np.float64)
            for a, step in zip(rounded, steps)
        ]


def _float16_moved(a: np.ndarray, direction: Any, share: float) -> np.ndarray:
    """``a``'s float16 numbers moved ``share`` of the way to their next float16 number
    towards ``direction`` (the whole way: that number), in ``a``'s dtype."""
    half = np.dtype(np.float16)
    base = a.astype(half)
    step = np.nextafter(base, half.type(direction))
    if share == 1.0:
        return step.astype(a.dtype)
    return base.astype(a.dtype) + (step.astype(a.dtype) - base.astype(a.dtype)) * share
