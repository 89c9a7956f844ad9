"""Every preflight report a test makes is checked against the contract's
schema (docs/devassert-1.schema.json), as the CLI tests check every JSON
document the binary writes (tests/support/validate_contract.py)."""

import json
import pathlib

import jsonschema

import devassert

SCHEMA = json.loads((pathlib.Path(__file__).resolve().parents[4] / "docs" / "devassert-1.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(SCHEMA)
# oneOf hides which branch failed: each document is held to its command's own.
_BRANCH = next(b for b in SCHEMA["oneOf"] if b["properties"]["command"]["const"] == "preflight")
_VALIDATOR = jsonschema.Draft202012Validator({**_BRANCH, "$defs": SCHEMA["$defs"]})


def valid(report):
    """`report`, once its JSON is devassert/1; an AssertionError naming each violation if not."""
    doc = json.loads(report.to_json())
    errors = [f"{e.json_path}: {e.message[:300]}" for e in _VALIDATOR.iter_errors(doc)]
    # What the schema cannot say (docs/json.md): a finding's causes share at most 1.
    errors += [f"$.findings[{i}].causes: confidences sum to {s:.3f} > 1" for i, f in enumerate(doc["findings"]) if (s := sum(c["confidence"] for c in f["causes"])) > 1.0]
    if errors:
        raise AssertionError("not devassert/1 (docs/devassert-1.schema.json):\n" + "\n".join(errors))
    return report


def preflight(*args, **kwargs):
    """devassert.preflight, its report checked against the schema."""
    return valid(devassert.preflight(*args, **kwargs))
