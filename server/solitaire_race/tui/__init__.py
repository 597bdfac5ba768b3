"""The terminal client, ``solitaire-race play``.

- ``render``: the pure drawing of what the client shows (views of every game, racers,
  ranking, help) as text;
- ``moves``: what a typed line sends (the game's notation, plus a few short forms);
- ``config``: the identity token per server, kept in the user's config directory;
- ``app``: the interactive client itself (terminal handling and the protocol flow).
"""
