"""grain-study: parameter studies of grain scenes.

One template scene, parameters given as ``--set`` paths or ``${name}`` placeholders, expanded
into one folder per run (``generate``), run on this machine (``run``) or submitted to a
cluster scheduler (``submit``), watched (``status``) and collected into one table
(``collect``). See docs/studies.md.
"""
