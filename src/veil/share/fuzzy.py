"""OptimShare's fuzzy inference system: from a measured privacy need to (ε, δ) pairs.

The Mamdani system of Chamikara et al. ("OptimShare", section 3.3, Eq. 13) relates two
inputs, the privacy budget ε and the failure probability δ, to one output, the privacy
need PIF it answers. Each of the three variables has three Gaussian memberships on
``[0, 1]``, LOW (mean 0), MEDIUM (mean 0.5) and HIGH (mean 1), all with standard
deviation 1, and five rules:

1. ε LOW → PIF HIGH
2. δ LOW → PIF HIGH
3. ε MEDIUM and δ MEDIUM → PIF MEDIUM
4. ε HIGH → PIF LOW
5. δ HIGH → PIF LOW

Inference is max-min (AND is min, a rule clips its consequent at its strength, rules are
aggregated by max) and the output is the centroid of the aggregate on the output
universe ``[0, 1]``, computed in closed form (scikit-fuzzy integrates the same aggregate
sampled on a universe of points; the two agree to the square of its step).

Readings this module makes where the paper is silent or cannot be followed (every one is
also written into :meth:`BudgetPairs.to_dict`, for the manifest):

* **Input scales.** ε enters as ``ε / T_ε`` and δ as ``δ · n`` (δ as a fraction of
  ``1/n``, the point where (ε, δ)-DP stops protecting anyone); both are clipped to
  ``[0, 1]``. The paper's experiments set ``δ = P_l / (100 n)``, so ``P_l`` is that
  fraction in percent.
* **Rescaling.** With σ = 1 on ``[0, 1]`` every membership is nearly flat and the
  literal surface only spans about 0.487-0.513, so no PIF outside that band could be
  matched. The surface is rescaled affinely to ``[0, 1]`` by its values at
  ``(0, 0)`` (its maximum) and ``(1, 1)`` (its minimum); the literal range is
  recorded.
* **Pairs.** The paper asks for TN pairs increasing in both ε and δ, but the surface
  falls in both inputs, so a contour (the pairs whose output equals PIF_thresh) has ε
  falling as δ rises. Here δ is fixed at ``P_l / (100 n)``, the contour ε* at that δ is
  solved for (bisection on the exact system), and the TN pairs are
  ``(ε* · i / TN, δ)`` for ``i = 1..TN``: increasing in ε, every one at least as
  private as the need asks (the surface is non-increasing in ε), the last on the
  contour. The full contour on the grid is returned too.

None of this spends privacy: PIF_thresh is computed from the data by the caller (and is
itself a data-dependent choice the caller must list as a leak); this module only maps
numbers to numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from veil.errors import ParameterError

__all__ = [
    "FIS_MEANS",
    "FIS_SIGMA",
    "BudgetPairs",
    "FuzzySurface",
    "budget_pairs",
    "fis_output",
    "fis_surface",
]

FloatArray = npt.NDArray[np.float64]

FIS_MEANS: tuple[float, float, float] = (0.0, 0.5, 1.0)
"""Means of the LOW, MEDIUM and HIGH memberships (the paper's values)."""

FIS_SIGMA = 1.0
"""Standard deviation of every membership (the paper's value)."""

_CHUNK = 8192  # input points defuzzified at once (memory: about 1 KB each)


def _membership(x: FloatArray, mean: float) -> FloatArray:
    return np.asarray(np.exp(-0.5 * ((x - mean) / FIS_SIGMA) ** 2), dtype=np.float64)


def _strengths(e: FloatArray, d: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Firing strengths of the LOW, MEDIUM and HIGH output terms (max-min)."""
    low_mean, mid_mean, high_mean = FIS_MEANS
    high = np.maximum(_membership(e, low_mean), _membership(d, low_mean))  # rules 1, 2
    medium = np.minimum(_membership(e, mid_mean), _membership(d, mid_mean))  # rule 3
    low = np.maximum(_membership(e, high_mean), _membership(d, high_mean))  # rules 4, 5
    return low, medium, high


def _centroids(low: FloatArray, medium: FloatArray, high: FloatArray) -> FloatArray:
    """Centroid of ``max_c min(s_c, term_c(x))`` on ``[0, 1]``, exactly, per point.

    Every place where the aggregate can change its formula is known in closed form: a
    term meets its own clip level (``x = m ± sqrt(-2 ln s)``), two terms of equal σ meet
    at the midpoint of their means, a term meets another's clip level. Between
    consecutive such points the aggregate is one constant or one Gaussian, whose area
    and first moment are integrated exactly (erf).
    """
    means = np.asarray(FIS_MEANS, dtype=np.float64)
    strengths = np.stack([low, medium, high], axis=1)  # (k, 3)
    reach = FIS_SIGMA * np.sqrt(-2.0 * np.log(np.clip(strengths, 1e-300, 1.0)))  # (k, 3)
    # Term a at the clip level of term b (a == b: its own clip point), both sides.
    crossings = means[None, :, None, None] + np.stack([reach, -reach], axis=2)[:, None, :, :]
    pairwise = np.array([0.25, 0.5, 0.75])  # midpoints of the means
    k = strengths.shape[0]
    points = np.concatenate(
        [
            crossings.reshape(k, -1),
            np.broadcast_to(pairwise, (k, 3)),
            np.zeros((k, 1)),
            np.ones((k, 1)),
        ],
        axis=1,
    )
    points = np.sort(np.clip(points, 0.0, 1.0), axis=1)
    u, v = points[:, :-1], points[:, 1:]
    mid = 0.5 * (u + v)
    gauss_mid = np.exp(-0.5 * ((mid[:, :, None] - means) / FIS_SIGMA) ** 2)  # (k, j, 3)
    clipped = np.minimum(gauss_mid, strengths[:, None, :])
    which = np.argmax(clipped, axis=2)  # the term on top in each interval
    s_top = np.take_along_axis(strengths[:, None, :], which[:, :, None], axis=2)[:, :, 0]
    g_top = np.take_along_axis(gauss_mid, which[:, :, None], axis=2)[:, :, 0]
    m_top = means[which]
    constant = s_top <= g_top  # clipped: the aggregate is the strength there
    root2 = math.sqrt(2.0) * FIS_SIGMA
    g_area = (
        FIS_SIGMA
        * math.sqrt(math.pi / 2.0)
        * (special.erf((v - m_top) / root2) - special.erf((u - m_top) / root2))
    )
    g_u = np.exp(-0.5 * ((u - m_top) / FIS_SIGMA) ** 2)
    g_v = np.exp(-0.5 * ((v - m_top) / FIS_SIGMA) ** 2)
    g_moment = FIS_SIGMA**2 * (g_u - g_v) + m_top * g_area
    area = np.where(constant, s_top * (v - u), g_area)
    moment = np.where(constant, 0.5 * s_top * (v * v - u * u), g_moment)
    return np.asarray(moment.sum(axis=1) / area.sum(axis=1), dtype=np.float64)


def _literal(e: FloatArray, d: FloatArray) -> FloatArray:
    out = np.empty(e.size, dtype=np.float64)
    for start in range(0, e.size, _CHUNK):
        stop = start + _CHUNK
        out[start:stop] = _centroids(*_strengths(e[start:stop], d[start:stop]))
    return out


def _literal_range() -> tuple[float, float]:
    corners = _literal(np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    return float(corners[0]), float(corners[1])


def _check_unit(values: Any, name: str) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.size and not (np.all(np.isfinite(arr)) and arr.min() >= 0.0 and arr.max() <= 1.0):
        raise ParameterError(
            f"{name}: every value must be in [0, 1] (normalized input), got values in "
            f"[{np.nanmin(arr)}, {np.nanmax(arr)}]"
        )
    return arr


def fis_output(
    epsilon: Any,
    delta: Any,
    *,
    rescale: bool = True,
) -> FloatArray:
    """The privacy need answered by normalized (ε, δ), per the paper's fuzzy system.

    Parameters
    ----------
    epsilon, delta : array_like of float in [0, 1]
        Normalized inputs (``ε / T_ε`` and ``δ · n``, see the module notes); they
        broadcast against each other.
    rescale : bool, default True
        Map the literal surface affinely onto ``[0, 1]`` (its value at ``(0, 0)``
        becomes 1 and at ``(1, 1)`` becomes 0). ``False`` gives the literal output,
        which only spans about 0.487-0.513.

    Returns
    -------
    numpy.ndarray of float
        The defuzzified output, same shape as the broadcast inputs. No privacy is spent.

    Examples
    --------
    >>> from veil.share import fis_output
    >>> float(fis_output(0.0, 0.0)), float(fis_output(1.0, 1.0))
    (1.0, 0.0)
    >>> round(float(fis_output(0.0, 0.0, rescale=False)), 3)
    0.513
    """
    e, d = np.broadcast_arrays(_check_unit(epsilon, "epsilon"), _check_unit(delta, "delta"))
    shape = e.shape
    raw = _literal(e.ravel().astype(np.float64), d.ravel().astype(np.float64))
    if rescale:
        lo, hi = _literal_range()
        raw = (raw - lo) / (hi - lo)
    return raw.reshape(shape)


@dataclass(frozen=True)
class FuzzySurface:
    """The system's output on a regular grid of normalized inputs.

    Attributes
    ----------
    epsilon, delta : numpy.ndarray
        Grid axes on ``[0, 1]`` (normalized ε and δ).
    values : numpy.ndarray of shape (len(delta), len(epsilon))
        Output at each grid point (row: δ, column: ε).
    literal_range : tuple of float
        The literal surface's minimum and maximum (at ``(1, 1)`` and ``(0, 0)``).
    rescaled : bool
        Whether ``values`` are rescaled to ``[0, 1]``.
    """

    epsilon: FloatArray
    delta: FloatArray
    values: FloatArray
    literal_range: tuple[float, float]
    rescaled: bool


def fis_surface(grid: int = 200, *, rescale: bool = True) -> FuzzySurface:
    """Evaluate the system on a ``grid x grid`` lattice of ``[0, 1]²`` (paper Fig. 2).

    The rules are symmetric in ε and δ, so only one triangle of the lattice is
    defuzzified and mirrored.

    Parameters
    ----------
    grid : int, default 200
        Points per axis (>= 2).
    rescale : bool, default True
        As in :func:`fis_output`.
    """
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 2:
        raise ParameterError(f"grid: must be an integer >= 2, got {grid!r}")
    axis = np.linspace(0.0, 1.0, int(grid))
    rows, cols = np.triu_indices(int(grid))
    tri = _literal(axis[cols], axis[rows])
    lo, hi = _literal_range()
    if rescale:
        tri = (tri - lo) / (hi - lo)
    values = np.empty((int(grid), int(grid)), dtype=np.float64)
    values[rows, cols] = tri
    values[cols, rows] = tri
    return FuzzySurface(axis, axis.copy(), values, (lo, hi), bool(rescale))


@dataclass(frozen=True)
class BudgetPairs:
    """The (ε, δ) candidates for one privacy need, and every reading behind them.

    Attributes
    ----------
    pairs : tuple of (float, float)
        TN pairs ``(ε, δ)``, ε in absolute units (per dataset, central DP) and
        increasing, δ fixed.
    pif_thresh : float
        The privacy need matched.
    epsilon_star : float
        ε on the contour at δ (the largest pair's ε).
    capped : bool
        True when even ``ε = T_ε`` answers more than the need, so ε* is ``T_ε``.
    contour : tuple of (float, float)
        The contour ``output == pif_thresh`` traced on the grid, as absolute
        ``(ε, δ)`` pairs (ε falls as δ rises); δ rows where it leaves ``[0, T_ε]``
        are left out.
    outputs : tuple of float
        The rescaled system output at each pair (each ``>= pif_thresh``).
    readings : dict
        Every interpretation made, in words, for the manifest.
    """

    pairs: tuple[tuple[float, float], ...]
    pif_thresh: float
    epsilon_star: float
    capped: bool
    contour: tuple[tuple[float, float], ...]
    outputs: tuple[float, ...]
    n_rows: int
    t_epsilon: float
    p_l: float
    tn: int
    literal_range: tuple[float, float]
    readings: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python summary (no arrays) that a manifest can carry."""
        return {
            "method": "OptimShare Mamdani FIS (Gaussian LOW/MEDIUM/HIGH, sigma 1, "
            "5 rules, max-min, centroid)",
            "pif_thresh": self.pif_thresh,
            "n_rows": self.n_rows,
            "t_epsilon": self.t_epsilon,
            "p_l_percent": self.p_l,
            "tn": self.tn,
            "pairs": [list(p) for p in self.pairs],
            "outputs": list(self.outputs),
            "epsilon_star": self.epsilon_star,
            "capped_at_t_epsilon": self.capped,
            "literal_output_range": list(self.literal_range),
            "readings": dict(self.readings),
            "privacy": "no privacy spent here; pif_thresh is computed from the data",
        }


def _check_positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}: must be a finite real number > 0, got {value!r}")
    if not (math.isfinite(float(value)) and float(value) > 0):
        raise ParameterError(f"{name}: must be a finite real number > 0, got {value!r}")
    return float(value)


def _check_count(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ParameterError(f"{name}: must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _solve_epsilon(target: float, d: float, lo_hi: tuple[float, float]) -> float:
    """Normalized ε in (0, 1] with rescaled output == target at δ-input ``d`` (bisection)."""
    lit_lo, lit_hi = lo_hi

    def f(e: float) -> float:
        raw = float(_literal(np.array([e]), np.array([d]))[0])
        return (raw - lit_lo) / (lit_hi - lit_lo) - target

    lo, hi = 0.0, 1.0  # f(lo) > 0 >= f(hi), checked by the caller
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    # lo keeps output > target; the small step back keeps it so through the rounding of
    # a second evaluation: the pair on the contour errs on the private side.
    return lo * (1.0 - 1e-9)


def _contour(surface: FuzzySurface, target: float) -> list[tuple[float, float]]:
    """Per δ row, the normalized ε where the (non-increasing) row crosses ``target``."""
    points = []
    for j, d in enumerate(surface.delta):
        row = surface.values[j]
        if row[0] < target or row[-1] > target:
            continue
        k = int(np.searchsorted(-row, -target, side="left"))
        k = min(max(k, 1), row.size - 1)
        y0, y1 = row[k - 1], row[k]
        t = 0.0 if y0 == y1 else (y0 - target) / (y0 - y1)
        e = surface.epsilon[k - 1] + t * (surface.epsilon[k] - surface.epsilon[k - 1])
        points.append((float(e), float(d)))
    return points


def budget_pairs(
    pif_thresh: float,
    n_rows: int,
    *,
    t_epsilon: float = 8.0,
    p_l: float = 0.01,
    tn: int = 12,
    grid: int = 200,
) -> BudgetPairs:
    """Choose TN (ε, δ) candidates for a privacy need with the paper's fuzzy system.

    See the module notes for the readings made (input scales, rescaling, pairs).

    Parameters
    ----------
    pif_thresh : float in [0, 1)
        The privacy need (OptimShare's PIF_thresh; higher asks for more noise).
    n_rows : int
        Number of records n of the table to release (sets δ).
    t_epsilon : float, default 8
        The ε threshold T_ε: the largest ε considered (paper default 8).
    p_l : float, default 0.01
        δ in percent of ``1/n``: ``δ = p_l / (100 n)`` (paper default 0.01 %).
    tn : int, default 12
        Number of pairs TN (paper default 12).
    grid : int, default 200
        Points per axis of the surface on which the contour is traced.

    Returns
    -------
    BudgetPairs
        ε in absolute units (central DP per dataset), δ a probability. No privacy is
        spent by this function.

    Raises
    ------
    veil.errors.ParameterError
        For a parameter outside its range.

    Examples
    --------
    >>> from veil.share import budget_pairs
    >>> choice = budget_pairs(0.6, 4898)
    >>> len(choice.pairs), choice.pairs[-1][0] == choice.epsilon_star
    (12, True)
    >>> all(o >= 0.6 for o in choice.outputs)
    True
    """
    if isinstance(pif_thresh, bool) or not isinstance(
        pif_thresh, (int, float, np.integer, np.floating)
    ):
        raise ParameterError(f"pif_thresh: must be a real number in [0, 1), got {pif_thresh!r}")
    target = float(pif_thresh)
    if not (0.0 <= target < 1.0):
        raise ParameterError(f"pif_thresh: must be in [0, 1), got {pif_thresh!r}")
    n = _check_count(n_rows, "n_rows", 1)
    t_eps = _check_positive(t_epsilon, "t_epsilon")
    pl = _check_positive(p_l, "p_l")
    if pl > 100.0:
        raise ParameterError(f"p_l: must be in (0, 100] (percent of 1/n), got {p_l!r}")
    count = _check_count(tn, "tn", 1)
    delta = pl / (100.0 * n)
    d = pl / 100.0  # δ · n
    surface = fis_surface(grid)
    lo_hi = surface.literal_range

    def rescaled(e: float) -> float:
        raw = float(_literal(np.array([e]), np.array([d]))[0])
        return (raw - lo_hi[0]) / (lo_hi[1] - lo_hi[0])

    # At ε = 0 the output is 1 for every δ (rule 1 fires fully, rule 3 clips MEDIUM
    # above LOW everywhere), so every need below 1 has a solution in (0, 1].
    capped = rescaled(1.0) >= target
    e_star = 1.0 if capped else _solve_epsilon(target, d, lo_hi)
    eps_star = e_star * t_eps
    normalized = np.array([e_star * i / count for i in range(1, count + 1)])
    normalized[-1] = e_star
    outputs = fis_output(normalized, d)
    epsilons = [float(e) * t_eps for e in normalized]
    contour = tuple((e * t_eps, dd / n) for e, dd in _contour(surface, target))
    readings = {
        "inputs": f"epsilon enters as epsilon / T_eps (T_eps = {t_eps:g}); delta as delta * n "
        "(delta as a fraction of 1/n); both in [0, 1]",
        "delta": f"delta = P_l / (100 n) = {pl:g} / (100 * {n}) = {delta:.6g}, the same for "
        "every pair (the paper's experimental setting)",
        "rescaling": f"the literal output spans [{lo_hi[0]:.6f}, {lo_hi[1]:.6f}] on [0, 1]^2 "
        "(sigma 1 memberships are nearly flat); it is rescaled affinely to [0, 1] by its "
        "values at (1, 1) and (0, 0)",
        "pairs": f"the paper's TN pairs increasing in both epsilon and delta cannot lie on a "
        f"contour of a surface that falls in both; here epsilon* solves output = PIF_thresh "
        f"at that delta and the pairs are (epsilon* * i / {count}, delta), i = 1..{count}: "
        "each answers at least the need, the last lies on the contour",
        "capped": "epsilon* = T_eps: even T_eps answers more than the need"
        if capped
        else "epsilon* is below T_eps",
        "centroid": "exact (closed-form) centre of gravity of the aggregate on the output "
        "universe [0, 1]",
        "contour": f"traced on a {surface.epsilon.size} x {surface.delta.size} grid of the "
        "rescaled surface by linear interpolation along epsilon",
    }
    return BudgetPairs(
        pairs=tuple((float(e), float(delta)) for e in epsilons),
        pif_thresh=target,
        epsilon_star=float(eps_star),
        capped=bool(capped),
        contour=contour,
        outputs=tuple(float(o) for o in outputs),
        n_rows=n,
        t_epsilon=t_eps,
        p_l=pl,
        tn=count,
        literal_range=lo_hi,
        readings=readings,
    )
