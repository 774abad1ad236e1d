"""Build script: compiles the Cython kernels (see pyproject.toml for metadata)."""

import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

openmp = [] if sys.platform == "darwin" else ["-fopenmp"]

extensions = [
    Extension(
        f"confrf._kernels.{name}",
        [f"confrf/_kernels/{name}.pyx"],
        include_dirs=[np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        # _cross computes interval ends as the scores do (a product, then a sum): no fused multiply-add
        extra_compile_args=["-O3", *openmp, *(["-ffp-contract=off"] if name == "_cross" else [])],
        extra_link_args=openmp,
    )
    for name in ("_forest", "_quantile", "_cross", "_pvalue")
]

setup(ext_modules=cythonize(extensions, compiler_directives={"language_level": "3"}))
