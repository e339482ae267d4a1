"""The notebook in examples/python executes headless without errors."""

import os

import pytest

from conftest import EXAMPLES


def test_the_notebook_runs_headless():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    path = os.path.join(EXAMPLES, "schedulers.ipynb")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=900, kernel_name="python3",
                                     resources={"metadata": {"path": EXAMPLES}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
