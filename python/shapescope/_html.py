"""A result as HTML for notebooks (_repr_html_): the figure the CLI draws for it, then the CLI's text.

The text is the CLI's own (what the command prints with --wide), in a <pre> block so that its
columns stay aligned; nothing here draws a table again.
"""
import base64
import html

from ._binary import ShapescopeError

_STYLE = ("<style>.shapescope pre{font-family:monospace;font-size:12px;white-space:pre;overflow-x:auto}"
          ".shapescope p{font-family:monospace;font-size:12px;margin:2px 0}</style>")


def page(result):
    """The result as one self-contained HTML fragment: first the figure the CLI draws for it where
    there is one (result.figure(): an SVG, shown as an image through a data URI, so that none of its
    scripts runs and its ids clash with nothing on the page), or the line saying why there is none;
    then its text."""
    parts = ['<div class="shapescope">', _STYLE]
    try:
        figure = result.figure()
    except ShapescopeError as e:
        figure = None
        parts.append(f"<p>no figure: {html.escape(e.message)}</p>")
    if figure:
        data = base64.b64encode(figure.encode("utf-8")).decode("ascii")
        parts.append(f'<img src="data:image/svg+xml;base64,{data}" style="max-width:100%">')
    try:
        text = result.text()
    except ShapescopeError as e:
        text = f"no text: {e.message}"
    parts.append(f"<pre>{html.escape(text.rstrip(chr(10)))}</pre>")
    parts.append("</div>")
    return "".join(parts)
