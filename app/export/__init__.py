"""One trace, every form a slide deck or a handout takes (docs/exports.md):

- `html`: one file with the player, its drawings, steps and styles inlined; plays offline;
- `zip`: an SVG and a PNG per step, and the steps in words;
- `pdf`: one page per step (Beamer, Keynote and PowerPoint import it; printed handouts);
- `gif`: the steps animated, the narration as each frame's caption (PowerPoint, Google Slides);

and one step as a picture (`picture`: `/t/{id}.png` and `.svg`, oEmbed's thumbnail).

Pure functions of a trace, like app/render: the server calls them in a render worker under a
budget (app/render_worker.py), `gradtrace export` calls them in-process. Nothing here knows of
HTTP. Options (view, theme, a range of steps) are checked by `ExportRequest.checked`, whose
`BadOption` says what to give instead.

| module | what it holds |
| --- | --- |
| `options.py` | what a reader may choose: formats, views, themes, step ranges, and their checks |
| `make.py` | `export(trace, ident, request)` and `picture(...)`: a trace into a file |
| `cost.py` | what an image export costs to draw, checked before its first frame |
| `frames.py` | a step as a picture: the player's SVG at that step, with its caption |
| `raster.py` | frames into PNG and PDF pages (Cairo) |
| `encode.py` | frames into a zip, a PDF, a GIF (written a frame at a time) |
| `standalone.py`, `bundle.py` | the one-file HTML player, and the player's modules joined for it |

This package's own import is empty, so that `gradtrace export` can read the options and start
the sandbox before it loads the drawing code.
"""
