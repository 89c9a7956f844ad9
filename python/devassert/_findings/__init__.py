"""Findings and their words: the catalog's rules as the guard needs them
(`rules.py`, generated), devassert/1 findings built from them
(`findings.py`), and a finding as readable text (`diagnosis.py`). The bottom
layer: it imports nothing else of devassert."""
