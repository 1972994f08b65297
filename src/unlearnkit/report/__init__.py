"""Reporting: HTML / Markdown / terminal tables, the trade-off plot, the TokenUnlearn heatmap."""
