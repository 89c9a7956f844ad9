"""The guard under torch.compile: dynamo's graph read for guarded ops
(`graph.py`), their inputs checked at the region's boundary and the backend
hooked (`boundary.py`), and indices computed inside the region checked in the
compiled program itself (`inside.py`). Uses `_checks`; `_guard` installs it."""
