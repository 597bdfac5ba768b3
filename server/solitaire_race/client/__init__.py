"""What every program that races as a player shares (the terminal client, the bots).

- ``connection``: a websocket connection speaking docs/protocol.md, replies matched to
  requests by id, everything else queued as events; server URL normalisation.
- ``known``: what a player's own view tells about their game, as engine values (the exact
  state in the full-information games; the visible part elsewhere), and the moves that can
  be read off it. Nothing here ever sees a hidden card: it only reads views.
"""
