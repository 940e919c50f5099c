"""Local differential privacy on data frames and arrays, with trasgoDP's function names.

A trasgoDP user switches by changing the import::

    from veil.ldp.numerical import dp_clip_laplace          # was trasgodp.numerical
    from veil.ldp.categorical import dp_randomized_response_kary
    from veil.ldp.geoindis import metric_privacy, plot_metric_dp_map

Analyst-side estimators for the released data live in :mod:`veil.ldp.estimate`.
"""

from veil.ldp import categorical, estimate, geoindis, numerical
from veil.ldp.categorical import (
    dp_exponential,
    dp_exponential_array,
    dp_randomized_response_binary,
    dp_randomized_response_binary_array,
    dp_randomized_response_kary,
    dp_randomized_response_kary_array,
)
from veil.ldp.geoindis import metric_privacy, plot_metric_dp_map
from veil.ldp.numerical import (
    dp_clip_gaussian,
    dp_clip_gaussian_array,
    dp_clip_laplace,
    dp_clip_laplace_array,
)

__all__ = [
    "categorical",
    "dp_clip_gaussian",
    "dp_clip_gaussian_array",
    "dp_clip_laplace",
    "dp_clip_laplace_array",
    "dp_exponential",
    "dp_exponential_array",
    "dp_randomized_response_binary",
    "dp_randomized_response_binary_array",
    "dp_randomized_response_kary",
    "dp_randomized_response_kary_array",
    "estimate",
    "geoindis",
    "metric_privacy",
    "numerical",
    "plot_metric_dp_map",
]
