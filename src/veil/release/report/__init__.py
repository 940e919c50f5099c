"""The HTML report of a release: one self-contained page to review before publishing.

:func:`build_report` compares the original table with its release and reads the run's
manifest. It opens with a verdict in plain words (what was protected and how, the cost
per record, what is left at risk, what is not protected, and the findings that need
attention, each with what to change), then shows the figures behind it: the privacy
ledger, re-identification risk on what an attacker can match, per-column distributions
drawn as their type, divergences, correlation loss, machine-learning utility, location
maps, warnings (the release's apart from the libraries'), what is not protected, the
run's details and the definition of every measure. Plots are PNG images embedded as
``data:`` URIs (matplotlib, Agg backend) and the style sheet is inline, so the page
needs no network and no other file. :func:`write_report` writes it atomically.

The sections are built by private submodules, each importing only those listed before it:
``page`` (HTML skeleton, escaping, tables), ``plots`` (matplotlib figures), ``glossary``
(what each measure means), ``kinds`` (what a column holds), ``ledger`` (the manifest's
per-column entries), ``levels`` (generalization levels in words), ``context`` (checked
inputs, treatments, row matching, samples), ``treatments`` (what was done to a column,
in words), then one module per group of sections: ``summary``, ``risk``,
``distributions``, ``divergence``, ``utility`` (correlation and machine learning),
``maps``, ``share`` (OptimShare), ``attacks`` (the attack battery on a shadow release),
``findings`` and ``verdict``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from veil.atomic import write_text_atomic
from veil.errors import DataTypeError, VeilError
from veil.release.report.attacks import _attack_section, _review_attacks
from veil.release.report.context import _check_metrics, _columns_of, _Context, _location_pairs
from veil.release.report.distributions import _distribution_section
from veil.release.report.divergence import (
    _divergence_section,
    _DivergenceReview,
    _review_divergence,
)
from veil.release.report.findings import _findings
from veil.release.report.glossary import _glossary_section
from veil.release.report.ledger import _ledger_section
from veil.release.report.maps import _map_section, _review_locations
from veil.release.report.page import _p, _page
from veil.release.report.risk import _review_risk, _risk_section
from veil.release.report.share import _share_section
from veil.release.report.summary import (
    _details_section,
    _listed_warnings,
    _unprotected_section,
    _warnings_section,
)
from veil.release.report.utility import _correlation_section, _ml_section
from veil.release.report.verdict import _findings_section, _verdict_section
from veil.rng import RngLike, resolve_rng

if TYPE_CHECKING:
    import os

__all__ = ["Finding", "build_report", "findings_in", "write_report"]


class Finding(NamedTuple):
    """One finding of a report: about what, what is wrong, and what to change."""

    subject: str
    what: str
    change: str


def findings_in(html_text: str) -> list[Finding]:
    """The findings of a report page :func:`build_report` wrote ("Needs attention").

    Parameters
    ----------
    html_text : str
        The page.

    Returns
    -------
    list of Finding
        In the order the page lists them; empty when nothing needs attention.
    """
    section = re.search(r'<section id="attention">(.*?)</section>', html_text, re.S)
    if section is None:
        return []
    found = []
    for subject, what, change in re.findall(
        r'<li class="flag"><b>(.*?)</b>: (.*?)<span class="change"><b>What to change:</b> '
        r"(.*?) <a ",
        section.group(1),
        re.S,
    ):
        found.append(Finding(*(html.unescape(part) for part in (subject, what, change))))
    return found


def build_report(
    original: pd.DataFrame,
    released: pd.DataFrame,
    *,
    manifest: Mapping[str, Any],
    quasi_identifiers: Sequence[Hashable],
    sensitive: Sequence[Hashable],
    locations: Sequence[tuple[Hashable, Hashable]],
    target: Hashable | None,
    rng: RngLike = None,
    title: str = "Release report",
    metrics: Sequence[str] | None = None,
) -> str:
    """Build the self-contained HTML report of a release.

    The page compares ``original`` with ``released`` and reads ``manifest``; a section
    whose inputs are absent is left out, and a measure that cannot be computed shows
    why instead of failing the report. The report is computed from the original
    records: it shows their distributions, risk figures and (in the maps) locations, so
    it is as confidential as the original data until reviewed. Values of
    identifier-like columns (more distinct values than half the rows, and more than 50)
    are never drawn. Building the report spends no privacy budget.

    Sections: the verdict (what was protected and how, the cost per record, what is
    left at risk, what is not protected, in words: "age in 20-year bands"); what needs
    attention, each finding with what to change in the plan (values piled on a clipping
    bound, original values outside the public bounds, a distribution moved by a TVD of
    0.3 or more, a quasi-identifier generalized to ``*``, a noised quasi-identifier the
    noise leaves nearly exact, records singled out on what an attacker can match,
    classes that reveal a sensitive value beyond its base rate, an attack on the shadow
    release that beats its baseline by more than the margin, privacy warnings); the
    privacy ledger (per column: treatment, parameters, cost); re-identification risk
    before (:func:`veil.risk.summary` on every quasi-identifier) and after release, on
    the quasi-identifiers an attacker can match exactly (a noised or pseudonymized one
    is no class key), with the class-size profile and attribute disclosure (homogeneity
    on a majority value told apart from real disclosure); the attacks the run made on a
    shadow release (:mod:`veil.attacks`: each attack's success rate, baseline and
    advantage with their 95 % intervals, targets, the columns that made it succeed and the
    edit it suggests); distributions before and
    after, each column drawn as its type (codes as bars in value order, numbers as
    histograms, categories by frequency, generalized intervals in interval order with
    the original counted into them); divergences
    (:func:`veil.metrics.divergence_distributions`; numeric columns also on 20 bins;
    pseudonymized and identifier-like columns left out); correlation loss
    (:func:`veil.metrics.correlation_loss` with both correlation matrices); machine
    learning utility (:func:`veil.metrics.ml_utility`, if ``target`` is given); a map per
    location pair (original and released points, a zoom on the densest area, and
    :func:`veil.geo.evaluate`'s linkage and utility measures); for a share step
    (OptimShare), what is exact and what synthetic at which cost, the utility and
    effectiveness of every candidate (Fig. 7), the CSF heat map and PIF before and after,
    QPIF beside QSPIF (Figs. 6 and 8) and the Table 2 comparison; the warnings (the
    release's, and the libraries' apart, without file paths); what is not protected;
    the run's details (rows, input hash, totals, timings); the definition of every
    measure, with its reference.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before protection. Not modified.
    released : pandas.DataFrame
        The released table. Not modified. Its rows are matched to original rows (for
        correlations, ML utility and location measures) by index label when it keeps
        the original's labels (records suppressed or removed), else by position when
        both have as many rows; otherwise those measures say the rows cannot be matched.
        A release with records removed and its index reset to ``0..m-1`` cannot be
        matched (its labels would name the wrong records): keep the original's labels.
    manifest : mapping
        The run's manifest (see :mod:`veil.release.manifest`). Read keys, each optional:
        ``"input"`` (``sha256``, ``rows``, ``source``), ``"veil_version"``,
        ``"columns"`` or ``"steps"`` (per column: ``treatment`` or ``step``,
        ``parameters``, ``cost``, ``role``, ``guarantee``), ``"totals"`` (per notion),
        ``"anonymization"``, ``"warnings"`` (``{"category", "message"}`` or text),
        ``"unprotected"`` or ``"not_protected"`` (a list, or lists by kind),
        ``"timings"`` or ``"timings_s"``, ``"attacks"`` (the custodian record's:
        :meth:`veil.attacks.BatteryResult.to_dict`, or None when the plan named no
        attack). Unknown keys are ignored.
    quasi_identifiers : sequence of column labels
        Columns of ``original`` an attacker can link on; the risk after release uses
        those still present in ``released``. May be empty (no risk section figures).
    sensitive : sequence of column labels
        Sensitive columns of ``original``, checked for attribute disclosure.
    locations : sequence of (lat, lon) column-label pairs
        Coordinate columns (degrees) of ``original``; one map each.
    target : column label or None
        Class column for the machine-learning utility section; None leaves it out.
    rng : None, int or numpy.random.Generator
        Source of the train/test split of the ML utility and of the location measures'
        probe points (see :mod:`veil.rng`). Drawn only when those sections are built.
    title : str, default "Release report"
        The page title.
    metrics : sequence of str, optional
        The measured sections to build, among ``"risk"``, ``"distributions"``,
        ``"divergence"``, ``"correlation"``, ``"ml_utility"`` and ``"maps"`` (the names of
        a plan's ``evaluation.metrics``); default all. The summary, ledger, warnings and
        what is not protected are always shown.

    Returns
    -------
    str
        The HTML page. Every string that comes from the data or the manifest is escaped.
        The page loads nothing: its only addresses are the references of the
        definitions, as links a reader may follow.

    Raises
    ------
    veil.errors.DataTypeError
        If a table is not a DataFrame or ``manifest`` is not a mapping.
    veil.errors.ColumnError
        If a quasi-identifier, sensitive column, location column or the target is not a
        column of ``original``.
    veil.errors.ParameterError
        If a location is not a pair of column labels, or ``metrics`` names an unknown
        section.

    Notes
    -----
    Histograms and bars are computed from every row. Samples are systematic (every k-th
    row in table order), so the same data give the same page: the location figures draw
    at most 5 000 points per panel, and the ML utility uses at most 20 000 original
    records (with their released versions), which keeps a 50 000-row report to a few
    seconds. At most 60 columns are drawn and 30 correlated (in table order); columns
    constant before or after are left out of the correlations. Categorical bars show the
    12 categories most frequent before or after; the rest form one bar.

    Examples
    --------
    >>> from veil.datasets import load_adult
    >>> from veil.release.report import build_report
    >>> adult = load_adult().head(500)
    >>> page = build_report(
    ...     adult, adult.drop(columns=["fnlwgt"]), manifest={},
    ...     quasi_identifiers=["age", "sex"], sensitive=[], locations=[], target=None,
    ... )
    >>> page.startswith("<!DOCTYPE html>"), 'src="http' in page, "<script" in page
    (True, False, False)
    """
    for name, frame in (("original", original), ("released", released)):
        if not isinstance(frame, pd.DataFrame):
            raise DataTypeError(f"{name}: must be a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(manifest, Mapping):
        raise DataTypeError(f"manifest: must be a mapping, got {type(manifest).__name__}")
    qis = _columns_of(original, quasi_identifiers, "quasi_identifiers")
    sensitive_columns = _columns_of(original, sensitive, "sensitive")
    pairs = _location_pairs(original, locations)
    if target is not None:
        _columns_of(original, [target], "target")
    wanted = _check_metrics(metrics)

    context = _Context(original, released, manifest, pairs)
    with_ml = target is not None and "ml_utility" in wanted
    with_maps = bool(pairs) and "maps" in wanted
    needs_rng = with_ml or (
        with_maps and any(lat in released.columns and lon in released.columns for lat, lon in pairs)
    )
    generator = resolve_rng(rng) if needs_rng else None

    risk = (
        _review_risk(ctx=context, qis=qis, sensitive=sensitive_columns)
        if "risk" in wanted
        else None
    )
    divergence: _DivergenceReview | None = None
    divergence_error: str | None = None
    if "divergence" in wanted or "distributions" in wanted:
        try:
            divergence = _review_divergence(context)
        except (VeilError, ValueError, TypeError) as exc:
            divergence_error = str(exc)
    places = _review_locations(context, generator if with_maps else None)
    attacks = _review_attacks(context)
    findings = _findings(
        context, risk, divergence, places, _listed_warnings(manifest) or [], attacks
    )

    sections: list[tuple[str, str, str]] = [
        ("verdict", "Verdict", _verdict_section(context, risk, places, findings, attacks)),
        ("attention", "Needs attention", _findings_section(findings)),
    ]
    ledger = _ledger_section(manifest)
    if ledger is not None:
        sections.append(("ledger", "Privacy ledger", ledger))
    if risk is not None:
        sections.append(("risk", "Re-identification risk", _risk_section(context, risk)))
    if attacks is not None and (attacks.battery is not None or attacks.error is not None):
        sections.append(("attacks", "Attacks", _attack_section(context, attacks)))
    share = _share_section(context)
    if share is not None:
        sections.append(("share", "Partially perturbed sharing", share))
    if "distributions" in wanted:
        sections.append(("distributions", "Distributions", _distribution_section(context)))
    if "divergence" in wanted:
        body = (
            _divergence_section(divergence)
            if divergence is not None
            else _p(f"Not computed: {divergence_error}", "error")
        )
        sections.append(("divergence", "Divergences", body))
    if "correlation" in wanted:
        sections.append(("correlation", "Correlation loss", _correlation_section(context)))
    if with_ml and target is not None and generator is not None:
        sections.append(
            ("ml-utility", "Machine-learning utility", _ml_section(context, target, generator))
        )
    if with_maps:
        sections.append(("maps", "Locations", _map_section(context, places)))
    warnings_html = _warnings_section(manifest)
    if warnings_html is not None:
        sections.append(("warnings", "Warnings", warnings_html))
    unprotected = _unprotected_section(manifest)
    if unprotected is not None:
        sections.append(("unprotected", "What is not protected", unprotected))
    sections.append(("details", "Run details", _details_section(context)))
    sections.append(("definitions", "Definitions", _glossary_section()))
    return _page(title, sections)


def write_report(path: str | os.PathLike[str], html_text: str) -> None:
    """Write a report page to ``path`` atomically (UTF-8), as a confidential file.

    The report compares the release with the raw records: it is written ``0o600`` in a
    ``0o700`` folder (:func:`veil.atomic.write_atomic`).

    Parameters
    ----------
    path : str or os.PathLike
        The target file; a crash leaves any previous file intact.
    html_text : str
        The page, as :func:`build_report` returns it.

    Raises
    ------
    veil.errors.DataTypeError
        If ``html_text`` is not a string.
    """
    if not isinstance(html_text, str):
        raise DataTypeError(f"html_text: must be a str, got {type(html_text).__name__}")
    write_text_atomic(path, html_text, confidential=True)
