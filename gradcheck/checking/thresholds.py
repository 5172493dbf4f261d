"""The verdict's thresholds: every tuning constant of the structural checks, the finite
differences, the comparison and the reruns, in one table, each with its reason.

Nothing here computes; the modules that use a number import it from here
(:mod:`~gradcheck.checking.structure`, :mod:`~gradcheck.checking.compare`,
:mod:`~gradcheck.checking.numerical` and its parts, :mod:`~gradcheck.checking.run`,
:mod:`~gradcheck.checking.verdict`, :mod:`~gradcheck.checking.low_precision`). The
default tolerances per dtype are :data:`gradcheck.checking.tolerance.DEFAULT_TOLERANCES`.
"""

from __future__ import annotations

# -- the structural checks (structure.py) ----------------------------------------------

#: Gradients of two runs on fresh graphs (and backward(-2v) against -2·backward(v))
#: may differ by this many units in the last place of the gradient's scale.
REPEAT_ULPS = 4

#: backward(-2v) may differ from -2·backward(v) by this many times the backward's
#: measured rounding (:attr:`Evidence.backward_rounding`): each of the two backwards
#: rounds on its own (three roundings of the size of one, at most).
BACKWARD_ROUNDING_FACTOR = 8.0


# -- the comparison of analytic and numeric (compare.py) -------------------------------

#: The multiple of the finite-difference error estimate added to the tolerance.
ERROR_ESTIMATE_FACTOR = 3.0

#: Multiple of eps·|x|·|s''| allowed for the rounding of the inputs of the analytic
#: gradient (its backward error); matters for float16 and float32 only.
INPUT_ROUNDING_FACTOR = 4.0

#: Multiple of eps·max|v| allowed in absolute terms by default: the rounding of
#: intermediates of the upstream gradient's size.
UPSTREAM_ROUNDING_FACTOR = 4.0

#: Elements listed as "worst" in a result.
WORST_ELEMENTS = 5

#: Elements that fast mode isolates by bisection, at most, per input.
FAST_MODE_MAX_LOCATED = 8

#: Rounds of :func:`_refine_the_unsettled` at most (each can only lower the scale).
RESETTLE_ROUNDS = 3

#: Fast mode's directions over a whole input come in two halves; the second is taken
#: only when a direction of the first is not a clear agreement: its difference above
#: this fraction of the allowed one (or it failed, or crossed a kink). A right
#: gradient's directions differ by its truncation and rounding, far below the
#: tolerance; an error near the edge of what a direction can show lands in this band
#: as often as below it, and gets the other half. (An error far above the tolerance
#: fails the first direction: one wrong element is never cancelled, its |d_j| being
#: at least a quarter of its scale.)
CLEAR_AGREEMENT = 0.25

#: A tie's partial derivatives (each tied element moved alone) that add up to the
#: derivative along the tie within this share of their size show no kink there: the
#: failure's text says nothing of the tie (a report's wording only, never a verdict).
TIE_PARTIALS_ADD_UP = 1e-3


# -- the finite differences (numerical.py, levels.py, forward_rounding.py) -------------

#: Consecutive refinement steps differ by this factor.
LEVEL_RATIO = 4.0

#: A central difference errs by c·h² + O(h⁴): one level up, its error (and the
#: second difference J·h = s''·h², and D(h) - D(4h)) grows by LEVEL_RATIO² = 16.
TRUNCATION_GROWTH = LEVEL_RATIO**2

#: A departure from the smallest levels' line that grows by this much one level up is
#: the function's curvature (it grows TRUNCATION_GROWTH x), not a staircase's tread
#: (whose departure grows LEVEL_RATIO x at most): see ``probes._curves_away``.
CURVATURE_GROWTH = LEVEL_RATIO**1.5

