"""Validate devassert JSON documents against docs/devassert-1.schema.json.

Usage: validate_contract.py DOC.json...  Prints every violation (document,
JSON path, message) and exits 1 when there is one; 0 when all are valid.
The tests run it on every JSON output they make (see tests/common/mod.rs).
"""

import json
import pathlib
import sys

import jsonschema

SCHEMA = pathlib.Path(__file__).resolve().parents[4] / "docs" / "devassert-1.schema.json"


def main() -> int:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for name in sys.argv[1:]:
        doc = json.loads(pathlib.Path(name).read_text())
        # oneOf hides which branch failed: validate against the command's own.
        branch = next(
            (b for b in schema["oneOf"] if b["properties"]["command"]["const"] == doc.get("command")),
            None,
        )
        errors = list(validator.iter_errors(doc))
        if branch is not None and errors:
            sub = jsonschema.Draft202012Validator({**branch, "$defs": schema["$defs"]})
            errors = list(sub.iter_errors(doc)) or errors
        for e in errors:
            bad += 1
            print(f"{name}: {e.json_path}: {e.message[:300]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
