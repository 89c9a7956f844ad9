"""The ``pytest11`` entry point ``devassert.pytest_plugin`` (``pytest
--devassert``), kept at this name so that ``-p devassert.pytest_plugin`` and
``-p no:devassert.pytest_plugin`` keep working: its hooks are those of
`integrations/pytest_plugin.py`, which imports nothing else until the option
is on."""

from .integrations.pytest_plugin import pytest_addoption as pytest_addoption
from .integrations.pytest_plugin import pytest_configure as pytest_configure
from .integrations.pytest_plugin import pytest_load_initial_conftests as pytest_load_initial_conftests