#: A pair of levels whose larger step moved ``s`` by less than this many times what
#: its smaller step moved it (a smooth function's differences grow LEVEL_RATIO x) has
#: crossed the function's scale (see ``levels._below_saturation``), where its moves are
#: above SATURATION_NOISE times their noise.
SATURATION_GROWTH = LEVEL_RATIO / 2
SATURATION_NOISE = 4.0
#: For any forward: the neighbouring levels at which the moves and the second
#: differences must both have stopped growing (see ``levels._crossed``).
SATURATION_LEVELS = 4
#: ... and the fewest levels below them that estimate the derivative (two pairs); with
#: fewer, nothing is resolved at those steps, and smaller ones decide.
SATURATION_KEPT = 3

#: Refinement steps, as powers of LEVEL_RATIO times the base step: from 1/16 to 64 of
#: it, and further down for |x| != 1 (see :func:`_levels`).
LOWEST_LEVEL, HIGHEST_LEVEL = -2, 3

#: Levels added above the ladder's highest for an element that passes only within its
#: error estimate's rounding noise (see :mod:`gradcheck.checking.longer_steps`): steps
#: to LEVEL_RATIO**(HIGHEST_LEVEL + LONGER_LEVELS) = 4096 base steps, about 0.025 of
#: max(|x|, 1). Where a function is flat beside its value (1/sqrt(1 + x²) at x = 1e-9,
#: whose derivative is 1e-9 next to an output of 1; atan at x = 1e9, 1e-18 next to
#: pi/2), the ladder's steps resolve the derivative to 3% only, and a backward 1e-3 off
#: passed; 3 more levels resolve it to 5e-4 (measured: 5 more, no finer).
LONGER_LEVELS = 3
#: ... and the finest relative error such a re-estimate is evidence of (its error
#: estimate is made no smaller than this share of the value over ERROR_ESTIMATE_FACTOR).
#: A backward of a function that flat computes its small derivative from values of the
#: function's size and loses digits to cancellation as finite differences do: torch's
#: own sinc backward, (pi·x·cos(pi·x) - sin(pi·x)) / (pi·x²), errs by 5e-7 at x = 6e-6,
#: the same at every last bit of x (no rounding jitter shows it), and it is no bug.
LONGER_RESOLVED = 1e-5

#: Levels added below the base step for an element 0 < |x| < 1 (at most): down to the
#: relative step eps**(1/3)·|x| for |x| >= LEVEL_RATIO**-SMALL_X_LEVELS (8e-25). A
#: function on the scale of x (tanh(2**40·x)·2**-40 at x = 1e-12, the same function as
#: tanh at 1 in other units) needs the relative step: at 12 levels (6e-8) the smallest
#: step was 1e5 times its scale and a 1e-3 error passed. Only an element that the base
#: ladder leaves unresolved runs them (two forward calls a level), and not one beyond
#: their reach (0 < |x| < the smallest of them) left so only by its steps being longer
#: than |x|: those levels are too (``levels.lower_levels_needed``).
SMALL_X_LEVELS = 40
#: Below those levels (|x| < 8e-25), an element the levels leave unresolved is refined
#: again at its relative step (``PointProbes.below_small_x_levels``), whose estimate
#: stands where it is smooth and its error within the jump threshold or this fraction
#: of its value (float64 resolves trace(inv(A)) at entries of 2**-150 to 1e-10 there;
#: arctan(1/x) at 1e-45 not at all). It is not run where its largest step moves no
#: output and their rounding over that step is above the jump threshold
#: (``PointProbes._resolves_nothing``).
SMALL_X_RESOLVED = 2.0**-20

#: The measured noise looks at the differences of this many smallest levels.
NOISE_LEVELS = 3

#: A kink's signature must hold over this many consecutive levels.
KINK_WINDOW = 3

#: ... each level's jump within this factor of the next one's ("constant in size").
KINK_STEADINESS = 2.0

#: ... and each larger than this multiple of the level's modelled rounding noise.
KINK_NOISE_MARGIN = 8.0

#: Two neighbouring Richardson values agree ("converged") when they differ by at most
#: this fraction of the larger (or by their noise); an estimate where no two do is no
#: derivative (see :func:`_converged`).
CONVERGED_FRACTION = 0.5

#: No error estimate is below this many eps of the value.
VALUE_ROUNDING_EPS = 8.0

