"""Print the report with a real browser: Debian's headless Chromium (``/usr/bin/chromium``,
or ``CHROMIUM_PATH``), never a browser downloaded by a tool.

- :func:`print_pdf`: the HTML report printed to PDF (A4 landscape, as its print style asks).
- :func:`figure_images`: each figure as SVG and as PNG at print resolution, made by plotly.js's
  own ``Plotly.toImage`` inside Chromium (plotly's static export needs ``kaleido``, which the
  project does not install).
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from plotly.offline import get_plotlyjs

from workflows.report.html import figure_json

CHROMIUM_ENV = "CHROMIUM_PATH"
DEFAULT_CHROMIUM = Path("/usr/bin/chromium")
BROWSER_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--hide-scrollbars")
#: PNG pixels per CSS pixel: a 1000-px-wide figure becomes 3000 px, 300 dpi across 10 inches.
PRINT_SCALE = 3
#: Seconds Chromium may take for one print or one batch of images.
BROWSER_TIMEOUT = 300
_RESULT = re.compile(r'<pre id="image-(\d+)-(svg|png)">([^<]*)</pre>')


class BrowserMissing(FileNotFoundError):
    """No Chromium at the expected path."""


def chromium() -> Path:
    """The Chromium binary: ``$CHROMIUM_PATH`` or Debian's ``/usr/bin/chromium``."""
    path = Path(os.environ.get(CHROMIUM_ENV, DEFAULT_CHROMIUM))
    if not path.is_file():
        raise BrowserMissing(f"no Chromium at {path}: install Debian's package "
                             "(apt-get install -y chromium) or set CHROMIUM_PATH")
    return path


def _run_browser(arguments: Sequence[str], budget_ms: int) -> subprocess.CompletedProcess:
    command = [str(chromium()), *BROWSER_FLAGS, f"--virtual-time-budget={int(budget_ms)}",
               *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT,
                          check=False)


def print_pdf(html_path: Path, pdf_path: Path, budget_ms: int = 30_000) -> Path:
    """Print ``html_path`` to ``pdf_path`` with headless Chromium; returns ``pdf_path``.

    Raises RuntimeError when Chromium wrote no PDF (its stderr tail in the message)."""
    pdf_path = Path(pdf_path).absolute()
    pdf_path.unlink(missing_ok=True)
    done = _run_browser(["--no-pdf-header-footer", f"--print-to-pdf={pdf_path}",
                         Path(html_path).absolute().as_uri()], budget_ms)
    if not pdf_path.is_file() or pdf_path.stat().st_size == 0:
        raise RuntimeError(f"Chromium printed no PDF: {done.stderr.strip()[-500:]}")
    return pdf_path


def _image_page(figures: Sequence[dict], scale: int) -> str:
    """A page that renders each figure off screen and writes its SVG and PNG data URLs into
    ``<pre id="image-N-svg|png">`` elements (read back from the dumped DOM)."""
    bodies = ",".join(figure_json(figure)[0] for figure in figures)
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8">
<script>{get_plotlyjs()}</script></head><body><div id="work"></div><script>
const figures = [{bodies}];
(async () => {{
  for (let i = 0; i < figures.length; i++) {{
    const div = document.createElement('div');
    document.getElementById('work').appendChild(div);
    const f = figures[i];
    await Plotly.newPlot(div, f.data, f.layout, {{staticPlot: true}});
    for (const format of ['svg', 'png']) {{
      const url = await Plotly.toImage(div, {{format: format, width: f.layout.width,
        height: f.layout.height, scale: format === 'png' ? {int(scale)} : 1}});
      const out = document.createElement('pre');
      out.id = 'image-' + i + '-' + format;
      out.textContent = url;
      document.body.appendChild(out);
    }}
    Plotly.purge(div);
    div.remove();
  }}
}})();
</script></body></html>"""


def figure_images(figures: Sequence[dict], names: Sequence[str], out_dir: Path,
                  scale: int = PRINT_SCALE) -> list[Path]:
    """Write ``<name>.svg`` and ``<name>.png`` (``scale`` × the figure's CSS size) of every
    figure into ``out_dir``; returns the files written.

    Raises RuntimeError when Chromium did not return every image.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    page = out_dir / "_figures.html"
    page.write_text(_image_page(figures, scale), encoding="utf-8")
    try:
        done = _run_browser(["--dump-dom", page.absolute().as_uri()],
                            budget_ms=20_000 + 4_000 * len(figures))
    finally:
        page.unlink(missing_ok=True)
    found = {(int(i), kind): url for i, kind, url in _RESULT.findall(done.stdout)}
    written = []
    for index, name in enumerate(names):
        for kind in ("svg", "png"):
            url = found.get((index, kind))
            if url is None:
                raise RuntimeError(f"Chromium returned no {kind.upper()} for figure {name}: "
                                   f"{done.stderr.strip()[-300:]}")
            target = out_dir / f"{name}.{kind}"
            target.write_bytes(_data_url_bytes(url))
            written.append(target)
    return written


def _data_url_bytes(url: str) -> bytes:
    """The bytes of a ``data:`` URL (base64 or percent-encoded)."""
    header, _, payload = url.partition(",")
    if header.endswith(";base64"):
        return base64.b64decode(payload)
    return urllib.parse.unquote(payload).encode("utf-8")

