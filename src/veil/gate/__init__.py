"""The release gate: one place every output of veil passes through before it leaves.

A plan run (:func:`veil.release.run`), each one-table command (``veil ldp``, ``mask``,
``geo``, ``anonymize``, ``share``, ``report``) and the platform's worker write their
outputs through this package, so that a guard written once holds on every path:

* the **public manifest** is built from an allow-list model of public fields
  (:mod:`veil.gate.public`, :mod:`veil.gate.manifest`), never copied and scrubbed, and
  states every guarantee with its notion, unit and neighbouring relation;
* **carrier columns**, released as they are but holding a treated value or singling out
  records, are refused unless acknowledged by name (:mod:`veil.gate.carriers`);
* **formula text** in CSV cells and column names is escaped (:mod:`veil.gate.escape`);
* **files** are written as a set, confidential ones ``0o600`` in ``0o700`` folders and
  never beside a release, with no temporary file left behind (:mod:`veil.gate.outputs`,
  on :mod:`veil.atomic`);
* **secrets** are removed from every message (:mod:`veil.gate.redact`).

The limit on records dropped as outside a projection is the geo masks' own
(:func:`veil.geo` ``max_outside``): every path that drops records calls them.
"""

from veil.gate.carriers import (
    Declared,
    acknowledged_unknown,
    check_carriers,
    released_carriers,
)
from veil.gate.errors import CarrierError, GateError, PlacementError
from veil.gate.escape import FORMULA_PREFIXES, HEADER, escape_formulas, escape_text
from veil.gate.manifest import FORMAT, PublicManifest, public_manifest_schema, validated
from veil.gate.outputs import MANIFEST, OutputSet, check_confidential_place, inside
from veil.gate.public import PRIVATE_FIELDS, PUBLIC_FIELDS, project, unclassified, vault_kind
from veil.gate.redact import is_clean, redact, redact_url

__all__ = [
    "FORMAT",
    "FORMULA_PREFIXES",
    "HEADER",
    "MANIFEST",
    "PRIVATE_FIELDS",
    "PUBLIC_FIELDS",
    "CarrierError",
    "Declared",
    "GateError",
    "OutputSet",
    "PlacementError",
    "PublicManifest",
    "acknowledged_unknown",
    "check_carriers",
    "check_confidential_place",
    "escape_formulas",
    "escape_text",
    "inside",
    "is_clean",
    "project",
    "public_manifest_schema",
    "redact",
    "redact_url",
    "released_carriers",
    "unclassified",
    "validated",
    "vault_kind",
]