#: A first-pass jump J above this fraction of the gradient's scale sends the element to
#: refinement (maybe a kink; smooth functions give J = s''·h, far below it).
FIRST_JUMP_FRACTION = 1e-3

#: The modelled rounding noise of one difference: this many eps of the touched
#: outputs' size (both evaluations, each rounding its outputs and their sum).
OUTPUT_ROUNDING_EPS = 4.0

#: Seeds the up-or-down pattern of the moves that measure the forward's rounding
#: (:meth:`Evaluator.rounding_sizes`): the same for every check, so that it replays.
ROUNDING_PROBE_SEED = 17

#: ... and each element's move is the largest step over 2**k, k random in 0..this.
ROUNDING_PROBE_SPREAD = 3

#: Where no wider dtype computes the forward, its rounding is measured from the
#: outputs at x + t·d, t these 64ths (unevenly spaced: an output that drifts by a whole
#: number of quanta per even step would look exact), against a polynomial of this
#: degree in t (see :meth:`Evaluator._rounding_residual`).
RESIDUAL_OFFSETS = (-64, -51, -37, -22, -9, 0, 13, 28, 44, 64)
RESIDUAL_DEGREE = 4
#: Where that polynomial explains all but this share of an output's change along the
#: move, and one of two degrees more leaves at least RESIDUAL_RANDOM_SHARE of what it
#: leaves (per degree of freedom: random, not a smooth function's next terms), the
#: residual is rounding, taken whole (else at most the inputs' size: see
#: :meth:`Evaluator._residual_sizes`). An output that moves by rounding alone leaves a
#: share near 1; one varying on a scale near the move's, a residual that the higher
#: degrees explain.
RESIDUAL_SMOOTH_SHARE = 2.0**-16
RESIDUAL_RANDOM_SHARE = 0.25
#: Where a residual is too large a share of the change to be read as rounding, the move
#: is made LEVEL_RATIO to this power times as long (within the largest steps' reach),
#: and a residual the same there within RESIDUAL_STEADINESS x (either way), and a small
#: share of that longer move's change, is rounding: a function varying on the move's
#: scale leaves one LEVEL_RATIO**(RESIDUAL_DEGREE + 1) per level larger (a million at
#: two levels), rounding the same one (see :meth:`Evaluator._rounding_residual`).
RESIDUAL_WIDER_LEVELS = 2
RESIDUAL_STEADINESS = 4.0

#: An output that never moved at the levels of an element's refinement, while others
#: did, is probed at LEVEL_RATIO to this power times the base step (see
#: :meth:`Evaluator._probe_unmoved`).
PROBE_POWER = HIGHEST_LEVEL + 5

#: Steps of a one-sided derivative at a domain edge (:meth:`Evaluator.edge_derivative`),
#: and how closely its last two Richardson estimates agree (relative) to be a number.
EDGE_LEVELS = 5
EDGE_AGREEMENT = 1e-3

#: ... or how much each change of its quotients must shrink, level after level.
EDGE_SHRINK = 0.75

#: Levels added below the others where they show a singular set within the chosen
#: steps' reach (see :func:`_blows_up_below`).
SINGULAR_LEVELS = 6
#: ... at most this many times over: steps that show no derivative at all (every one
#: crossing the singular set) go down too, until smaller ones see a derivative.
SINGULAR_ROUNDS = 2
#: ... of which a bounded kink (one-sided derivatives that differ, each finite) goes
#: this many: a cone's smoothed tip looks like one at steps longer than its width
#: (eigvalsh of a matrix whose eigenvalues are 1e-8 apart: a kink at steps down to
#: 3.7e-7, smooth below 6e-9), where a kink at x is one at every step.
KINK_ROUNDS = 1
#: ... unless a jump at the smallest steps that round would take is within this
#: fraction of the jump at the smallest level (a kink at x: its jump is the same at
#: every step), resolved there: its rounding at most KINK_PERSIST_NOISE of the jump.
KINK_PERSISTS = 0.01
KINK_PERSIST_NOISE = 0.1

