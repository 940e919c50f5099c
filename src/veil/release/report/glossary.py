"""What each figure of the release report means: one line beside the figure, and a
definition with its reference at the end of the page.

Every measure the report shows has an entry here. :func:`_explained` lists the one-line
meanings under a table, each linking to its definition in the page's glossary
(:func:`_glossary_section`), which names the paper or book the definition comes from and
links to it. The page stays self-contained: the definitions are in the page, the links
are only there to follow.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from veil.release.report.page import _link, _Raw


@dataclass(frozen=True)
class _Term:
    name: str
    line: str
    reference: str
    url: str | None = None


_EL_EMAM: Final[tuple[str, str]] = (
    'K. El Emam and F. K. Dankar, "Protecting privacy using k-anonymity", Journal of the '
    "American Medical Informatics Association 15(5), 627-637, 2008",
    "https://doi.org/10.1197/jamia.M2716",
)
_MACHANAVAJJHALA: Final[tuple[str, str]] = (
    'A. Machanavajjhala, D. Kifer, J. Gehrke and M. Venkitasubramaniam, "l-Diversity: '
    'privacy beyond k-anonymity", ACM Transactions on Knowledge Discovery from Data 1(1), '
    "article 3, 2007",
    "https://doi.org/10.1145/1217299.1217302",
)
_ZANDBERGEN: Final[tuple[str, str]] = (
    'P. A. Zandbergen, "Ensuring confidentiality of geocoded health data: assessing '
    'geographic masking strategies for individual-level data", Advances in Medicine 2014, '
    "article 567049",
    "https://doi.org/10.1155/2014/567049",
)
_TRASGODP: Final[tuple[str, str]] = (
    'J. Sáinz-Pardo Díaz and Á. López García, "trasgoDP: an open source framework for '
    'releasing noised tabular microdata under local differential privacy", '
    "arXiv:2607.22230, 2026",
    "https://arxiv.org/abs/2607.22230",
)
_HITTMEIR: Final[str] = (
    'J. Hittmeir, A. Ekelhart and R. Mayer, "Utility and privacy assessments of synthetic '
    'data for regression tasks", IEEE International Conference on Big Data, 2019'
)

_OPTIMSHARE: Final[str] = (
    'M. A. P. Chamikara, S. I. Jang, I. Oppermann, D. Liu et al., "OptimShare: a unified '
    "framework for privacy preserving data sharing - towards the practical utility of data "
    'with privacy", 2023'
)

_GIOMI: Final[tuple[str, str]] = (
    'M. Giomi, F. Boenisch, C. Wehmeyer and B. Tasnádi, "A unified framework for '
    'quantifying privacy risk in synthetic data", Proceedings on Privacy Enhancing '
    "Technologies 2023(2)",
    "https://arxiv.org/abs/2211.10459",
)

_TERMS: Final[dict[str, _Term]] = {
    "class": _Term(
        "equivalence class",
        "the records that share one combination of quasi-identifier values; an attacker "
        "who knows a person's values can narrow them down to their class, not further.",
        *_EL_EMAM,
    ),
    "sample-uniques": _Term(
        "sample uniques",
        "records alone in their class: whoever knows their quasi-identifiers finds them.",
        'C. Skinner and M. Elliot, "A measure of disclosure risk for microdata", Journal '
        "of the Royal Statistical Society B 64(4), 855-867, 2002",
        "https://doi.org/10.1111/1467-9868.00365",
    ),
    "prosecutor": _Term(
        "prosecutor risk",
        "1 / the size of a record's class: the chance that an attacker who knows the "
        "person is in the table picks their record.",
        *_EL_EMAM,
    ),
    "journalist": _Term(
        "journalist risk",
        "the prosecutor risk when the attacker does not know whether the person is in the "
        "table; it needs the population (a sampling fraction).",
        *_EL_EMAM,
    ),
    "marketer": _Term(
        "marketer risk",
        "the share of records an attacker re-identifies on average when linking the whole "
        "table (the mean prosecutor risk).",
        *_EL_EMAM,
    ),
    "k-anonymity": _Term(
        "k-anonymity",
        "every class holds at least k records, so each record hides among k - 1 others "
        "on the quasi-identifiers it lists (and only those).",
        'L. Sweeney, "k-Anonymity: a model for protecting privacy", International Journal '
        "of Uncertainty, Fuzziness and Knowledge-Based Systems 10(5), 557-570, 2002",
        "https://doi.org/10.1142/S0218488502001648",
    ),
    "homogeneity": _Term(
        "attribute disclosure (homogeneity)",
        "a class where one sensitive value covers at least 80 % of the records reveals that "
        "value for anyone known to be in the class, without finding their record. It is "
        "real disclosure when the value's share in the class exceeds its share in the "
        "whole table by 20 points or more; otherwise the class only repeats the base rate "
        "(what anyone guesses from the table as a whole).",
        *_MACHANAVAJJHALA,
    ),
    "ldp": _Term(
        "local differential privacy (ε per record)",
        "each released value is randomized on its own, so that any two true values of one "
        "record give the same output with probabilities within a factor e^ε; the costs of "
        "a record's columns add up.",
        'S. P. Kasiviswanathan, H. K. Lee, K. Nissim, S. Raskhodnikova and A. Smith, "What '
        'can we learn privately?", SIAM Journal on Computing 40(3), 793-826, 2011',
        "https://doi.org/10.1137/090756090",
    ),
    "geo-ind": _Term(
        "geo-indistinguishability (ε per metre)",
        "two true locations d metres apart give the same released point with probabilities "
        "within a factor e^(ε d): nearby places are hard to tell apart, far ones are not.",
        "M. E. Andrés, N. E. Bordenabe, K. Chatzikokolakis and C. Palamidessi, "
        '"Geo-indistinguishability: differential privacy for location-based systems", ACM '
        "CCS 2013, 901-914",
        "https://doi.org/10.1145/2508859.2516735",
    ),
    "composition": _Term(
        "sequential composition",
        "the privacy costs of the steps that touch one record add up: the ledger's total "
        "per record is the guarantee of the release as a whole.",
        'C. Dwork and A. Roth, "The algorithmic foundations of differential privacy", '
        "Foundations and Trends in Theoretical Computer Science 9(3-4), 2014, Theorem 3.16",
        "https://doi.org/10.1561/0400000042",
    ),
    "tvd": _Term(
        "total variation distance (TVD)",
        "half the sum of the absolute differences of the frequencies: the share of the "
        "distribution that moved (0 unchanged, 1 nothing in common).",
        "D. A. Levin, Y. Peres and E. L. Wilmer, Markov chains and mixing times, American "
        "Mathematical Society, 2009, section 4.1",
        "https://en.wikipedia.org/wiki/Total_variation_distance_of_probability_measures",
    ),
    "binned-tvd": _Term(
        "TVD on bins",
        "the TVD of a numeric column after cutting both sides into the same 20 bins (over "
        "the public bounds when the column has some): noise moves values, and only this "
        "version shows how far the shape of the distribution moved.",
        "D. A. Levin, Y. Peres and E. L. Wilmer, Markov chains and mixing times, American "
        "Mathematical Society, 2009, section 4.1 (applied to the binned frequencies)",
        "https://en.wikipedia.org/wiki/Total_variation_distance_of_probability_measures",
    ),
    "js": _Term(
        "Jensen-Shannon divergence",
        "a symmetric, bounded (0 to ln 2 nats) divergence of the two frequency tables.",
        'J. Lin, "Divergence measures based on the Shannon entropy", IEEE Transactions on '
        "Information Theory 37(1), 145-151, 1991",
        "https://doi.org/10.1109/18.61115",
    ),
    "kl": _Term(
        "Kullback-Leibler divergence",
        "the information lost when the release's frequencies stand for the original's; "
        "infinite when the release never shows a value the original holds.",
        'S. Kullback and R. A. Leibler, "On information and sufficiency", Annals of '
        "Mathematical Statistics 22(1), 79-86, 1951",
        "https://doi.org/10.1214/aoms/1177729694",
    ),
    "wasserstein": _Term(
        "Wasserstein distance",
        "how far, in the column's own unit, values must move on average to turn one "
        "distribution into the other.",
        'L. N. Vaserstein, "Markov processes over denumerable products of spaces, '
        'describing large systems of automata", Problems of Information Transmission 5(3), '
        "47-52, 1969",
        "https://en.wikipedia.org/wiki/Wasserstein_metric",
    ),
    "correlation-loss": _Term(
        "correlation loss",
        "the mean absolute change of the pairwise correlations, as a percentage of their "
        "mean absolute value in the original (0 preserved, 200 every sign flipped).",
        *_TRASGODP,
    ),
    "ml-utility": _Term(
        "machine-learning utility",
        "a classifier trained on the release and one trained on the original are tested on "
        "the same held-out original records; the gap is what the release lost for the task.",
        _HITTMEIR,
        None,
    ),
    "linkage": _Term(
        "nearest-location linkage",
        "an attacker who holds the true locations links each released point to the nearest "
        "true one; the share linked to their own record is the re-identification rate.",
        *_ZANDBERGEN,
    ),
    "spatial-k": _Term(
        "spatial k",
        "for a released point, how many true locations are at least as close to it as the "
        "record's own: the crowd it hides in.",
        *_ZANDBERGEN,
    ),
    "displacement": _Term(
        "displacement",
        "the distance in metres between a true location and its released version.",
        *_ZANDBERGEN,
    ),
    "csf": _Term(
        "cell surprise factor (CSF)",
        "for one cell, how far the share of its value among the records equal to it on "
        "every other attribute is from the value's share in the whole table: 0 says "
        "nothing, 1 gives it away.",
        _OPTIMSHARE,
    ),
    "pif": _Term(
        "PIF_A",
        "an attribute's mean CSF, in [0, 1]: how much its values single records out. "
        "QPIF is measured on the exact columns alone, QSPIF on every released column; an "
        "exact column whose QSPIF far exceeds its QPIF is moved to the synthetic ones.",
        _OPTIMSHARE,
    ),
    "share-utility": _Term(
        "utility loss U_l",
        "GaussianNB trained on a candidate and tested on held-out original records, "
        "against the original cross-validated on itself: (U_o - U_p) / U_o, clipped to "
        "[0, 1]; the figure shows the utility 1 - U_l.",
        _OPTIMSHARE,
    ),
    "effectiveness": _Term(
        "effectiveness e",
        "1 - (C U_l + (1 - C) P_N), where P_N = min(1, epsilon L / T_eps) weighs the share "
        "L of records whose own synthetic row is the nearest to them among the rows with "
        "their exact values; candidates with e below E^T are not released.",
        _OPTIMSHARE,
    ),
    "shadow-release": _Term(
        "shadow release",
        "the plan run again, in memory, on a random part of the records, the rest held out "
        "as the control: the attacks are measured on it, since the published release holds "
        "every record and leaves nobody out to compare with. It is never written.",
        *_GIOMI,
    ),
    "attack-success": _Term(
        "attack success rate",
        "the share of attempts on which the attacker got it right (found the person's "
        "record, learned their value, linked their two records), with its 95 % Wilson "
        "interval.",
        *_GIOMI,
    ),
    "attack-baseline": _Term(
        "attack baseline",
        "how often the same attacker gets it right without what the release leaks about its "
        "records: the attack on held-out records the release does not hold, or chance.",
        *_GIOMI,
    ),
    "attack-advantage": _Term(
        "attack advantage",
        "(success - baseline) / (1 - baseline): the part of the room above the baseline the "
        "attack takes; 0 gives the attacker nothing beyond the baseline, 1 succeeds on "
        "everybody the baseline misses. An interval reaching below 0 cannot tell the "
        "attack from its baseline.",
        *_GIOMI,
    ),
    "attack-finding": _Term(
        "attack finding",
        "an attack whose advantage's 95 % interval lies wholly above the margin "
        "(veil.attacks.DEFAULT_MARGIN, 5 %): it beats its baseline with confidence.",
        *_GIOMI,
    ),
    "singling-out": _Term(
        "singling out",
        "descriptions read off the release (a rare value, an extreme, three columns of a "
        "row) that fit exactly one person in the records.",
        *_GIOMI,
    ),
    "linkability": _Term(
        "linkability",
        "the release joins two sources an attacker holds about the same people: the row "
        "nearest to one source is the row nearest to the other.",
        *_GIOMI,
    ),
    "attribute-inference": _Term(
        "attribute inference",
        "the released row nearest to what the attacker knows of a person gives their "
        "sensitive value (a category exactly, a number within 5 %).",
        *_GIOMI,
    ),
    "location-attack": _Term(
        "location re-identification",
        "the released record whose masked location is nearest to where a person was (and "
        "that agrees with them on the exact columns an attacker knows) is theirs; against "
        "chance, one over the released records.",
        *_ZANDBERGEN,
    ),
    "membership": _Term(
        "membership inference",
        "a person is called a member of the data a synthetic release was made from when the "
        "release holds a row close to their record; against a coin.",
        'S. Yeom, I. Giacomelli, M. Fredrikson and S. Jha, "Privacy risk in machine '
        'learning: analyzing the connection to overfitting", IEEE CSF 2018',
        "https://arxiv.org/abs/1709.01604",
    ),
    "intersection": _Term(
        "intersection of releases",
        "two releases of the same records under different generalizations, joined: only "
        "the values found in a person's class of both can be theirs.",
        'S. R. Ganta, S. P. Kasiviswanathan and A. Smith, "Composition attacks and '
        'auxiliary information in data privacy", KDD 2008',
        "https://arxiv.org/abs/0803.0032",
    ),
}


def _anchor(key: str) -> str:
    return f"def-{key}"


def _term(key: str, text: str | None = None) -> _Raw:
    """A link to the definition of ``key`` (its name, or ``text``)."""
    return _link(_anchor(key), text if text is not None else _TERMS[key].name)


def _meaning(key: str) -> str:
    """The one-line meaning of ``key`` (plain text)."""
    return _TERMS[key].line


def _explained(keys: Iterable[str]) -> str:
    """The one-line meanings of ``keys`` under a table, each linked to its definition."""
    items = [f"<li>{_term(k)}: {html.escape(_TERMS[k].line)}</li>" for k in dict.fromkeys(keys)]
    return f'<ul class="defs">{"".join(items)}</ul>' if items else ""


def _glossary_section() -> str:
    """Every definition with its reference (links open the source; nothing is loaded)."""
    entries = []
    for key, term in _TERMS.items():
        source = html.escape(term.reference)
        if term.url is not None:
            url = html.escape(term.url, quote=True)
            source += f' (<a href="{url}" rel="noopener noreferrer">{url}</a>)'
        entries.append(
            f'<dt id="{_anchor(key)}">{html.escape(term.name)}</dt>'
            f'<dd>{html.escape(term.line)} <span class="muted">Source: {source}.</span></dd>'
        )
    return f'<dl class="glossary">{"".join(entries)}</dl>'
