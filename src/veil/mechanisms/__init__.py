"""Array-level randomizers and their calibration (NumPy only, no pandas).

Each mechanism validates its parameters, states its guarantee, reports the privacy it
actually spends as a :class:`PrivacyCost`, and exposes its bias and variance where
they are defined.
"""

from veil.mechanisms.central import NoisyValue, clipped_mean, noisy_count, noisy_histogram
from veil.mechanisms.cost import NEIGHBOURING, Notion, PrivacyCost, PrivacyLedger
from veil.mechanisms.discrete import (
    MAX_NOISE_SCALE,
    sample_discrete_gaussian,
    sample_discrete_laplace,
    sample_rounded_gaussian,
)
from veil.mechanisms.exponential import Exponential, ExponentialCalibration, ordinal_scores
from veil.mechanisms.gaussian import (
    Calibration,
    Gaussian,
    GaussianSampler,
    analytic_sigma,
    classic_sigma,
    discrete_gaussian_delta,
    gaussian_delta,
)
from veil.mechanisms.laplace import Laplace
from veil.mechanisms.planar_laplace import PlanarLaplace
from veil.mechanisms.randomized_response import (
    BinaryRandomizedResponse,
    RandomizedResponse,
    channel_epsilon,
)

__all__ = [
    "MAX_NOISE_SCALE",
    "NEIGHBOURING",
    "BinaryRandomizedResponse",
    "Calibration",
    "Exponential",
    "ExponentialCalibration",
    "Gaussian",
    "GaussianSampler",
    "Laplace",
    "NoisyValue",
    "Notion",
    "PlanarLaplace",
    "PrivacyCost",
    "PrivacyLedger",
    "RandomizedResponse",
    "analytic_sigma",
    "channel_epsilon",
    "classic_sigma",
    "clipped_mean",
    "discrete_gaussian_delta",
    "gaussian_delta",
    "noisy_count",
    "noisy_histogram",
    "ordinal_scores",
    "sample_discrete_gaussian",
    "sample_discrete_laplace",
    "sample_rounded_gaussian",
]