#: ``Evaluator.at_own_scale``'s step: this many bits below |s| / |gradient| (where a
#: gradient that size says s moves by its own size), and at least this many ulps of x.
OWN_SCALE_BITS = 24
OWN_SCALE_MIN_ULPS = 64

#: ... that is, where the central differences at smaller steps, well out of their
#: noise, are this many times those of the chosen steps or more.
SINGULAR_BLOWUP = 4.0

#: A central difference whose error shrinks like h**p with p < 2 (a function whose
#: second derivative jumps at x: x·|x| at 0 errs by h, so its usual Richardson values,
#: each 4 times the next, never agree) is extrapolated with that order where its
#: changes level after level hold this many levels with one ratio ρ = 4**p...
ORDER_LEVELS = 3

#: ... within this factor of each other, and ρ between these (p from 1/4 to 1.5; 16,
#: p = 2, is the usual case, and below 1 the estimates do not converge at all).
ORDER_STEADINESS = 1.25
ORDER_RANGE = (LEVEL_RATIO**0.25, LEVEL_RATIO**1.5)


# -- the check and its verdict (checker.py, run.py, verdict.py, low_precision.py) ------

#: mode="auto" checks element by element up to this many elements in all inputs.
FULL_MODE_MAX_SIZE = 4096

#: mode="auto" first screens a float64 input of at least this many elements with
#: SCREEN_DIRECTIONS random directional derivatives (2 forward calls each), each
#: within SCREEN_FRACTION of the input's smallest |d_k|·t_k, where one element's error
#: above its own tolerance shows; only an input they do not pass is compared element
#: by element (see :mod:`gradcheck.checking.screen`). Two directions: several wrong
#: elements cancel along both only by chance (32 factors each); the size, because
#: below it full mode's 2 calls per element cost about what the screen does.
SCREEN_MIN_SIZE = 8
SCREEN_DIRECTIONS = 2
SCREEN_FRACTION = 0.5

#: Runs at inputs moved by a few ulps that measure a float32/float16 gradient's
#: rounding (see ``_Run.rounding_jitter``), and the most ulps an element moves.
ROUNDING_SAMPLES = 6
ROUNDING_MOVE_ULPS = 4

#: Factors of the upstream gradient whose backwards measure a backward's own rounding
#: where the linearity check needs it (see ``_Run.backward_rounding``): just above 1
#: (every intermediate rounds anew), and 2 (a norm of ``v`` doubles, as with -2v)...
BACKWARD_ROUNDING_FACTORS = (1.0 + 3.0 * 2.0**-24, 1.0 + 5.0 * 2.0**-21, 2.0)

#: ... and what they show counts as rounding up to this many sqrt(eps) of the
#: gradient's scale (1.5e-8 in float64); more is no rounding but a backward not linear
#: in ``v``.
BACKWARD_ROUNDING_CAP = 1.0

#: A non-finite gradient is probed by finite differences at this many of its
#: non-finite elements at most (see ``_Run.no_finite_derivative``).
NONFINITE_ELEMENTS_PROBED = 16

#: Where a gradient is not finite, the forward's own slope along an element is read
#: at steps shrinking by 2 to this power (down to the dtype's smallest), and counts
#: where ``s`` moves by more than 2 to :data:`STEEP_RESOLVED_BITS` of its rounding (eps
#: of its size) and two consecutive steps agree within a factor of 2: a slope beyond
#: the dtype's range there says its gradient is not representable (see
#: :meth:`PointProbes.steep_beyond`); a jump's slope doubles with each halving of
#: the step, and never settles.
STEEP_LEVEL_BITS = 8
STEEP_RESOLVED_BITS = 10

