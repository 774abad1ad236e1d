"""confrf's version: the one place it is written.

setuptools reads it for the package metadata (``[tool.setuptools.dynamic]`` in
pyproject.toml, parsed statically, without importing confrf) and
``confrf.__version__`` imports it, so an installed wheel, an in-place build and
the metadata always agree. Between releases it carries the next version with a
``.devN`` suffix (PEP 440), as scikit-learn and statsmodels do.
"""

__version__ = "0.2.0.dev0"
