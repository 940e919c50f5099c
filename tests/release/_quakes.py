"""The quakes case of issue 22: exact depth, magnitude and station count beside masked points.

On R's quakes (1,000 events near Fiji), a plan that masks the epicentres with planar
Laplace but releases depth, magnitude and the number of stations exactly lets an
attacker re-link nearly every masked point by those three alone, whatever the mask.
"""

from __future__ import annotations

from typing import Any

from .._data import DATA

QUAKES = DATA / "quakes" / "quakes.csv"


def exact_measures_plan(path: str, **evaluation: Any) -> dict[str, Any]:
    """The plan, reading the quakes from ``path``, attacked by the location attack."""
    return {
        "input": {"path": path},
        "columns": {
            "rownames": {"role": "identifier", "treatment": "drop"},
            "depth": {"role": "quasi_identifier", "treatment": "keep"},
            "mag": {"role": "quasi_identifier", "treatment": "keep"},
            "stations": {"role": "quasi_identifier", "treatment": "keep"},
        },
        "locations": [
            {"lat": "lat", "lon": "long", "centre": [-21.0, -178.5], "outside": "drop",
             "max_outside": 0.8, "mask": {"method": "planar_laplace", "epsilon": 0.001}},
        ],
        "budget": {"metric": {"epsilon": 0.001}},
        "evaluation": {"attacks": ["location"], **evaluation},
    }  # fmt: skip