#: The forward's value at x stands apart from its neighbours' along an element (see
#: :meth:`PointProbes.stands_apart`) where, over moves of the element from its ulp up
#: to its usual step (2 to :data:`APART_LEVEL_BITS` apart; at most
#: :data:`APART_MAX_LEVELS` of them), :data:`APART_LEVELS` consecutive moves see s move
#: the same way up and down, by amounts within a factor of 2 of each other, more than 2
#: to :data:`APART_RESOLVED_BITS` of its rounding and within :data:`APART_STEADINESS` x
#: of the least of the moves below (a jump holds still; a smooth function's change
#: shrinks 2**(2·bits) per level, a kink's 2**bits, and rounding changes sign at random).
APART_LEVELS = 3
APART_LEVEL_BITS = 4
APART_MAX_LEVELS = 80
APART_RESOLVED_BITS = 10
APART_STEADINESS = 4.0
#: Where a move stood exactly still below what the forward resolves (see
#: ``PointProbes.apart_somewhere``), the next is this many bits larger: from an
#: element at 0 (ulp 5e-324) to moves of eps in 64 of the APART_MAX_LEVELS.
APART_STILL_BITS = 16

#: Elements probed for a forward that stands apart (the mismatched first), at most.
APART_ELEMENTS_PROBED = 16

#: An analytic gradient element this many times the finite differences' estimate (and
#: error) is estimated again at its own scale (see ``verdict.refined_at_own_scale``), and the
#: new estimate is taken where it agrees with it to this fraction.
OWN_SCALE_RATIO = 64
OWN_SCALE_AGREEMENT = 0.01

#: How many units in the last place of a float32/float16 gradient (on the scale of 1 or
#: of the gradient) its float64 run may differ by for the dtype's precision to explain
#: a mismatch (:func:`gradcheck.checking.low_precision.judged_wide`).
WIDE_ULPS = 64

#: Moved runs needed to tell an example's gradient apart from the moved ones'
#: (``jitter.unless_outlier``), and how many times their typical spread it must be off.
OUTLIER_RUNS = 3
OUTLIER_FACTOR = 4.0

#: How much smaller than h0 the step is at which fast mode's bisection tries the two
#: halves of a direction again where neither settles at h0 (``_FastMode.settles_below``).
BELOW = 16.0

#: A tie's joint direction (``verdict.ties_not_a_gradient``): how many levels (each
#: step four times the last) must show the non-additivity of the quotients along a
#: block of tied elements clear of their rounding, how many levels above the joint
#: derivative's own step it may climb to find them (where the forward's modelled
#: rounding is large beside its output: a median of 0 among values of 5e8), how far
#: the non-additivity may move between levels (relative; a kink at the tie itself
#: is the same at every step, a singular set or a kink the steps reach across is
#: not), how many times the rounding it must exceed, and the most tied elements and
#: blocks it looks at.
TIE_LEVELS = 3
TIE_LEVELS_UP = 6
TIE_STEADINESS = 1e-2
TIE_NOISE_MARGIN = 8.0
TIE_BLOCK_MAX = 64
TIE_BLOCKS_PROBED = 4

#: How far into its float16 rounding cell ``computed_in._still_in_cells`` moves an
#: element: 3/8 of the way to the next float16 number, short of the cell's edge (1/2),
#: where a forward that rounds its inputs to float16 cannot move and a staircase finer
#: than float16's ulp (round(4x) at |x| of 512-1024) does.
CELL_SHARE = 0.375

#: The shares of its narrower dtype's ulp by which ``computed_in._unmoved_by_a_quarter``
#: moves each float element away from 0 (element k by the share k modulo their number),
#: each short of the half where the narrower dtype rounds to its next number, so that
#: ``F(round(x))`` stands still. One share for all moved x - max(x) at float32 numbers in
#: one binade (0.02, 0.021) by a common shift, which it ignores: it was taken for a
#: forward rounding its inputs to float16 and its float16 noise (0.001 per level) hid a
#: tie 1e-3 away, a false alarm (user round 6, ``good_max_shift`` at float32, seed 2).
QUARTER_SHARES = (0.25, 0.125, 0.375)

#: Where ``computed_in._moved_in`` checks that a forward taken for one computing in a
#: narrower dtype gives numbers of it off its steps too: each float element moved by this
#: share of that step (then rounded to the narrower dtype), a number with many bits. A
#: staircase of decimal treads (round(x, 3)) gives numbers of float16 at x and x + step,
#: both short binary fractions (2, 2.25), and 2.075 here, which is none.
OFF_STEP_SHARE = 0.3
