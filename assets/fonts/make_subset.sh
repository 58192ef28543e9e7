#!/usr/bin/env bash
# Regenerates DejaVuSans-subset.ttf, the font `lakeseek bench --plot out.png` draws text with
# (PNG output rasterizes text itself and must not depend on the machine's fonts).
# Source: DejaVu Sans 2.37 (Debian package fonts-dejavu-core); licence in DejaVu-LICENSE.txt.
# Subset: printable ASCII, Latin-1 (incl. the micro sign), en/em dash, minus, ≤ and ≥. Needs fonttools (PyPI).
set -euo pipefail
cd "$(dirname "$0")"
python3 -m fontTools.subset /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf \
  --unicodes="U+0020-007E,U+00A0-00FF,U+2013,U+2014,U+2212,U+2264,U+2265" \
  --layout-features='' --no-hinting --desubroutinize \
  --output-file=DejaVuSans-subset.ttf
