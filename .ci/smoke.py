"""Import smoke test of an installed confrf wheel, run by .ci/run outside the clone.

It must find the installed package (never a source tree), its compiled kernels, data files and
licenses, the metadata version, and fit and predict once. Run it with the wheel venv's python
from a folder that is not the clone: ``python /path/to/clone/.ci/smoke.py``.
"""

import importlib.metadata
import io
import sys
import sysconfig
from contextlib import redirect_stdout
from importlib import resources
from pathlib import Path

import confrf as cf
from confrf._kernels import _forest, _quantile

site = Path(sysconfig.get_paths()["purelib"]).resolve()
package = Path(cf.__file__).resolve().parent
assert package.parent == site, f"confrf was imported from {package}, not from the venv's site-packages {site}"
assert Path(_forest.__file__).parent == package / "_kernels", _forest.__file__
assert Path(_quantile.__file__).parent == package / "_kernels", _quantile.__file__
assert cf.__version__ == importlib.metadata.version("confrf"), (cf.__version__, importlib.metadata.version("confrf"))

data = resources.files("confrf.datasets")
for name in ("data/california_housing.csv.gz", "data/diamonds.csv.gz", "data/star.csv.gz", "README.md"):
    assert data.joinpath(name).is_file(), f"{name} is missing from the installed package"
licenses = {p.name for p in data.joinpath("licenses").iterdir()}
assert {"california_housing.txt", "diamonds.txt", "star.txt", "GPL-3.0.txt"} <= licenses, licenses
dist_licenses = {Path(str(f)).name for f in importlib.metadata.files("confrf") or () if "licenses" in str(f)}
assert {"LICENSE", "GPL-3.0.txt"} <= dist_licenses, dist_licenses

out = io.StringIO()
with redirect_stdout(out):
    cf.show_versions()
shown = out.getvalue()
assert f"version: {cf.__version__}" in shown and "OpenMP: " in shown, shown

df = cf.datasets.load_diamonds().sample(1500, random_state=0)
fit = cf.lcp_rf("price ~ carat + C(cut)", data=df, alpha=0.1, random_state=0)
pred = fit.predict(df.head(5))
assert list(pred.columns[:3]) == ["fit", "lwr", "upr"] and len(pred) == 5, pred
assert (pred["lwr"] <= pred["upr"]).all(), pred

print(shown)
print(f"smoke test passed: confrf {cf.__version__} from {package} (Python {sys.version.split()[0]})")
