"""HTML escaping shared by the report's sections (page, table, plot, generations)."""

from __future__ import annotations

import html
from typing import Any


def html_escape(text: Any) -> str:
    return html.escape(str(text), quote=True)
