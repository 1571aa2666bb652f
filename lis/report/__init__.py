"""Reports: paper_figures/ (tables as Markdown/LaTeX/CSV, figures as PNG/PDF, an index with provenance),
the paper's published numbers beside ours (:mod:`lis.report.paper_numbers`), and the trajectory
viewer (:mod:`lis.report.viewer`, ``lis view``)."""
from lis.report.paper_numbers import Reference, lookup
from lis.report.viewer import render_site, view

__all__ = ["Reference", "lookup", "render_site", "view"]
